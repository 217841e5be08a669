"""Reading a file of the work tree without following a symlink out of it or reading without end.

Memory files and `.gitmem.toml` are checked-in content, so they are hostile input: a committed or
untracked symlink (`memory.md -> ~/.ssh/id_rsa`, `.gitmem.toml -> /dev/zero`) or a FIFO must not
be read. Every directory on the way is opened with O_NOFOLLOW relative to its parent (a symlinked
folder is refused too), the file is opened with O_NOFOLLOW | O_NONBLOCK (a FIFO would otherwise
block the open), fstat must say regular file, and at most `cap + 1` bytes are read so the caller
can tell "over the cap" from "exactly the cap".

Plain functions and os/stat only: the post-commit hook reads the config through this.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

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
