"""Every call gitmem makes to the `git` executable goes through this module.

Why subprocess and not a binding: the hot paths (the post-commit hook, a full rebuild) are
dominated by process start-up and by git's own diff machinery. `git log -p` streamed into one
parser walked history ~1.7x faster than pygit2 diffs here, and importing pygit2 alone costs ~60 ms,
most of the hook's budget. pygit2 is used only where it is the better tool: writing reflection
commits as objects without a working tree (reflect/branch.py).
"""

# Annotations are evaluated at import (no __future__ import): see recall/result.py.

import os
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from gitmem.errors import GitError, NotAWorkspace


# Predictable output whatever the user's config: no pager, no colour, no locale translation,
# paths printed verbatim (core.quotePath=false) so non-ASCII names survive.
_BASE = ["git", "-c", "core.quotePath=false", "-c", "color.ui=false", "-c", "log.showSignature=false"]


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"LC_ALL": "C", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    # A hook runs with GIT_DIR/GIT_INDEX_FILE set for the repo being committed to; our own
    # calls pass -C and must not inherit an index file meant for a different operation.
    env.pop("GIT_INDEX_FILE", None)
    if extra:
        env.update(extra)
    return env


def run(
    repo: Path | str,
    args: Sequence[str],
    *,
    input: bytes | None = None,
    check: bool = True,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run `git -C repo args...` and return the completed process (stdout/stderr as bytes)."""
    try:
        proc = subprocess.run(
            [*_BASE, "-C", str(repo), *args],
            input=input,
            capture_output=True,
            env=_env(env),
        )
    except FileNotFoundError as exc:  # pragma: no cover - depends on the machine
        raise GitError("git is not installed or not on PATH", "install git and try again") from exc
    if check and proc.returncode != 0:
        raise GitError(error_line(proc.stderr) or f"git {' '.join(args)} failed")
    return proc


def error_line(stderr: bytes) -> str:
    """The line of git's stderr that says what went wrong: the last `fatal:`/`error:` line, not a
    trailing `hint:` (advice) line; else the last line that is not advice."""
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    for ln in reversed(lines):
        if ln.startswith(("fatal:", "error:")):
            return ln
    plain = [ln for ln in lines if not ln.startswith("hint:")]
    return (plain or lines or [""])[-1]


def out(repo: Path | str, *args: str, check: bool = True) -> str:
    """stdout of a git command as text, trailing newline removed."""
    return run(repo, args, check=check).stdout.decode("utf-8", "surrogateescape").rstrip("\n")


def ok(repo: Path | str, *args: str) -> bool:
    """True when the git command exits 0."""
    return run(repo, args, check=False).returncode == 0


def _not_a_repository(path: Path | str) -> NotAWorkspace:
    return NotAWorkspace(f"{Path(path).resolve()} is not inside a git repository",
                         "run `gitmem init` there first, or pass -C PATH")


def toplevel(path: Path | str) -> Path:
    proc = run(path, ["rev-parse", "--show-toplevel"], check=False)
    if proc.returncode != 0:
        raise _not_a_repository(path)
    return Path(proc.stdout.decode("utf-8", "surrogateescape").strip())


class Located(NamedTuple):
    """The work tree containing a path and its HEAD commit (None before the first commit), as read
    by one git call."""

    root: Path
    head: str | None


_LOCATE = ["rev-parse", "--show-toplevel", "--verify", "--quiet", "--end-of-options", "HEAD^{commit}"]


def locate(path: Path | str) -> Located:
    """`toplevel(path)` and `head` of it in one `git rev-parse` (a CLI read command needs both: one
    git process fewer). Raises NotAWorkspace as `toplevel` does. Answered by the call the CLI
    started for the same directory before its imports (`prestart_locate`) when there is one."""
    proc = _take_located(path) or run(path, _LOCATE, check=False)
    out = proc.stdout.decode("utf-8", "surrogateescape")
    # Exit 1 with the top level printed: a repository whose HEAD names no commit yet (--verify
    # --quiet fails alone); anything else that is not 0 is not a work tree at all (128).
    if proc.returncode not in (0, 1) or not out.strip():
        raise _not_a_repository(path)
    if proc.returncode == 1:
        return Located(Path(out.strip()), None)
    top, _, oid = out.rstrip("\n").rpartition("\n")
    return Located(Path(top.strip()), oid.strip() or None)


# `locate`'s git process as `prestart_locate` started it: (resolved directory, process).
_early_locate: "tuple[Path, subprocess.Popen[bytes]] | None" = None


def prestart_locate(directory: Path | str) -> None:
    """Start `locate`'s git call for `directory` now (the CLI does, beside `git status`, before
    importing click): its fork, exec and run then overlap the imports instead of being waited for."""
    global _early_locate
    discard_locate()
    _early_locate = (Path(directory).resolve(), subprocess.Popen(
        [*_BASE, "-C", str(directory), *_LOCATE], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env()))


def discard_locate() -> None:
    """Wait for and drop a prestarted `locate` nobody took (a usage error, another command)."""
    global _early_locate
    early, _early_locate = _early_locate, None
    if early is not None:
        early[1].communicate()


def _take_located(path: Path | str) -> "subprocess.CompletedProcess[bytes] | None":
    """The prestarted call's result when it ran in `path` (taken once), else None."""
    global _early_locate
    early, _early_locate = _early_locate, None
    if early is None:
        return None
    directory, proc = early
    out, err = proc.communicate()
    if directory != Path(path).resolve():
        return None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def git_path(repo: Path | str, name: str) -> Path:
    """Resolve a path inside the git dir the way git does (handles worktrees and GIT_COMMON_DIR)."""
    p = Path(out(repo, "rev-parse", "--git-path", name))
    return p if p.is_absolute() else Path(repo) / p


