"""Issue 12, data loss and stuck state: each test reproduces one reported case (real git, real
files, real processes) and fails on the behaviour the issue describes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gitmem.retain as retain_mod
from gitmem.errors import GitmemError
from gitmem.retain import retain
from gitmem.workspace import Workspace
from gitrepo import GitRepo

LOG = "memory/2025-11-27.md"


def gitmem(cwd: Path, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitmem", "-C", str(cwd), *args], capture_output=True, text=True,
                          **kw)  # type: ignore[call-overload]


@pytest.fixture
def ws(repo: GitRepo) -> tuple[GitRepo, Workspace]:
    repo.commit("start", files={"memory.md": "# Memory\n", ".gitignore": ".memory/\n",
                                LOG: "# 2025-11-27\n\n## Retain\n- W @Andy: Turns 40.\n"})
    return repo, Workspace(repo.path)


# --- (3) retain writes the day log atomically --------------------------------------------------------

def test_retain_on_a_full_disk_leaves_the_log_byte_for_byte(ws: tuple[GitRepo, Workspace]) -> None:
    repo, _ = ws
    # 60 KB of uncommitted lines, then a file-size limit of 40 KB: writing the new log cannot finish.
    body = "# 2025-11-27\n\n" + "".join(f"uncommitted narrative line {i:05d}\n" for i in range(2000)) + \
        "\n## Retain\n- W @Andy: Turns 40.\n"
    repo.write(LOG, body)
    before = (repo.path / LOG).read_bytes()
    assert len(before) > 60_000
    limit = textwrap.dedent("""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # EFBIG instead of being killed
        resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))
        from gitmem.cli import main
        main(sys.argv[1:])
    """)
    proc = subprocess.run([sys.executable, "-c", limit, "-C", str(repo.path), "retain", "W @Peter: Full disk.",
                           "--date", "2025-11-27"], capture_output=True, text=True)
    assert proc.returncode != 0
    assert (repo.path / LOG).read_bytes() == before
    assert not [p for p in (repo.path / "memory").iterdir() if p.name != "2025-11-27.md"], "temp file left behind"


# --- (4) retain racing a user's `git commit -am` ----------------------------------------------------------

def test_retain_racing_a_user_commit_keeps_the_bullet(ws: tuple[GitRepo, Workspace],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    repo, w = ws
    real_commit = retain_mod._commit

    def user_commits_first(*args: object, **kw: object) -> str:
        # The user's `git commit -am` lands between retain's write and retain's commit.
        repo.git("commit", "-qam", "user's own commit")
        return real_commit(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(retain_mod, "_commit", user_commits_first)
    out = retain(w, "W @Peter: Raced a user commit.", day="2025-11-27")
    user_commit = repo.head()
    assert repo.git("log", "-1", "--format=%s") == "user's own commit"
    # The bullet is in the user's commit and still in the file: nothing was rolled back.
    assert "- W @Peter: Raced a user commit." in repo.git("show", f"HEAD:{LOG}")
    assert "- W @Peter: Raced a user commit." in (repo.path / LOG).read_text()
    assert out["committed"] and out["commit"] == user_commit
    assert any("already committed" in n for n in out["notes"])
    monkeypatch.undo()
    # The next retain commits only its own bullet, never a deletion of the first.
    retain(w, "W @Andy: Second fact.", day="2025-11-27")
    diff = repo.git("diff", "HEAD^", "HEAD", "--", LOG)
    assert "-- W @Peter" not in diff and "+- W @Andy: Second fact." in diff


def test_failed_commit_never_rolls_back_bytes_retain_did_not_write(ws: tuple[GitRepo, Workspace]) -> None:
    repo, w = ws
    # A pre-commit hook stands in for the user's editor saving the file while retain commits, then
    # the commit fails: retain must leave the user's bytes alone.
    hook = repo.path / ".git/hooks/pre-commit"
    hook.write_text(f"#!/bin/sh\nprintf 'edited by the user meanwhile\\n' >> '{repo.path / LOG}'\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(GitmemError, match="changed while retain was committing"):
        retain(w, "W: Rejected by the hook.", day="2025-11-27")
    text = (repo.path / LOG).read_text()
    assert text.endswith("- W: Rejected by the hook.\nedited by the user meanwhile\n")


# --- (5) a big retain: the message goes through stdin, a failure leaves nothing behind ---------------------

def test_retain_over_128_kb_commits(ws: tuple[GitRepo, Workspace]) -> None:
    repo, w = ws
    big = "W @Peter: " + "long fact " * 20_000  # ~200 KB: more than one argument may hold (MCP passes these)
    out = retain(w, big, day="2025-11-27")
    assert out["committed"] and out["commit"] == repo.head()
    assert big.strip() in repo.git("log", "-1", "--format=%B")
    assert repo.git("status", "--porcelain") == ""


def test_any_commit_failure_leaves_no_bullet_behind(ws: tuple[GitRepo, Workspace],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    repo, w = ws
    before = (repo.path / LOG).read_bytes()

    def too_big(*args: object, **kw: object) -> str:
        raise OSError(7, "Argument list too long")  # what E2BIG looked like: not a GitmemError

    monkeypatch.setattr(retain_mod, "_commit", too_big)
    with pytest.raises(OSError):
        retain(w, "W: Never committed.", day="2025-11-27")
    assert (repo.path / LOG).read_bytes() == before
    monkeypatch.undo()
    retain(w, "W: Never committed.", day="2025-11-27")
    assert (repo.path / LOG).read_text().count("Never committed") == 1


# --- (1) reflect.branch can only name gitmem's own review branch ---------------------------------------

def _reflect_ws(repo: GitRepo) -> Workspace:
    from gitmem.index.indexer import update

    repo.commit("init", "2025-11-01", {"memory.md": "# Memory\n\n- @Peter is the human I work for.\n",
                                       ".gitignore": ".memory/\n"})
    repo.commit("log", "2025-11-05", {"memory/2025-11-05.md": "# 2025-11-05\n\n## Retain\n- W @Peter: Lives in Berlin.\n"})
    ws = Workspace.find(repo.path)
    update(ws)
    return ws


@pytest.mark.parametrize("name", ["main", "refs/heads/main", "HEAD", "v1", "gitmem/../main", "gitmem/a..b",
                                  "gitmem/", "gitmem/x.lock", "other/reflect"])
def test_config_refuses_a_review_branch_outside_gitmems_namespace(repo: GitRepo, name: str) -> None:
    repo.commit("start", files={"memory.md": "# Memory\n"})
    repo.git("tag", "v1")
    proc = gitmem(repo.path, "config", "reflect.branch", name, "--json")
    assert proc.returncode == 1, proc.stdout
    assert "reflect.branch" in json.loads(proc.stdout)["error"]
    assert not (repo.path / ".gitmem.toml").exists()


def test_config_refuses_a_name_that_is_another_ref(repo: GitRepo) -> None:
    repo.commit("start", files={"memory.md": "# Memory\n"})
    repo.git("tag", "gitmem/taken")
    repo.git("branch", "gitmem/mine")  # the user's own branch under the prefix
    for name, why in (("gitmem/taken", "refs/tags/gitmem/taken"), ("gitmem/mine", "already exists")):
        proc = gitmem(repo.path, "config", "reflect.branch", name)
        assert proc.returncode == 1 and why in proc.stderr, proc.stderr
    assert gitmem(repo.path, "config", "reflect.branch", "gitmem/review").returncode == 0


def test_committed_config_naming_main_never_moves_or_deletes_it(repo: GitRepo) -> None:
    from gitmem.reflect import review
    from gitmem.reflect.run import RunOptions, reflect

    ws = _reflect_ws(repo)
    main = repo.head()
    repo.commit("hostile config", "2025-11-06", {".gitmem.toml": '[reflect]\nbranch = "main"\n'})
    main = repo.head()
    for cmd in (["reflect", "--no-llm"], ["review", "--discard"], ["review", "--merge"]):
        proc = gitmem(repo.path, *cmd, "--json")
        assert proc.returncode == 1 and "gitmem/" in json.loads(proc.stdout)["error"], (cmd, proc.stdout)
    assert repo.git("rev-parse", "main") == main
    with pytest.raises(GitmemError):
        reflect(ws, RunOptions(model=None))
    with pytest.raises(GitmemError):
        review.discard(ws)
    assert repo.git("rev-parse", "main") == main


def test_reflect_and_review_refuse_a_review_branch_with_a_users_commit(repo: GitRepo) -> None:
    from gitmem.reflect import review
    from gitmem.reflect.run import RunOptions, reflect

    ws = _reflect_ws(repo)
    # The user already has a branch of that name with their own work: reflect must not force-move it.
    repo.git("branch", "gitmem/reflect")
    theirs = repo.git("rev-parse", "gitmem/reflect")
    with pytest.raises(GitmemError, match="gitmem did not make"):
        reflect(ws, RunOptions(model=None))
    with pytest.raises(GitmemError, match="gitmem did not make"):
        review.discard(ws)
    assert repo.git("rev-parse", "gitmem/reflect") == theirs
    repo.git("branch", "-D", "gitmem/reflect")
    # A real proposal, then the user commits on top of it: also no longer gitmem's to delete.
    out = reflect(ws, RunOptions(model=None))
    assert out["status"] == "written" and repo.git("log", "gitmem/reflect", "-1", "--format=%ae") == \
        "reflect@gitmem.invalid"
    repo.git("switch", "-q", "gitmem/reflect")
    repo.commit("my edit on the proposal", "2025-11-07", {"bank/mine.md": "# Mine\n"})
    edited = repo.head()
    repo.git("switch", "-q", "main")
    with pytest.raises(GitmemError, match="gitmem did not make"):
        review.discard(ws)
    with pytest.raises(GitmemError, match="gitmem did not make"):
        reflect(ws, RunOptions(model=None))
    assert repo.git("rev-parse", "gitmem/reflect") == edited


def test_review_branch_checked_out_elsewhere_is_not_deleted(repo: GitRepo, tmp_path: Path) -> None:
    from gitmem.reflect import review
    from gitmem.reflect.run import RunOptions, reflect

    ws = _reflect_ws(repo)
    proposal = reflect(ws, RunOptions(model=None))["commit"]
    repo.git("worktree", "add", "-q", str(tmp_path / "wt"), "gitmem/reflect")
    with pytest.raises(GitmemError, match="checked out in"):
        review.discard(ws)
    assert repo.git("rev-parse", "gitmem/reflect") == proposal


def test_a_symbolic_review_ref_never_moves_the_branch_it_points_to(repo: GitRepo) -> None:
    from gitmem.reflect import review
    from gitmem.reflect.run import RunOptions, reflect

    ws = _reflect_ws(repo)
    proposal = reflect(ws, RunOptions(model=None))["commit"]
    repo.git("branch", "gitmem/target", proposal)  # a branch whose tip happens to be gitmem's commit
    repo.git("symbolic-ref", "refs/heads/gitmem/reflect", "refs/heads/gitmem/target")
    review.discard(ws)
    assert repo.git("rev-parse", "gitmem/target") == proposal


# --- (12) settings are validated on write and on read ----------------------------------------------------

@pytest.mark.parametrize(("key", "value", "why"), [
    ("recall.k", "99999999999999999999", "at most"),
    ("recall.budget", "99999999999999999999", "at most"),
    ("reflect.seed", "99999999999999999999", "at most"),
    ("reflect.model", "/nonexistent.gguf", "does not exist"),
    ("reflect.model", ".", "is not a file"),
    ("index.branch", "nosuchbranch", "no branch"),
])
def test_config_refuses_values_that_cannot_work(repo: GitRepo, key: str, value: str, why: str) -> None:
    repo.commit("start", files={"memory.md": "# Memory\n"})
    proc = gitmem(repo.path, "config", key, value, "--json")
    assert proc.returncode == 1, proc.stdout
    err = json.loads(proc.stdout)
    assert why in err["error"] and key in err["error"] and err["hint"]
    assert not (repo.path / ".gitmem.toml").exists()


def test_bad_values_in_a_committed_config_are_reported_on_read(repo: GitRepo) -> None:
    repo.commit("start", files={"memory.md": "# Memory\n", ".gitmem.toml": "[recall]\nk = 9999999999999\n"})
    proc = gitmem(repo.path, "recall", "memory", "--json")
    assert proc.returncode == 1 and "recall.k must be at most" in json.loads(proc.stdout)["error"]
    (repo.path / ".gitmem.toml").write_text('[index]\nbranch = "gone"\n')
    for cmd in (["index"], ["status"]):
        proc = gitmem(repo.path, *cmd, "--json")
        assert proc.returncode == 1, (cmd, proc.stdout)
        assert "index.branch = 'gone'" in json.loads(proc.stdout)["error"]


def test_review_merge_never_aborts_the_users_own_merge(repo: GitRepo) -> None:
    from gitmem.index.indexer import update
    from gitmem.reflect import review
    from gitmem.reflect.run import RunOptions, reflect

    ws = _reflect_ws(repo)
    repo.git("switch", "-q", "-c", "side")
    repo.commit("side", "2025-11-06", {"notes.txt": "side\n"})
    repo.git("switch", "-q", "main")
    repo.commit("main", "2025-11-06", {"notes.txt": "main\n"})
    update(ws)
    reflect(ws, RunOptions(model=None))  # the proposal is built on main's HEAD
    repo.git("merge", "side", check=False)  # conflicts, HEAD unchanged: the user is resolving it
    assert (repo.path / ".git/MERGE_HEAD").exists()
    repo.write("notes.txt", "my careful resolution\n")
    head = repo.head()
    with pytest.raises(GitmemError):
        review.merge(ws)
    assert (repo.path / ".git/MERGE_HEAD").exists()
    assert (repo.path / "notes.txt").read_text() == "my careful resolution\n"
    assert repo.head() == head


# --- (10) the recorded tip no longer exists ------------------------------------------------------------

def test_pruned_recorded_tip_means_rebuild_not_bad_object(repo: GitRepo) -> None:
    repo.commit("one", "2025-11-01", {"memory.md": "# Memory\n\n- first fact\n"})
    repo.commit("two", "2025-11-02", {"memory.md": "# Memory\n\n- first fact\n- second fact\n"})
    assert gitmem(repo.path, "index").returncode == 0
    old_tip = repo.head()
    # What filter-repo does: rewrite every commit, then drop the old objects for good.
    repo.git("filter-branch", "-f", "--msg-filter", "sed s/^/rewritten-/", "HEAD",
             input=None)
    repo.git("update-ref", "-d", "refs/original/refs/heads/main")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    assert repo.git("cat-file", "-t", old_tip, check=False) == ""
    status = json.loads(gitmem(repo.path, "status", "--json").stdout)
    assert status["behind"] is None and not status["up_to_date"]
    proc = gitmem(repo.path, "index", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    assert any("no longer exists" in n for n in out["notes"]), out
    status = json.loads(gitmem(repo.path, "status", "--json").stdout)
    assert status["indexed"] == repo.head() and status["up_to_date"] and status["counts"]["commits"] == 2
    # and it stays healthy: the next run has nothing to do
    assert gitmem(repo.path, "index").returncode == 0


def test_amend_then_prune_rolls_back_to_what_still_exists(repo: GitRepo) -> None:
    repo.commit("one", "2025-11-01", {"memory.md": "# Memory\n\n- first fact\n"})
    repo.commit("two", "2025-11-02", {"memory.md": "# Memory\n\n- first fact\n- second fact\n"})
    assert gitmem(repo.path, "index").returncode == 0
    repo.git("commit", "-q", "--amend", "-m", "two, amended")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    out = json.loads(gitmem(repo.path, "index", "--json").stdout)
    assert any("no longer exists" in n and "rolled the index back 1" in n for n in out["notes"]), out
    found = json.loads(gitmem(repo.path, "recall", "second fact", "--json").stdout)
    assert found["results"] and found["results"][0]["commit"] == repo.head()


# --- (11) `git fetch --unshallow` --------------------------------------------------------------------------

def test_unshallow_is_detected_and_reindexed(repo: GitRepo, tmp_path: Path) -> None:
    for i in range(1, 5):
        repo.commit(f"c{i}", f"2025-11-0{i}", {f"memory/2025-11-0{i}.md": f"# Day {i}\n\nfact number {i} here\n"})
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(clone)], check=True)
    assert gitmem(clone, "index").returncode == 0
    status = json.loads(gitmem(clone, "status", "--json").stdout)
    assert status["shallow"] and status["counts"]["commits"] == 1
    subprocess.run(["git", "-C", str(clone), "fetch", "-q", "--unshallow"], check=True)
    status = json.loads(gitmem(clone, "status", "--json").stdout)
    assert not status["shallow"] and not status["up_to_date"]
    # recall catches up by itself, and finds what lived only before the old boundary
    found = json.loads(gitmem(clone, "recall", "fact number 1", "--as-of", "2025-11-01T23:00:00Z", "--json").stdout)
    assert found["results"], found
    status = json.loads(gitmem(clone, "status", "--json").stdout)
    assert not status["shallow"] and status["up_to_date"] and status["counts"]["commits"] == 4


# --- (2) a committed `.memory` symlink is never followed ----------------------------------------------------

def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_committed_memory_symlink_is_refused_and_never_written_through(repo: GitRepo, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "index.sqlite").write_bytes(b"someone else's database")
    (target / "hook.log").write_text("theirs\n")
    repo.commit("start", files={"memory.md": "# Memory\n\n- a fact\n"})
    (repo.path / ".memory").symlink_to(target)
    repo.git("add", "-f", ".memory")
    repo.git("commit", "-qm", "hostile symlink")
    before = _tree_bytes(target)
    for cmd in (["index"], ["index", "--rebuild"], ["status"], ["recall", "fact"], ["retain", "W: x", "--date",
                                                                                   "2025-11-27"]):
        proc = gitmem(repo.path, *cmd, "--json")
        assert proc.returncode == 1, (cmd, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr
        err = json.loads(proc.stdout)
        assert ".memory/ is a symlink" in err["error"] and err["hint"], err
    # The post-commit hook runs too (it never fails a commit): it must not write there either.
    assert gitmem(repo.path, "hooks", "install").returncode == 0
    repo.commit("after hooks", files={"memory.md": "# Memory\n\n- another fact\n"})
    assert _tree_bytes(target) == before
    assert sorted(p.name for p in target.iterdir()) == ["hook.log", "index.sqlite"]


def test_symlinks_inside_memory_are_refused(repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo.commit("start", files={"memory.md": "# Memory\n\n- a fact\n", ".gitignore": ".memory/\n"})
    (repo.path / ".memory").mkdir()
    for name in ("index.sqlite", "index.lock", "retain.lock", "hook.state", "hook.log"):
        (repo.path / ".memory" / name).unlink(missing_ok=True)
        (repo.path / ".memory" / name).symlink_to(outside / name)
        proc = gitmem(repo.path, "index", "--json") if name.startswith("index") else \
            gitmem(repo.path, "retain", "W: x", "--date", "2025-11-27", "--json") if name == "retain.lock" else None
        if proc is not None:
            assert proc.returncode == 1 and f".memory/{name} is a symlink" in json.loads(proc.stdout)["error"]
        (repo.path / ".memory" / name).unlink()
    # hook.state and hook.log: the post-commit hook records through them; nothing may land outside.
    for name in ("hook.state", "hook.log"):
        (repo.path / ".memory" / name).unlink(missing_ok=True)
        (repo.path / ".memory" / name).symlink_to(outside / name)
    assert gitmem(repo.path, "hooks", "install").returncode == 0
    repo.commit("hooked", files={"memory.md": "# Memory\n\n- b fact\n"})
    assert list(outside.iterdir()) == []


# --- siblings: other files written in place or through symlinks ----------------------------------------------

def test_init_never_appends_through_a_gitignore_symlink(repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside-ignore"
    outside.write_text("theirs\n")
    (repo.path / ".gitignore").symlink_to(outside)
    repo.git("add", ".gitignore")
    repo.git("commit", "-qm", "symlinked ignore")
    assert gitmem(repo.path.parent, "init", str(repo.path)).returncode in (0, 1)
    assert outside.read_text() == "theirs\n"


def test_config_edit_is_atomic_and_refuses_a_symlinked_config(repo: GitRepo, tmp_path: Path) -> None:
    repo.commit("start", files={"memory.md": "# Memory\n"})
    outside = tmp_path / "outside.toml"
    outside.write_text("[recall]\nk = 3\n")
    (repo.path / ".gitmem.toml").symlink_to(outside)
    proc = gitmem(repo.path, "config", "recall.k", "5", "--json")
    assert proc.returncode == 1 and "is a symlink" in json.loads(proc.stdout)["error"]
    assert outside.read_text() == "[recall]\nk = 3\n" and (repo.path / ".gitmem.toml").is_symlink()
    (repo.path / ".gitmem.toml").unlink()
    # The old fixed temp name `.gitmem.toml.tmp` was written through when it was a symlink.
    (repo.path / ".gitmem.toml.tmp").symlink_to(tmp_path / "victim")
    assert gitmem(repo.path, "config", "recall.k", "5").returncode == 0
    assert not (tmp_path / "victim").exists()
    assert [p.name for p in repo.path.iterdir() if "gitmem-tmp" in p.name] == []
