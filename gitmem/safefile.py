"""Reading and writing files of a work tree without following a symlink out of it, reading without
end, or losing the old bytes.

Every file gitmem writes in a work tree (a day log, `.gitmem.toml`, hook scripts, state under
`.memory/`) goes through `write_atomic`: the new bytes go to a fresh temporary file in the same
directory, are fsynced, and replace the old file with one rename. A full disk, a file-size limit or
a kill at any point leaves either the old bytes or the new ones, never a truncated mix.

A work tree is untrusted: a committed symlink can point anywhere on the machine, and memory files
and `.gitmem.toml` are checked-in content (`memory.md -> ~/.ssh/id_rsa`, `.gitmem.toml ->
/dev/zero`). So nothing here opens a path through a symlink: writes use O_NOFOLLOW on the last
component and `refuse_symlink` for the directories callers create files in; `read_capped` opens
every directory on the way with O_NOFOLLOW relative to its parent, the file with O_NOFOLLOW |
O_NONBLOCK (a FIFO would otherwise block the open), requires a regular file, and reads at most
`cap + 1` bytes so the caller can tell "over the cap" from "exactly the cap".

Plain functions and the standard library's `os` only: the post-commit hook imports this.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from gitmem.errors import GitmemError


def refuse_symlink(path: Path, shown: str) -> None:
    """GitmemError when `path` is a symlink (dangling or not): gitmem never writes through one."""
    if os.path.islink(path):
        raise GitmemError(
            f"{shown} is a symlink; gitmem does not follow symlinks in a workspace",
            f"replace {shown} with a real {'directory' if shown.endswith('/') else 'file'} (or remove it), then retry",
        )


def open_nofollow(path: Path, flags: int, shown: str, mode: int = 0o644) -> int:
    """os.open(path) that refuses a symlink as the last component with a one-line error."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_symlink(path, shown)
        raise


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace `path` with `data`: temporary file in the same directory, fsync, rename, fsync the
    directory. On any failure the temporary file is removed and `path` is as it was. The file gets
    `mode` when given, else keeps its permission bits (0o644 when new). A symlink at `path` is
    refused, not replaced: it may be tracked, and replacing it would turn it into a file behind the
    user's back."""
    refuse_symlink(path, str(path))
    keep = mode
    if keep is None:
        try:
            keep = os.lstat(path).st_mode & 0o7777
        except FileNotFoundError:
            keep = 0o644
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.gitmem-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, keep)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dfd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return  # the rename happened; a directory we cannot open for fsync is not a failure
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegular(OSError):
    """The path is a symlink, a directory, a device or a FIFO (or goes through a symlinked folder)."""


def safe_rel(rel: str) -> bool:
    """Whether `rel` is a plain workspace-relative path: not absolute, no "..", not in `.git`."""
    if not rel or rel.startswith("/") or "\0" in rel or "\\" in rel:
        return False
    parts = rel.split("/")
    return all(p not in ("", ".", "..") for p in parts) and parts[0].lower() != ".git"


def read_capped(root: Path, rel: str, cap: int) -> bytes:
    """At most `cap + 1` bytes of the regular file `root/rel`.

    Raises NotRegular for a symlink (the file or any folder on the way), a non-regular file or a
    path that leaves `root`; FileNotFoundError / other OSError as os.open does."""
    if not safe_rel(rel):
        raise NotRegular(f"{rel!r} is not a path inside the work tree")
    parts = rel.split("/")
    fd = os.open(root, _DIR_FLAGS & ~_NOFOLLOW)  # the root itself may be reached through a symlink
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # a symlink, or a file where a folder should be
                    raise NotRegular(f"{rel} goes through a symlink or a non-folder") from None
                raise
            os.close(fd)
            fd = nxt
        try:
            ffd = os.open(parts[-1], _FILE_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # the file is a symlink
                raise NotRegular(f"{rel} is a symlink") from None
            raise
    finally:
        os.close(fd)
    try:
        st = os.fstat(ffd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(f"{rel} is not a regular file")
        chunks: list[bytes] = []
        want = cap + 1
        while want > 0:
            block = os.read(ffd, min(want, 1 << 20))
            if not block:
                break
            chunks.append(block)
            want -= len(block)
        return b"".join(chunks)
    finally:
        os.close(ffd)


def is_regular(root: Path, rel: str) -> bool:
    """Whether `root/rel` is a regular file reached without a symlink (lstat of every part)."""
    if not safe_rel(rel):
        return False
    cur = root
    for part in rel.split("/"):
        cur = cur / part
        try:
            st = os.lstat(cur)
        except OSError:
            return False
        if stat.S_ISLNK(st.st_mode):
            return False
    return stat.S_ISREG(st.st_mode)
