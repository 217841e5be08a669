"""Derived supersession: when a newer statement replaces an older one about the same thing.

A daily log is never edited, so "Lives in Porto" (January's log) stays in memory after "Moved to
Madrid" (March's log). The indexer asks `supersedes(new, old)` for each new fact or entity note
that carries a change cue, against the older statements about the same entities that were current
when it was recorded, and records the pairs it accepts (migrations.py, `supersessions`). No model:
a fixed, conservative rule, because a wrong supersession hides a true fact.

`new` supersedes `old` when all of these hold:
- both are outside bank/ (bank pages are curated copies: see `cited_source`);
- kinds agree: an opinion only replaces an opinion, an observation an observation; world,
  experience and plain notes replace one another ("@Nora's phone is ..." in memory.md, then
  "W @Nora: Has a new phone number ...");
- entities: old names at least one entity and every entity it names is named by new ("Her sister
  @Ana lives in Porto" is not replaced by "@Alice moved to Madrid"); of statements naming no
  entity only typed facts (the user's own) are linked, and only on three shared words;
- new carries a change cue (moved, now, no longer, instead, switched, left, took over, fixed, ...),
  except for a restated opinion (below); or (wave 22) on two shared words, it carries out a change
  old planned (`_carries_out`: "upgrade to 17 planned", then "Now on ... Postgres 17");
- they are about the same thing: a shared attribute family (where one lives, works, whom one
  dates, what one eats, drives, a phone number, a planned date), or two shared content words
  beyond the subject (crude 5-letter stems: "renovated"/"renovation"; another entity both name
  counts as one); an opinion needs one
  shared subject word ("tea", "coffee") besides the opinion verbs, or without a cue three (the
  same opinion restated with a newer confidence);
- old is a state, not an event: a statement that starts with a past-tense verb ("Fixed the photo
  archive", "I moved flights") stays true whatever happens next (opinions excepted);
- old's event time does not start after new's (a later note about an earlier time replaces nothing);
- new is not a memory told again (`told_of_past`, wave 9): "Lived in Prague back in 2019" replaces
  no current home, whatever cue or attribute it shares; nor a dream, a lost bid or a story retold
  (parse/mood.py `no_present_value`, wave 12): "Dreamt she had quit teaching" leaves her teaching;
  nor (wave 18) a plan, a wish or a condition (`intends`) unless old is one too: a plan replaces a plan.
Measured on bench/current_truth.py (top-1 current, false supersession) and the knowledge-update
suite; see bench/RESULTS.md. The post-commit hook runs this module: it and what it imports (layout,
parse.attributes, parse.entities, parse.mood) use only the standard library's re, bisect, functools and unicodedata.
"""

# Annotations are evaluated at import (no __future__ import): see recall/result.py.

import re
from typing import NamedTuple

from gitmem.layout import evidence_quote, in_bank
from gitmem.parse import attributes, mood
from gitmem.parse.entities import about_someone_else
from gitmem.lazyre import lazy

