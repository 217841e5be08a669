"""`gitmem forget`: a fact added, edited and curated into bank/ across many commits is removed from
the files and from every commit; everything else (and the citations to it) survives."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from gitrepo import GitRepo
from indexoracle import index_rows, recalled, tree_chunks
from test_reflect_run import FakeModel

from gitmem import forget as fg
from gitmem import layout
from gitmem.errors import GitmemError
from gitmem.index.indexer import update
from gitmem.recall.views import show
from gitmem.reflect import review
from gitmem.layout import REFLECT_CACHE as CACHE_FILE
from gitmem.reflect.model import CachedModel
from gitmem.reflect.run import RunOptions, reflect
from gitmem.workspace import Workspace

SECRET = "4711"
LOG3 = ("# 2025-11-03\n\nTalked about the bank.\n\n## Retain\n- W @Peter: Bank PIN is 4711.\n- W @Peter: Plays chess on Sundays.\n"
        "- O(c=0.7) @Peter: Worries that his PIN is 4711 is too easy.\n")


def _git(path: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _cli(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitmem", "-C", str(ws), *args], capture_output=True, text=True,
                          timeout=300)


# The second the privacy test once failed in CI (see _contents): the reflection's merge commit takes
# its date from the clock, so without a pin every run has other commit ids and times.
FAILED_AT = "1796114711 +0000"


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(var, f"@{FAILED_AT}")


def build(repo: GitRepo, fillers: int = 12) -> Workspace:
    repo.commit("init", "2025-11-01", {".gitignore": ".memory/\n", "memory.md": "# Memory\n\n- @Peter is my human.\n",
                                       "memory/2025-11-01.md": "# 2025-11-01\n\n## Retain\n- W @Peter: Lives in Berlin.\n"})
    repo.commit("retain: W @Peter: Bank PIN is 4711.\n\n- W @Peter: Bank PIN is 4711.", "2025-11-03",
                {"memory/2025-11-03.md": LOG3})
    for i in range(fillers):
        day = f"2025-11-{4 + i:02d}"
        repo.commit(f"log {day}", day, {f"memory/{day}.md": f"# {day}\n\n## Retain\n- S: Filler note number {i}.\n"})
    repo.commit("edit the PIN", "2025-11-17",
                {"memory/2025-11-03.md": LOG3.replace("4711.", "4711 (the new card).")})
    repo.git("tag", "v1")
    ws = Workspace(repo.path)
    update(ws)
    reflect(ws, RunOptions(model=None))
    review.merge(ws)  # bank/entities/Peter.md, bank/world.md, bank/.reflect.json now quote the PIN
    repo.commit("lisbon", "2025-11-20", {"memory/2025-11-20.md": "# 2025-11-20\n\n## Retain\n- W @Peter: Moved to Lisbon.\n"})
    update(ws)
    return ws


# What git itself writes around memory text: the `<oid> <type> <size>` line `cat-file --batch` puts
# before each object, the object ids a commit or tag names (tree, parent, object) and the seconds of
# each signature. A short secret such as "4711" turns up in them by chance: in a commit id about once
# in 1,800 commits, and in the wall-clock seconds of the reflection's merge commit once every 10,000
# seconds (08:45:11 on 2026-12-01 is 1796114711). Both made this test fail with nothing to forget.
_OID_HEADER = re.compile(rb"^(?:tree|parent|object) [0-9a-f]{40,64}\n", re.M)
_SIGNED_AT = re.compile(rb"^((?:author|committer|tagger) [^\n]*>) -?\d+ [+-]\d{4}$", re.M)


def _contents(batch: bytes) -> list[bytes]:
    """The text of each object in `git cat-file --batch` output: a blob whole, a tree's file names,
    a commit's or tag's headers (ids and times left out) and message."""
    out: list[bytes] = []
    pos = 0
    while pos < len(batch):
        eol = batch.index(b"\n", pos)
        _, kind, size = batch[pos:eol].split(b" ")
        body = batch[eol + 1 : eol + 1 + int(size)]
        pos = eol + 1 + int(size) + 1
        if kind == b"tree":  # entries are "<mode> <name>\0<binary id>"
            names, i = [], 0
            while i < len(body):
                nul = body.index(b"\0", i)
                names.append(body[body.index(b" ", i) + 1 : nul])
                i = nul + 1 + 20
            out.append(b"\n".join(names))
        elif kind in (b"commit", b"tag"):
            head, sep, message = body.partition(b"\n\n")
            out.append(_SIGNED_AT.sub(rb"\1", _OID_HEADER.sub(b"", head + b"\n")) + sep + message)
        else:
            out.append(body)
    return out


def _blobs_with(repo: Path, needle: str, refs: list[str] | None = None) -> bool:
    """Whether an object reachable from `refs` (default: every ref but the backups) holds `needle`
    in what memory wrote into it (file content, file names, messages, identities)."""
    if refs is None:
        refs = [r for r in _git(repo, "for-each-ref", "--format=%(refname)").split() if not r.startswith(fg.BACKUP_NS)]
    objects = _git(repo, "rev-list", "--objects", *refs).split("\n")
    oids = "\n".join(line.split(" ", 1)[0] for line in objects if line.strip()) + "\n"
    got = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"], input=oids.encode(), capture_output=True)
    return any(needle.encode() in text for text in _contents(got.stdout))


def _all_objects_hold(repo: Path, needle: str) -> bool:
    got = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"], capture_output=True)
    return any(needle.encode() in text for text in _contents(got.stdout))


def _log_text(repo: Path, *args: str) -> str:
    """`git log -p` without what git adds around memory text (commit ids, dates, `index a..b` lines)."""
    out = _git(repo, "log", "-p", "--no-color", "--format=%an <%ae>%n%cn <%ce>%n%B", *args)
    return "\n".join(ln for ln in out.split("\n") if not re.match(r"index [0-9a-f]+\.\.[0-9a-f]+", ln))


def _without_oids(repo: Path, data: bytes) -> bytes:
    """`data` with every object id of the repository taken out (the index keeps commit ids as text)."""
    for oid in _git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split():
        data = data.replace(oid.encode(), b"")
    return data


def _facts(repo: Path, rev: str = "HEAD") -> set[tuple[str, str]]:
    return {(p, c) for p, c in tree_chunks(repo, rev) if p.startswith("memory")}


def test_the_leak_check_reads_memory_text_not_git_ids_or_times(repo: GitRepo) -> None:
    """The check above must see the secret in memory text, and nowhere else: not in a commit id
    that happens to contain it, nor in a commit's seconds (the pinned clock's 1796114711)."""
    repo.commit("init", "2025-11-01", {"memory.md": "# Memory\n\n- @Peter is my human.\n"})
    tree, parent = repo.git("rev-parse", "HEAD^{tree}"), repo.head()
    sig = f"Test User <test@example.com> {FAILED_AT}"
    for n in range(200_000):  # a commit id holds "4711" about once in 1,800 tries
        body = f"tree {tree}\nparent {parent}\nauthor {sig}\ncommitter {sig}\n\nnote {n}\n".encode()
        if SECRET in hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest():
            break
    oid = repo.git("hash-object", "-t", "commit", "-w", "--stdin", input=body.decode())
    assert SECRET in oid
    repo.git("update-ref", "refs/heads/main", oid, parent)
    raw = subprocess.run(["git", "-C", str(repo.path), "cat-file", "--batch-all-objects", "--batch"], capture_output=True)
    assert raw.stdout.count(SECRET.encode()) == 3  # the id in its `<oid> commit <size>` line, the two times
    assert not _blobs_with(repo.path, SECRET) and not _all_objects_hold(repo.path, SECRET)
    assert SECRET not in _log_text(repo.path, "--all")
    # ... and still sees it where memory put it: a file, a file name, a message.
    for files, message in (({"memory.md": "- PIN 4711\n"}, "x"), ({"4711.md": "-\n"}, "y"), ({}, "PIN 4711")):
        repo.git("reset", "-q", "--hard", oid)
        repo.commit(message, "2025-11-02", files)
        assert _blobs_with(repo.path, SECRET) and _all_objects_hold(repo.path, SECRET), (files, message)
    assert SECRET in _log_text(repo.path, "--all")


def test_forget_a_fact_everywhere_and_keep_the_rest(repo: GitRepo) -> None:
    ws = build(repo)
    before_facts = _facts(repo.path)
    before_log = _git(repo.path, "log", "--first-parent", "--format=%s %ad", "--date=short").splitlines()
    assert _blobs_with(repo.path, SECRET) and SECRET in _log_text(repo.path, "--all")
    world_before = (repo.path / "bank/world.md").read_text()
    assert re.search(r"Plays chess on Sundays\. \(memory/2025-11-03\.md#L7@", world_before)
    cache = CachedModel(FakeModel(), ws.derived / CACHE_FILE)  # one answer that saw the PIN, one that did not
    cache.complete_json("sys", "FACTS>>>\nBank PIN is 4711", {"properties": {"summary": {}}}, 10)
    cache.complete_json("sys", "FACTS>>>\nPlays chess", {"properties": {"summary": {}}}, 10)
    cache.close()

    dry = fg.forget(ws, fg.target_for(ws, "PIN is 4711", None), dry_run=True)
    assert dry.status == "dry-run" and _blobs_with(repo.path, SECRET)  # nothing changed
    assert {"memory/2025-11-03.md", "bank/entities/Peter.md", "bank/world.md", "bank/opinions.md",
            "bank/.reflect.json"} <= set(dry.files)
    assert {ln["text"] for ln in dry.lines} >= {"- W @Peter: Bank PIN is 4711.", "- W @Peter: Bank PIN is 4711 (the new card)."}
    assert len(dry.commits) >= 4 and dry.messages >= 1 and not (repo.path / ".git/filter-repo").exists()

    rep = fg.forget(ws, fg.target_for(ws, "PIN is 4711", None), dry_run=False)
    assert rep.status == "forgotten" and [c.commit for c in rep.commits] == [c.commit for c in dry.commits]
    assert rep.backup and rep.index_rebuilt and rep.cache_dropped == 1
    # Nothing reachable from a ref (the backup excepted) holds it: files, bank pages, state, messages.
    assert not _blobs_with(repo.path, SECRET)
    assert SECRET not in _log_text(repo.path, f"--exclude={fg.BACKUP_NS}/*", "--all")
    assert SECRET in _log_text(repo.path, "--all")  # the backup still has it
    assert not (repo.path / ".git/ORIG_HEAD").exists()
    assert _blobs_with(repo.path, SECRET, [r for r in _git(repo.path, "for-each-ref", "--format=%(refname)").split()
                                          if r.startswith(fg.BACKUP_NS)])
    # The work tree, every other fact, and the timeline (the emptied edit commit is gone).
    assert SECRET not in (repo.path / "memory/2025-11-03.md").read_text()
    assert _facts(repo.path) == {f for f in before_facts if SECRET not in f[1]}
    after_log = _git(repo.path, "log", "--first-parent", "--format=%s %ad", "--date=short").splitlines()
    def unhashed(lines: list[str]) -> list[str]:
        return [re.sub(r"\b[0-9a-f]{7,40}\b", "<oid>", ln) for ln in lines]

    expected = [ln.replace("retain: W @Peter: Bank PIN is 4711.", "gitmem forget: the message of this commit was forgotten")
                for ln in before_log if not ln.startswith("edit the PIN")]
    assert unhashed(after_log) == unhashed(expected)
    assert not _git(repo.path, "status", "--porcelain").strip()
    # Recall, now and as of any day, never returns it; the rest is still there.
    for as_of in (None, "2025-11-03", "2025-11-10", "2025-11-18", "2025-11-20"):
        got = recalled(ws, as_of)
        assert not [c for _, c in got if SECRET in c], as_of
        if as_of != "2025-11-01":
            assert any("Plays chess on Sundays" in c for _, c in got), as_of
    assert recalled(ws, None) == tree_chunks(repo.path, "HEAD")
    index = ws.index_path.read_bytes()
    assert SECRET.encode() not in _without_oids(repo.path, index)
    rebuilt = index_rows(ws)
    update(ws, rebuild=True)
    assert index_rows(ws) == rebuilt
    # Citations inside memory point at the rewritten commits, moved up by the removed line.
    world = (repo.path / "bank/world.md").read_text()
    cites = re.findall(r"\((memory/[^()]+#L\d+(?:-L\d+)?@[0-9a-f]{7})\)", world)
    assert cites and rep.citations_remapped >= len(cites)
    assert re.search(r"Plays chess on Sundays\. \(memory/2025-11-03\.md#L6@", world)
    for cite in cites:
        shown = show(ws, cite)
        fact = next(ln for ln in world.splitlines() if cite in ln).split(" (memory/")[0][2:]
        assert fact in " ".join(shown["lines"]), (cite, shown)
    # The reflection cache lost the answer that saw the PIN, and only that one.
    assert SECRET.encode() not in (ws.derived / CACHE_FILE).read_bytes()
    state = json.loads((repo.path / "bank/.reflect.json").read_text())
    assert _git(repo.path, "cat-file", "-t", state["through"]).strip() == "commit"

    # Until the backup is purged the old objects stay; after it and gc, no object holds it.
    assert _all_objects_hold(repo.path, SECRET)
    purged = fg.purge_backup(ws)
    assert purged.refs and not [r for r in _git(repo.path, "for-each-ref").split() if fg.BACKUP_NS in r]
    assert not _all_objects_hold(repo.path, SECRET)


def test_a_ref_made_while_forget_runs_is_reported_and_a_second_run_rewrites_it(
        repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ref that appears while filter-repo rewrites (a reflection proposal built on the old HEAD,
    a branch the user makes) is not in the list it rewrites: forget must not call that done."""
    ws = build(repo, fillers=1)
    old_head, real = repo.head(), fg._filter

    def rewrite_then_branch(*args: object, **kw: object) -> object:
        got = real(*args, **kw)  # type: ignore[arg-type]
        repo.git("update-ref", "refs/heads/late", old_head, "")  # the moment between rewrite and report
        return got

    monkeypatch.setattr(fg, "_filter", rewrite_then_branch)
    # Both runs in one second, as a user re-running it at once does: each keeps its own backup.
    second = time.gmtime()
    monkeypatch.setattr(fg, "time", SimpleNamespace(gmtime=lambda: second, strftime=time.strftime,
                                                    monotonic=time.monotonic))
    target = fg.target_for(ws, "PIN is 4711", None)
    rep = fg.forget(ws, target, dry_run=False)
    assert rep.status == "forgotten" and rep.other_refs == ["refs/heads/late"]
    assert any(n.startswith("refs/heads/late still reach the text") for n in rep.notes), rep.notes
    assert _blobs_with(repo.path, SECRET)  # what the report says is true
    monkeypatch.setattr(fg, "_filter", real)
    again = fg.forget(ws, target, dry_run=False)
    assert again.status == "forgotten" and again.other_refs == [] and again.backup == f"{rep.backup}-2"
    assert {r["ref"] for r in again.refs} == {"refs/heads/late"}
    assert not _blobs_with(repo.path, SECRET) and SECRET not in _log_text(repo.path, f"--exclude={fg.BACKUP_NS}/*", "--all")


