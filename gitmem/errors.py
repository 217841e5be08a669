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
