"""Module-level patterns are compiled on first use (gitmem/lazyre.py), and then behave exactly as
re.compile's."""

from __future__ import annotations

import re
import subprocess
import sys

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