def test_cli_dry_run_requires_yes_and_refuses_with_reasons(repo: GitRepo, tmp_path: Path) -> None:
    build(repo, fillers=2)
    head = repo.head()
    out = _cli(repo.path, "forget", "PIN is 4711")
    assert out.returncode == 0 and "Nothing was changed" in out.stdout and "--yes" in out.stdout
    assert "memory/2025-11-03.md" in out.stdout and repo.head() == head
    data = json.loads(_cli(repo.path, "forget", "PIN is 4711", "--dry-run", "--json").stdout)
    assert data["status"] == "dry-run" and data["refs"] == [] and repo.head() == head
    (repo.path / "memory.md").write_text("dirty\n")
    noted = json.loads(_cli(repo.path, "forget", "PIN is 4711", "--json").stdout)  # a dry run still lists
    assert noted["commits"] and "uncommitted changes (memory.md)" in noted["notes"][0]
    err = _cli(repo.path, "forget", "PIN is 4711", "--yes")
    assert err.returncode == 1 and "uncommitted changes (memory.md)" in err.stderr and repo.head() == head
    repo.git("checkout", "--", "memory.md")
    (repo.path / ".git/MERGE_HEAD").write_text(head + "\n")
    err = _cli(repo.path, "forget", "PIN is 4711", "--yes", "--json")
    assert err.returncode == 1 and json.loads(err.stdout)["error"].startswith("a merge is in progress")
    (repo.path / ".git/MERGE_HEAD").unlink()
    assert _cli(repo.path, "forget", "ab").returncode == 1
    assert _cli(repo.path, "forget").returncode == 1
    done = json.loads(_cli(repo.path, "forget", "PIN is 4711", "--yes", "--json").stdout)
    assert done["status"] == "forgotten" and done["backup"].startswith(fg.BACKUP_NS)
    assert SECRET not in _log_text(repo.path, "HEAD")


