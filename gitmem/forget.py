"""`gitmem forget`: remove lines from memory and from every commit of its history.

The history rewrite is git-filter-repo's (used as a library: `git_filter_repo.RepoFilter` with a
blob, commit and message callback), not a hand-written one. What it does, in order:

1. Refuse, with the reason, when the work tree has changes (the rewrite moves HEAD's branch
   and its files), a merge/rebase/cherry-pick is in progress, HEAD is detached, a stash
   exists (stashes are commits filter-repo does not rewrite) or other worktrees exist (their
   checked-out branches would move under them).
2. Dry run (the default without --yes): the same filter-repo pass with `--dry-run`, so the list
   of files, commits and lines is exactly what the real run removes.
3. With --yes, under gitmem's writer lock (Workspace.writing: retain, review and reflect's
   proposal wait for the whole rewrite): every rewritten ref's old value is saved under
   `refs/gitmem/forget-backup/<time>/` (`<time>-2/` for a second forget in the same second) until
   `gitmem forget --purge-backup`, then one filter-repo pass over the user's refs:
   `refs/heads/*`, `refs/tags/*`, `refs/notes/*` and gitmem's own `refs/gitmem/*` (the backups
   excepted). Remote-tracking refs (`refs/remotes/*`) are NOT rewritten: they record what the
   remote holds, which is reported with the push command that replaces it. Any other ref is left
   alone and reported when it still reaches a rewritten commit; so is a ref made or moved while
   filter-repo ran (it was not in the list it rewrote), with a note to run the same forget again.
   - every text blob loses the lines that match (a text: case-insensitive, whitespace-collapsed
     substring; a citation: the text of the cited lines; --entity: a line that @mentions it, and
     the entity's page `bank/entities/<Slug>.md` is removed);
   - the reflection state (`bank/.reflect.json`) is edited as JSON: opinions and list entries
     (evidence, changes) that mention the text are dropped, other strings replaced;
   - commit and tag messages lose the matching lines (a `retain:` subject names its bullet);
   - a commit left empty (a retain of only that bullet) disappears;
   - citations `path#Lx-Ly@sha` inside memory (bank pages cite logs) are remapped to the
     rewritten commit, their line numbers shifted by the lines removed above them; a citation
     whose own lines were forgotten, or whose commit disappeared, is left as it was and reported
     as gone;
   - generated blocks that lost lines are stamped (reflect/pages.stamp) so reflection still owns
     them.
4. filter-repo writes the rewrite under STAGED_NS/STAGED_TAGS, not over the user's refs, and
   does not reset the work tree. forget moves each ref itself, only from the value it had before
   the run (`git update-ref REF NEW OLD`), under git's index lock so no `git commit` starts in
   between. A ref moved meanwhile (a commit made on it) keeps what it holds and is reported in
   `concurrent`; its rewrite is dropped, since the same forget run again makes it from the new
   value and the backup keeps the old one. When HEAD's branch moves, `git read-tree -m -u` carries
   index and work tree to the new tree and refuses (the branch is put back) rather than overwrite
   a file edited meanwhile.
5. The index is rebuilt from scratch (its file is deleted first: SQLite's free pages would keep
   old text) and reflection cache answers whose prompt or answer held the text are deleted.

`--purge-backup` deletes the backup refs, expires every reflog and runs `git gc --prune=now`:
only then are the old objects gone from this clone.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem import layout
from gitmem.errors import GitmemError
from gitmem.timeline import git
from gitmem.workspace import Workspace
from gitmem.lazyre import lazy

BACKUP_NS = "refs/gitmem/forget-backup"
# filter-repo writes the rewritten refs here (its refname callback), never over the user's refs:
# forget then moves each ref itself, only from the value it had before the run. fast-import keeps
# annotated tags under refs/tags/, so the rewritten tags wait in a folder there.
STAGED_NS = "refs/gitmem/forget-new"
STAGED_TAGS = "refs/tags/gitmem-forget-new"
_OURS = (f"{BACKUP_NS}/", f"{STAGED_NS}/", f"{STAGED_TAGS}/")  # never rewritten, never reported
REWRITTEN = ("refs/heads/", "refs/tags/", "refs/notes/", "refs/gitmem/")
MIN_TEXT = 4  # a shorter text would match half of memory
FORGOTTEN = "(forgotten)"
_OID = lazy(r"[0-9a-f]{40}")


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


# --------------------------------------------------------------------------- what to forget


@dataclass(frozen=True)
class Target:
    kind: str  # "text" | "citation" | "entity"
    value: str  # as the user gave it
    needles: tuple[str, ...]  # normalized texts; a line containing one is forgotten
    entity: str | None = None  # entity key for --entity

    def line(self, line: str) -> bool:
        if self.needles:
            norm = _norm(line)
            if any(n in norm for n in self.needles):
                return True
        if self.entity is not None:
            from gitmem.parse import entity_key, mentions

            return any(entity_key(m) == self.entity for m in mentions(line))
        return False

    def anywhere(self, text: str) -> bool:
        """Whether any line of `text` may match (a quick test over the whole text first)."""
        if self.entity is None:
            norm = _norm(text)
            if not any(n in norm for n in self.needles):
                return False
        elif "@" not in text:  # an entity is only ever matched through an @mention
            return False
        return any(self.line(ln) for ln in text.split("\n"))

    def page(self, path: str) -> bool:
        """A whole file to remove: the entity's own bank page."""
        stem = layout.entity_page_stem(path) if self.entity is not None and path.endswith(".md") else None
        if stem is None or "/" in stem:
            return False
        from gitmem.parse import entity_key

        return entity_key(stem) == self.entity

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "entity": self.entity}


