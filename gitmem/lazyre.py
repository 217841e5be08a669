"""Regular expressions compiled on first use.

A `gitmem recall` process used to compile every module-level pattern at import, though a question
uses under half of them (the indexer's, reflection's and the rarer ranking rules' are never
touched). `lazy(pattern, flags)` takes what `re.compile` takes and stands in for the compiled
pattern: the first call of a method compiles it, and from then on the compiled pattern's own
methods answer (bound into the instance, so a hot loop pays no extra Python call). Imports nothing
from gitmem: the bottom floor (layout.py) uses it.

Compiling was still a large part of a CLI recall's first search, nearly all of it `re`'s parser and
code generator, which are Python (measured in bench/RESULTS.md, "Recall latency, wave 8: the CLI").
So a recall session keeps what they produce, the pattern's program for the regex engine, in
`.memory/` (`load` / `dump`; recall/search.py reads and writes the file), the way Python keeps
bytecode in __pycache__: a later process hands the saved program to the engine (`_sre.compile`,
which checks a program before it runs it) instead of compiling. A saved program is used only by the
same Python build (`_TAG`), and one is saved only when the pattern it makes equals (flags, pattern
and program: re.Pattern's ==) what `re.compile` makes.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

import _sre  # type: ignore[import-not-found]  # the regex engine (no stubs): see `_compile`

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
        p = _compile(self.pattern, self.flags)
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


# -- saved programs (see the module docstring) ------------------------------------------------------
# The engine's program for a pattern depends on the Python build's `re` and `_sre`. "code2": a
# program's code is kept as the bytes of its 32-bit words, not a list of ints: unmarshalling every
# saved list was ~3 M instructions of each CLI recall, though a question uses about half of them; a
# bytes object loads as one copy, and only the programs used are turned back into lists.
_TAG = f"{sys.implementation.cache_tag} {sys.version} {_sre.MAGIC} {_sre.CODESIZE} code2"
_MAX_SAVED = 1000  # more than every lazy pattern in gitmem: older builds' leftovers are dropped past it
# `_sre.compile`'s arguments after the pattern, by (pattern, flags): loaded, and made in this process.
_saved: dict[tuple[str, int], tuple[Any, ...]] = {}
_made: dict[tuple[str, int], tuple[Any, ...]] = {}
_recording = False  # only a process that will `dump` pays for checking a program it saves


def _compile(pattern: str, flags: int) -> re.Pattern[str]:
    key = (pattern, int(flags))  # a plain int: re.RegexFlag does not marshal
    parts = _saved.get(key)
    if parts is not None:
        try:
            return _sre.compile(pattern, parts[0], memoryview(parts[1]).cast("I").tolist(), *parts[2:])
        except Exception:  # noqa: BLE001 - a damaged or foreign file: compile as if it were not there
            del _saved[key]
    p = re.compile(pattern, flags)
    if _recording:
        try:
            parts = _program(pattern, flags)
            if _sre.compile(pattern, *parts) == p and memoryview(b"").cast("I").itemsize == _sre.CODESIZE:
                from array import array

                _made[key] = (parts[0], array("I", parts[1]).tobytes(), *parts[2:])
        except Exception:  # noqa: BLE001 - another Python's `re` internals: nothing is saved
            pass
    return p


def _program(pattern: str, flags: int) -> tuple[Any, ...]:
    """What `re._compiler.compile` hands `_sre.compile` after the pattern (the same steps)."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(pattern, flags)
    code = [int(op) for op in _compiler._code(parsed, flags)]  # plain ints: re's named opcodes do not marshal
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    return (int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup))


def load(data: bytes) -> None:
    """Use the programs saved in `data` (what `dump` returned; anything else is ignored), and
    record the patterns compiled from now on for the next `dump`."""
    global _recording
    import marshal

    _recording = True
    try:
        tag, programs = marshal.loads(data)
    except Exception:  # noqa: BLE001 - an empty, damaged or foreign file is no cache
        return
    if tag == _TAG and isinstance(programs, dict):
        _saved.update(programs)


def dump() -> bytes | None:
    """The saved programs with those made since `load`, as bytes for `load`; None when nothing new
    was made (nothing to write)."""
    import marshal

    if not _made:
        return None
    if len(_saved) + len(_made) > _MAX_SAVED:
        _saved.clear()
    _saved.update(_made)
    _made.clear()
    return marshal.dumps((_TAG, _saved))
