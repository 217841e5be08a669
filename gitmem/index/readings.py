"""What recall's recency rules read of a statement whatever is asked, read from its chunk version alone.

`currency.newer_first` reads each of the ~30 head candidates of every question: whom it is about
(parse.entities `subject`, `relation`), which attributes it gives a value of (parse.attributes
`said`), its content words, its mood (parse.mood `intends`, `no_present_value`, `reported`),
whether it ends a state, reports an event or retells the past (index/supersede.py). Each depends
on the chunk version's text, entities, path, fact flag and event start, and on nothing asked, so
the indexer stores them with the chunk version (table `readings`, migrations.py; versioned by
index/rules.py like `chunks.last_day`) and recall reads 30 rows instead of parsing 30 texts
(~2 ms of a ~17 ms question at 1M lines). `derive` is the one place these readings are made:
recall calls it too for a row that has none stored (the working tree's, an index of older rules).
The readings are the raw ones: recall's switches (currency.INTENT_GUARD, NO_PRESENT_VALUE, ...)
apply when they are read. Imported by the hook path: the parser's modules only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from gitmem.index.store import CONTENT, ENTITIES, EVENT_START, FACT, PATH
from gitmem.index.supersede import content_words, is_event, told_of_past
from gitmem.layout import log_date
from gitmem.parse import attributes, mood
from gitmem.parse.entities import relation, subject

# Bits of `readings.flags`.
_INTENDS, _NO_VALUE, _REPORTED, _ENDING, _EVENT, _TOLD = 1, 2, 4, 8, 16, 32


class Reading(NamedTuple):
    """A statement's readings that need no question (what `currency._said` reads of it)."""

    subject: str | None  # parse.entities.subject: None about its first entity, "" someone unnamed
    relation: str | None  # parse.entities.relation, when `subject` is ""
    attrs: frozenset[str]  # parse.attributes.said, for a statement that names an entity (else empty)
    words: frozenset[str]  # `content_of`, likewise
    intends: bool  # parse.mood.intends: a plan, a wish, a condition
    no_value: bool  # parse.mood.no_present_value: a dream, a lost bid, a story retold
    reported: bool  # parse.mood.reported: hearsay
    ending: bool  # attributes.ENDS_STATE, for a statement that names an entity
    event: bool  # supersede.is_event, likewise
    told: bool  # supersede.told_of_past (from the day it was written), for a fact or a statement naming an entity


def content_of(content: str, ents: tuple[str, ...]) -> frozenset[str]:
    """A statement's content words (5-letter stems, the attribute vocabulary left out), a
    hyphenated word's parts too ("open-plan" is about what "the open floor" is about)."""
    if "-" in content:
        content += " " + content.replace("-", " ")  # one pass over both spellings
    return frozenset(content_words(content, ents) - attributes.VOCAB_STEMS)


def derive(row: Any) -> Reading:
    """The readings of a chunk row (index/store.py's column order)."""
    content = row[CONTENT] or ""
    ents = tuple((row[ENTITIES] or "").split())
    who = subject(content)
    if ents or row[FACT]:
        logged = log_date(row[PATH])
        told = told_of_past(content, logged.isoformat() if logged else row[EVENT_START])
    else:
        told = False
    return Reading(
        subject=who, relation=relation(content) if who == "" else None,
        attrs=attributes.said(content) if ents else frozenset(),
        words=content_of(content, ents) if ents else frozenset(),
        intends=mood.intends(content), no_value=bool(mood.no_present_value(content)), reported=mood.reported(content),
        ending=bool(ents) and attributes.ENDS_STATE.search(content) is not None,
        event=bool(ents) and is_event(content), told=told)


def pack(r: Reading) -> tuple[str | None, str | None, str, str, int]:
    """A reading as `readings`' columns after chunk_id: subject, relation, attrs, words, flags."""
    flags = (_INTENDS * r.intends | _NO_VALUE * r.no_value | _REPORTED * r.reported | _ENDING * r.ending
             | _EVENT * r.event | _TOLD * r.told)
    return r.subject, r.relation, " ".join(sorted(r.attrs)), " ".join(sorted(r.words)), flags


def unpack(cols: Any) -> Reading:
    """`pack`'s columns (subject, relation, attrs, words, flags) as a reading."""
    who, rel, attrs, words, flags = cols
    return Reading(who, rel, frozenset(attrs.split()), frozenset(words.split()), bool(flags & _INTENDS),
                   bool(flags & _NO_VALUE), bool(flags & _REPORTED), bool(flags & _ENDING), bool(flags & _EVENT),
                   bool(flags & _TOLD))


def rows_of(rows: list[Any]) -> list[tuple[Any, ...]]:
    """`readings` rows (chunk_id first) of chunk rows."""
    return [(r[0], *pack(derive(r))) for r in rows]