# Words that say the statement replaces an earlier one. Bare "since" and "currently" are not cues:
# "since 2025" dates a standing fact and "currently" announces a temporary one.
# "back in" is a return ("back in Lisbon since May"), but before a year it dates the past ("Lived in
# Prague for a year back in 2019"): a memory told again, which replaces nothing.
# "fixed" and "resolved" (wave 22) end a fault ("I fixed the Baileys WS crash" ends "... crashes the
# process"), but not as an adjective: a fixed rate, term, price or schedule is a standing value, and
# "fixed-" opens a compound ("fixed-term"). ("closed" was measured too and dropped: false supersessions.)
_CUE = lazy(
    r"\b(?:(?:moved|moving) (?:to|from|in|out|away|back|house)|relocated|now|no longer|not any ?more|any ?more|"
    r"instead|switched|switch(?:ed)? to|"
    r"changed|renamed|formerly|left|quit|resigned|postponed|delayed|rescheduled|took over|sold|"
    r"broke up|split up|divorced|went fully|back at|back in(?! (?:\d{4}|'\d\d)\b)|new|"
    r"(?:fixed|resolved)(?!-|\s+(?:rate|term|price|fee|hours|income|schedule|menu|costs?|date)s?\b))\b",
    re.I,
)
_WORD = lazy(r"[^\W\d_][\w'-]*", re.U)
_STOP = frozenset(
    "the and for with from that this then than into onto over under about after before since his her "
    "their its our your my has have had was were are is be been being not any more now new also still "
    "just very much some all one two who which what where when while because but they them she he it "
    "you we our too out off on in at to of by as an or so".split()
)
# Opinion verbs: what an opinion says about its subject, not the subject itself.
_OPINION_WORDS = frozenset("prefe like likes love loves hate hates think enjoy drink eat eats favou favor".split())
# Wave 18: a new line that only intends (parse/mood.py `intends`: a plan, a wish, a condition) replaces
# no line that does not. Off: False.
PLANS_END_NOTHING = True
# Attribute families for hiding: parse/attributes.py's narrow, cue-gated list (CUED_FAMILIES).
_FAMILIES = attributes.CUED_FAMILIES
# Weak cues: "now" and "new" also open statements that add to what was said ("The farm now has
# solar panels", "Now walks the dog before work"); they count only next to the attribute itself
# (within two words: "now lives in", "a new phone number", "four in the city now"); after "new", only as
# the thing that is new, not a modifier of another ("New office policy" is no new office: `_heads`).
_WEAK = frozenset(("now", "new"))
# A statement that says the earlier state continues or is joined by another ("still commutes",
# "works there too", "sings in the church choir as well") replaces nothing.
_ADDITIVE = lazy(r"\b(?:still|too|as well|also)\b", re.I)
# A citation closing a line, possibly with a note after it: "(memory/x.md#L7@1a2b3c4; replaced by ...)".
_CITED = lazy(r"\(([^()\s]+\.md)#L(\d+)(?:-L?\d+)?@[0-9a-fA-F]{4,64}(?:;[^()]*)?\)")


class Statement(NamedTuple):
    """What the rule reads of a chunk."""

    path: str
    kind: str
    fact: bool
    entities: tuple[str, ...]
    content: str
    event_start: str | None


def statement_kind(kind: str | None) -> str:
    """What a chunk kind states: "opinion", "observation", or "fact" (world, experience, notes).
    Only statements of one kind can replace each other (or, in recall, pass each other)."""
    return kind if kind in ("opinion", "observation") else "fact"




def _stems(text: str, entities: tuple[str, ...]) -> set[str]:
    skip = set(entities)
    out: set[str] = {"<relocation>"} if attributes.CUED_RELOCATION.search(text) else set()
    for w in _WORD.findall(text.lower()):
        w = w.strip("'-")
        if len(w) < 3 or w in _STOP or w in skip:
            continue
        out.add(w[:5])
    return out


def content_words(text: str, entities: tuple[str, ...]) -> set[str]:
    """What a statement is about: its content words as crude 5-letter stems, without stopwords
    and the entities it names (recall's attribute recency asks two statements to share one)."""
    return _stems(text, entities) - {"<relocation>"}


def _words(text: str) -> set[str]:
    """Whole lowercased words (and the relocation marker), for the attribute families ("for a
    living" names no home: attributes.without_livelihood)."""
    out = attributes.without_livelihood({w.strip("'-") for w in _WORD.findall(text.lower())}, text)
    return out | {"<relocation>"} if attributes.CUED_RELOCATION.search(text) else out


def _strong_cue(content: str) -> re.Match[str] | None:
    return next((m for m in _CUE.finditer(content) if m.group(0).lower() not in _WEAK), None)


def _near_weak_cue(content: str, words: set[str]) -> bool:
    """Whether one of `words` (whole words or 5-letter stems) stands within two words of "now"/"new"
    in its clause, or within four before a "now" that ends the clause."""
    for clause in _CLAUSE.split(content):
        toks = [w.strip("'-").lower() for w in _WORD.findall(clause)]
        for i, t in enumerate(toks):
            if t in _WEAK:
                # A clause that ends in "now" says all of it holds now ("Lives in Madrid now"):
                # the attribute may stand further back than two words.
                before = toks[max(0, i - (4 if i == len(toks) - 1 else 2)):i]
                after = toks[i + 1:i + 3]
                if t == "new":
                    after = [w for j, w in enumerate(after, i + 1) if _heads(toks, j, words)]
                if any(w in words or w[:5] in words for w in before + after):
                    return True
    return False


