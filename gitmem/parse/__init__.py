"""The Markdown memory model: files -> blocks (chunks with exact line ranges) -> typed Retain facts.

A pure library (no I/O beyond its arguments): the indexer, lint, `gitmem retain` and reflection
all read Markdown through this package, so a line range, a fact kind, an entity key or an event
date means the same thing everywhere.
"""

from __future__ import annotations

from gitmem.parse.blocks import parse_markdown
from gitmem.parse.dates import find_dates, log_date, parse_event_time
from gitmem.parse.entities import entity_key, entity_slug, mention_keys, mentions
from gitmem.parse.model import KIND_LETTERS, NOTE, Block, Diagnostic, ParsedFile, RetainFact
from gitmem.parse.retain import is_retain_heading, parse_retain_bullet
from gitmem.parse.text import decode, is_binary, split_lines

__all__ = [
    "KIND_LETTERS",
    "NOTE",
    "Block",
    "Diagnostic",
    "ParsedFile",
    "RetainFact",
    "decode",
    "entity_key",
    "entity_slug",
    "find_dates",
    "is_binary",
    "is_retain_heading",
    "log_date",
    "mention_keys",
    "mentions",
    "parse_event_time",
    "parse_markdown",
    "parse_retain_bullet",
    "split_lines",
]
