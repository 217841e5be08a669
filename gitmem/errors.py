"""Errors a user can act on.

Every error the library raises on purpose is a GitmemError carrying a one-line message and, where
there is one, the next step. The CLI prints them without a traceback and exits 1; JSON mode prints
them as {"error": ..., "hint": ...}.
"""

from __future__ import annotations


class GitmemError(Exception):
    """A problem the user can fix; `hint` says how. `exit_code` is the CLI's exit status."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message} ({self.hint})"


class NotAWorkspace(GitmemError):
    pass


class GitError(GitmemError):
    """A git command failed; carries git's own stderr."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        # Every error carries a next step; git's own message usually names what to fix.
        super().__init__(message, hint or "that is git's own message: fix what it names, then run the command again")


class BadQuery(GitmemError):
    pass


class BadRevision(GitmemError):
    pass


class IndexLocked(GitmemError):
    pass


class BadUsage(GitmemError):
    """The command was given a value it cannot mean (an unknown --kind, a reversed range): exit 2,
    as for any other usage error."""

    exit_code = 2
class InternalError(GitmemError):
    """A failure gitmem did not anticipate (a bug): reported in one line, the details logged."""


# errno and SQLite error names, grouped by what the user has to do about them.
_NO_SPACE = {"ENOSPC", "EDQUOT", "EFBIG"}
_NO_ACCESS = {"EACCES", "EPERM"}
_FILE_IN_THE_WAY = {"ENOTDIR", "EEXIST"}
_SQLITE_NO_SPACE = {"SQLITE_FULL"}
_SQLITE_NO_WRITE = {"SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH"}
_SQLITE_CORRUPT = {"SQLITE_CORRUPT", "SQLITE_NOTADB"}
_SQLITE_BUSY = {"SQLITE_BUSY", "SQLITE_LOCKED"}
_INDEX = "the index in .memory/"
_REBUILD = "gitmem rebuilds everything in .memory/ from git"


def sqlite_code(exc: BaseException) -> str:
    """The SQLite error name of an sqlite3 exception ("SQLITE_FULL", "SQLITE_READONLY_DBMOVED", ...),
    reduced to its primary code ("SQLITE_READONLY"); "" for anything else."""
    name = getattr(exc, "sqlite_errorname", None)
    if not isinstance(name, str):
        return ""
    parts = name.split("_")
    return "_".join(parts[:2])


def is_corrupt_index(exc: BaseException) -> bool:
    """Whether an sqlite3 error means the file is damaged or not a database at all: only then may
    an index be moved aside and rebuilt (a read-only or full disk is not corruption)."""
    if sqlite_code(exc) in _SQLITE_CORRUPT:
        return True
    text = str(exc).lower()
    return "file is not a database" in text or "malformed" in text


def explain(exc: BaseException) -> GitmemError | None:
    """What an environment failure (full disk, read-only file, a file where a folder belongs, a
    damaged index) means for the user, as a GitmemError with the next step; None if `exc` is not
    one of those. Shared by the CLI, the MCP server and the hooks, so each says it the same way."""
    import errno  # both built in and already loaded by the interpreter: no start-up cost
    import os

    if isinstance(exc, GitmemError):
        return exc
    if isinstance(exc, MemoryError):
        return GitmemError("out of memory", "close other programs, or lower index.max_file_bytes in .gitmem.toml")
    code = sqlite_code(exc)
    if code in _SQLITE_NO_SPACE:
        return GitmemError(f"the disk holding {_INDEX} is full (SQLITE_FULL)",
                           "free some disk space, then run the command again")
    if code in _SQLITE_NO_WRITE:
        return GitmemError(f"{_INDEX} cannot be written ({exc})",
                           "make .memory/ and the files in it writable for your user (chmod -R u+w .memory)")
    if code in _SQLITE_CORRUPT:
        return GitmemError(f"{_INDEX} is damaged ({exc})", f"run `gitmem index --rebuild` ({_REBUILD})")
    if code in _SQLITE_BUSY:
        return GitmemError(f"{_INDEX} is busy ({exc})", "another gitmem is writing it: try again in a moment")
    if code == "SQLITE_IOERR":
        return GitmemError(f"reading or writing {_INDEX} failed ({exc})",
                           "check the disk (full? read-only? removed?), then run the command again")
    if isinstance(exc, OSError) and exc.errno is not None:
        name = errno.errorcode.get(exc.errno, "")
        path = exc.filename if exc.filename is not None else "a file"
        what = os.strerror(exc.errno)
        if name in _NO_SPACE:
            return GitmemError(f"no space left to write {path} ({name}: {what})",
                               "free some disk space (or raise the quota), then run the command again")
        if name == "EROFS":
            return GitmemError(f"cannot write {path}: the file system is read-only",
                               "remount it writable, or use a workspace on a writable disk")
        if name in _NO_ACCESS:
            return GitmemError(f"no permission to write {path} ({name}: {what})",
                               "make it writable for your user (chmod u+w), or run gitmem as the workspace's owner")
        if name == "EISDIR":
            return GitmemError(f"{path} is a folder where gitmem expects a file",
                               f"move it out of the way ({_REBUILD}; .gitmem.toml must be a file)")
        if name in _FILE_IN_THE_WAY:
            return GitmemError(f"{path} (or a folder above it) is a file where gitmem needs a folder",
                               "move that file out of the way, then run the command again")
        if name == "ELOOP":
            return GitmemError(f"{path} is a symlink loop", "replace the symlink with a real file or folder")
        if name == "ENOENT":
            return GitmemError(f"{path} does not exist", "check the path, then run the command again")
        return GitmemError(f"{what}: {path} ({name or exc.errno})", "check the file and the disk, then run the command again")
    return None