def _heads(toks: list[str], j: int, words: set[str]) -> bool:
    """Whether the word at `j`, after "new", is the thing that is new rather than a modifier of
    another: "a new phone number", "her new flat in Nairn" name a new value of what they share,
    but in "New office policy" the new thing is a policy, not an office. A word followed by
    another content word the older line does not share modifies it."""
    if j + 1 >= len(toks):
        return True
    nxt = toks[j + 1]
    return nxt in _STOP or nxt in words or nxt[:5] in words or len(nxt) < 3


_CLAUSE = lazy(r"[,;:.!?()]|\s[–-]\s")


def _carries_out(older: str, newer: str) -> bool:
    """Whether `newer` tells that a change `older` planned was made (wave 22): `older` plans a change
    to a target (parse/mood.py `planned_target`: "Runs Postgres 16; upgrade to 17 planned"), and
    `newer` names that target within two words of a word the two share ("Now on a 2 TB SSD with
    Postgres 17"), planning nothing itself (`mood.plans`: it intends or says when, "Postgres 17 upgrade
    scheduled"; nor a `planned_target`: "Still planning the upgrade to 17" carries out nothing)."""
    target = mood.planned_target(older)
    if target is None or mood.plans(newer) or mood.planned_target(newer) is not None:
        return False
    toks = [t.strip(".'-").lower() for t in _TOKEN_DOTTED.findall(_MENTION.sub(" ", newer))]
    if target not in toks:
        return False
    # Words they share beyond the target and the @names they are filed under ("@Ana: Lisbon it is").
    shared = _stems(_MENTION.sub(" ", older), ()) & _stems(_MENTION.sub(" ", newer), ()) - {"<relocation>", target[:5]}
    for i, t in enumerate(toks):
        if t == target:
            near = toks[max(0, i - 2):i] + toks[i + 1:i + 3]
            if any(w[:5] in shared for w in near if len(w) >= 3 and w not in _STOP):
                return True
    return False


# A token as `_carries_out` reads it: words and numbers ("17", "v2.5").
_TOKEN_DOTTED = lazy(r"\w[\w.'-]*", re.U)
_MENTION = lazy(r"@[^\W\d_][\w-]*", re.U)


# Common irregular past tenses that open a report of something done ("Bought a house", "Met @Sam").
_IRREGULAR = ("(?:bought|met|ran|broke|lost|sold|won|took|got|went|began|came|saw|wrote|made|gave|found|"
              "flew|drove|built|spent|paid|sent|told|did|swam|rode|ate|drank|sang|caught|taught|threw|"
              "fell|forgot|hit|put|read|quit|left|kept|held|brought|thought)")
# What a statement says first, past its subject ("@Alice:", "I"): a past-tense verb there makes it
# an event ("Fixed the photo archive"), which stays true whatever happens next.
_EVENT = lazy(attributes.OPENING + r"(?:I\s+)?(?:[a-z]+ed|" + _IRREGULAR + r")\b", re.I)


# A move is the one event whose report states a standing value: "Moved to Porto on 2025-11-03" says
# where one lives from then on, as "Lives in Porto" does, and a later home replaces it.
_MOVED_IN = lazy(attributes.OPENING + r"(?:I\s+|we\s+)?(?:moved|relocated) (?:to|into|in|back to)\b", re.I)


def is_event(content: str) -> bool:
    """Whether a statement reports something done (an event, never superseded), not a state."""
    return _EVENT.match(content) is not None and not moved_in(content)


def moved_in(content: str) -> bool:
    """Whether a statement opens with a move ("Moved to Arisaig over the summer"): `_MOVED_IN`."""
    return _MOVED_IN.match(content) is not None


# A year named in a statement ("back in 2019", "in '19", "from 2015 to 2017"), after a preposition
# or a month or season: "2025 euros" is an amount, not a year. And a time long ago without a year.
_YEAR = lazy(r"\b(?:in|of|from|to|until|till|during|around|circa|by|[a-z]{3,8}uary|march|april|may|june|july|"
             r"august|[a-z]{3,6}ember|october|spring|summer|autumn|winter)\s+(?:((?:19|20)\d\d)|'(\d\d))(?![\d-])",
             re.I)
