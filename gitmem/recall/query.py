"""Natural-language questions into safe FTS5 queries.

Users and agents ask questions ("what did we decide about the Castle?"), not FTS5 syntax. Raw
text is never passed to MATCH: words are extracted, stopwords dropped, each term double-quoted
(so `AND`, `NEAR`, `-`, `:` and quotes lose any special meaning) and OR-ed; bm25 then rewards
chunks matching more and rarer terms. `--raw` passes FTS5 syntax through for experts, and a
malformed raw query is reported as a BadQuery with the FTS5 error, never a traceback.
"""

# Annotations are evaluated at import (no __future__ import): see recall/result.py.

import re
from typing import NamedTuple

from gitmem.index.store import quote
from gitmem.parse import entity_key
from gitmem.lazyre import lazy

_WORD = lazy(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
    during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here
    here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its
    itself let's me more most mustn't my myself no nor not of off on once only or other ought our ours
    ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll they're they've
    this those through to too under until up very was wasn't we we'd we'll we're we've were weren't what
    what's when when's where where's which while who who's whom why why's will with won't would wouldn't
    you you'd you'll you're you've your yours yourself yourselves tell know think thought did does
    anything something everything also just ever still really get got much many like
    """.split()
)


def names(text: str) -> set[str]:
    """Capitalised words of a question that are not stopwords ("Caroline", "Mel"), lowercased:
    the people it may name."""
    return {w.lower() for w in _WORD.findall(text) if w[0].isupper() and w.lower() not in STOPWORDS}


# A possessive ending ("Gideon's", "Gideon’s"): what follows belongs to the name before it.
_POSSESSIVE = lazy(r"['’]s$", re.I)

_ALIASES = lazy(r"\baliases?:\s*(?P<v>.*?)(?=\s[\w-]+:(?:\s|$)|\s?---|\s?\.\.\.|$)", re.I)
# Through lazyre like the module's other patterns, so a CLI recall loads their programs from
# .memory/regex.cache: an inline re.split / re.finditer compiled them in every process (~1.3 M
# instructions).
_ALIAS_SEP = lazy(r"\s*(?:,|\[|\]|(?:^|\s)-\s|;)\s*")
_MENTION = lazy(r"@([^\s@:,;!?()]+)")
_PART_SEP = lazy(r"['’-]")


def parse_aliases(text: str) -> list[str]:
    """The names an entity page's `aliases:` line lists ("aliases: [Mel, Melly]", "aliases: Mel,
    Melly", or a YAML list "aliases: - Mel - Melly", as the chunk's collapsed text has it)."""
    m = _ALIASES.search(text)
    if not m:
        return []
    parts = _ALIAS_SEP.split(m.group("v"))
    return [p.strip().strip("\"'@") for p in parts if p.strip().strip("\"'@")]


class Query(NamedTuple):  # not a dataclass: see result.Result
    text: str
    terms: tuple[str, ...]  # lowercased search terms, stopwords removed
    entity_candidates: tuple[str, ...]  # entity keys the question may be about
    fts: str  # the MATCH expression
    parts: tuple[str, ...] = ()  # the unquoted terms OR-ed in `fts` (empty for raw queries)
    raw: bool = False

    @property
    def empty(self) -> bool:
        return not self.fts


def build(text: str, raw: bool = False) -> Query:
    """Turn a question into a Query. Mentions like @Peter and capitalised words become entity
    candidates (checked against the index by the caller)."""
    words = [w for w in _WORD.findall(text)]
    terms: list[str] = []
    seen: set[str] = set()
    for w in words:
        lw = w.lower().replace("’", "'")
        if lw in STOPWORDS or lw in seen:
            continue
        seen.add(lw)
        terms.append(lw)
    if not terms:  # a question made only of stopwords still deserves an answer
        terms = list(dict.fromkeys(w.lower() for w in words))
    cands: list[str] = []
    # "Gideon's boat" is about Gideon: the possessive's owner is the entity ("gideon", not
    # "gideon's"); the word as written stays a candidate too (a name may hold an apostrophe).
    owners = [_POSSESSIVE.sub("", w) for w in words]
    for i, w in enumerate(owners):
        cands.append(entity_key(w))
        if i + 1 < len(owners):
            cands.append(entity_key(f"{w}-{owners[i + 1]}"))
            if i + 2 < len(owners):
                cands.append(entity_key(f"{w}-{owners[i + 1]}-{owners[i + 2]}"))
    for m in _MENTION.finditer(text):
        cands.append(entity_key(m.group(1)))
    cands += [entity_key(w) for w, o in zip(words, owners) if w != o]
    cands = [c for c in dict.fromkeys(cands) if c]
    parts: list[str] = []
    if raw:
        fts = text.strip()
    else:
        # Split hyphenated/apostrophe words into their tokens the way unicode61 does, so each part
        # is a quoted term; a phrase "warelay-bot" would otherwise require adjacency.
        for t in terms:
            parts.extend(p for p in _PART_SEP.split(t) if len(p) > 1 and p not in STOPWORDS)
        # One-letter parts (the "s" of "Caroline's") and stopword parts (the "the" of "The-Castle")
        # match most chunks: noise, and the slowest OR queries (bench/recall_latency.py: 340 -> ~60 ms
        # for "The-Castle gateway config" at 1M lines).
        parts = list(dict.fromkeys(parts or terms))
        fts = " OR ".join(quote(p) for p in parts)
    return Query(text=text, terms=tuple(terms), entity_candidates=tuple(cands), fts=fts, parts=tuple(parts), raw=raw)
