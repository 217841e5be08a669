"""Proposal commits written directly as git objects, and the review branch moved by compare-and-swap.

Nothing here touches HEAD, the index file or the working tree: blobs, trees and the commit are
created with pygit2 from the base commit's tree, and the branch ref moves with
`git update-ref <ref> <new> <old>` (gitmem.timeline.git.update_ref), which fails instead of
clobbering when another run moved the ref since we read it.

Determinism: the author and committer are the fixed identity IDENTITY and both timestamps are
the base commit's committer time and offset, so the same base, state and model output give the
same commit id.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.errors import GitmemError
from gitmem.reflect.safety import BaseEntry, check_write
from gitmem.timeline import git

if TYPE_CHECKING:
    import pygit2

IDENTITY = ("gitmem reflect", "reflect@gitmem.invalid")


class ReflectRace(GitmemError):
    """Another process moved the review branch while this run was working."""


def ref_name(root: Path, branch: str) -> str:
    """The full ref of the review branch `branch` (reflect.branch), checked again at every use: the
    setting comes from a file anyone can commit (see gitmem.config.check_review_branch)."""
    from gitmem.config import check_review_branch

    check_review_branch(root, branch, "reflect.branch")
    return f"refs/heads/{branch}"


def read_ref(root: Path, ref: str) -> str | None:
    return git.resolve(root, ref)


def made_by_gitmem(root: Path, oid: str) -> bool:
    """Whether `oid` is a proposal commit reflection wrote: its author and committer are IDENTITY
    and it has exactly one parent. Anything else on the review branch (a commit the user made
    after checking it out, a branch that happened to have the name) is not ours to move."""
    fields = git.out(root, "log", "-1", "--format=%an%x00%ae%x00%cn%x00%ce%x00%P", oid, "--", check=False)
    parts = fields.split("\0")
    return len(parts) == 5 and tuple(parts[:2]) == IDENTITY and tuple(parts[2:4]) == IDENTITY \
        and len(parts[4].split()) == 1


def check_ours(root: Path, ref: str, oid: str | None) -> None:
    """GitmemError unless the review branch is absent or its tip is a commit gitmem made."""
    if oid is None or made_by_gitmem(root, oid):
        return
    short = ref.removeprefix("refs/heads/")
    raise GitmemError(
        f"{short} has a commit gitmem did not make ({oid[:7]}); gitmem will not move or delete it",
        f"keep it under another name (`git branch -m {short} <new-name>`) or delete it yourself, then retry",
    )


def checked_out_in(root: Path, ref: str) -> str | None:
    """The worktree that has `ref` checked out, if any: moving or deleting it there would leave
    that worktree's HEAD on a commit its files do not match (or on no commit at all)."""
    where: str | None = None
    for line in git.out(root, "worktree", "list", "--porcelain", check=False).splitlines():
        if line.startswith("worktree "):
            where = line[len("worktree "):]
        elif line == f"branch {ref}":
            return where
    return None


class Builder:
    """Accumulates file changes over a base commit, each passing the safety gate, then writes the commit."""

    def __init__(self, root: Path, base: str) -> None:
        import pygit2  # lazy: ~60 ms, only reflection needs it

        self._pygit2 = pygit2
        self.repo = pygit2.Repository(str(root))
        found = self.repo.get(base)
        if not isinstance(found, pygit2.Commit):
            raise GitmemError(f"commit {base} not found", "run `gitmem index` and try again")
        self.base: pygit2.Commit = found
        self.changes: dict[str, bytes] = {}

    def entry(self, path: str) -> BaseEntry:
        try:
            obj = self.base.tree[path]
        except (KeyError, ValueError):
            return BaseEntry(None)
        return BaseEntry(int(obj.filemode))

    def read(self, path: str) -> bytes | None:
        """The content at `path` as it will be in the proposal (pending changes first)."""
        if path in self.changes:
            return self.changes[path]
        return self._base_blob(path)

    def _base_blob(self, path: str) -> bytes | None:
        try:
            obj = self.base.tree[path]
        except (KeyError, ValueError):
            return None
        if not isinstance(obj, self._pygit2.Blob):
            return None
        return bytes(obj.data)

    def base_text(self, path: str) -> str | None:
        data = self._base_blob(path)
        return None if data is None else data.decode("utf-8", "replace")

    def write(self, path: str, data: bytes) -> bool:
        """Stage `data` at `path` after the safety gate; False when it equals the base content."""
        old = None
        try:
            obj = self.base.tree[path]
            if isinstance(obj, self._pygit2.Blob):
                old = bytes(obj.data)
        except (KeyError, ValueError):
            pass
        check_write(path, old, data, self.entry)
        if old == data:
            self.changes.pop(path, None)
            return False
        self.changes[path] = data
        return True

    def commit(self, message: str) -> str:
        """Write blobs, trees and the commit object; returns its oid (no ref is moved)."""
        pg = self._pygit2
        tree_oid = self._tree(self.base.tree, "", self.changes)
        t = self.base.commit_time
        offset = self.base.commit_time_offset
        sig = pg.Signature(IDENTITY[0], IDENTITY[1], t, offset)
        oid = self.repo.create_commit(None, sig, sig, message, tree_oid, [self.base.id])
        return str(oid)

    def _tree(self, tree: pygit2.Tree | None, prefix: str, changes: dict[str, bytes]) -> pygit2.Oid:
        pg = self._pygit2
        tb = self.repo.TreeBuilder(tree) if tree is not None else self.repo.TreeBuilder()
        here: dict[str, bytes] = {}
        below: dict[str, dict[str, bytes]] = {}
        for path, data in changes.items():
            name, sep, rest = path.partition("/")
            if sep:
                below.setdefault(name, {})[rest] = data
            else:
                here[name] = data
        for name, data in here.items():
            tb.insert(name, self.repo.create_blob(data), pg.GIT_FILEMODE_BLOB)
        for name, sub in below.items():
            child = None
            if tree is not None:
                try:
                    existing = tree[name]
                    child = existing if isinstance(existing, pg.Tree) else None
                except KeyError:
                    child = None
            tb.insert(name, self._tree(child, f"{prefix}{name}/", sub), pg.GIT_FILEMODE_TREE)
        return tb.write()


def move(root: Path, ref: str, new: str | None, expected: str | None) -> None:
    """CAS the ref from `expected` to `new` (None deletes); ReflectRace when someone else moved it.
    Refuses a ref whose current tip gitmem did not make, or one checked out in a worktree."""
    check_ours(root, ref, expected)
    short = ref.removeprefix("refs/heads/")
    where = checked_out_in(root, ref)
    if where is not None:
        raise GitmemError(f"{short} is checked out in {where}; gitmem will not move it under a work tree",
                          f"switch that work tree to another branch (e.g. `git -C {where} switch main`), then retry")
    if git.update_ref(root, ref, new, expected):
        return
    now = read_ref(root, ref)
    if now == new:
        return  # a concurrent run wrote the very same result: nothing was lost
    raise ReflectRace(
        f"{short} was changed by another `gitmem reflect`/`gitmem review` while this one ran "
        f"(expected {expected[:7] if expected else 'no branch'}, found {now[:7] if now else 'no branch'}); "
        "this run's proposal was not written",
        "run `gitmem review` to see the proposal that won, or re-run `gitmem reflect`",
    )