_YEARS_AGO = lazy(r"\b(?:years|decades) ago\b|\bas a (?:kid|child|boy|girl|teenager|student)\b", re.I)


def told_of_past(content: str, written: str | None) -> bool:
    """Whether a statement reports something done or been in an earlier year than the one it was
    written in, two years back or more ("Lived in Prague for a year back in 2019 and hated the
    tourists", "Worked in a bank in '08", "Taught in Lagos years ago"): a memory told again, which
    gives no value of how things stand now, however new the line. Only a report (a past tense first:
    `is_event`, or "had / was / were / used to") counts: "Has lived in Plzeň since 2019" is a standing
    state dated by its year."""
    if not written:
        return False
    # The dates first (recall asks this of every head candidate: most name no year, and the event
    # pattern is the dearer test).
    long_ago = (" ago" in content or "as a " in content) and _YEARS_AGO.search(content) is not None
    if not long_ago and not (("19" in content or "20" in content or "'" in content)
                             and any(_earlier(m, int(written[:4])) for m in _YEAR.finditer(content))):
        return False
    return _EVENT.match(content) is not None or _WAS.match(content) is not None


def _earlier(m: re.Match[str], now: int) -> bool:
    """Whether a year `_YEAR` found is two years or more before `now` ("Moved to Rome in March 2025",
    logged in 2026, may be the news)."""
    year = int(m.group(1)) if m.group(1) else 2000 + int(m.group(2))
    if year > now:  # "'98" is 1998
        year -= 100
    return year <= now - 2


_WAS = lazy(attributes.OPENING + r"(?:I\s+)?(?:had|was|were|used to)\b", re.I)


def is_additive(content: str) -> bool:
    """Whether a statement says it adds to what holds ("still", "too", "also", "as well"): it ends
    no earlier state."""
    return _ADDITIVE.search(content) is not None


def has_cue(content: str) -> bool:
    """Cheap first test for a new chunk: without a change cue it replaces nothing."""
    return _CUE.search(content) is not None


def _told_first(old: str, move: attributes.Move) -> bool:
    """Whether `old` already told the state `move` reached, so the move replaces nothing: it names the
    place reached and not the place left ("@Peter lives in Lisbon", written the morning of the move,
    then "Moved from Berlin to Lisbon"). A line naming the place as where it is going still ends
    ("Lives in Porto; moving to Lisbon in May"), as does a plan."""
    if not attributes.names_place(old, move.reached) or (move.left and attributes.names_place(old, move.left)):
        return False
    own = attributes.move_places(old)
    return (own is None or own.reached != move.reached) and not mood.intends(old)


