"""The timeline index on real repositories: every history shape (linear, merges, rewrites, renames), and safety."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitmem.errors import IndexLocked
from gitmem.index.db import writer_lock
from gitmem.index.indexer import update
from gitmem.workspace import Workspace
from gitrepo import GitRepo
from indexoracle import index_rows, recalled, tree_chunks

LOG = "# {day}\n\nWorked with @Peter on @warelay.\n\n## Retain\n{bullets}\n"


def log(day: str, *bullets: str) -> str:
    return LOG.format(day=day, bullets="\n".join(f"- {b}" for b in bullets))


def check_every_commit(repo: GitRepo, ws: Workspace, max_bytes: int = 5_000_000) -> None:
    """As of each first-parent commit, recall returns exactly what that commit's tree holds."""
    for oid in repo.git("rev-list", "--first-parent", "HEAD").split():
        assert recalled(ws, oid) == tree_chunks(repo.path, oid, max_bytes), f"mismatch as of {oid[:7]}"


def test_linear_history_intervals_and_supersession(repo: GitRepo) -> None:
    repo.commit("day 1", "2025-11-01", {"memory.md": "# Core\n\n- @Peter lives in Berlin.\n",
                                        "memory/2025-11-01.md": log("2025-11-01", "O(c=0.6) @Peter: Prefers short replies.")})
    repo.commit("move", "2025-11-20", {"memory.md": "# Core\n\n- @Peter lives in Lisbon.\n"})
    repo.commit("stronger", "2025-11-21", {"memory/2025-11-01.md": log("2025-11-01", "O(c=0.8) @Peter: Prefers short replies.")})
    ws = Workspace(repo.path)
    res = update(ws)
    assert res.commits == 3 and res.tip == repo.head()
    conn = sqlite3.connect(ws.index_path)
    rows = conn.execute("SELECT content, valid_from, valid_to, successor FROM chunks WHERE path='memory.md' "
                        "AND content LIKE '%lives%' ORDER BY id").fetchall()
    assert rows[0][:3] == ("@Peter lives in Berlin.", 1, 2)
    assert rows[1][:3] == ("@Peter lives in Lisbon.", 2, None)
    new_id = conn.execute("SELECT id FROM chunks WHERE content = '@Peter lives in Lisbon.'").fetchone()[0]
    assert rows[0][3] == new_id  # the edit is a supersession link
    conf = conn.execute("SELECT confidence, valid_to FROM chunks WHERE kind='opinion' ORDER BY id").fetchall()
    assert conf == [(0.6, 3), (0.8, None)]
    check_every_commit(repo, ws)
    assert update(ws).commits == 0  # incremental: nothing new


def test_out_of_order_commit_dates_never_leak(repo: GitRepo) -> None:
    repo.commit("a", "2025-11-10", {"memory.md": "- fact alpha\n"})
    repo.commit("b (clock behind)", "2025-11-05", {"memory.md": "- fact alpha\n- fact beta\n"})
    repo.commit("c", "2025-11-12", {"memory.md": "- fact alpha\n- fact beta\n- fact gamma\n"})
    ws = Workspace(repo.path)
    update(ws)
    # Nov 7: commit b is dated Nov 5 but was committed after a (Nov 10): as of Nov 7 memory was empty.
    assert recalled(ws, "2025-11-07") == set()
    assert {c for _, c in recalled(ws, "2025-11-10")} == {"fact alpha", "fact beta"}
    assert {c for _, c in recalled(ws, "2025-11-12")} == {"fact alpha", "fact beta", "fact gamma"}
    check_every_commit(repo, ws)


