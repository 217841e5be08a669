"""Writing files without losing the old bytes and without following symlinks.

Every file gitmem writes in a work tree (a day log, `.gitmem.toml`, hook scripts, state under
`.memory/`) goes through `write_atomic`: the new bytes go to a fresh temporary file in the same
directory, are fsynced, and replace the old file with one rename. A full disk, a file-size limit or
a kill at any point leaves either the old bytes or the new ones, never a truncated mix.

A work tree is untrusted: a committed symlink can point anywhere on the machine. So nothing here
opens a path through a symlink (O_NOFOLLOW on the last component; `refuse_symlink` for the
directories callers create files in).

Kept to the standard library's `os`: the post-commit hook imports this (see parse/model.py).
"""

from __future__ import annotations

import errno
import os
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
