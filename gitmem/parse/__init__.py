"""The Markdown memory model: files -> blocks (chunks with exact line ranges) -> typed Retain facts.

A pure library (no I/O beyond its arguments): the indexer, lint, `gitmem retain` and reflection
all read Markdown through this package, so a line range, a fact kind, an entity key or an event
date means the same thing everywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gitmem.parse.blocks import Outline, Section, outline, parse_markdown, sections
    from gitmem.parse.dates import find_dates, parse_event_time
    from gitmem.parse.entities import aliases_line, entity_key, entity_slug, mention_keys, mentions, page_aliases, renames
    from gitmem.parse.model import KIND_LETTERS, NOTE, Block, Diagnostic, ParsedFile, RetainFact
    from gitmem.parse.retain import Alias, alias_of, is_retain_heading, opinion_key, parse_retain_bullet, parse_retain_line, retain_alias
    from gitmem.parse.text import decode, is_binary, split_lines, strip_comments

# Names are loaded on first use (PEP 562): the chunker's and the date parser's regexes cost
# ~20 ms to compile, which `gitmem recall` should not pay when it only needs entity_key.
_HOME = {
    "parse_markdown": "blocks", "outline": "blocks", "sections": "blocks", "Outline": "blocks", "Section": "blocks",
    "find_dates": "dates", "parse_event_time": "dates",
    "entity_key": "entities", "entity_slug": "entities", "mention_keys": "entities", "mentions": "entities",
    "renames": "entities", "page_aliases": "entities", "aliases_line": "entities",
    "KIND_LETTERS": "model", "NOTE": "model", "Block": "model", "Diagnostic": "model", "ParsedFile": "model",
    "RetainFact": "model",
    "is_retain_heading": "retain", "opinion_key": "retain", "parse_retain_bullet": "retain", "Alias": "retain",
    "alias_of": "retain", "parse_retain_line": "retain", "retain_alias": "retain",
    "decode": "text", "is_binary": "text", "split_lines": "text", "strip_comments": "text",
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'gitmem.parse' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"gitmem.parse.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "Alias",
    "alias_of",
    "retain_alias",
    "KIND_LETTERS",
    "NOTE",
    "Outline",
    "Section",
    "Block",
    "aliases_line",
    "Diagnostic",
    "ParsedFile",
    "RetainFact",
    "decode",
    "entity_key",
    "opinion_key",
    "entity_slug",
    "find_dates",
    "is_binary",
    "is_retain_heading",
    "mention_keys",
    "mentions",
    "outline",
    "page_aliases",
    "parse_event_time",
    "parse_markdown",
    "parse_retain_bullet",
    "parse_retain_line",
    "renames",
    "sections",
    "split_lines",
    "strip_comments",
]
