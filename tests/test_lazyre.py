"""Module-level patterns are compiled on first use (gitmem/lazyre.py), and then behave exactly as
re.compile's."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from gitrepo import GitRepo

from gitmem.lazyre import lazy


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    text = "Moved to Lisbon on 2025-11-02; moved BACK on 2026-01-05."
    for pattern, flags in ((r"(?P<y>\d{4})-(\d{2})", 0), (r"\bmoved (\w+)", re.I), (r";\s*", 0)):
        lz, rx = lazy(pattern, flags), re.compile(pattern, flags)
        assert lz.pattern == rx.pattern and lz.flags == flags
        assert lz.search(text)[0] == rx.search(text)[0]  # type: ignore[index]
        assert [m and m.span() for m in (lz.match(text), lz.match(text, 19))] == \
            [m and m.span() for m in (rx.match(text), rx.match(text, 19))]
        assert lz.findall(text) == rx.findall(text)
        assert [m.span() for m in lz.finditer(text)] == [m.span() for m in rx.finditer(text)]
        assert lz.sub("#", text, 1) == rx.sub("#", text, 1)
        assert lz.subn(lambda m: m[0].upper(), text) == rx.subn(lambda m: m[0].upper(), text)
        assert lz.split(text) == rx.split(text)
    assert lazy(r"\d+").fullmatch("2025") is not None and lazy(r"\d+").fullmatch("2025x") is None


def test_first_use_binds_the_compiled_methods() -> None:
    lz = lazy(r"a+")
    assert "search" not in vars(lz)  # nothing compiled yet
    assert lz.search("baa") is not None
    # From now on the compiled pattern's C methods answer directly (no Python call in between).
    assert isinstance(lz.search.__self__, re.Pattern) and isinstance(lz.sub.__self__, re.Pattern)
    assert lz.findall("aXaa") == ["a", "aa"]


def test_importing_the_recall_path_compiles_none_of_gitmems_patterns() -> None:
    # A fresh process: what `gitmem recall` imports must leave the patterns to their first use
    # (the rename forms, the date words and the phrase markers are not used by every question).
    code = (
        "import re, gitmem.cli.app, gitmem.cli.recall_cmd, gitmem.recall.search, gitmem.recall.render\n"
        "from gitmem.lazyre import Lazy\n"
        "from gitmem.parse import entities, attributes, dates\n"
        "pats = [*entities._RENAME_FORMS, entities._AKA, dates.ENDS_HINT, *(p for p, _ in attributes._PHRASES)]\n"
        "assert all(isinstance(p, Lazy) for p in pats), pats\n"
        "print(sum('search' in vars(p) for p in pats), len(pats))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "0" and int(out[1]) >= 10


# --- compiled programs kept in .memory/regex.cache by recall sessions -------------------------------

def _recall(cwd: Path, question: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitmem", "-C", str(cwd), "recall", "--json", question],
                          capture_output=True, text=True)


def _memory(repo: GitRepo) -> None:
    repo.commit("start", files={"memory.md": "# Memory\n", ".gitignore": ".memory/\n", "memory/2025-11-27.md":
                                "# 2025-11-27\n\n## Retain\n- W @Peter: Moved to Lisbon last week.\n"
                                "- O(c=0.8) @Peter: Prefers espresso over filter coffee.\n"})


def test_a_second_recall_uses_the_saved_programs_and_answers_the_same(repo: GitRepo) -> None:
    _memory(repo)
    first = _recall(repo.path, "what does Peter prefer?")
    assert first.returncode == 0, first.stderr
    cache = repo.path / ".memory" / "regex.cache"
    saved = cache.read_bytes()
    # What the first session compiled, saved: in a fresh process each program loads into a pattern
    # equal (flags, pattern text, program) to what re.compile makes, and none is compiled again.
    code = (
        "import marshal, re, sys\n"
        "from gitmem import lazyre\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "tag, programs = marshal.loads(data)\n"
        "assert tag == lazyre._TAG\n"
        "lazyre.load(data)\n"
        "for (pattern, flags) in programs:\n"
        "    assert lazyre._compile(pattern, flags) == re.compile(pattern, flags), pattern\n"
        "assert lazyre.dump() is None  # nothing new made\n"
        "print(len(programs))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(cache)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) >= 10  # the question's patterns: the word splitter, time words, currency rules
    second = _recall(repo.path, "what does Peter prefer?")
    assert second.returncode == 0 and second.stdout == first.stdout and "Prefers espresso" in second.stdout
    assert cache.read_bytes() == saved  # nothing new: not written again


def test_a_damaged_or_foreign_cache_is_compiled_around(repo: GitRepo) -> None:
    _memory(repo)
    first = _recall(repo.path, "where does Peter live?")
    cache = repo.path / ".memory" / "regex.cache"
    import marshal

    from gitmem import lazyre

    tag, programs = marshal.loads(cache.read_bytes())
    # A program the engine refuses (made by another Python, or damaged): compiled as usual instead.
    # So is a file of the earlier format (code as a list of ints) or a program whose code is not
    # whole 32-bit words.
    broken = {key: (flags, b"\xe7\x03\x00\x00" * 3, groups, gi, ig) for key, (flags, _, groups, gi, ig) in programs.items()}
    odd = {key: (flags, code[:-1], groups, gi, ig) for key, (flags, code, groups, gi, ig) in programs.items()}
    as_lists = {key: (flags, list(memoryview(code).cast("I")), groups, gi, ig)
                for key, (flags, code, groups, gi, ig) in programs.items()}
    old_tag = lazyre._TAG.removesuffix(" code2")
    for data in (b"not a cache", marshal.dumps(("another python", programs)), marshal.dumps((lazyre._TAG, broken)),
                 marshal.dumps((lazyre._TAG, odd)), marshal.dumps((lazyre._TAG, as_lists)),
                 marshal.dumps((old_tag, as_lists))):
        cache.write_bytes(data)
        again = _recall(repo.path, "where does Peter live?")
        assert again.returncode == 0 and again.stdout == first.stdout and "Lisbon" in again.stdout, again.stderr
        assert marshal.loads(cache.read_bytes())[0] == lazyre._TAG  # replaced by a good one


def test_a_symlinked_cache_is_neither_read_nor_written(repo: GitRepo, tmp_path: Path) -> None:
    _memory(repo)
    _recall(repo.path, "where does Peter live?")
    cache = repo.path / ".memory" / "regex.cache"
    outside = tmp_path / "elsewhere"
    outside.write_bytes(b"")
    cache.unlink()
    cache.symlink_to(outside)
    again = _recall(repo.path, "where does Peter live?")
    assert again.returncode == 0 and "Lisbon" in again.stdout, again.stderr
    assert outside.read_bytes() == b"" and cache.is_symlink()