def test_remote_is_reported_not_rewritten(repo: GitRepo, tmp_path: Path) -> None:
    ws = build(repo, fillers=1)
    remote = tmp_path / "remote.git"
    _git(tmp_path, "clone", "-q", "--bare", str(repo.path), str(remote))
    repo.git("remote", "add", "origin", str(remote))
    repo.git("fetch", "-q", "origin")
    old = repo.git("rev-parse", "refs/remotes/origin/main")
    rep = fg.forget(ws, fg.target_for(ws, "PIN is 4711", None), dry_run=False)
    assert repo.git("rev-parse", "refs/remotes/origin/main") == old
    assert {"ref": "refs/remotes/origin/main", "push": "git push --force-with-lease origin main"} in rep.remotes
    repo.git("push", "-q", "--force-with-lease", "origin", "main")
    assert SECRET not in _log_text(remote, "main")


def test_forget_by_citation_and_by_entity(repo: GitRepo) -> None:
    ws = build(repo, fillers=1)
    chess = next(r for r in recalled_rows(ws, "chess") if "chess" in r.content)
    rep = fg.forget(ws, fg.target_for(ws, chess.source, None), dry_run=False)
    assert rep.target is not None and rep.target.kind == "citation"
    assert "chess" not in _git(repo.path, "log", "-p", f"--exclude={fg.BACKUP_NS}/*", "--all").lower()
    assert SECRET in (repo.path / "memory/2025-11-03.md").read_text()  # only the cited fact went
    fg.purge_backup(ws)
    rep = fg.forget(ws, fg.target_for(ws, None, "Peter"), dry_run=False)
    assert "bank/entities/Peter.md" in rep.files and not (repo.path / "bank/entities/Peter.md").exists()
    assert "@peter" not in _git(repo.path, "log", "-p", "HEAD").lower()
    assert "Filler note number 0." in (repo.path / "memory/2025-11-04.md").read_text()
    with pytest.raises(GitmemError):
        fg.target_for(ws, None, None)