def resolve(repo: Path | str, rev: str) -> str | None:
    """Full oid of a commit-ish, or None when it does not name a commit."""
    if rev.startswith("-"):
        return None
    proc = run(repo, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], check=False)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip() or None


def head(repo: Path | str) -> str | None:
    """HEAD's oid, or None in a repository with no commits yet."""
    return resolve(repo, "HEAD")


def current_branch(repo: Path | str) -> str | None:
    """Short branch name, or None when HEAD is detached."""
    proc = run(repo, ["symbolic-ref", "--quiet", "--short", "HEAD"], check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def is_shallow(repo: Path | str) -> bool:
    return out(repo, "rev-parse", "--is-shallow-repository") == "true"


def first_parent_oids(repo: Path | str, tip: str, since: str | None = None) -> list[str]:
    """Oids on the first-parent chain of `tip`, oldest first, excluding `since` and its ancestors."""
    return [oid for oid, _ in first_parent_links(repo, tip, since)]


def first_parent_links(repo: Path | str, tip: str, since: str | None = None) -> list[tuple[str, str | None]]:
    """(oid, first parent or None) along the same chain as `first_parent_oids`, in one git call."""
    args = ["rev-list", "--first-parent", "--parents", "--reverse", tip]
    if since:
        args += [f"^{since}"]
    links: list[tuple[str, str | None]] = []
    for line in out(repo, *args).splitlines():
        oids = line.split()
        if oids:
            links.append((oids[0], oids[1] if len(oids) > 1 else None))
    return links


def count_first_parent(repo: Path | str, tip: str, since: str | None = None) -> int:
    """How many commits `first_parent_links(repo, tip, since)` would list, without listing them."""
    args = ["rev-list", "--count", "--first-parent", tip]
    if since:
        args += [f"^{since}"]
    return int(out(repo, *args) or 0)


def first_parent(repo: Path | str, oid: str) -> str | None:
    return resolve(repo, f"{oid}^1")


def is_ancestor(repo: Path | str, a: str, b: str) -> bool:
    return ok(repo, "merge-base", "--is-ancestor", a, b)


# A 1 MiB pipe instead of Linux's default 64 KiB lets git run ahead while the reader is busy (an
# index batch's SQLite commit takes ~20-50 ms; with 64 KiB git stalled for each of them and then
# the reader waited for git).
_STREAM_PIPE_BYTES = 1 << 20


def _widen_pipe(fd: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _STREAM_PIPE_BYTES)
    except (ImportError, AttributeError, OSError):  # not Linux, or over /proc/sys/fs/pipe-max-size
        pass


def stream(repo: Path | str, args: Sequence[str]) -> Iterator[bytes]:
    """Yield git's stdout in blocks as it is produced, so a full-history walk never holds the
    whole `git log -p` output in memory. Raises GitError if git fails."""
    proc = subprocess.Popen(
        [*_BASE, "-C", str(repo), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    if proc.stdout is None or proc.stderr is None:  # Popen broke its contract: say so, never hang
        proc.kill()
        raise GitError(f"git {' '.join(args)}: no pipe to the git process")
    _widen_pipe(proc.stdout.fileno())
    try:
        while True:
            block = proc.stdout.read(1 << 16)
            if not block:
                break
            yield block
    finally:
        proc.stdout.close()
        err = proc.stderr.read()
        proc.stderr.close()
        code = proc.wait()
    if code != 0:
        raise GitError(error_line(err) or f"git {' '.join(args)} failed")


class CatFile:
    """A long-lived `git cat-file --batch` process: one fork for any number of blob reads.
    With `check=True` it is `--batch-check`: sizes only (`size()`), nothing is read."""

    def __init__(self, repo: Path | str, check: bool = False) -> None:
        self._check = check
        self._proc = subprocess.Popen(
            [*_BASE, "-C", str(repo), "cat-file", "--batch-check" if check else "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=_env(),
        )
        if self._proc.stdin is None or self._proc.stdout is None:
            self._proc.kill()
            raise GitError("git cat-file: no pipe to the git process")
        self._stdin, self._stdout = self._proc.stdin, self._proc.stdout

    def size(self, spec: str) -> int | None:
        """Size in bytes of the object `spec` names (a `check=True` CatFile), None when missing."""
        if not self._check:
            raise GitError("CatFile.size needs a check=True (--batch-check) process")
        if "\n" in spec:
            return None
        self._stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
        self._stdin.flush()
        header = self._stdout.readline().split()
        return int(header[2]) if len(header) == 3 and header[2].isdigit() else None

    def read(self, spec: str) -> bytes | None:
        """Contents of `spec` (e.g. "<commit>:<path>" or an oid), or None when it does not exist."""
        if "\n" in spec:
            return None
        self._stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
        self._stdin.flush()
        header = self._stdout.readline()
        if not header or header.endswith(b" missing\n") or header.endswith(b" ambiguous\n"):
            return None
        size = int(header.split()[2])
        data = self._stdout.read(size)
        self._stdout.read(1)  # the newline after each object
        return data

    def close(self) -> None:
        if self._proc.poll() is None:
            self._stdin.close()
            self._proc.wait()

    def __enter__(self) -> "CatFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Status:
    """`git status`, started in the background: on a large work tree it costs tens of milliseconds
    of lstat calls, which recall overlaps with opening the index and querying. `result()` waits
    for it: [(status, path)] of every changed or untracked file, status "M" (modified, added or
    untracked) or "D" (deleted in the working tree)."""

    def __init__(self, repo: Path | str) -> None:
        # --no-optional-locks: status would otherwise take .git/index.lock to refresh stat data,
        # which makes a user's concurrent `git add`/`commit` fail ("index.lock: File exists").
        self._proc = subprocess.Popen(
            [*_BASE, "--no-optional-locks", "-C", str(repo), "status", "--porcelain=v1", "-z",
             "--untracked-files=all", "--no-renames"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
        )
        self._result: list[tuple[str, str]] | None = None

    _early: "tuple[Path, Status] | None" = None

    @classmethod
    def prestart(cls, directory: Path | str) -> None:
        """Start the scan for the repository containing `directory` before the caller knows its
        root (the CLI does this before importing click); `take` hands it over."""
        cls._early = (Path(directory).resolve(), cls(directory))

    @classmethod
    def take(cls, root: Path) -> "Status":
        """The prestarted scan when it ran inside `root`, else a new one. Porcelain paths are
        relative to the repository root whatever directory git ran in, so either answer is the
        same."""
        early, cls._early = cls._early, None
        if early is not None:
            directory, status = early
            if directory == root or root in directory.parents:
                return status
            status.close()
        return cls(root)

    def result(self) -> list[tuple[str, str]]:
        if self._result is None:
            raw, err = self._proc.communicate()
            if self._proc.returncode != 0:
                raise GitError(error_line(err) or "git status failed")
            self._result = []
            for entry in raw.split(b"\0"):
                if len(entry) < 4:
                    continue
                xy, path = entry[:2].decode(), entry[3:].decode("utf-8", "surrogateescape")
                self._result.append(("D" if "D" in xy else "M", path))
        return self._result

    def close(self) -> None:
        # Wait rather than kill: a git killed mid-command can leave a lock file behind.
        self._proc.communicate()


def status(repo: Path | str) -> list[tuple[str, str]]:
    """Files whose working-tree state differs from HEAD (see Status)."""
    return Status(repo).result()


ZERO_OID = "0" * 40


def update_ref(repo: Path | str, ref: str, new: str | None, old: str | None) -> bool:
    """Compare-and-swap a ref: point `ref` at `new` (None deletes it) only if it currently is `old`
    (None = must not exist). git holds the ref's lock file while checking, so two concurrent
    writers cannot both win. False when the ref did not have the expected value. --no-deref: when
    `ref` is a symbolic ref, it is that ref that moves, never the branch it points to."""
    if new is None:
        args = ["update-ref", "--no-deref", "-d", ref, old or ZERO_OID]
    else:
        args = ["update-ref", "--no-deref", ref, new, old or ZERO_OID]
    return run(repo, args, check=False).returncode == 0