def target_for(ws: Workspace, what: str | None, entity: str | None) -> Target:
    """The Target for `gitmem forget TEXT|CITATION` or `--entity NAME`."""
    if (what is None) == (entity is None):
        raise GitmemError("say what to forget: a TEXT, a CITATION or --entity NAME (exactly one)",
                          "e.g. gitmem forget 'bank PIN' --dry-run")
    if entity is not None:
        from gitmem.parse import entity_key

        key = entity_key(entity)
        if not key:
            raise GitmemError(f"{entity!r} is not an entity name", "pass the name as written after @, e.g. --entity Peter")
        return Target("entity", entity, (), key)
    assert what is not None
    cite = layout.parse_citation(what)
    if cite is not None and cite.rev != layout.WORKTREE_REV:
        return _citation_target(ws, what.strip(), cite.path, cite.start, cite.end, cite.rev)
    needle = _norm(what)
    if len(needle) < MIN_TEXT:
        raise GitmemError(f"{what!r} is too short to forget safely (it would match too much memory)",
                          f"give at least {MIN_TEXT} characters of the line to forget")
    return Target("text", what, (needle,))


def _citation_target(ws: Workspace, cite: str, path: str, start: int, end: int, rev: str) -> Target:
    from gitmem.parse import parse_markdown

    oid = git.resolve(ws.root, rev)
    with git.CatFile(ws.root) as cat:
        data = cat.read(f"{oid}:{path}") if oid else None
    if data is None:
        raise GitmemError(f"{cite} does not name lines in this repository's history",
                          "check the citation (`gitmem show CITATION`), or forget the text instead")
    needles = {_norm(b.content) for b in parse_markdown(data, path).blocks if b.start <= end and b.end >= start}
    needles = {n for n in needles if len(n) >= MIN_TEXT}
    if not needles:
        raise GitmemError(f"{cite} cites no text that can be forgotten", "cite the fact's own line")
    return Target("citation", cite, tuple(sorted(needles)))


# --------------------------------------------------------------------------- the report


@dataclass
class CommitHit:
    commit: str  # the original oid
    subject: str  # after scrubbing
    files: list[str]
    lines: int
    new: str | None = None  # the rewritten oid; None when the commit disappeared or on a dry run

    def as_dict(self) -> dict[str, Any]:
        return {"commit": self.commit, "new": self.new, "subject": self.subject, "files": self.files, "lines": self.lines}


@dataclass(frozen=True)
class Concurrent:
    """A rewritten ref forget did not move: it no longer held the commit forget rewrote."""

    ref: str
    old: str  # what it held before the run: the commit forget rewrote (and backed up)
    found: str | None  # what it holds now: a commit made meanwhile is still on it
    reason: str

    def as_dict(self) -> dict[str, str | None]:
        return {"ref": self.ref, "old": self.old, "found": self.found, "reason": self.reason}


