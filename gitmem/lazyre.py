"""Regular expressions compiled on first use.

A `gitmem recall` process imported ~70 module-level patterns and compiled them all (~20 ms of a
~180 ms command at 1M lines), though a question uses under half of them (the indexer's, reflection's and
the rarer ranking rules' are never touched). `lazy(pattern, flags)` takes what `re.compile`
takes and stands in for the compiled pattern: the first call of a method compiles it, and from
then on the compiled pattern's own methods answer (bound into the instance, so a hot loop pays
no extra Python call). Imports nothing from gitmem: the bottom floor (layout.py) uses it.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the post-commit hook imports this through layout.py: nothing more at run time
    from collections.abc import Callable, Iterator
    from typing import Any

# The methods of re.Pattern that stand-ins answer; after the first use each is the compiled one's.
_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class Lazy:
    """A pattern compiled when it is first used (see the module docstring)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern  # the source, like re.Pattern.pattern (other patterns are built from it)
        self.flags = flags

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern; binds its methods over this object's own."""
        p = re.compile(self.pattern, self.flags)
        for name in _METHODS:
            setattr(self, name, getattr(p, name))
        return p

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().fullmatch(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled().findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled().sub(repl, string, count)

    def subn(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> tuple[str, int]:
        return self.compiled().subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled().split(string, maxsplit)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}, {self.flags!r})"


def lazy(pattern: str, flags: int = 0) -> Lazy:
    """`re.compile(pattern, flags)`, compiled on first use."""
    return Lazy(pattern, flags)