def test_amend_rebase_and_reset_roll_back(repo: GitRepo) -> None:
    repo.commit("one", "2025-11-01", {"memory.md": "- one\n"})
    repo.commit("two", "2025-11-02", {"memory.md": "- one\n- two\n"})
    ws = Workspace(repo.path)
    update(ws)
    # amend
    repo.write("memory.md", "- one\n- two amended\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "--amend", "-m", "two'", date="2025-11-03")
    res = update(ws)
    assert res.rolled_back == 1 and res.commits == 1
    assert {c for _, c in recalled(ws, None)} == {"one", "two amended"}
    check_every_commit(repo, ws)
    # reset --hard to the first commit, then a new commit
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.commit("three", "2025-11-04", {"memory.md": "- one\n- three\n"})
    res = update(ws)
    assert res.rolled_back == 1
    assert {c for _, c in recalled(ws, None)} == {"one", "three"}
    # rebase onto a rewritten base
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("feature", "2025-11-05", {"notes.md": "- feature note\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("main moves", "2025-11-06", {"memory.md": "- one\n- three\n- four\n"})
    repo.git("checkout", "-q", "feature")
    update(ws)
    repo.git("rebase", "-q", "main", date="2025-11-07")
    res = update(ws)
    assert res.rolled_back >= 1
    check_every_commit(repo, ws)
    assert index_rows(ws) == _rebuilt_rows(ws)


def _rebuilt_rows(ws: Workspace) -> list[tuple]:
    update(ws, rebuild=True)
    return index_rows(ws)


def test_merge_commit_changes_arrive_with_the_merge(repo: GitRepo) -> None:
    repo.commit("base", "2025-11-01", {"memory.md": "- base\n"})
    repo.git("checkout", "-q", "-b", "gitmem/reflect")
    repo.commit("proposal", "2025-11-02", {"bank/world.md": "- curated world fact\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("meanwhile", "2025-11-03", {"memory.md": "- base\n- meanwhile\n"})
    repo.git("merge", "-q", "--no-ff", "-m", "merge reflection", "gitmem/reflect", date="2025-11-04")
    ws = Workspace(repo.path)
    update(ws)
    conn = sqlite3.connect(ws.index_path)
    merge_pos = conn.execute("SELECT pos FROM commits WHERE oid = ?", (repo.head(),)).fetchone()[0]
    assert conn.execute("SELECT count(*) FROM commits").fetchone()[0] == 3  # side commit is not on the line
    assert conn.execute("SELECT valid_from FROM chunks WHERE path='bank/world.md'").fetchone()[0] == merge_pos
    check_every_commit(repo, ws)


def test_rename_and_delete(repo: GitRepo) -> None:
    repo.commit("add", "2025-11-01", {"notes/old.md": "- a durable note\n", "gone.md": "- doomed\n"})
    repo.git("mv", "notes/old.md", "notes/new name.md")
    repo.remove("gone.md")
    repo.commit("rename+delete", "2025-11-02")
    ws = Workspace(repo.path)
    update(ws)
    assert recalled(ws, None) == {("notes/new name.md", "a durable note")}
    conn = sqlite3.connect(ws.index_path)
    old = conn.execute("SELECT valid_to, successor FROM chunks WHERE path='notes/old.md'").fetchone()
    new_id = conn.execute("SELECT id FROM chunks WHERE path='notes/new name.md'").fetchone()[0]
    assert old == (2, new_id)  # the moved text is linked to its new home
    check_every_commit(repo, ws)


def test_empty_repo_then_first_commit(repo: GitRepo) -> None:
    ws = Workspace(repo.path)
    res = update(ws)
    assert res.tip is None and any("no commits" in n for n in res.notes)
    repo.commit("first", "2025-11-01", {"memory.md": "- first\n"})
    assert update(ws).commits == 1


def test_progress_counts_the_commits_each_run_indexes(repo: GitRepo) -> None:
    ws = Workspace(repo.path)
    calls: list[tuple[int, int]] = []
    for i in range(3):
        repo.commit(f"c{i}", f"2025-11-0{i + 1}", {"memory.md": f"- fact {i}\n"})
    assert update(ws, progress=lambda d, t: calls.append((d, t))).commits == 3  # from the root
    assert calls == [(1, 3), (2, 3), (3, 3)]
    calls.clear()
    repo.commit("c3", "2025-11-04", {"memory.md": "- fact 3\n"})
    repo.commit("c4", "2025-11-05", {"memory.md": "- fact 4\n"})
    update(ws, progress=lambda d, t: calls.append((d, t)))  # incremental
    assert calls == [(1, 2), (2, 2)]
    calls.clear()
    repo.git("reset", "-q", "--hard", "HEAD~2")
    repo.commit("c3b", "2025-11-06", {"memory.md": "- fact 3b\n"})
    res = update(ws, progress=lambda d, t: calls.append((d, t)))  # after a rewrite: counted from the shared base
    assert res.rolled_back == 2 and calls == [(1, 1)]


def test_shallow_clone_indexes_what_exists(repo: GitRepo, tmp_path: Path) -> None:
    for i in range(5):
        repo.commit(f"c{i}", f"2025-11-0{i + 1}", {"memory.md": "".join(f"- line {j}\n" for j in range(i + 1))})
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{repo.path}", str(clone)], check=True)
    ws = Workspace(clone)
    res = update(ws)
    assert res.shallow and res.commits == 2
    assert any("shallow" in n for n in res.notes)
    assert {c for _, c in recalled(ws, None)} == {f"line {j}" for j in range(5)}


def test_uncommitted_edits_are_searchable_but_not_history(repo: GitRepo) -> None:
    repo.commit("c", "2025-11-01", {"memory.md": "- committed fact about teapots\n"})
    ws = Workspace(repo.path)
    update(ws)
    before = index_rows(ws)
    repo.write("memory.md", "- edited fact about kettles\n")
    repo.write("memory/2025-11-02.md", "- brand new draft about kettles\n")
    from gitmem.recall.search import Options, Session

    with Session(ws) as s:
        res = s.search("kettles", Options(k=10)).results
        assert {r.status for r in res} == {"uncommitted"}
        assert {r.source for r in res} == {"memory.md#L1@worktree", "memory/2025-11-02.md#L1@worktree"}
        assert s.search("teapots", Options(k=10)).results == []  # the committed version is not current
        asof = s.search("teapots", Options(k=10, as_of="HEAD")).results
        assert [r.content for r in asof] == ["committed fact about teapots"]
    assert index_rows(ws) == before


def test_bad_files_are_reported_not_fatal(repo: GitRepo) -> None:
    repo.write(".gitmem.toml", "[index]\nmax_file_bytes = 2000\n")
    repo.commit("bad input", "2025-11-01", {
        "binary.md": b"\x89PNG\r\n\x1a\n\x00\x00binary",
        "latin1.md": "- caf\xe9 cr\xe8me\n".encode("latin-1"),
        "huge.md": "- x\n" * 2000,
        "crlf.md": "# T\r\n\r\n- windows line\r\n",
        "odd \"quoted\"\tname.md": "- odd path fact\n",
        "ünïcode/日本.md": "- unicode path fact\n",
        "malformed.md": "## Retain\n- X @Peter: unknown kind\n- O(c=1.7) @Peter: too confident\n- O(c=0.5 @Peter unclosed\n",
    })
    ws = Workspace(repo.path)
    res = update(ws)
    problems = "\n".join(f"{p['path']}: {p['message']}" for p in res.problems)
    assert "binary.md" in problems and "huge.md" in problems and "latin1.md" in problems
    got = recalled(ws, None)
    contents = {c for _, c in got}
    assert "windows line" in contents and "odd path fact" in contents and "unicode path fact" in contents
    assert any("caf" in c and "\ufffd" in c for c in contents)  # decoded with replacement
    assert {p for p, _ in got} >= {'odd "quoted"\tname.md', "ünïcode/日本.md", "malformed.md"}
    assert not any(p in ("binary.md", "huge.md") for p, _ in got)
    # malformed bullets are plain chunks
    conn = sqlite3.connect(ws.index_path)
    kinds = {r[0] for r in conn.execute("SELECT kind FROM chunks WHERE path='malformed.md'")}
    assert kinds == {"note"}
    check_every_commit(repo, ws, max_bytes=2000)


def test_corrupt_and_deleted_index_are_rebuilt(repo: GitRepo) -> None:
    repo.commit("c", "2025-11-01", {"memory.md": "- fact one\n"})
    ws = Workspace(repo.path)
    update(ws)
    ws.index_path.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(ws.index_path) + suffix).unlink(missing_ok=True)
    res = update(ws)
    assert res.rebuilt and any("unreadable" in n for n in res.notes)
    assert recalled(ws, None) == {("memory.md", "fact one")}
    assert list(ws.derived.glob("index.sqlite.corrupt-*"))  # kept aside, not deleted
    ws.index_path.unlink()
    assert recalled(ws, None) == {("memory.md", "fact one")}
    # the CLI says so in words, never a traceback
    ws.index_path.write_bytes(b"\x00garbage" * 64)
    proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(repo.path), "recall", "fact"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    assert "unreadable" in proc.stdout and "fact one" in proc.stdout


def _big_history(repo: GitRepo, commits: int) -> None:
    lines = []
    content: list[str] = []
    for i in range(commits):
        day = f"2025-{1 + (i // 280) % 12:02d}-{1 + (i // 10) % 28:02d}"
        content.append(f"- W @Peter: fact number {i} about item{i % 97}")
        if i % 7 == 3:
            content[i // 2] = f"- W @Peter: fact number {i // 2} edited at {i}"
        data = "\n".join(content[-40:]) + "\n"
        ts = 1_700_000_000 + i * 600
        lines += [
            "commit refs/heads/main", f"committer T <t@e> {ts} +0000",
            f"data {len(f'c{i}')}", f"c{i}",
        ]
        lines += [f"M 100644 inline memory/{day}.md", f"data {len(data.encode())}", data]
    repo.fast_import("\n".join(lines) + "\n")
    repo.git("reset", "-q", "--hard", "main")


def test_killed_indexer_leaves_a_consistent_index_that_completes(repo: GitRepo) -> None:
    _big_history(repo, 6000)
    ws = Workspace(repo.path)
    env = dict(os.environ)
    proc = subprocess.Popen([sys.executable, "-c",
                             "import gitmem.index.indexer as i; i.BATCH_COMMITS = 200;"
                             "from gitmem.workspace import Workspace;"
                             f"i.update(Workspace({str(repo.path)!r}))"], env=env)
    deadline = time.monotonic() + 60
    killed_at = 0
    while time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            conn = sqlite3.connect(ws.index_path, timeout=0.2)
            killed_at = conn.execute("SELECT count(*) FROM commits").fetchone()[0]
            conn.close()
        except sqlite3.Error:
            continue
        if killed_at >= 400:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 0 < killed_at < 6000, "the indexer finished before it could be killed"
    conn = sqlite3.connect(ws.index_path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    n = conn.execute("SELECT count(*) FROM commits").fetchone()[0]
    tip = conn.execute("SELECT value FROM meta WHERE key='tip'").fetchone()[0]
    assert conn.execute("SELECT oid FROM commits WHERE pos = ?", (n,)).fetchone()[0] == tip
    conn.close()
    res = update(ws)
    assert res.commits == 6000 - n and res.tip == repo.head()
    resumed = index_rows(ws)
    assert resumed == _rebuilt_rows(ws)


def test_two_indexers_at_once(repo: GitRepo) -> None:
    _big_history(repo, 1500)
    ws = Workspace(repo.path)
    cmd = [sys.executable, "-m", "gitmem", "-C", str(repo.path), "index", "--wait", "0"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [(p.wait(), *p.communicate()) for p in procs]
    codes = sorted(o[0] for o in outs)
    assert codes in ([0, 0], [0, 1]), outs
    for code, _, err in outs:
        if code == 1:
            assert "another gitmem indexer" in err and "Traceback" not in err
    update(ws)
    assert index_rows(ws) == _rebuilt_rows(ws)


def test_lock_waits_then_reports(repo: GitRepo) -> None:
    repo.commit("c", "2025-11-01", {"memory.md": "- x\n"})
    ws = Workspace(repo.path)
    with writer_lock(ws, 0):
        with pytest.raises(IndexLocked):
            update(ws, wait=0.2)
    assert update(ws, wait=0.2).commits == 1


def test_incremental_equals_rebuild_over_random_edits(repo: GitRepo) -> None:
    import random

    rnd = random.Random(7)
    files = ["memory.md", "memory/2025-11-01.md", "bank/entities/Peter.md"]
    state: dict[str, list[str]] = {f: [] for f in files}
    ws = Workspace(repo.path)
    for i in range(40):
        f = rnd.choice(files)
        lines = state[f]
        op = rnd.random()
        if op < 0.5 or not lines:
            lines.insert(rnd.randrange(len(lines) + 1), f"- W @Peter: fact {i} {rnd.choice(['x', 'y', 'z'])}")
        elif op < 0.75:
            j = rnd.randrange(len(lines))
            lines[j] = lines[j] + " (edited)"
        elif op < 0.9:
            del lines[rnd.randrange(len(lines))]
        else:
            lines.insert(0, "## Retain")
        repo.commit(f"c{i}", f"2025-11-{1 + i % 28:02d}", {f: "\n".join(lines) + ("\n" if i % 3 else "")})
        if i % 4 == 0:
            update(ws)
    update(ws)
    assert index_rows(ws) == _rebuilt_rows(ws)
    check_every_commit(repo, ws)


@pytest.mark.parametrize("extra_md", [0, 30])
def test_non_markdown_files_are_ignored_with_or_without_git_filtering(repo: GitRepo, extra_md: int) -> None:
    # Few Markdown files: git filters with a pathspec. Mostly Markdown: the walk asks git for every
    # file and drops non-Markdown sections itself. Both must give the same Markdown-only index.
    from gitmem.timeline.history import _mostly_other_files

    files: dict[str, str | bytes] = {f"notes/n{i}.md": f"- note {i}\n" for i in range(extra_md)}
    files.update({"data/f0.txt": "- not memory\n", "memory.md": "- core fact\n", "notes/A.MD": "- upper-case\n",
                  "logo.png": b"\x89PNG\x00\x00", "readme.mdx": "- not markdown either\n"})
    repo.commit("mixed", "2025-11-01", files)
    repo.commit("edit", "2025-11-02", {"data/f0.txt": "- changed\n", "memory.md": "- core fact\n- second\n"})
    assert _mostly_other_files(repo.path, repo.head()) is (extra_md == 0)
    ws = Workspace(repo.path)
    update(ws)
    assert {p for p, _ in recalled(ws, None)} == {"memory.md", "notes/A.MD"} | {f"notes/n{i}.md" for i in range(extra_md)}
    check_every_commit(repo, ws)


def test_reusing_the_previous_parse_changes_nothing(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk re-chunks only what lies between a file's unchanged start and unchanged end, and
    compares only those blocks. Over random line edits with many duplicated blocks (where which
    copy counts as new decides a line range), the index must equal one built by comparing whole
    files each time."""
    import random

    from gitmem.index import indexer

    rnd = random.Random(11)
    texts = ["- W @Peter: same fact", "- B @Alice: went out", "Plain note.", "", "## Retain", "# 2025-11-01"]
    lines: list[str] = []
    for i in range(60):
        op = rnd.random()
        if op < 0.55 or not lines:
            at = rnd.randrange(len(lines) + 1)
            lines[at:at] = [rnd.choice(texts) for _ in range(rnd.randint(1, 3))]
        elif op < 0.75:
            j = rnd.randrange(len(lines))
            lines[j] = rnd.choice(texts)
        else:
            del lines[rnd.randrange(len(lines))]
        repo.commit(f"c{i}", f"2025-11-{1 + i % 28:02d}", {"memory/2025-11-01.md": "\n".join(lines) + "\n"})
    ws = Workspace(repo.path)
    reused = _rebuilt_rows(ws)
    monkeypatch.setattr(indexer, "_PARSE_CACHE", 0)  # no previous parse kept: every file compared whole
    assert _rebuilt_rows(ws) == reused
    check_every_commit(repo, ws)
