"""The Retain grammar: facts `- W @Peter: text`, `- B ...`, `- O(c=0.95) ...`, `- S ...`, and
aliases `- alias: @Robert = Bob, Bobby` (other names of an entity: recall expands a question that
uses one of them)."""

# Annotations are evaluated at import (no __future__ import): see recall/result.py.

import re
from collections.abc import Iterable
from typing import NamedTuple

from gitmem.parse.entities import entity_key, mention_keys
from gitmem.parse.model import KIND_LETTERS, Diagnostic, RetainFact
from gitmem.lazyre import lazy

RETAIN_HEADING = "retain"

LIST_MARKER = lazy(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)")
# A kind attempt is a lone letter followed by "(", ":", whitespace or the end of the line;
# "- Went home" starts with a word, not a kind, and is reported as a missing kind.
_KIND_TOKEN = lazy(r"([A-Za-z])(?=[\s(:]|$)")
_CONFIDENCE = lazy(r"\s*c\s*=\s*(\d+(?:\.\d*)?|\.\d+)\s*")

_KINDS_HELP = "W (world), B (experience), O (opinion) or S (observation)"
# `alias: @Robert = Bob, Bobby`: the entity as an @mention, "=", its other names (comma-separated).
_ALIAS_START = lazy(r"alias\s*:", re.I)
_ALIAS = lazy(r"alias\s*:\s*@(?P<entity>[^\s=,@][^=,@]*?)\s*=\s*(?P<names>[^=]+?)\s*$", re.I)
_ALIAS_HELP = "write an alias as `- alias: @Robert = Bob, Bobby` (the entity's @mention, then its other names)"


class Prefix(NamedTuple):
    """A valid kind prefix and the fact text after it."""

    letter: str
    confidence: float | None
    body: str


class Problem(NamedTuple):
    """Why a Retain bullet is not a valid fact (becomes a Diagnostic)."""

    code: str
    message: str


def opinion_key(statement: str) -> str:
    """An opinion's identity: its statement (subject @mention included), lowercased, whitespace
    collapsed; the confidence is not part of it. A log bullet, the user's later confidence edits
    of it and its curated copy in bank/opinions.md (reflection copies the statement verbatim) are
    one opinion: reflection keys its state by this, `gitmem opinions` merges and follows by it."""
    return " ".join(statement.lower().split())


class Alias(NamedTuple):
    """A valid alias bullet: the entity (its key) and the other names it goes by, as written."""

    entity: str
    names: tuple[str, ...]


def alias_of(text: str) -> Alias | Problem | None:
    """An alias bullet's text after its list marker (or a chunk's collapsed content): an Alias,
    a Problem when it starts with `alias:` but is malformed, None when it is no alias bullet."""
    text = text.strip()
    if not _ALIAS_START.match(text):
        return None
    m = _ALIAS.match(" ".join(text.split()))
    if m is None:
        return Problem("retain-bad-alias", _ALIAS_HELP)
    key = entity_key(m.group("entity"))
    names = tuple(dict.fromkeys(n for n in (p.strip().strip("\"'`*_").lstrip("@").strip()
                                           for p in m.group("names").split(",")) if n))
    names = tuple(n for n in names if entity_key(n) != key)
    if not key or not names:
        return Problem("retain-bad-alias", _ALIAS_HELP)
    return Alias(key, names)


def is_retain_heading(text: str) -> bool:
    """True for a "Retain" heading, tolerant of case, emphasis and a trailing colon."""
    return text.strip().strip("*_:` \t").lower() == RETAIN_HEADING


def retain_alias(headings: Iterable[str], content: str) -> Alias | None:
    """The alias a block states, read as recall reads one: a note under a Retain heading (any level
    of `headings`) whose content is a valid alias bullet (`alias_of`); None otherwise. The same line
    outside a Retain section is a note like any other."""
    if not any(is_retain_heading(h) for h in headings):
        return None
    alias = alias_of(content)
    return alias if isinstance(alias, Alias) else None