@dataclass
class Report:
    status: str  # "dry-run" | "forgotten" | "nothing-found" | "purged"
    target: Target | None
    files: list[str] = field(default_factory=list)
    commits: list[CommitHit] = field(default_factory=list)
    lines: list[dict[str, Any]] = field(default_factory=list)  # {path, text, versions}
    messages: int = 0
    refs: list[dict[str, str | None]] = field(default_factory=list)
    backup: str | None = None
    remotes: list[dict[str, str]] = field(default_factory=list)
    other_refs: list[str] = field(default_factory=list)
    concurrent: list[Concurrent] = field(default_factory=list)
    citations_remapped: int = 0
    citations_gone: list[str] = field(default_factory=list)
    index_rebuilt: bool = False
    cache_dropped: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status, "target": self.target.as_dict() if self.target else None,
            "files": self.files, "commits": [c.as_dict() for c in self.commits], "lines": self.lines,
            "messages": self.messages, "refs": self.refs, "backup": self.backup, "remotes": self.remotes,
            "other_refs": self.other_refs, "concurrent": [c.as_dict() for c in self.concurrent],
            "citations": {"remapped": self.citations_remapped, "gone": self.citations_gone},
            "index_rebuilt": self.index_rebuilt, "cache_dropped": self.cache_dropped,
            "seconds": round(self.seconds, 3), "notes": self.notes,
        }


# --------------------------------------------------------------------------- scrubbing


