"""`gitmem retain`: byte-exact appends, commits of only the log file, refusals, and concurrency."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from gitmem import githooks
from gitmem.errors import GitmemError
from gitmem.parse import parse_markdown
from gitmem.retain import append_bullet, retain
from gitmem.workspace import Workspace
from gitrepo import GitRepo

DAY = date(2025, 11, 27)
LOG = "memory/2025-11-27.md"
BULLET = "- W @Peter: Back from Marrakech."


def gitmem(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitmem", "-C", str(cwd), *args], capture_output=True, text=True)


# --- where the bullet goes (pure: bytes in, bytes out) -------------------------------------------

def test_new_file_gets_title_and_section() -> None:
    content, line, created_file, created_section = append_bullet(None, BULLET, DAY, LOG)
    assert content == b"# 2025-11-27\n\n## Retain\n- W @Peter: Back from Marrakech.\n"
    assert (line, created_file, created_section) == (4, True, True)


def test_after_last_item_of_existing_section_rest_untouched() -> None:
    raw = (b"# 2025-11-27\n\nWent to the market.\n\n## Retain\n- W @Andy: Turns 40.\n"
           b"  continued line of Andy's fact\n\n## Later\nMore text, no newline at end")
    content, line, created_file, created_section = append_bullet(raw, BULLET, DAY, LOG)
    assert (line, created_file, created_section) == (8, False, False)
    assert content == raw.replace(b"fact\n", b"fact\n" + BULLET.encode() + b"\n", 1)
    facts = [b for b in parse_markdown(content, LOG).blocks if b.fact]
    assert [(b.start, b.content) for b in facts][-1] == (8, "@Peter: Back from Marrakech.")


def test_crlf_and_missing_final_newline_are_preserved() -> None:
    raw = b"\xef\xbb\xbf# 2025-11-27\r\n\r\n## Retain\r\n- B: I fixed the router.\r\n- S: Quiet day."
    content, line, _, _ = append_bullet(raw, BULLET, DAY, LOG)
    assert content == raw + b"\r\n" + BULLET.encode()
    assert line == 6


def test_empty_section_gets_the_bullet_under_its_heading() -> None:
    raw = b"# Day\n\n## Retain\n\n## Notes\n- a note\n"
    content, line, _, created_section = append_bullet(raw, BULLET, DAY, LOG)
    assert content == b"# Day\n\n## Retain\n" + BULLET.encode() + b"\n\n## Notes\n- a note\n"
    assert (line, created_section) == (4, False)


def test_file_without_section_gets_one_at_the_end() -> None:
    raw = b"# 2025-11-27\n\nJust narrative.\n"
    content, line, created_file, created_section = append_bullet(raw, BULLET, DAY, LOG)
    assert content == raw + b"\n## Retain\n" + BULLET.encode() + b"\n"
    assert (line, created_file, created_section) == (6, False, True)


def test_heading_inside_a_code_fence_is_not_a_section() -> None:
    raw = b"# Day\n\n```\n## Retain\n```\n"
    content, line, _, created_section = append_bullet(raw, BULLET, DAY, LOG)
    assert created_section and content == raw + b"\n## Retain\n" + BULLET.encode() + b"\n"
    assert any(b.start == line and b.fact for b in parse_markdown(content, LOG).blocks)


def test_unclosed_fence_at_the_end_is_refused() -> None:
    with pytest.raises(GitmemError, match="code fence"):
        append_bullet(b"# Day\n\n```\nsome code\n", BULLET, DAY, LOG)


# --- the library and the command on real repositories --------------------------------------------

@pytest.fixture
def ws(repo: GitRepo) -> tuple[GitRepo, Workspace]:
    repo.commit("start", files={"memory.md": "# Memory\n", ".gitignore": ".memory/\n",
                                LOG: "# 2025-11-27\n\n## Retain\n- W @Andy: Turns 40.\n"})
    return repo, Workspace(repo.path)


def test_commits_only_the_log_and_keeps_other_staged_changes(ws: tuple[GitRepo, Workspace]) -> None:
    repo, w = ws
    repo.write("memory.md", "# Memory\n- staged edit\n")
    repo.git("add", "memory.md")
    repo.write("notes.md", "untracked\n")
    before = repo.head()
    out = retain(w, "W @Peter: Back from Marrakech.", day="2025-11-27")
    assert out["committed"] and out["commit"] == repo.head() != before
    assert out["source"] == f"{LOG}#L5@{out['commit'][:7]}"
    assert (out["line"], out["kind"], out["entities"]) == (5, "world", ["peter"])
    assert repo.git("show", "--name-only", "--format=%s", "HEAD").splitlines() == \
        ["retain: W @Peter: Back from Marrakech.", "", LOG]
    assert repo.git("rev-parse", "HEAD^") == before
    # The user's staged change is still staged (and not committed); the untracked file untouched.
    assert repo.git("diff", "--cached", "--name-only") == "memory.md"
    assert repo.git("status", "--porcelain", "--", "notes.md") == "?? notes.md"
    assert repo.git("show", f"HEAD:{LOG}").splitlines()[-1] == BULLET


def test_uncommitted_edits_of_the_log_are_reported(ws: tuple[GitRepo, Workspace]) -> None:
    repo, w = ws
    repo.write(LOG, "# 2025-11-27\n\nnarrative added by hand\n\n## Retain\n- W @Andy: Turns 40.\n")
    out = retain(w, "S: Quiet day.", day="2025-11-27")
    assert out["line"] == 7
    assert out["notes"] and "uncommitted edits" in out["notes"][0]
    assert repo.git("status", "--porcelain") == ""


def test_bad_bullet_refused_nothing_written(ws: tuple[GitRepo, Workspace]) -> None:
    repo, w = ws
    head = repo.head()
    proc = gitmem(repo.path, "retain", "O(c=1.7) @Peter: likes tea", "--date", "2025-11-28", "--json")
    assert proc.returncode == 1
    err = json.loads(proc.stdout)
    assert "outside 0.0..1.0" in err["error"] and err["hint"]
    assert not (repo.path / "memory/2025-11-28.md").exists()
    assert repo.head() == head
    for bad in ("W @Peter: two\nlines", "Went home", "O(c=0.5 @Peter: unclosed"):
        with pytest.raises(GitmemError, match="not a valid Retain bullet"):
            retain(w, bad, day="2025-11-28")
    with pytest.raises(GitmemError, match="YYYY-MM-DD"):
        retain(w, "W: fine", day="27/11/2025")
    assert repo.git("status", "--porcelain") == ""


def test_no_commit_writes_only(ws: tuple[GitRepo, Workspace]) -> None:
    repo, _ = ws
    head = repo.head()
    proc = gitmem(repo.path, "retain", "B: I rotated the backup disk.", "--date", "2025-12-01", "--no-commit",
                  "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["committed"] is False and out["commit"] is None
    assert out["source"] == "memory/2025-12-01.md#L4@worktree"
    assert out["created_file"] and out["created_section"]
    assert repo.head() == head
    assert repo.git("status", "--porcelain") == "?? memory/2025-12-01.md"


def test_today_is_the_default_day(ws: tuple[GitRepo, Workspace]) -> None:
    _, w = ws
    out = retain(w, "W: default day")
    assert out["day"] == date.today().isoformat()
    assert out["path"] == f"memory/{date.today().isoformat()}.md"


def test_refuses_during_a_merge(ws: tuple[GitRepo, Workspace]) -> None:
    repo, w = ws
    repo.git("checkout", "-q", "-b", "side")
    repo.commit("side", files={"memory.md": "# Memory\nside\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("main", files={"memory.md": "# Memory\nmain\n"})
    repo.git("merge", "side", check=False)
    assert (repo.path / ".git/MERGE_HEAD").exists()
    head = repo.head()
    log_before = (repo.path / LOG).read_bytes()
    with pytest.raises(GitmemError, match="a merge is in progress"):
        retain(w, "W: during merge", day="2025-11-27")
    assert repo.head() == head and (repo.path / LOG).read_bytes() == log_before
    out = retain(w, "W: during merge", day="2025-11-27", commit=False)  # writing alone is fine
    assert not out["committed"]


def test_failed_commit_puts_the_file_back(ws: tuple[GitRepo, Workspace]) -> None:
    repo, w = ws
    hook = repo.path / ".git/hooks/pre-commit"
    hook.write_text("#!/bin/sh\necho 'policy says no' >&2\nexit 1\n")
    hook.chmod(0o755)
    before = (repo.path / LOG).read_bytes()
    with pytest.raises(GitmemError, match="policy says no"):
        retain(w, "W: rejected", day="2025-11-27")
    assert (repo.path / LOG).read_bytes() == before
    with pytest.raises(GitmemError):
        retain(w, "W: rejected", day="2025-12-24")
    assert not (repo.path / "memory/2025-12-24.md").exists()
    assert repo.git("status", "--porcelain") == ""


def test_post_commit_hook_indexes_the_bullet(ws: tuple[GitRepo, Workspace]) -> None:
    repo, w = ws
    githooks.install(w)
    out = retain(w, "W @Peter: Adopted a cat named Quasar.", day="2025-11-27")
    status = json.loads(gitmem(repo.path, "status", "--json").stdout)
    assert status["indexed"] == out["commit"] == status["head"]


def test_an_alias_retained_lets_recall_find_the_entity_by_its_other_name(ws: tuple[GitRepo, Workspace]) -> None:
    # Issue 16: "a person's aliases (... the `alias:` Retain form) expand the query"; README tells
    # users to add Retain bullets with `gitmem retain`, which refused an alias until wave 18.
    repo, w = ws
    githooks.install(w)
    for name, city in (("Anna", "Berlin"), ("Jon", "Oslo"), ("Mia", "Rome")):
        retain(w, f"W @{name}: Lives in {city}.", day="2025-11-27")
    robert = "@Robert: Lives in Porto, in a small flat near the river, since the spring of 2021."
    retain(w, f"W {robert}", day="2025-11-27")
    proc = gitmem(repo.path, "retain", "alias: @Robert = Bob, Bobby", "--date", "2025-11-28", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["bullet"], out["kind"], out["names"]) == ("- alias: @Robert = Bob, Bobby", "alias", ["Bob", "Bobby"])
    assert repo.git("show", "HEAD:memory/2025-11-28.md") == "# 2025-11-28\n\n## Retain\n- alias: @Robert = Bob, Bobby"
    assert repo.git("log", "-1", "--format=%s") == "retain: alias: @Robert = Bob, Bobby"

    def homes(*args: str) -> list[str]:
        got = json.loads(gitmem(repo.path, "recall", "Where does Bob live?", "-k", "6", "--no-semantic", "--json", *args).stdout)
        return [r["content"] for r in got["results"] if "Lives in" in r["content"]]

    assert homes()[0] == robert
    # Before the alias was retained memory did not know Bob is Robert (--as-of stays exact).
    assert homes("--as-of", out["commit"] + "~1")[0] != robert
    # A malformed alias is refused like a bad fact, nothing written.
    bad = gitmem(repo.path, "retain", "alias: Robert = Bob", "--date", "2025-11-29")
    assert bad.returncode == 1 and "@Robert = Bob, Bobby" in bad.stderr and "Traceback" not in bad.stderr
    assert not (repo.path / "memory/2025-11-29.md").exists()


def test_eight_concurrent_retains_lose_nothing(ws: tuple[GitRepo, Workspace]) -> None:
    repo, _ = ws
    head = repo.head()
    bullets = [f"W @Peter: Concurrent fact number {i}." for i in range(8)]
    procs = [subprocess.Popen([sys.executable, "-m", "gitmem", "-C", str(repo.path), "retain", b, "--date",
                               "2025-11-27", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for b in bullets]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [e for _, e in outs]
    results = [json.loads(o) for o, _ in outs]
    committed = repo.git("show", f"HEAD:{LOG}").splitlines()
    assert sorted(committed[4:]) == sorted(f"- {b}" for b in bullets)
    assert committed[:4] == ["# 2025-11-27", "", "## Retain", "- W @Andy: Turns 40."]
    history = repo.git("rev-list", "--first-parent", f"{head}..HEAD").split()
    assert len(history) == 8 and set(history) == {r["commit"] for r in results}
    # Each citation names the line its bullet has at its own commit.
    for r, b in zip(results, bullets):
        assert repo.git("show", f"{r['commit']}:{LOG}").splitlines()[r["line"] - 1] == f"- {b}"
    assert repo.git("status", "--porcelain") == ""
