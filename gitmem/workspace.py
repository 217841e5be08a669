"""Where a memory workspace lives: its root, and the absolute paths of its files (names: layout.py)."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gitmem import layout, lazyre
from gitmem.errors import GitmemError
from gitmem.safefile import open_nofollow, read_capped, refuse_symlink, write_atomic
from gitmem.timeline import git

_PATTERNS_CAP = 1 << 22  # bytes: the ~100 programs of gitmem's patterns take ~100 KB


class Workspace:
    """A git work tree used as memory. Each worktree has its own derived index.

    A plain class, not a dataclass: the post-commit hook imports this (see parse/model.py)."""

    __slots__ = ("root",)
    root: Path

    def __init__(self, root: Path | str) -> None:
        object.__setattr__(self, "root", root if isinstance(root, Path) else Path(root))  # str from library callers

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Workspace is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Workspace) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"Workspace(root={self.root!r})"

    def __reduce__(self) -> tuple[type[Workspace], tuple[Path]]:
        return (Workspace, (self.root,))  # copy and pickle rebuild it through __init__

    @classmethod
    def find(cls, start: Path | str) -> Workspace:
        """The workspace containing `start`; raises NotAWorkspace with a next step otherwise."""
        return cls(git.toplevel(start).resolve())

    @classmethod
    def find_at_head(cls, start: Path | str) -> tuple[Workspace, git.Located]:
        """`find`, and what git said of it: its HEAD commit as read by the same git call (a recall
        session needs both; see index.db.target_commit)."""
        located = git.locate(start)
        ws = cls(located.root.resolve())
        return ws, located._replace(root=ws.root)

    @property
    def derived(self) -> Path:
        return self.root / layout.DERIVED_DIR

    @property
    def index_path(self) -> Path:
        return self.derived / layout.INDEX_FILE

    @property
    def hook_log(self) -> Path:
        return self.derived / layout.HOOK_LOG

    @property
    def config_path(self) -> Path:
        return self.root / layout.CONFIG_FILE

    def ensure_derived(self) -> Path:
        """Create .memory/ and make sure git ignores it even without a .gitignore line: a committed
        index would be swept into history by `git add -A` and resurrected by `git reset --hard`.

        A `.memory` that is a symlink (a clone can carry a committed one) is refused, never
        followed: the index, locks and logs would be written wherever it points."""
        refuse_symlink(self.derived, f"{layout.DERIVED_DIR}/")
        if self.derived.exists() and not self.derived.is_dir():
            raise GitmemError(f"{self.derived} is not a directory; gitmem keeps its derived data there",
                              f"move {layout.DERIVED_DIR} away (it is rebuilt from git), then retry")
        if not self.derived.is_dir():
            self.derived.mkdir(parents=True, exist_ok=True)
            if not git.ok(self.root, "check-ignore", "-q", f"{layout.DERIVED_DIR}/{layout.INDEX_FILE}"):
                exclude = git.git_path(self.root, "info/exclude")
                exclude.parent.mkdir(parents=True, exist_ok=True)
                with exclude.open("a", encoding="utf-8") as fh:
                    fh.write(f"\n# derived gitmem index (rebuildable from git)\n/{layout.DERIVED_DIR}/\n")
        return self.derived

    def derived_file(self, name: str) -> Path:
        """`.memory/<name>`, after checking that neither `.memory` nor the file is a symlink: every
        file gitmem keeps there is opened through this (or safefile's O_NOFOLLOW helpers)."""
        path = self.ensure_derived() / name
        refuse_symlink(path, f"{layout.DERIVED_DIR}/{name}")
        return path

    def load_patterns(self) -> None:
        """Use the regular expressions an earlier gitmem process compiled (gitmem/lazyre.py, kept
        in .memory/): on a CLI recall compiling them again was ~10% of the work, and in the
        post-commit hook the indexer's first uses of its date and statement patterns were 4-8 ms
        of a ~95 ms run. A cache: anything wrong with it means compiling."""
        try:
            lazyre.load(read_capped(self.root, f"{layout.DERIVED_DIR}/{layout.REGEX_CACHE}", _PATTERNS_CAP))
        except OSError:  # none yet (also NotRegular: a symlink is not read)
            lazyre.load(b"")

    def save_patterns(self) -> None:
        """Keep the patterns this process compiled since `load_patterns` for the next process;
        written only when there are new ones, and never an error (a read-only .memory/ just means
        compiling again)."""
        data = lazyre.dump()
        if data is not None and len(data) <= _PATTERNS_CAP:
            try:
                write_atomic(self.derived_file(layout.REGEX_CACHE), data)
            except (OSError, GitmemError):
                pass

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold gitmem's one writer lock: every gitmem command that commits to or moves the user's
        refs (retain, review --merge/--discard, reflect writing its proposal, forget --yes) runs
        under it, so gitmem's own writers wait for each other instead of racing. Blocks until free.
        Not reentrant: a second `writing()` in the same process waits for the first."""
        with self.locked(layout.WRITE_LOCK):
            yield

    @contextmanager
    def locked(self, name: str, busy: GitmemError | None = None, wait: float = 0.0) -> Iterator[None]:
        """Hold the lock file `name` in the derived directory: block until it is free, or, given
        `busy`, raise it once `wait` seconds have passed.

        flock (not a lock file's existence): the kernel releases it if the process dies, so a
        crashed agent can never wedge every later writer."""
        fd = open_nofollow(self.derived_file(name), os.O_RDWR | os.O_CREAT, f"{layout.DERIVED_DIR}/{name}")
        try:
            if busy is None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            else:
                deadline = time.monotonic() + max(wait, 0.0)
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if time.monotonic() >= deadline:
                            raise busy from None
                        time.sleep(0.05)
            yield
        finally:
            os.close(fd)
