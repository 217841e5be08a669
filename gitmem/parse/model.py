"""The value types of the Markdown memory model (no logic, so every parse module can import them)."""

from __future__ import annotations

from dataclasses import dataclass, field

# Kind letters of the Retain grammar (DESIGN.md "Retain bullets").
KIND_LETTERS: dict[str, str] = {"W": "world", "B": "experience", "O": "opinion", "S": "observation"}
NOTE = "note"


@dataclass(frozen=True, slots=True)
class Block:
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


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A problem found in a file; never fatal. `line` is 1-based."""

    path: str
    line: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.code}: {self.message}"


@dataclass(frozen=True, slots=True)
class ParsedFile:
    path: str
    blocks: list[Block]
    diagnostics: list[Diagnostic]
    # Opaque resume points for re-parsing the next version of this file (see blocks.py); None when
    # the file cannot be resumed (skipped, front matter, an unclosed fence).
    resume: object | None = field(default=None, compare=False, repr=False)
    # How many leading blocks were carried over unchanged from `previous` (0 for a full parse).
    reused: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class RetainFact:
    """A valid Retain bullet, as validated by `parse_retain_bullet`."""

    kind: str  # world|experience|opinion|observation
    letter: str  # W|B|O|S
    confidence: float | None
    body: str  # the text after the kind prefix, e.g. "@Peter: Prefers concise replies."
    entities: tuple[str, ...]
