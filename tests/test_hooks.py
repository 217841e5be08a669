"""Git hooks: install/uninstall/status, coexistence with user hooks, and the hook never breaking git.

Every test drives real git commands (commit, amend, rebase, merge, worktree) against hooks
installed by gitmem, so what is checked is what git actually runs.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem import githooks, hookrun
from gitmem.errors import GitmemError
from gitmem.workspace import Workspace
from gitrepo import GitRepo

LEGACY_COMMIT = b"#!/bin/sh\n# the user's own hook\necho \"legacy $*\" >> legacy.out\n"
LEGACY_REWRITE = b'#!/bin/sh\necho "args: $*" >> rewrite.out\ncat >> rewrite.out\n'


def _init(repo: GitRepo) -> str:
    """First commit of a workspace as `gitmem init` leaves it: derived data and test outputs ignored."""
    return repo.commit("init", files={"memory.md": "# Memory\n", ".gitignore": ".memory/\n*.out\n"})


def _indexer_available() -> bool:
    try:
        import gitmem.index.indexer  # noqa: F401
    except ImportError:
        return False
    return True


def _write_hook(path: Path, body: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    path.chmod(0o755)


def _hooks(repo: GitRepo) -> Path:
    return repo.path / ".git" / "hooks"


def _hookrun_ran(ws_root: Path, hook: str) -> bool:
    """gitmem.hookrun left its trace: a success in hook.state or a failure line in hook.log.

    Until the indexer exists the hook logs an ImportError, which still proves it was invoked;
    test_post_commit_updates_index checks the success path for real."""
    ws = Workspace(ws_root)
    if hook in githooks.read_state(ws).get("by_hook", {}):
        return True
    return ws.hook_log.exists() and f" {hook} " in ws.hook_log.read_text()


def _reset_trace(ws_root: Path) -> None:
    for name in ("hook.state", "hook.log"):
        (ws_root / ".memory" / name).unlink(missing_ok=True)


def test_install_keeps_user_hook_and_both_run_on_commit(repo: GitRepo) -> None:
    _init(repo)
    _write_hook(_hooks(repo) / "post-commit", LEGACY_COMMIT)
    report = githooks.install(Workspace(repo.path))

    assert report.hooks_dir == _hooks(repo).resolve()
    assert (_hooks(repo) / "post-commit.legacy").read_bytes() == LEGACY_COMMIT
    for hook in githooks.HOOKS:
        path = _hooks(repo) / hook
        assert githooks.is_ours(path)
        assert path.stat().st_mode & stat.S_IXUSR
        assert sys.executable in path.read_text()

    repo.commit("day 1", date="2025-11-27", files={"memory/2025-11-27.md": "# 2025-11-27\n- met @Peter\n"})
    assert (repo.path / "legacy.out").read_text() == "legacy \n"
    assert _hookrun_ran(repo.path, "post-commit")


def test_install_twice_changes_nothing(repo: GitRepo) -> None:
    _write_hook(_hooks(repo) / "post-commit", LEGACY_COMMIT)
    ws = Workspace(repo.path)
    githooks.install(ws)
    before = {p.name: p.read_bytes() for p in _hooks(repo).iterdir()}
    again = githooks.install(ws)

    assert again.changed == []
    assert {p.name: p.read_bytes() for p in _hooks(repo).iterdir()} == before
    assert not (_hooks(repo) / "post-commit.legacy.legacy").exists()
    assert (_hooks(repo) / "post-commit.legacy").read_bytes() == LEGACY_COMMIT
    assert all(h.state == "installed" and h.current for h in again.hooks)


def test_uninstall_restores_original_byte_for_byte(repo: GitRepo) -> None:
    _write_hook(_hooks(repo) / "post-commit", LEGACY_COMMIT)
    ws = Workspace(repo.path)
    githooks.install(ws)
    report = githooks.uninstall(ws)

    assert (_hooks(repo) / "post-commit").read_bytes() == LEGACY_COMMIT
    assert not (_hooks(repo) / "post-commit.legacy").exists()
    for hook in ("post-merge", "post-rewrite", "post-checkout"):
        assert not (_hooks(repo) / hook).exists()
    states = {h.name: h.state for h in report.hooks}
    assert states == {"post-commit": "foreign", "post-merge": "absent", "post-rewrite": "absent", "post-checkout": "absent"}
    assert githooks.uninstall(ws).changed == []


def test_status_reports_each_state(repo: GitRepo) -> None:
    ws = Workspace(repo.path)
    assert {h.state for h in githooks.status(ws).hooks} == {"absent"}
    _write_hook(_hooks(repo) / "post-merge", b"#!/bin/sh\nexit 0\n")
    assert {h.name: h.state for h in githooks.status(ws).hooks}["post-merge"] == "foreign"
    githooks.install(ws)
    by_name = {h.name: h for h in githooks.status(ws).hooks}
    assert by_name["post-merge"].state == "installed" and by_name["post-merge"].legacy
    assert by_name["post-commit"].state == "installed" and not by_name["post-commit"].legacy
    assert by_name["post-commit"].interpreter == sys.executable and by_name["post-commit"].interpreter_ok

    githooks.install(ws, python="/nonexistent/python3")
    stale = {h.name: h for h in githooks.status(ws).hooks}["post-commit"]
    assert stale.state == "installed" and not stale.current and not stale.interpreter_ok


def test_refuses_when_foreign_hook_and_legacy_both_exist(repo: GitRepo) -> None:
    _write_hook(_hooks(repo) / "post-commit", b"#!/bin/sh\necho new\n")
    _write_hook(_hooks(repo) / "post-commit.legacy", b"#!/bin/sh\necho old\n")
    with pytest.raises(GitmemError) as err:
        githooks.install(Workspace(repo.path))
    assert err.value.hint and "merge" in err.value.hint
    # Nothing was touched, not even the hooks that had no conflict.
    assert not (_hooks(repo) / "post-merge").exists()
    assert (_hooks(repo) / "post-commit").read_bytes() == b"#!/bin/sh\necho new\n"


def test_core_hooks_path_relative_to_work_tree(repo: GitRepo) -> None:
    _init(repo)
    repo.git("config", "core.hooksPath", ".githooks")
    _write_hook(repo.path / ".githooks" / "post-commit", LEGACY_COMMIT)
    sub = repo.path / "memory"
    sub.mkdir()
    # Found from a subdirectory too: the relative path is the work tree root's, not the cwd's.
    report = githooks.install(Workspace.find(sub))

    assert report.hooks_dir == (repo.path / ".githooks").resolve()
    assert githooks.is_ours(repo.path / ".githooks" / "post-commit")
    assert not (_hooks(repo) / "post-commit").exists()
    repo.commit("x", files={"memory/2025-11-28.md": "# x\n"})
    assert (repo.path / "legacy.out").exists()
    assert _hookrun_ran(repo.path, "post-commit")


def test_worktree_shares_hooks(repo: GitRepo, tmp_path: Path) -> None:
    _init(repo)
    _write_hook(_hooks(repo) / "post-commit", LEGACY_COMMIT)
    githooks.install(Workspace(repo.path))
    wt_path = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "side", str(wt_path))
    wt = GitRepo(wt_path)

    status = githooks.status(Workspace.find(wt_path))
    assert status.hooks_dir == _hooks(repo).resolve()
    assert all(h.state == "installed" for h in status.hooks)
    wt.commit("in worktree", files={"memory/2025-11-29.md": "# 2025-11-29\n"})
    assert (wt_path / "legacy.out").exists()
    # The worktree has its own derived data; the main tree's is untouched by this commit.
    assert _hookrun_ran(wt_path, "post-commit")


def test_post_rewrite_stdin_reaches_legacy_on_amend_and_rebase(repo: GitRepo) -> None:
    base = _init(repo)
    _write_hook(_hooks(repo) / "post-rewrite", LEGACY_REWRITE)
    githooks.install(Workspace(repo.path))
    out = repo.path / "rewrite.out"

    first = repo.commit("day", date="2025-11-27", files={"memory/2025-11-27.md": "# a\n"})
    repo.git("commit", "-q", "--amend", "-m", "day (amended)", date="2025-11-27")
    amended = repo.head()
    assert out.read_text() == f"args: amend\n{first} {amended}\n"
    assert _hookrun_ran(repo.path, "post-rewrite")

    # Rebase the branch onto a new base commit: every rewritten pair arrives on stdin.
    out.unlink()
    second = repo.commit("day 2", date="2025-11-28", files={"memory/2025-11-28.md": "# b\n"})
    repo.git("checkout", "-q", "-b", "other", base)
    repo.commit("other", date="2025-11-29", files={"bank/world.md": "# World\n"})
    repo.git("checkout", "-q", "main")
    _reset_trace(repo.path)
    repo.git("rebase", "-q", "other", date="2025-11-30")
    rebased = repo.git("rev-list", "--reverse", "other..main").split()
    assert out.read_text() == f"args: rebase\n{amended} {rebased[0]}\n{second} {rebased[1]}\n"
    assert _hookrun_ran(repo.path, "post-rewrite")
    # The per-pick post-commit runs are skipped: post-rewrite updates once at the end.
    assert not _hookrun_ran(repo.path, "post-commit")


def test_post_merge_runs(repo: GitRepo) -> None:
    _init(repo)
    _write_hook(_hooks(repo) / "post-merge", b'#!/bin/sh\necho "merge $*" >> merge.out\n')
    githooks.install(Workspace(repo.path))
    repo.git("checkout", "-q", "-b", "reflect")
    repo.commit("reflect", date="2025-11-28", files={"bank/world.md": "# World\n- W: x\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("day", date="2025-11-29", files={"memory/2025-11-29.md": "# d\n"})
    _reset_trace(repo.path)
    repo.git("merge", "-q", "--no-ff", "-m", "merge reflection", "reflect", date="2025-11-30")
    assert (repo.path / "merge.out").read_text() == "merge 0\n"
    assert _hookrun_ran(repo.path, "post-merge")


def test_post_checkout_skips_file_checkout_and_new_worktrees(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    oid = _init(repo)
    monkeypatch.chdir(repo.path)
    assert hookrun.main(["post-checkout", oid, oid, "0"]) == 0
    assert hookrun.main(["post-checkout", "0" * 40, oid, "1"]) == 0
    assert not (repo.path / ".memory").exists()  # nothing ran
    assert hookrun.main(["post-checkout", oid, oid, "1"]) == 0
    assert (repo.path / ".memory").exists()  # a branch checkout does run


def _commit_quietly(repo: GitRepo) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo.path), "commit", "-q", "--allow-empty", "-m", "x"], capture_output=True, text=True
    )


def test_repository_that_is_not_a_memory_workspace_is_left_alone(repo: GitRepo) -> None:
    # e.g. a global core.hooksPath shared by every repository on the machine
    repo.commit("code", files={"main.py": "print(1)\n", "README.md": "# Project\n"})
    githooks.install(Workspace(repo.path))
    proc = _commit_quietly(repo)
    assert proc.returncode == 0
    assert not (repo.path / ".memory").exists()
    repo.write("memory.md", "# Memory\n")
    assert _commit_quietly(repo).returncode == 0
    assert _hookrun_ran(repo.path, "post-commit")


def test_failing_gitmem_never_fails_commit_and_is_logged(repo: GitRepo) -> None:
    _init(repo)
    _write_hook(_hooks(repo) / "post-commit", LEGACY_COMMIT)
    githooks.install(Workspace(repo.path))
    # An error the indexer cannot repair by itself: the workspace config is not TOML.
    repo.write(".gitmem.toml", "this is = = not toml [[\n")

    proc = _commit_quietly(repo)
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == ""
    assert (repo.path / "legacy.out").read_text() == "legacy \n"
    error = githooks.last_hook_error(Workspace(repo.path))
    assert error is not None and " post-commit " in error
    assert error.split(" ", 1)[0].endswith("Z")


def test_junk_index_never_fails_commit(repo: GitRepo) -> None:
    _init(repo)
    githooks.install(Workspace(repo.path))
    repo.write(".memory/index.sqlite", b"\x00junk, not a database\xff" * 100)

    proc = _commit_quietly(repo)
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == ""
    # Whether the indexer rebuilt the junk or gave up, the hook ran and said which.
    assert _hookrun_ran(repo.path, "post-commit")


@pytest.mark.parametrize("python", ["/nonexistent/bin/python3", "/usr/bin/python3"])
def test_missing_interpreter_or_gitmem_is_silent_and_logged(repo: GitRepo, python: str) -> None:
    if python.startswith("/usr") and not os.access(python, os.X_OK):
        pytest.skip(f"{python} is not on this machine")
    if python.startswith("/usr"):
        probe = subprocess.run([python, "-P", "-c", "import gitmem"], cwd="/", capture_output=True)
        if probe.returncode == 0:
            pytest.skip(f"{python} has gitmem installed, so it is not a python without gitmem")
    _init(repo)
    _write_hook(_hooks(repo) / "post-commit", LEGACY_COMMIT)
    githooks.install(Workspace(repo.path), python=python)
    (repo.path / ".memory").mkdir()

    proc = _commit_quietly(repo)
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == ""
    assert (repo.path / "legacy.out").read_text() == "legacy \n"
    error = githooks.last_hook_error(Workspace(repo.path))
    assert error is not None and "HookError" in error and python in error


def test_script_exit_status_is_the_legacy_hooks(repo: GitRepo) -> None:
    hooks = _hooks(repo)
    githooks.install(Workspace(repo.path), python="/nonexistent/bin/python3")
    script = hooks / "post-merge"

    def run() -> int:
        return subprocess.run(["sh", str(script), "0"], cwd=repo.path, capture_output=True).returncode

    assert run() == 0  # gitmem missing: still 0
    _write_hook(hooks / "post-merge.legacy", b"#!/bin/sh\nexit 3\n")
    assert run() == 3
    (hooks / "post-merge.legacy").chmod(0o644)  # git ignores non-executable hooks; so do we
    assert run() == 0


def test_last_hook_error_only_while_newer_than_last_success(repo: GitRepo) -> None:
    ws = Workspace(repo.path)
    assert githooks.last_hook_error(ws) is None
    githooks.record_failure(ws, "post-commit", ValueError("bad\nthing"))
    error = githooks.last_hook_error(ws)
    assert error is not None and error.endswith(" post-commit ValueError: bad thing")
    githooks.record_success(ws, "post-commit")
    assert githooks.last_hook_error(ws) is None
    githooks.record_failure(ws, "post-merge", OSError("disk full"))
    assert "post-merge OSError: disk full" in (githooks.last_hook_error(ws) or "")
    assert len(ws.hook_log.read_text().splitlines()) == 2


def test_post_commit_updates_index(repo: GitRepo) -> None:
    if not _indexer_available():
        pytest.skip("gitmem.index.indexer is not written yet (the hook logs an ImportError meanwhile)")
    _init(repo)
    githooks.install(Workspace(repo.path))
    head = repo.commit(
        "day", date="2025-11-27", files={"memory/2025-11-27.md": "# 2025-11-27\n## Retain\n- W @Peter: In Marrakech.\n"}
    )
    ws = Workspace(repo.path)
    assert githooks.last_hook_error(ws) is None, ws.hook_log.read_text() if ws.hook_log.exists() else ""
    assert "post-commit" in githooks.read_state(ws)["by_hook"]
    con = sqlite3.connect(ws.index_path)
    try:
        dump = "\n".join(con.iterdump()).lower()
    finally:
        con.close()
    assert head in dump or head.upper() in dump.upper()
    assert "marrakech" in dump


def test_cli_install_status_uninstall(repo: GitRepo) -> None:
    from gitmem.cli import cli

    runner = CliRunner()
    res = runner.invoke(cli, ["-C", str(repo.path), "hooks", "install", "--json"], catch_exceptions=False)
    assert res.exit_code == 0
    data = json.loads(res.output)
    assert data["hooks_dir"] == str(_hooks(repo).resolve())
    assert [h["hook"] for h in data["hooks"]] == list(githooks.HOOKS)
    assert len(data["changed"]) == 6  # four hooks, .gitattributes and the merge driver config
    assert data["merge_driver"]["attributes"] and data["merge_driver"]["configured"]

    res = runner.invoke(cli, ["-C", str(repo.path), "hooks", "status", "--json"], catch_exceptions=False)
    data = json.loads(res.output)
    assert {h["state"] for h in data["hooks"]} == {"installed"} and data["last_error"] is None

    res = runner.invoke(cli, ["-C", str(repo.path), "hooks", "uninstall"], catch_exceptions=False)
    assert res.exit_code == 0 and "removed post-commit" in res.output
    res = runner.invoke(cli, ["-C", str(repo.path), "hooks", "status"], catch_exceptions=False)
    assert "post-commit    not installed" in res.output and "merge driver   not installed" in res.output


def test_template_ships_as_package_data() -> None:
    from importlib.resources import files

    text = files("gitmem._hooks").joinpath(githooks.TEMPLATE).read_text()
    assert text.startswith("#!/bin/sh\n") and githooks.MARKER in text
    assert "@@PYTHON@@" in text and "@@HOOK@@" in text
    sh = shutil.which("sh")
    assert sh is not None
    # The rendered script is valid POSIX sh.
    rendered = githooks.render("post-rewrite", "/opt/py with space/bin/python")
    assert subprocess.run([sh, "-n"], input=rendered).returncode == 0
    assert b"PY='/opt/py with space/bin/python'" in rendered


def test_symlinked_user_hook_is_kept_and_restored_as_a_symlink(repo: GitRepo, tmp_path: Path) -> None:
    # Hook managers often link hooks to a shared script; the link itself must survive.
    target = tmp_path / "shared-hook"
    _write_hook(target, LEGACY_COMMIT)
    (_hooks(repo) / "post-commit").symlink_to(target)
    ws = Workspace(repo.path)
    githooks.install(ws)
    assert os.readlink(_hooks(repo) / "post-commit.legacy") == str(target)
    _init(repo)
    assert (repo.path / "legacy.out").exists()
    githooks.uninstall(ws)
    assert os.readlink(_hooks(repo) / "post-commit") == str(target)


def test_the_hook_keeps_and_reuses_the_indexers_compiled_patterns(repo: GitRepo) -> None:
    """Each hook run is a fresh process: the indexer's date and statement patterns (a chunk's last
    day, index/dating.py) were compiled again on every commit. The hook keeps what it compiled in
    .memory/regex.cache (the file recall sessions keep) and the next run loads it (wave 14)."""
    import marshal

    from gitmem.parse import dates

    _init(repo)
    githooks.install(Workspace(repo.path))
    repo.commit("day", date="2025-11-26", files={
        "memory/2025-11-26.md": "# 2025-11-26\n## Retain\n- W @Bob: On sabbatical through March.\n"})
    ws = Workspace(repo.path)
    assert githooks.last_hook_error(ws) is None, ws.hook_log.read_text() if ws.hook_log.exists() else ""
    cache = ws.derived / "regex.cache"
    _, programs = marshal.loads(cache.read_bytes())
    # The patterns reading the new line's last day are among them.
    assert (dates.ENDS_HINT.pattern, int(dates.ENDS_HINT.flags)) in programs  # may_end's
    assert (dates._UNTIL.pattern, int(dates._UNTIL.flags)) in programs  # ends' "through March"
    before = cache.stat()
    repo.commit("day", date="2025-11-27", files={
        "memory/2025-11-27.md": "# 2025-11-27\n## Retain\n- W @Ana: On sabbatical through April.\n"})
    assert githooks.last_hook_error(ws) is None
    # The second run compiled nothing new: it loaded the programs, and the file was not written again.
    # (A line of the same shape: since wave 19 the hook also stores what recall's recency reads of
    # each line, index/readings.py, whose patterns depend on its words: "on leave" has its own.)
    after = cache.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    con = sqlite3.connect(ws.index_path)
    try:
        days = dict(con.execute("SELECT content, last_day FROM chunks WHERE content LIKE '%through%'"))
    finally:
        con.close()
    assert days == {"@Bob: On sabbatical through March.": "2026-03-31", "@Ana: On sabbatical through April.": "2026-04-30"}