def recalled_rows(ws: Workspace, text: str) -> list[dict[str, object]]:
    from gitmem.recall.search import Options, Session

    with Session(ws) as s:
        return s.search(text, Options(k=20)).results


# --------------------------------------------------------------------------- concurrent writers


def _while_rewriting(monkeypatch: pytest.MonkeyPatch, action: Callable[[], None]) -> None:
    """Run `action` once from inside filter-repo's run: after it has read every ref it rewrites
    (its first commit is being filtered), before anything is written back."""
    real = fg._Scrubber.commit_callback
    done: list[bool] = []

    def callback(self: fg._Scrubber, commit: object, metadata: dict[str, object]) -> None:
        real(self, commit, metadata)
        if not done:
            done.append(True)
            action()

    monkeypatch.setattr(fg._Scrubber, "commit_callback", callback)


def _staged_refs(repo: Path) -> list[str]:
    return [r for r in _git(repo, "for-each-ref", "--format=%(refname)").split() if r.startswith((fg.STAGED_NS, fg.STAGED_TAGS))]


BICYCLE = "# 2025-11-21\n\n## Retain\n- W @Peter: Bought a red bicycle.\n"


def test_a_commit_made_while_forget_rewrites_stays_on_its_branch(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's own `git commit` lands on main while filter-repo runs: forget must not set main
    to the rewrite of its old value (the commit would be gone), but leave it, say why, and rewrite
    it when run again."""
    ws = build(repo, fillers=1)
    repo.git("tag", "-a", "v2", "-m", "the release before the PIN")  # an annotated tag keeps its own name
    old_head = repo.head()

    def user_commits() -> None:
        repo.write("memory/2025-11-21.md", BICYCLE)
        repo.git("add", "memory/2025-11-21.md")
        repo.git("commit", "-q", "-m", "the user's own commit")

    _while_rewriting(monkeypatch, user_commits)
    target = fg.target_for(ws, "PIN is 4711", None)
    rep = fg.forget(ws, target, dry_run=False)
    mine = repo.head()
    assert mine != old_head and repo.git("rev-parse", "HEAD^") == old_head
    assert repo.git("log", "-1", "--format=%s") == "the user's own commit"
    assert repo.git("show", "HEAD:memory/2025-11-21.md") + "\n" == BICYCLE
    assert (repo.path / "memory/2025-11-21.md").read_text() == BICYCLE and not repo.git("status", "--porcelain")
    assert rep.status == "forgotten" and [c.as_dict() for c in rep.concurrent] == [
        {"ref": "refs/heads/main", "old": old_head, "found": mine, "reason": rep.concurrent[0].reason}]
    assert rep.as_dict()["concurrent"][0]["found"] == mine
    assert rep.concurrent[0].reason.startswith(f"main moved while forget ran (from {old_head[:7]} to {mine[:7]})")
    assert any(n.startswith("main moved while forget ran") and n.endswith("run the same `gitmem forget --yes` again to "
                                                                           "rewrite it") for n in rep.notes), rep.notes
    assert "refs/heads/main" not in {r["ref"] for r in rep.refs} and "refs/heads/main" in rep.other_refs
    assert {"refs/tags/v1", "refs/tags/v2"} <= {r["ref"] for r in rep.refs}  # the other refs were rewritten
    assert "tag v2\n" in repo.git("cat-file", "tag", "v2") and SECRET not in _log_text(repo.path, "v2")
    assert not _staged_refs(repo.path) and SECRET in (repo.path / "memory/2025-11-03.md").read_text()

    monkeypatch.undo()
    again = fg.forget(ws, target, dry_run=False)
    assert again.concurrent == [] and {r["ref"] for r in again.refs} == {"refs/heads/main"}
    assert not _blobs_with(repo.path, SECRET) and SECRET not in (repo.path / "memory/2025-11-03.md").read_text()
    assert repo.git("log", "-1", "--format=%s") == "the user's own commit"
    assert repo.git("show", "HEAD:memory/2025-11-21.md") + "\n" == BICYCLE
    assert (repo.path / "memory/2025-11-21.md").read_text() == BICYCLE and not repo.git("status", "--porcelain")


@pytest.mark.parametrize("path", ["memory.md", "memory/2025-11-03.md"])
def test_an_edit_made_while_forget_rewrites_is_never_reset(repo: GitRepo, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """An uncommitted edit saved while filter-repo runs survives: in a file the rewrite does not
    change, main is rewritten around it; in one it changes, main and the work tree stay as they were."""
    ws = build(repo, fillers=1)
    old_head = repo.head()
    edited = (repo.path / path).read_text() + "- S: typed while forget ran.\n"
    _while_rewriting(monkeypatch, lambda: repo.write(path, edited))
    rep = fg.forget(ws, fg.target_for(ws, "PIN is 4711", None), dry_run=False)
    assert (repo.path / path).read_text() == edited
    assert repo.git("status", "--porcelain") == f"M {path}"
    if path == "memory.md":
        assert rep.concurrent == [] and "refs/heads/main" in {r["ref"] for r in rep.refs}
        assert SECRET not in _log_text(repo.path, "HEAD") and SECRET not in (repo.path / "memory/2025-11-03.md").read_text()
    else:
        assert repo.head() == old_head and [c.ref for c in rep.concurrent] == ["refs/heads/main"]
        assert rep.concurrent[0].found == old_head and "its work tree changed while forget ran" in rep.concurrent[0].reason
        assert "refs/heads/main" not in {r["ref"] for r in rep.refs} and not _staged_refs(repo.path)


def test_a_file_only_touched_while_forget_rewrites_does_not_stop_it(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose bytes are unchanged but whose stat data is not (an editor saved it as it was)
    is no change: the work tree still moves to the rewrite."""
    ws = build(repo, fillers=1)
    log = repo.path / "memory/2025-11-03.md"
    _while_rewriting(monkeypatch, lambda: os.utime(log, (log.stat().st_atime, log.stat().st_mtime + 100)))
    rep = fg.forget(ws, fg.target_for(ws, "PIN is 4711", None), dry_run=False)
    assert rep.concurrent == [] and "refs/heads/main" in {r["ref"] for r in rep.refs}
    assert SECRET not in log.read_text() and not repo.git("status", "--porcelain")


def _waits_for_lock(lock: Path, pid: int) -> bool:
    """Whether process `pid` is blocked in flock() on `lock` (the kernel lists waiters in /proc/locks
    as `-> FLOCK ... <pid> <dev>:<inode> ...`)."""
    if not lock.exists():
        return False
    inode = lock.stat().st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and "FLOCK" in fields and str(pid) in fields and fields[-3].endswith(f":{inode}"):
            return True
    return False


def _wait_until_blocked(proc: subprocess.Popen[str], lock: Path) -> None:
    deadline = time.monotonic() + 120
    while not _waits_for_lock(lock, proc.pid):
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"it finished without waiting for gitmem's writer lock: {out} {err}")
        assert time.monotonic() < deadline, "never blocked on the writer lock"
        time.sleep(0.02)  # polls a condition; the order of events does not depend on it