def supersedes(new: Statement, old: Statement) -> str | None:
    """The reason `new` replaces `old` (e.g. "cue 'moved', shared 'lives/flat'"), or None."""
    if in_bank(new.path) or in_bank(old.path):
        return None
    if statement_kind(new.kind) != statement_kind(old.kind):
        return None
    # The user's own typed facts name no one ("W: I have tried three Korean restaurants"): with no
    # entity to anchor them, they need three shared words instead of two.
    selfish = not old.entities and not new.entities and old.fact and new.fact
    if not selfish and (not old.entities or not set(old.entities) <= set(new.entities)):
        return None
    if old.event_start and new.event_start and old.event_start > new.event_start:
        return None
    if new.kind != "opinion" and is_event(old.content):
        return None
    if about_someone_else(new.content) or about_someone_else(old.content) or is_additive(new.content):
        return None
    if told_of_past(new.content, new.event_start) or mood.no_present_value(new.content):
        return None
    # A plan, a wish or a condition ends no state ("Thinking about moving to Egilsstadir once her lease
    # runs out" leaves her living where she lives); a changed plan still replaces a plan (PLANS_END_NOTHING).
    if PLANS_END_NOTHING and mood.intends(new.content) and not mood.intends(old.content):
        return None
    strong = _strong_cue(new.content)
    a, b = _stems(new.content, new.entities), _stems(old.content, old.entities)
    # Another entity both name counts as a shared word ("Works at @Initech" / "Left @Initech").
    shared = (a & b) | {"@" + e for e in old.entities[1:] if e in new.entities}
    if new.kind == "opinion":
        subject = shared - _OPINION_WORDS
        # "Now prefers trains over planes" adds a preference; "no longer", "switched", "changed
        # her mind" reverse one: an opinion is replaced on a strong cue only.
        if strong is not None and subject:
            return f"cue {strong.group(0).lower()!r}, same subject {'/'.join(sorted(subject))}"
        # The same opinion restated (a newer confidence, a sharper wording) needs no cue.
        return f"restated, same subject {'/'.join(sorted(subject))}" if len(subject) >= 3 else None
    move = attributes.move_places(new.content)
    if move is not None and _told_first(old.content, move):
        return None
    wa, wb = _words(new.content), _words(old.content)
    for fam in () if selfish else _FAMILIES:
        if wa & fam and wb & fam:
            cue = strong.group(0).lower() if strong else ("now/new" if _near_weak_cue(new.content, wa & fam) else None)
            if cue is not None:
                return f"cue {cue!r}, same attribute {'/'.join(sorted((wa | wb) & fam))}"
    if len(shared) >= (3 if selfish else 2):
        cue = strong.group(0).lower() if strong else ("now/new" if _near_weak_cue(new.content, shared) else None)
        if cue is not None:
            return f"cue {cue!r}, shared words {'/'.join(sorted(shared))}"
        # No cue word next to what they share, but the newer line names what the older one planned to
        # change to, where the planned thing stands: the plan was carried out (`_carries_out`).
        if _carries_out(old.content, new.content):
            return f"plan carried out, shared words {'/'.join(sorted(shared))}"
    return None


# A copy's decoration: its citation, a timeline date ("2025-01-13:") and a kind letter ("W:").
_DECOR = lazy(r"\([^()]*\.md#L[^()]*\)|^\s*\d{4}-\d{2}-\d{2}(?:\s*[–-]\s*\d{4}-\d{2}-\d{2})?:|"
                    r"^\s*[WBSO](?:\(c=[\d.]+\))?\s*(?=[@:])")


def fact_words(content: str, *, numbers: bool = False) -> str:
    """A statement's words, lowercased, without its citation, date, kind letter and @ signs;
    with `numbers`, its numbers too ("Has 2 cats" is not "Has 3 cats")."""
    text = _DECOR.sub(" ", content).replace("@", " ").lower()
    return " ".join((_TOKEN if numbers else _WORD).findall(text))


_TOKEN = lazy(r"\w+", re.U)


def same_fact(copy: str, original: str) -> bool:
    """Whether a bank/ line states what `original` states (one's words contain the other's:
    an entity page's fact list drops the subject, "@Hana: Teaches maths" -> "Teaches maths")."""
    a, b = fact_words(copy), fact_words(original)
    short, long_ = sorted((a, b), key=len)
    if len(short) >= 12 and short in long_:
        return True
    # An evidence line in bank/opinions.md quotes its source after a label ("contradicts (weak,
    # -0.05): ...") and, if long, cut with "…": its quoted words, the cut word left out, are the
    # original's.
    quoted = evidence_quote(" ".join(_CITED.sub(" ", copy).split()))
    if quoted is None:
        return False
    if quoted.endswith("…"):
        quoted = quoted[:-1].rsplit(" ", 1)[0]
    q = fact_words(quoted)
    return len(q) >= 12 and q in b


def restates(copy: str, original: str) -> bool:
    """Whether an uncited bank/ line is `original` restated: bank/opinions.md's "O(c=0.70) @Peter:
    Prefers ..." (reflection copies the statement verbatim) or an entity page's "c=0.70: @Peter:
    Prefers ... (see bank/opinions.md)". The original's words must be all of the copy's but a few
    (a confidence, a pointer): a bank line that says more than the log line is not its copy."""
    a, b = fact_words(copy), fact_words(original)
    return len(b) >= 12 and b in a and len(a.replace(b, " ", 1).split()) <= 6


def cited_source(content: str) -> tuple[str, int] | None:
    """(path, line) of the memory a bank/ line quotes, from the citation it ends with."""
    m = _CITED.search(content)
    if m is None or in_bank(m.group(1)):
        return None
    return m.group(1), int(m.group(2))