class _Scrubber:
    """The filter-repo callbacks. Blobs have no path in filter-repo's stream, so the kind of a
    blob is read from its content: the reflection state is a JSON object with a "version" key,
    every other text blob is lines."""

    def __init__(self, repo: Path, target: Target) -> None:
        self.target = target
        self.cat = git.CatFile(repo)
        self.removed: dict[int, list[str]] = {}  # blob mark -> forgotten lines
        self.hits: dict[str, CommitHit] = {}
        self.messages = 0
        self._message_hit = False
        self.remapped = 0
        self.gone: set[str] = set()
        self._old_lines: dict[tuple[str, str], list[int] | None] = {}
        self.rename: Callable[[str], str | None] = lambda oid: oid

    # citations ------------------------------------------------------------------------
    def _removed_lines(self, rev: str, path: str) -> list[int] | None:
        key = (rev, path)
        if key not in self._old_lines:
            data = self.cat.read(f"{rev}:{path}")
            if data is None:
                self._old_lines[key] = None
            else:
                text = data.decode("utf-8", "replace")
                self._old_lines[key] = [i for i, ln in enumerate(text.split("\n"), 1) if self.target.line(ln)]
        return self._old_lines[key]

    def _cite(self, m: re.Match[str]) -> str:
        rev = m.group("rev")
        if rev == layout.WORKTREE_REV:
            return m.group(0)
        new = self.rename(rev)
        if new == rev:
            return m.group(0)
        path, start = m.group("path"), int(m.group("s"))
        end = int(m.group("e") or start)
        removed = self._removed_lines(rev, path)
        if new is None or removed is None or any(start <= r <= end for r in removed):
            self.gone.add(m.group(0))
            return m.group(0)
        shift = sum(1 for r in removed if r < start)
        self.remapped += 1
        lines = f"L{start - shift}" if start == end else f"L{start - shift}-L{end - shift}"
        return f"{path}#{lines}@{new}"

    def remap(self, text: str) -> str:
        return layout.CITATION_IN_TEXT.sub(self._cite, text) if "#L" in text else text

    # blobs ------------------------------------------------------------------------------
    def scrub_lines(self, text: str) -> tuple[str, list[str]]:
        from gitmem.reflect.pages import find_blocks, stamp, unstamped

        if not self.target.anywhere(text):
            return self.remap(text), []
        lines = text.split("\n")
        gone = [i for i, ln in enumerate(lines) if self.target.line(ln)]
        spans, _ = find_blocks(text)
        touched = {name for name, sp in spans.items() if any(sp.begin < i < sp.end for i in gone)}
        drop = set(gone)
        kept = [ln for i, ln in enumerate(lines) if i not in drop]
        new = self.remap("\n".join(kept))
        for name in sorted(touched):
            sp = find_blocks(new)[0].get(name)
            if sp is None:
                continue
            out = new.split("\n")
            inner = unstamped(out[sp.begin + 1 : sp.end])
            out[sp.begin + 1 : sp.end] = [stamp(inner), *inner]
            new = "\n".join(out)
        return new, [lines[i] for i in gone]

    def _json_has(self, value: Any) -> bool:
        if isinstance(value, str):
            return self.target.line(value)
        if isinstance(value, dict):
            return any(self._json_has(v) for v in value.values())
        if isinstance(value, list):
            return any(self._json_has(v) for v in value)
        return False

    def _json_walk(self, value: Any, removed: list[str], top: bool = False) -> Any:
        if isinstance(value, str):
            if self.target.line(value):
                removed.append(value)
                return FORGOTTEN
            if _OID.fullmatch(value):
                new = self.rename(value)
                return new if new else value
            return self.remap(value)
        if isinstance(value, list):
            kept = []
            for item in value:
                if self._json_has(item):
                    removed.append(json.dumps(item, ensure_ascii=False)[:200])
                else:
                    kept.append(self._json_walk(item, removed))
            return kept
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for k, v in value.items():
                if top and k == "opinions" and isinstance(v, dict):
                    out[k] = {}
                    for key, op in v.items():
                        if self._json_has(op):
                            removed.append(str(op.get("statement", key)) if isinstance(op, dict) else key)
                        else:
                            out[k][key] = self._json_walk(op, removed)
                else:
                    out[k] = self._json_walk(v, removed)
            return out
        return value

    def scrub(self, data: bytes) -> tuple[bytes, list[str]]:
        if b"\0" in data[:8192]:
            return data, []
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data, []
        if text.lstrip().startswith("{") and '"version"' in text:
            try:
                obj = json.loads(text)
            except ValueError:
                obj = None
            if isinstance(obj, dict):
                removed: list[str] = []
                new_obj = self._json_walk(obj, removed, top=True)
                if new_obj == obj:
                    return data, []
                return (json.dumps(new_obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"), removed
        new, gone = self.scrub_lines(text)
        return (new.encode("utf-8") if new != text else data), gone

    # filter-repo callbacks ------------------------------------------------------------------
    def blob_callback(self, blob: Any, metadata: dict[str, Any]) -> None:
        rename = metadata.get("commit_rename_func")
        if rename is not None:
            self.rename = lambda oid: _safe_rename(rename, oid)
        new, removed = self.scrub(blob.data)
        blob.data = new
        if removed:
            self.removed[blob.id] = removed

    def message_callback(self, message: bytes) -> bytes:
        text = message.decode("utf-8", "replace")
        lines = text.split("\n")
        kept = [ln for ln in lines if not self.target.line(ln)]
        if len(kept) == len(lines):
            return message
        self.messages += 1
        self._message_hit = True
        if not any(ln.strip() for ln in kept):
            kept = ["gitmem forget: the message of this commit was forgotten", ""]
        return "\n".join(kept).encode("utf-8")

    def commit_callback(self, commit: Any, metadata: dict[str, Any]) -> None:
        files: list[str] = []
        count = 0
        kept_changes = []
        for change in commit.file_changes:
            path = change.filename.decode("utf-8", "surrogateescape")
            if self.target.page(path):
                files.append(path)
                count += 1
                continue
            kept_changes.append(change)
            if change.type == b"M" and change.blob_id in self.removed:
                files.append(path)
                count += len(self.removed[change.blob_id])
        commit.file_changes = kept_changes
        if files or self._message_hit:
            oid = commit.original_id.decode() if commit.original_id else ""
            subject = commit.message.decode("utf-8", "replace").split("\n", 1)[0]
            self.hits[oid] = CommitHit(oid, subject, sorted(files), count)
        self._message_hit = False

    def close(self) -> None:
        self.cat.close()


def _safe_rename(rename: Callable[[bytes], bytes], oid: str) -> str | None:
    try:
        new = rename(oid.encode())
    except Exception:  # a pruned commit, or one filter-repo has not imported (a dry run)
        return None
    return new.decode() if new else None


# --------------------------------------------------------------------------- checks


def _refs(ws: Workspace) -> dict[str, str]:
    out = git.out(ws.root, "for-each-ref", "--format=%(refname) %(objectname)")
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def _problems(ws: Workspace) -> list[GitmemError]:
    """Why a rewrite cannot run now (each with its next step); empty when it can."""
    from gitmem.retain import operation_in_progress

    out: list[GitmemError] = []
    what = operation_in_progress(ws)
    if what is not None:
        out.append(GitmemError(f"{what} is in progress; forget rewrites history and will not start in the middle of it",
                               "finish or abort it first (git status says how)"))
    if git.current_branch(ws.root) is None:
        out.append(GitmemError("HEAD is detached; forget rewrites branches", "check out your branch first (git switch main)"))
    changed = [p for _, p in git.status(ws.root)]
    if changed:
        shown = ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")
        out.append(GitmemError(f"the work tree has uncommitted changes ({shown}); forget ends by carrying the "
                               "work tree to the rewritten history and will not start over changes it could not carry",
                               "commit them, or remove them, then run `gitmem forget` again"))
    if git.resolve(ws.root, "refs/stash"):
        out.append(GitmemError("a stash exists; stashes are commits forget cannot rewrite, so the text could survive in it",
                               "apply or drop it (git stash pop / git stash drop), then run `gitmem forget` again"))
    worktrees = [ln for ln in git.out(ws.root, "worktree", "list", "--porcelain").splitlines() if ln.startswith("worktree ")]
    if len(worktrees) > 1:
        out.append(GitmemError("this repository has other worktrees; rewriting would move branches checked out there",
                               "remove them (git worktree remove PATH), then run `gitmem forget` again"))
    return out


# --------------------------------------------------------------------------- running filter-repo


@contextlib.contextmanager
def _in_repo(root: Path) -> Iterator[io.StringIO]:
    """filter-repo works on the current directory and prints progress: run it in the workspace,
    with its chatter captured (it must not reach --json output)."""
    before = Path.cwd()
    buf = io.StringIO()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            yield buf
    finally:
        os.chdir(before)


def _filter(ws: Workspace, target: Target, refs: list[str], dry_run: bool) -> tuple[_Scrubber, dict[str, str | None]]:
    try:
        import git_filter_repo as fr  # type: ignore[import-untyped]
    except ImportError as exc:  # pragma: no cover - a dependency
        raise GitmemError("git-filter-repo is not installed", "pip install git-filter-repo") from exc
    scrub = _Scrubber(ws.root, target)
    argv = ["--force", "--quiet", "--partial", "--prune-empty", "auto", "--refs", *refs]
    if dry_run:
        argv.insert(0, "--dry-run")
    meta = git.git_path(ws.root, "filter-repo")
    shutil.rmtree(meta, ignore_errors=True)  # a run killed half-way left it (and a dry run's dump of history)
    renames: dict[str, str | None] = {}

    class Staging(fr.RepoFilter):
        """filter-repo ends with `git reset --hard` in a work tree: that would throw away a change
        made while it ran, and the user's branch has not moved anyway (the rewrite is staged)."""

        def cleanup(self, repo: bytes, repack: bool, reset: bool, run_quietly: bool = False,
                    show_debuginfo: bool = False) -> None:
            super().cleanup(repo, repack, False, run_quietly, show_debuginfo)

    try:
        with _in_repo(ws.root) as chatter:
            try:
                args = fr.FilteringOptions.parse_args(argv, error_on_empty=False)
                Staging(args, blob_callback=scrub.blob_callback, commit_callback=scrub.commit_callback,
                        message_callback=scrub.message_callback,
                        refname_callback=lambda name: _staged(name.decode("utf-8", "surrogateescape")).encode(
                            "utf-8", "surrogateescape")).run()
            except SystemExit as exc:
                raise GitmemError(f"git-filter-repo stopped: {' '.join(chatter.getvalue().split())[-300:] or exc}",
                                  "nothing was rewritten if this was a dry run; otherwise restore from the backup ref"
                                  ) from None
        commit_map = meta / "commit-map"
        if commit_map.exists():
            for line in commit_map.read_text().splitlines()[1:]:
                old, new = line.split()
                renames[old] = None if set(new) == {"0"} else new
    finally:
        scrub.close()
        # Its metadata (and, for a dry run, a full fast-export of history) must not linger in .git.
        shutil.rmtree(meta, ignore_errors=True)
    return scrub, renames


def _staged(ref: str) -> str:
    """Where filter-repo writes the rewrite of `ref`."""
    if ref.startswith("refs/tags/"):
        return f"{STAGED_TAGS}/{ref.removeprefix('refs/tags/')}"
    return f"{STAGED_NS}/{ref.removeprefix('refs/')}"


def _unstaged(name: str) -> str | None:
    """The user's ref whose rewrite `name` holds; None for any other ref."""
    if name.startswith(f"{STAGED_TAGS}/"):
        return f"refs/tags/{name.removeprefix(STAGED_TAGS + '/')}"
    if name.startswith(f"{STAGED_NS}/"):
        return f"refs/{name.removeprefix(STAGED_NS + '/')}"
    return None


def _drop_staged(ws: Workspace) -> dict[str, str]:
    """Delete every staged rewrite (a killed run's too: it must never pass for this run's); returns
    {user's ref: staged oid} of what was there."""
    out: dict[str, str] = {}
    for name, oid in _refs(ws).items():
        ref = _unstaged(name)
        if ref is not None:
            git.update_ref(ws.root, name, None, oid)
            out[ref] = oid
    return out


def _named_tag(ws: Workspace, oid: str, ref: str) -> str:
    """An annotated tag fast-import wrote under the staging folder names itself by that folder:
    the same tag object with its own name (a lightweight tag, a commit, is returned as it is)."""
    if git.out(ws.root, "cat-file", "-t", oid) != "tag":
        return oid
    raw = git.run(ws.root, ["cat-file", "tag", oid]).stdout
    head, sep, body = raw.partition(b"\n\n")
    name = ref.removeprefix("refs/tags/").encode("utf-8", "surrogateescape")
    head = b"\n".join(b"tag " + name if ln.startswith(b"tag ") else ln for ln in head.split(b"\n"))
    return git.run(ws.root, ["hash-object", "-t", "tag", "-w", "--stdin"], input=head + sep + body).stdout.decode().strip()


class _IndexLock:
    """git's own index lock (`.git/index.lock`, created exclusively as git does), held while refs
    move: `git commit`, `git switch` and `git reset` take it too, so none of them can start on a
    branch between its move and its work tree's. Waits out another git command for a while.
    A new index written to `replacement` takes the index's place when the lock is released."""

    def __init__(self, ws: Workspace) -> None:
        self.path = git.git_path(ws.root, "index.lock")
        self.index = git.git_path(ws.root, "index")
        self.replacement: Path | None = None

    def __enter__(self) -> _IndexLock:
        from gitmem.retain import INDEX_LOCK_WAIT

        deadline = time.monotonic() + INDEX_LOCK_WAIT
        while True:
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
                return self
            except FileExistsError:
                if time.monotonic() > deadline:
                    raise GitmemError(f"another git command holds {self.path}, so forget cannot move the rewritten "
                                      "refs; nothing was moved", "wait for it (or delete the lock if no git runs), "
                                      "then run the same `gitmem forget --yes` again") from None
                time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        # A replacement is installed even when a later step failed: HEAD's branch and the work tree
        # have moved by then, and the index must say so.
        if self.replacement is not None:
            os.replace(self.replacement, self.path)  # still locked: the lock's path exists throughout
            os.replace(self.path, self.index)
        else:
            self.path.unlink(missing_ok=True)


def _switch_work_tree(ws: Workspace, lock: _IndexLock, old: str, new: str) -> str | None:
    """Carry the index and work tree from `old`'s tree to `new`'s with `git read-tree -m -u` (a
    file changed meanwhile is never overwritten: the switch is refused instead), on a copy of the
    index that replaces it when `lock` is released. The error when refused."""
    tmp = git.git_path(ws.root, "gitmem-forget-index")
    shutil.copyfile(lock.index, tmp)
    env = {"GIT_INDEX_FILE": str(tmp)}
    # read-tree trusts the index's stat data: refresh it first (as `git checkout` does), or a file
    # merely touched since (copied, checked out again) counts as changed and the switch is refused.
    git.run(ws.root, ["update-index", "-q", "--refresh"], check=False, env=env)
    proc = git.run(ws.root, ["read-tree", "-m", "-u", old, new], check=False, env=env)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        return git.error_line(proc.stderr) or "git read-tree failed"
    lock.replacement = tmp
    return None


def _move_refs(ws: Workspace, refs: list[str], before: dict[str, str]) -> tuple[list[dict[str, str | None]], list[Concurrent]]:
    """Move each rewritten ref from exactly the value forget saw before the run to its rewrite
    (compare-and-swap); a ref moved meanwhile keeps what it holds now, and its rewrite is dropped
    (the same forget run again makes it from the ref's new value; the backup keeps the old one).
    HEAD's branch moves with the index and work tree, under git's index lock."""
    staged = _drop_staged(ws)  # the objects stay; only the names go
    moved: list[dict[str, str | None]] = []
    concurrent: list[Concurrent] = []
    with _IndexLock(ws) as lock:
        head_ref = git.out(ws.root, "symbolic-ref", "--quiet", "HEAD", check=False)
        for ref in refs:
            old, new = before[ref], staged.get(ref)
            if new is None:
                continue
            new = _named_tag(ws, new, ref) if ref.startswith("refs/tags/") else new
            if new == old:
                continue
            short = ref.removeprefix("refs/heads/")
            if not git.update_ref(ws.root, ref, new, old):
                found = _refs(ws).get(ref)
                concurrent.append(Concurrent(ref, old, found, (
                    f"{short} moved while forget ran (from {old[:7]} to {found[:7] if found else 'deleted'}); forget did "
                    "not overwrite it, so what was made on it meanwhile is still there, and so is the text")))
                continue
            if ref == head_ref:
                refused = _switch_work_tree(ws, lock, old, new)
                if refused is not None:
                    git.update_ref(ws.root, ref, old, new)
                    concurrent.append(Concurrent(ref, old, old, (
                        f"{short} is checked out and its work tree changed while forget ran ({refused}); forget left "
                        "the branch and the work tree as they were, and so is the text (commit or remove those "
                        "changes first)")))
                    continue
            moved.append({"ref": ref, "old": old, "new": new})
    return moved, concurrent


def _holds(ws: Workspace, ref: str, affected: set[str]) -> bool:
    """The ref's history reaches one of the original commits that held the text."""
    return any(oid in affected for oid in git.out(ws.root, "rev-list", ref).split())


def _holding(ws: Workspace, refs: list[str], affected: set[str]) -> list[str]:
    """The refs among `refs` whose history reaches a commit that held the text: one walk over all
    of them first, since after a rewrite that is nearly always none."""
    if not refs:
        return []
    walked = git.run(ws.root, ["rev-list", "--stdin"], input="".join(f"{r}\n" for r in refs).encode()).stdout
    if not affected.intersection(walked.decode().split()):
        return []
    return [r for r in refs if _holds(ws, r, affected)]


def forget(ws: Workspace, target: Target, *, dry_run: bool = True) -> Report:
    """Dry run (default) or rewrite; see the module docstring."""
    if dry_run:
        return _forget(ws, target, dry_run=True)
    with ws.writing():  # gitmem's other writers (retain, review, reflect) wait for the whole rewrite
        _drop_staged(ws)  # a run killed half-way left them
        try:
            return _forget(ws, target, dry_run=False)
        finally:
            _drop_staged(ws)  # a run that failed leaves no half-made rewrite behind


def _forget(ws: Workspace, target: Target, *, dry_run: bool) -> Report:
    started = time.monotonic()
    if git.head(ws.root) is None:
        raise GitmemError("the repository has no commits yet: there is nothing to forget in history",
                          "delete the line from the file instead")
    problems = _problems(ws)
    if problems and not dry_run:
        raise problems[0]
    before = _refs(ws)
    refs = sorted(r for r in before if r.startswith(REWRITTEN) and not r.startswith(_OURS))
    stamp_ = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    backup, n = f"{BACKUP_NS}/{stamp_}", 1
    while any(r.startswith(backup + "/") for r in before):  # a forget run again within the second
        n += 1
        backup = f"{BACKUP_NS}/{stamp_}-{n}"
    if not dry_run:
        for ref in refs:
            if not git.update_ref(ws.root, f"{backup}/{ref.removeprefix('refs/')}", before[ref], None):
                raise GitmemError(f"could not write the backup ref {backup}/{ref.removeprefix('refs/')}",
                                  "wait a second and run `gitmem forget` again")
    scrub, renames = _filter(ws, target, refs, dry_run)
    report = Report("dry-run" if dry_run else "forgotten", target)
    report.notes += [f"--yes will refuse for now: {p.message}" for p in problems]
    report.commits = list(scrub.hits.values())  # in history order
    for hit in report.commits:
        hit.new = renames.get(hit.commit) if not dry_run else None
    # A commit whose only change was a forgotten line (say, the one that deleted it) became empty
    # and disappeared: no blob of it changed, so the callbacks did not see it.
    for old, new in renames.items():
        if new is None and old not in scrub.hits:
            subject = git.out(ws.root, "log", "-1", "--format=%s", old)
            paths = git.out(ws.root, "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", old).splitlines()
            report.commits.append(CommitHit(old, "(subject forgotten)" if target.line(subject) else subject,
                                            sorted(paths), 0, None))
    report.files = sorted({f for h in report.commits for f in h.files})
    seen: dict[str, int] = {}
    for lines in scrub.removed.values():
        for ln in lines:
            seen[ln] = seen.get(ln, 0) + 1
    report.lines = [{"text": t, "versions": n} for t, n in sorted(seen.items())]
    report.messages = scrub.messages
    report.citations_remapped = scrub.remapped
    report.citations_gone = sorted(scrub.gone)
    if dry_run:
        report.notes.append("a commit whose only change removed a forgotten line becomes empty and disappears; "
                            "it is listed after the rewrite")
    if not report.commits:
        report.status = "nothing-found"
        if not dry_run:
            for ref in refs:
                git.update_ref(ws.root, f"{backup}/{ref.removeprefix('refs/')}", None, before[ref])
        report.seconds = time.monotonic() - started
        return report
    affected = {h.commit for h in report.commits}
    if not dry_run:
        report.refs, report.concurrent = _move_refs(ws, refs, before)
    after = _refs(ws) if not dry_run else before
    if not dry_run:
        report.backup = backup
        # ORIG_HEAD (left by a merge or reset) names an old commit: the backup keeps it.
        git.run(ws.root, ["update-ref", "-d", "ORIG_HEAD"], check=False)
        report.index_rebuilt = _rebuild_index(ws, report)
        report.cache_dropped = _drop_cache(ws, target)
    # Every ref is checked after the run, not only those outside the rewritten namespaces: a ref
    # made or moved while filter-repo ran (a `gitmem reflect` proposal built on the old HEAD, a
    # branch the user made) was not in the list filter-repo rewrote and still reaches the text.
    # A dry run leaves out the refs --yes would rewrite.
    skipped = set(refs) if dry_run else set()
    checked = [r for r in sorted(after) if r not in skipped and not r.startswith(_OURS)]
    raced = {c.ref for c in report.concurrent}
    late: list[str] = []
    for ref in _holding(ws, checked, affected):
        if ref.startswith(REWRITTEN) and ref not in raced:
            late.append(ref)
        if ref.startswith("refs/remotes/"):
            remote, _, branch = ref.removeprefix("refs/remotes/").partition("/")
            if branch != "HEAD":
                report.remotes.append({"ref": ref, "push": f"git push --force-with-lease {remote} {branch}"})
        else:
            report.other_refs.append(ref)
    report.notes += [f"{c.reason}; run the same `gitmem forget --yes` again to rewrite it" for c in report.concurrent]
    if late:
        report.notes.append(f"{', '.join(late)} still reach the text: made or moved while forget ran, so not "
                            "rewritten; run the same `gitmem forget --yes` again to rewrite them")
    if report.remotes:
        report.notes.append("the remote still holds the text until you push the rewritten branches (commands in "
                            "`remotes`); every other clone must re-clone or `git reset --hard` to the new history")
    report.seconds = time.monotonic() - started
    return report


def _rebuild_index(ws: Workspace, report: Report) -> bool:
    from gitmem.index.indexer import update

    try:
        report.notes += update(ws, rebuild=True, wait=10.0).notes
        return True
    except GitmemError as exc:
        for suffix in ("", "-wal", "-shm"):  # never leave old text in a stale index
            Path(str(ws.index_path) + suffix).unlink(missing_ok=True)
        report.notes.append(f"the index was deleted, not rebuilt ({exc.message}); run `gitmem index`")
        return False


def _drop_cache(ws: Workspace, target: Target) -> int:
    """Delete reflection cache answers whose prompt or answer held the text (rows from before
    prompts were kept cannot be checked and are deleted too)."""
    from gitmem.reflect.model import drop_answers

    return drop_answers(ws, target.line)


def purge_backup(ws: Workspace) -> Report:
    """Delete the backup refs, expire reflogs and gc: the old history leaves this clone."""
    started = time.monotonic()
    refs = [r for r in _refs(ws) if r.startswith(BACKUP_NS + "/")]
    report = Report("purged", None)
    for ref in refs:
        git.run(ws.root, ["update-ref", "-d", ref])
    report.refs = [{"ref": r, "old": None, "new": None} for r in refs]
    git.run(ws.root, ["reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all"])
    git.run(ws.root, ["gc", "--quiet", "--prune=now"])
    locals_ = [r for r in _refs(ws) if r.startswith(REWRITTEN)]
    for ref in sorted(_refs(ws)):
        if ref.startswith("refs/remotes/") and not ref.endswith("/HEAD") and locals_ and \
                not any(git.is_ancestor(ws.root, ref, loc) for loc in locals_):
            report.other_refs.append(ref)
    if report.other_refs:
        report.notes.append("these remote-tracking refs are not part of your rewritten branches and keep their "
                            "objects: push the rewritten branches (git push --force-with-lease), then purge again")
    if not refs:
        report.notes.append("there was no backup to purge; reflogs were expired and garbage collected anyway")
    report.seconds = time.monotonic() - started
    return report