def test_retain_started_while_forget_rewrites_waits_and_lands_after(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = build(repo, fillers=1)
    started: list[subprocess.Popen[str]] = []

    def agent_retains() -> None:
        proc = subprocess.Popen([sys.executable, "-m", "gitmem", "-C", str(repo.path), "retain",
                                 "W @Peter: Adopted a cat named Miso.", "--date", "2025-11-21", "--json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append(proc)
        _wait_until_blocked(proc, ws.derived / layout.WRITE_LOCK)

    _while_rewriting(monkeypatch, agent_retains)
    rep = fg.forget(ws, fg.target_for(ws, "PIN is 4711", None), dry_run=False)
    rewritten = next(r["new"] for r in rep.refs if r["ref"] == "refs/heads/main")
    assert rep.concurrent == [] and repo.head() == rewritten  # forget finished before retain committed
    out, err = started[0].communicate(timeout=120)
    assert started[0].returncode == 0, err
    got = json.loads(out)
    assert got["committed"] and got["commit"] == repo.head() and repo.git("rev-parse", "HEAD^") == rewritten
    assert repo.git("show", "HEAD:memory/2025-11-21.md").endswith("- W @Peter: Adopted a cat named Miso.")
    assert not _blobs_with(repo.path, SECRET) and not repo.git("status", "--porcelain")


@pytest.mark.parametrize("how", ["--merge", "--discard"])
def test_review_started_while_forget_rewrites_waits(repo: GitRepo, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """`gitmem review --merge/--discard` commit to the user's branch or delete the review branch,
    both refs forget rewrites: started during the rewrite, they wait, then act on the rewrite."""
    ws = build(repo, fillers=1)
    reflect(ws, RunOptions(model=None))  # a proposal to merge or discard, built on the history with the PIN
    started: list[subprocess.Popen[str]] = []

    def user_reviews() -> None:
        started.append(subprocess.Popen([sys.executable, "-m", "gitmem", "-C", str(repo.path), "review", how, "--json"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        _wait_until_blocked(started[0], ws.derived / layout.WRITE_LOCK)

    _while_rewriting(monkeypatch, user_reviews)
    rep = fg.forget(ws, fg.target_for(ws, "PIN is 4711", None), dry_run=False)
    assert rep.concurrent == [] and len([r for r in rep.refs if r["ref"].startswith("refs/heads/")]) == 2
    out, err = started[0].communicate(timeout=120)
    assert started[0].returncode == 0, err
    assert json.loads(out)["status"] == {"--merge": "merged", "--discard": "discarded"}[how]
    assert _git(repo.path, "for-each-ref", "--format=%(refname)", "refs/heads/").split() == ["refs/heads/main"]
    assert len(repo.git("log", "-1", "--format=%p").split()) == (2 if how == "--merge" else 1)
    assert not _blobs_with(repo.path, SECRET) and not repo.git("status", "--porcelain")
