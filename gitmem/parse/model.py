"""The value types of the Markdown memory model (no logic, so every parse module can import them).

NamedTuples rather than dataclasses: the post-commit hook imports these, and the dataclasses
module (it imports inspect) plus building each class cost ~20 ms of the hook's ~100 ms budget.
"""

# Annotations are evaluated at import (no __future__ import): see recall/result.py.

from typing import NamedTuple

# Kind letters of the Retain grammar (README.md, "The workspace").
KIND_LETTERS: dict[str, str] = {"W": "world", "B": "experience", "O": "opinion", "S": "observation"}
NOTE = "note"


class Block(NamedTuple):
    """One indexed chunk: a paragraph, a list item, a fenced code block or YAML front matter."""

    start: int  # 1-based first line
    end: int  # 1-based last line, inclusive
    heading: tuple[str, ...]  # heading path, e.g. ("2025-11-27", "Retain")
    text: str  # exact source lines start..end joined with "\n" (see split_lines)
    content: str  # for search/display: list marker and kind prefix stripped, whitespace collapsed
    kind: str  # world|experience|opinion|observation for a valid Retain fact, else "note"
    fact: bool  # True for a valid Retain bullet
    entities: tuple[str, ...]  # entity_key of each @mention, in order of first appearance
    confidence: float | None  # only from O(c=..)
    event_start: str | None  # ISO date
    event_end: str | None  # ISO date, == event_start for a single day


class Diagnostic(NamedTuple):
    """A problem found in a file; never fatal. `line` is 1-based."""

    path: str
    line: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.code}: {self.message}"


class ParsedFile:
    """One parse. Equal when path, blocks and diagnostics are: how a file was parsed (resumed or
    not) is not part of what it says."""

    __slots__ = ("path", "blocks", "diagnostics", "resume", "reused", "reused_tail")

    def __init__(self, path: str, blocks: list[Block], diagnostics: list[Diagnostic],
                 resume: object | None = None, reused: int = 0, reused_tail: int = 0) -> None:
        self.path = path
        self.blocks = blocks
        self.diagnostics = diagnostics
        # Opaque resume points for re-parsing the next version of this file (see blocks.py); None
        # when the file cannot be resumed (skipped, front matter, an unclosed fence).
        self.resume = resume
        # How many leading blocks were carried over unchanged from `previous` (0 for a full parse).
        self.reused = reused
        # How many trailing blocks are `previous`'s last blocks, the same text moved by the lines
        # added or removed above them (0 when none were taken over).
        self.reused_tail = reused_tail

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ParsedFile):
            return NotImplemented
        return (self.path, self.blocks, self.diagnostics) == (other.path, other.blocks, other.diagnostics)

    __hash__ = None  # type: ignore[assignment]  # mutable lists inside

    def __repr__(self) -> str:
        return f"ParsedFile(path={self.path!r}, blocks={self.blocks!r}, diagnostics={self.diagnostics!r})"


class RetainFact(NamedTuple):
    """A valid Retain bullet, as validated by `parse_retain_bullet`."""

    kind: str  # world|experience|opinion|observation
    letter: str  # W|B|O|S
    confidence: float | None
    body: str  # the text after the kind prefix, e.g. "@Peter: Prefers concise replies."
    entities: tuple[str, ...]