def classify(rest: str) -> Prefix | Alias | Problem:
    """Parse the text after a list marker.

    A Prefix for a valid fact, an Alias for a valid alias bullet, else a Problem; at most one
    Problem per bullet, the first found.
    """
    rest = rest.lstrip(" \t")
    alias = alias_of(rest)
    if alias is not None:
        return alias
    m = _KIND_TOKEN.match(rest)
    if m is None:
        return Problem("retain-missing-kind", f"Retain bullet has no kind: start it with {_KINDS_HELP}, e.g. `- W @Peter: ...`")
    letter = m.group(1)
    pos = 1
    confidence: float | None = None
    conf_error: str | None = None
    if rest.startswith("(", pos):
        close = rest.find(")", pos)
        if close < 0:
            if letter not in KIND_LETTERS:
                return Problem("retain-unknown-kind", _unknown(letter))
            return Problem("retain-unclosed-paren", f"unclosed '(' after kind {letter}: write e.g. `O(c=0.8) ...`")
        inner = rest[pos + 1 : close]
        pos = close + 1
        cm = _CONFIDENCE.fullmatch(inner)
        value = float(cm.group(1)) if cm else None
        if value is None:
            conf_error = f"bad confidence ({inner.strip()}): write (c=X) with X from 0.0 to 1.0"
        elif not 0.0 <= value <= 1.0:
            conf_error = f"confidence c={cm.group(1) if cm else inner} is outside 0.0..1.0"
        else:
            confidence = value
    if letter not in KIND_LETTERS:
        return Problem("retain-unknown-kind", _unknown(letter))
    if conf_error is not None:
        return Problem("retain-bad-confidence", conf_error)
    if confidence is not None and letter != "O":
        return Problem(
            "retain-confidence-not-opinion",
            f"confidence (c=...) is only allowed on O (opinion) bullets, not on {letter}",
        )
    body = rest[pos:].lstrip(" \t")
    if body.startswith(":"):
        body = body[1:].lstrip(" \t")
    if not body.strip():
        return Problem("retain-empty-fact", f"Retain bullet {letter} has no text")
    return Prefix(letter, confidence, body)


def _unknown(letter: str) -> str:
    hint = f" (kind letters are upper-case: {letter.upper()})" if letter.upper() in KIND_LETTERS else ""
    return f"unknown kind {letter!r}: use {_KINDS_HELP}{hint}"


def parse_retain_line(line: str, *, path: str = "", lineno: int = 1) -> RetainFact | Alias | Diagnostic:
    """Validate ONE line before it is appended to a log's Retain section (used by `gitmem retain`).

    `line` may carry its list marker ("- W @Peter: ...") or not ("W @Peter: ..."). Returns a
    RetainFact for a valid fact, an Alias for a valid alias bullet, else a Diagnostic (path/lineno
    as given) with the same codes the parser reports in files, plus "retain-multiline" when the
    text holds a line break (one bullet must stay one line, or it would change the structure of
    the log it is appended to).
    """
    if "\n" in line or "\r" in line:
        return Diagnostic(path, lineno, "retain-multiline", "a Retain bullet must be a single line")
    m = LIST_MARKER.match(line)
    rest = line[m.end() :] if m else line
    result = classify(rest)
    if isinstance(result, Problem):
        return Diagnostic(path, lineno, result.code, result.message)
    if isinstance(result, Alias):
        return result
    return RetainFact(
        kind=KIND_LETTERS[result.letter],
        letter=result.letter,
        confidence=result.confidence,
        body=" ".join(result.body.split()),
        entities=mention_keys(result.body),
    )


def parse_retain_bullet(line: str, *, path: str = "", lineno: int = 1) -> RetainFact | Diagnostic:
    """parse_retain_line for a FACT only: an alias bullet is a Diagnostic ("retain-alias-not-fact").
    What reflection's gates use: the bot proposes facts, and an alias it wrote would rename an
    entity for every later question."""
    result = parse_retain_line(line, path=path, lineno=lineno)
    if isinstance(result, Alias):
        return Diagnostic(path, lineno, "retain-alias-not-fact", "an alias is not a fact: write a fact as `W @Peter: ...`")
    return result
