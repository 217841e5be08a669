"""What is true *now* (or at the answer's as-of date), applied to a ranked candidate list: a pure
step after `rank.rerank`, kept apart from the relevance ranking so either can change alone.

- Supersession (derived at index time, gitmem/index/supersede.py; read by `store.superseded_by`
  as known at the answer's position): a replaced statement hands its score to what replaced it
  and is left out, unless the caller asked for history (then every statement ranks by its own
  relevance, the replaced ones marked) or it is all that matched.
- Copies: a bank/ line quoting a memory chunk (by its citation) is the same fact. The copy and its
  original collapse into one candidate, the original, at the better of their ranks; the copies are
  listed on the result and the budget pays for the fact once.
- Time-bounded statements: "Currently in Tokyo (Mar 3–Mar 10, 2025)" is current only inside its
  event window, and so is a state about someone that names only its end ("On sabbatical through
  May", "until 12 March": parse/dates.py `ends`). After it the statement is past: its score is
  multiplied by PAST_FACTOR and the result says so; inside it, it is the most current thing said
  (ACTIVE_FACTOR).
- Recency (`newer_first`, ranking only, nothing hidden): among statements about the same entity,
  the newer one goes first on a close call, and, without any change cue, when it gives another
  value of the attribute the question asks about (parse/attributes.py: "Where does Yuki stay?"
  puts "Has her own apartment in Kyoto" over the older "stays in Osaka"), or when both name the
  thing asked about and the newer gives it another number, date, opinion or ends it
  (`_same_slot`: "Now on Postgres 17" over "Runs Postgres 16"). Whom a statement is about is
  parse.entities.subject: "@Linnea: @Anders opened a studio" is Anders's, never Linnea's.
- Typed answers (wave 8, `_typed`, TYPED_ANSWERS): the question says what "the same thing" is, by the
  kind of value it asks for (a time, an amount, a place, a name, yes or no: parse/answers.py); of
  two statements about one subject giving values of that kind, the newer one giving another value
  goes first ("When does Wanjiru go to the gym?": "Her gym slot is 7 p.m." over "Goes to the gym at
  6 a.m."), whatever words either uses.
- The same thing in new words (wave 9, ranking only): a new name in other words (`_named_anew`), a
  value traded for another (`_traded`), opinions on the same thing by shape and the user's own
  opinions (`_same_slot`, `_own_opinion`); a memory told again never moves ahead (TOLD_OF_PAST).
- No present value (wave 12, `asserts_no_value`): a wish, a lost bid, a story retold, a stay once a
  year, or the thing asked said to stay as it is never moves ahead either; and (wave 18,
  `_over_unasserted`) a line asserting nothing of now by its mood ranks under a statement of the same
  subject that answers, however new or relevant it is.
- Counts and updates told by their consequence (wave 13): for "how many", a line giving a number goes
  ahead of one giving none (`_counts_where_none`); a newer line naming the old value with an end of it
  and a new name (`_old_value_ended`), a new count of the noun counted (`_recounted`) or an end of the
  older line's own predicate (`_ends_predicate`) goes first. Since wave 14 the end may be told by the
  clause's grammar, whatever its verb: the old value the subject of a passive (PASSIVE_END).
Numbers: bench/current_truth.py and bench/RESULTS.md ("Recall: current truth", "... wave 8", "... wave 9").
"""

# Annotations are evaluated at import (no __future__ import): see recall/result.py.
import re
from datetime import date
from functools import lru_cache
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from gitmem.index.dating import FOR_NOW, event_day, last_day
from gitmem.index.store import CONTENT, ENTITIES, EVENT_END, EVENT_START, FACT, ID, KIND, LAST_DAY, PATH, Link
from gitmem.index.readings import Reading, content_of, derive
from gitmem.index.supersede import content_words, fact_words, is_additive, statement_kind
from gitmem.parse import answers, attributes, mood
from gitmem.parse.dates import end_condition, event_window_at, starts
from gitmem.layout import OPINIONS_PAGE, in_bank, log_date, says_something
from gitmem.recall.rank import Candidate, covered, day_of
from gitmem.lazyre import lazy


# -- statements that assert no present value (wave 12) -------------------------------------------------
# Beside a plan or a wish (`intends`), three more shapes say nothing of how things stand, however new
# the line: a daydream or a bid that was lost (mood: "Daydreams about opening a dive shop on Flores",
# "Bid on a townhouse ... and was outbid"), a story of the past retold ("told the story of the winter
# she lived in a Trieste squat in the nineties"), and a stay that comes back every year ("Rents a beach
# cottage in Gokarna for a week every Diwali"): the last is a value only when the question asks when.
# The thing the question names, said to stay as it is ("...; Helm stays where it is"), is no new value
# of it either. Such a line never goes ahead of an older one. The readings that need no question
# (`intends`, the dream, the story, once a year) live in parse/mood.py: the index's supersession asks
# them too. Off: False.
NO_PRESENT_VALUE = True
# Wave 18: hearsay told by its grammar, someone else's belief ("Her sous chef reckons she's being
# poached ...": parse/mood.py `reported`), is no present value either. Off: False.
REPORTED_SPEECH = True
# Wave 19: a question about a past window sees the replaced statement that held in it (`held_then`),
# in place of its heir from after the window. Off: False.
WINDOW_KEEPS = True
# A thing said to stay as it is: "Helm stays where it is", "the Epson printer needed nothing".
# Or its change waiting ("the MySQL upgrade waits until Q4"); not "postponed to 20 May", a new date.
_UNCHANGED = lazy(r"\b(?:stays?|stayed|remains?|remained)\s+(?:where|as|the same|unchanged|put|on it)\b|\bunchanged\b|"
                  r"\buntouched\b|\bneeded nothing\b|\bno change\b|\bwaits?\s+(?:until|till|for)\b|\bon hold\b", re.I)
_CLAUSES = lazy(r"[^;.,]+")
_UNCHANGED_HINTS = ("stay", "remain", "unchanged", "untouched", "needed nothing", "no change", "wait", "on hold")


def asserts_no_value(content: str, q: "Asked", stems: frozenset[str]) -> str:
    """Why a statement gives no present value for question `q` ("" if it may): a daydream or a lost
    bid, a story of the past retold, a stay every year (unless `q` asks when), or the clause naming
    a thing the question asks about (`stems`: its words that name no entity) says it stays as it is
    (NO_PRESENT_VALUE)."""
    return _no_value_now(content) or _no_value_asked(content, q, stems)


def _no_value_now(content: str) -> str:
    """Why a statement gives no present value whatever is asked ("" if it may): a daydream or a lost
    bid, a story of the past retold, hearsay (parse/mood.py; NO_PRESENT_VALUE, REPORTED_SPEECH)."""
    if not NO_PRESENT_VALUE:
        return ""
    return mood.no_present_value(content) or ("hearsay" if REPORTED_SPEECH and mood.reported(content) else "")


def _no_value_read(r: Reading) -> bool:
    """Whether `_no_value_now` holds of a statement, from its readings (index/readings.py)."""
    return NO_PRESENT_VALUE and (r.no_value or REPORTED_SPEECH and r.reported)


def _no_value_asked(content: str, q: "Asked", stems: frozenset[str]) -> str:
    """`asserts_no_value`'s readings bound to the question: once a year (unless it asks when), the
    thing asked said to stay as it is."""
    if not NO_PRESENT_VALUE:
        return ""
    if "time" not in q.expects and mood.yearly(content):
        return "once a year"
    low = content.lower()
    if stems and any(h in low for h in _UNCHANGED_HINTS) and _UNCHANGED.search(content):
        for clause in _CLAUSES.findall(low):
            if _UNCHANGED.search(clause) and any(covered(clause, {st}) for st in stems):
                return "the thing asked stays as it is"
    return ""


INTENT_GUARD = True
PAST_FACTOR = 0.5
ACTIVE_FACTOR = 1.5
# Recency among close calls (`newer_first`): a candidate within RECENCY_MARGIN of the score of
# an older one about the same entity goes ahead of it; UNTYPED_MARGIN does the same for lines
# naming no entity that match the same RECENCY_SHARED question words (chat logs have no
# @mentions). 0 turns either off. Measured in bench/RESULTS.md ("Recall: recency").
RECENCY_MARGIN = 0.1
UNTYPED_MARGIN = 0.0
# Attribute recency (`_same_thing`): a newer statement about the same subject that gives a value of
# the attribute the question asks about goes ahead of an older one whatever their scores;
# ATTRIBUTE_TIES adds "matches the same question words". Off: False.
ATTRIBUTE_RECENCY = True
# Slot recency (`_same_slot`, wave 6): two statements naming the same thing the question asks
# about (a word of it that names no attribute) give two values of one slot when both are
# opinions, both give a number or a date for it, the newer one ends a state or gives the asked
# attribute the older lacks; a statement holding for a while passes the value it interrupts.
SLOT_RECENCY = True
# Open expiries (`bounded`): "through May", "until 12 March", "for two weeks" end a state without a
# written window; the value it interrupted goes back ahead once it is over (`_resumes`).
OPEN_EXPIRY = True
# Written windows (`_ahead`, wave 7): a state about someone with a window of days that was still to
# come (or going on) when written is over after it, "currently" or not.
WINDOW_EXPIRY = True
ATTRIBUTE_TIES = True
# Wave 18 (`_over_unasserted`): a statement of how things stand goes ahead of a line of the same
# subject asserting nothing of now (a plan, a wish, a condition, hearsay, a story retold), whatever
# their ages and relevance, when it answers the question. Off: False.
ASSERTED_FIRST = True
# Amounts (wave 7): for a question asking how much / how many / which version, a newer statement
# giving the same unit another number goes first.
QUANTITY_RECENCY = True
# A newer statement sharing a word or an @entity with an older one that gives the asked attribute
# may pass it on "no question word but the name" (wave 7).
SAME_THING_WORDS = True
ON_THE_SAME_THING = "a newer line on the same thing"
# Opinions (wave 7): a newer opinion of one person on the thing asked about goes first whatever
# its wording (`_same_slot`).
OPINION_RECENCY = True
# Words of saying, shared by opinions on anything.
_SAYING = frozenset(("says", "said", "think", "thinks", "feels", "finds", "calls", "reall", "alway", "never"))
# Same-day ties (`_answers_instead`, wave 7): of two statements about one subject written the same
# day, the one giving the asked attribute goes first.
SAME_DAY_ATTRIBUTE = True
RECENCY_SHARED = 2
# Typed answers (wave 8, `_typed`): a newer statement giving another value of the type the question
# asks for (a time, an amount, a place, a name: parse/answers.py) goes first. Off: False.
TYPED_ANSWERS = True
# Relatives (wave 8, second pass): a line filed under someone the question does not name, naming the
# one it does, is that one's for the question (`_said`). Off: False.
RELATIVE_SUBJECT = True
# A memory told again (wave 9, supersede.told_of_past): a report of something done or been two
# years or more before the line was written ("Lived in Prague for a year back in 2019") never goes
# ahead of what holds. Off: False.
TOLD_OF_PAST = True
# A new name in a shape besides "called" (wave 9, `_named_anew`). Off: False.
NAMED_ANEW = True
# A value traded for another (wave 9, `_traded`). Off: False.
TRADED = True
# Opinions on the same thing read by shape (wave 9, `_same_slot`). Off: False.
OPINION_WORDS = True
# The attributes whose words name an activity or a liking, not a thing ("watching", "prefer").
_ACTIVITIES = tuple(sorted(attributes.WEAK))
# Changes logged before they take effect (wave 9, `not_yet`): "... €1,620 from May" written in March
# goes ahead of nothing before May. Off: False.
PENDING_CHANGES = True
# Unnamed relatives (wave 9): "Her daughter ..." lines filed under one entity are one subject,
# "<entity>'s daughter" (parse.entities.relation). Off: False.
RELATION_SUBJECT = True
# Same-day ties by the answer's type (wave 9, `_gives_instead`): of two statements of one subject
# written the same day, the one giving a value of the type asked for goes first. Off: False.
SAME_DAY_TYPED = True
# Outcomes (wave 9, `_resolves`): for a yes/no question, a newer line naming what an older one waited
# on ("booked for April", "waiting on the decision") is its outcome and goes first. Off: False.
RESOLVED = True
_NO = frozenset(("no",))
_POLARITY = frozenset(("polarity",))
# Light verbs a question asks with that name no thing ("What phone does Xavier use?").
_LIGHT = frozenset(("use", "go", "have", "get", "do", "make", "take", "keep"))
# "now" in a question ("Where does Pirmin live now?") says when, it names no thing: a line holding it
# ("now that he lives by the sea") holds no more of what is asked for it (`_over_unasserted`).
_NOW = frozenset(("now",))
RECENCY_TOP = 30
# Updates told by their consequence (wave 13, `_old_value_ended`): a newer statement that names an
# older one's value in a clause ending it and gives a new name goes first. Off: False.
CONSEQUENCE = True
# The end of a value, by the classes of issue 13 (given away, over, sold, left, replaced, no longer),
# read in the clause that names the old value.
_ENDS_VALUE = lazy(r"\b(?:no longer|(?:gave|given|giving|gives)\s+(?:\w+\s+){0,3}?away|passed\s+(?:\w+\s+){0,3}?on|"
                   r"handed\s+(?:\w+\s+){0,3}?(?:back|over|on)|sold|(?:is|are|was|were|now)\s+(?:over|gone|finished|archived|"
                   r"retired|history)|ended|left|leaving|farewell|moved out|replaced|swapped|traded)\b", re.I)
# An end told by the grammar of the clause rather than its verb (wave 14, PASSIVE_END): a definite
# thing done to in the passive, "The Asaba flat is let out", "the old SIM is blocked", "the Carry got
# traded in": the clause's subject is the old value (it must name a word of the older line) and
# something was done to it. Whatever the verb: the participle is read by its form (-ed, -en, or the
# few irregular ones that end in neither). Off: False.
PASSIVE_END = True
_PASSIVE = lazy(attributes.OPENING + r"(?:and\s+|but\s+|so\s+)?(?:the|his|her|their|its|my|our)\s+(?:[\w'’-]+\s+){0,4}?"
                r"(?:is|are|was|were|has\s+been|have\s+been|had\s+been|got|gets)\s+(?:now\s+|already\s+|finally\s+)?"
                r"(?!(?:seven|eleven|even|often|open)\b)(?:[a-z]+ed|[a-z]+en|let|sold|shut|cut|put|set|sent|lent|kept|gone|done)\b", re.I)
_PASSIVE_HINTS = (" is ", " are ", " was ", " were ", " been ", " got ", " gets ")  # `_PASSIVE`'s verbs, as substrings
_END_HINTS = ("no longer", "away", " on", "back", "over", "sold", "gone", "finish", "archiv", "retired", "history", "ended",
              "left", "leaving", "farewell", "moved out", "replac", "swap", "trad")
# Counts (wave 13, `_counts_where_none`): for a question asking how many or how much, a statement
# giving a number goes ahead of one of the same subject giving none. Off: False.
COUNT_ANSWERS = True
# A later line of the same person reporting what a stay waited on goes ahead of the stay (`_ends_while`).
WHILE_ENDED = True
# Wave 20 (`_told_anew`): for a question asking an amount, a count or a date, a newer line of the same
# person telling such a value as reached ("Got bumped to 61k", "new slot is 17 April": parse.answers
# `reached`) goes ahead of an older one giving another value of that type. Off: False.
VALUE_ANEW = True
# Wave 20 (`_starts_work`): for a question about someone's work, a newer line of theirs telling a start at a
# workplace ("Started at the hospital pharmacy in Hildesheim this week": parse.attributes `starts_work`)
# goes ahead of an older line giving their work. Off: False.
STARTED_WORK = True
# Wave 20 (`_recounted`): an ordinal before the noun a "how many" question counts is a count of it
# ("Adopted a third cat" over "Has two cats": parse.answers `ordinal_counts`). Off: False.
ORDINAL_COUNTS = True
# Wave 20 (`_over_occasion`): a habit or standing state goes ahead of a line of the same subject telling of
# one occasion that departs from it ("Cycles to the office every day" over "Took the tram today because
# the bike had a puncture"), unless the question asks about the occasion. Off: False.
OCCASION_UNDER = True
# Wave 20 (`_said`): a stay whose one named day is its end ("until 12 January", written in December) is
# dated by the day it was written, not by that day read in the log's year. Off: False.
END_NOT_EVENT = True
# Wave 21 (`_abstains`): a span of time gone without what a habit does ("Six months without a cigarette")
# answers "Does X smoke?" ahead of the older habit ("Smokes a pack a day"). Off: False.
ABSTAINED = True
# Wave 21 (`_old_value_ended`): an email address counts as the new value a line ending the old one gives.
# Off: False.
EMAIL_ENDED = True


class Currency(NamedTuple):
    """What `settle` decided, by chunk id, for annotating the results it returns."""

    superseded: dict[int, Link]  # old id -> the link to the statement that replaced it
    copies: dict[int, list[int]]  # original id -> the bank/ copies collapsed into it
    past: dict[int, str]  # id -> the last day of its event window
    pending: frozenset[int] = frozenset()  # ids of changes logged before the day they take effect


def bounded(row: Any, day: str, stored: bool = False) -> tuple[str, str] | None:
    """("past" or "active", the last day) for a statement that holds for a while only (relative to
    `day`, an ISO date), else None: one that says it holds for now and writes its window of days
    ("Currently in Tokyo (Mar 3-Mar 10)"), with WINDOW_EXPIRY one about someone whose written
    window was still to come when written, or, with OPEN_EXPIRY, a state about someone that names
    its end ("On sabbatical through May", "away until the 14th": parse.dates.ends, read from the
    day it was written): index/dating.py `last_day`. A report of something done ("Lived in Porto
    until March") is no state; lines that name no one and are not typed facts (chat logs) are left
    alone. `stored`: see `_last_day`."""
    last = _last_day(row, stored)
    return None if last is None else (("past" if last < day else "active"), last)


def _last_day(row: Any, stored: bool) -> str | None:
    """index/dating.py's `last_day` of a row by recall's rules (WINDOW_EXPIRY, OPEN_EXPIRY). With
    `stored` (the index's rules are this code's) the committed row's `last_day` column is read
    instead of its text while both rules are on, as the index reads it; a NULL there (a row written
    by an older gitmem) reads the text."""
    last = row[LAST_DAY] if stored and WINDOW_EXPIRY and OPEN_EXPIRY else None
    if last is None:
        return last_day(row, WINDOW_EXPIRY, OPEN_EXPIRY)
    return last or None  # "": read at index time, no end


def not_yet(row: Any, day: str) -> bool:
    """Whether a statement about someone reports a change that takes effect after `day` (an ISO
    date), counted from the day it was written ("The landlord wants €1,620 from May" written in
    March, asked in April): until then what it changes still holds, so it goes ahead of nothing
    (PENDING_CHANGES). Its own relevance is untouched: it is still what memory says is coming."""
    if not PENDING_CHANGES or not (row[ENTITIES] or row[FACT]):
        return False
    return takes_effect_after(row, day)


def takes_effect_after(row: Any, day: str) -> bool:
    """Whether a statement reports a change that takes effect after `day` (an ISO date), counted
    from the day it was written (its daily log's, else its event's): parse.dates.starts."""
    written = log_date(row[PATH]) or event_day(row)
    first = starts(row[CONTENT] or "", written) if written else None
    return first is not None and first.isoformat() > day


def curated_opinion(path: str, content: str | None) -> bool:
    """An opinion bullet of bank/opinions.md (its evidence lines cite their facts; it cites none)."""
    return path == OPINIONS_PAGE and ".md#L" not in (content or "")


def collapse(cands: list[Candidate], originals: dict[int, int],
             fetched: dict[int, Any]) -> tuple[list[Candidate], dict[int, list[int]], dict[int, int]]:
    """Each bank/ copy becomes its original (taken from the pool, else from `fetched`: the
    originals in memory that the pool lacked), at the better of the two ranks; a copy whose
    original is not in memory stays itself. An opinion curated into bank/opinions.md is such a
    copy too: the answer cites the statement and its event time (recency reads the day it was
    said, not the merge's), and carries the curated confidence when that is the newer one
    (`newest_confidence`). Returns the candidates, the copies (kept id -> copy ids) and the
    curated lines that stayed themselves, their statement's version no longer in memory (curated
    id -> that version's id: it is replaced when that version is)."""
    pool = {c.row[ID]: c for c in cands if not c.uncommitted}
    out: list[Candidate] = []
    placed: set[int] = set()
    copies: dict[int, list[int]] = {}
    alone: dict[int, int] = {}
    for c in cands:
        if c.uncommitted:
            out.append(c)
            continue
        i = c.row[ID]
        o = originals.get(i)
        if o is not None:
            target = pool.get(o) or (Candidate(fetched[o], c.score) if o in fetched else None)
            if target is not None:
                copies.setdefault(o, []).append(i)
                if o not in placed:
                    target.score = max(target.score or 0.0, c.score or 0.0) if c.score is not None else target.score
                    out.append(target)
                    placed.add(o)
                continue
            if curated_opinion(c.row[PATH], c.row[CONTENT]):
                alone[i] = o
        if i in placed:
            continue
        placed.add(i)
        out.append(c)
    return out, copies, alone


def newest_confidence(own_id: int, copies: Iterable[tuple[int, str, str | None, float | None]]) -> float | None:
    """The confidence an answer carries from its copies (id, path, content, confidence): that of
    the newest opinion curated in bank/opinions.md when it is newer than the answer's own line
    (reflection moved it after the statement was written), else None (the line's own: the user's
    edit of the log line after a curation is the newer word)."""
    newer = [(i, conf) for i, path, content, conf in copies if i > own_id and curated_opinion(path, content) and conf is not None]
    return max(newer)[1] if newer else None


def one_per_fact(cands: list[Candidate], need: int) -> tuple[list[Candidate], dict[int, list[int]]]:
    """The settled ranking with each fact once, looked at until `need` candidates are kept: a
    bank/ line saying the same words as a better-ranked candidate (one no citation ties to its
    source, or the same generated line on two pages) is its copy; when the later one is the
    memory file's line, it takes the bank line's place. Two memory lines with the same words
    stay two: the same sentence in two daily logs can be two events. Returns the candidates and
    the copies found (kept id -> copy ids)."""
    out: list[Candidate] = []
    first: dict[str, int] = {}  # words -> index in out
    copies: dict[int, list[int]] = {}
    for n, c in enumerate(cands):
        if len(out) >= need:
            out += cands[n:]
            break
        words = fact_words(c.row[CONTENT] or "", numbers=True) if not c.uncommitted else ""
        at = first.get(words) if len(words) >= 12 else None
        if at is None:
            first.setdefault(words, len(out))
            out.append(c)
            continue
        kept = out[at]
        mine, theirs = in_bank(c.row[PATH]), in_bank(kept.row[PATH])
        if not (mine or theirs):
            out.append(c)
            continue
        # Which one answers: the memory file's line (its citation and event time are the fact's
        # own; an opinion curated since carries its confidence: `newest_confidence`).
        if not mine:
            out[at] = c
            copies[c.row[ID]] = copies.pop(kept.row[ID], []) + [kept.row[ID]]
        else:
            copies.setdefault(kept.row[ID], []).append(c.row[ID])
    return out, copies


class Asked(NamedTuple):
    """What `newer_first` needs to know of the question."""

    stems: set[str]  # its words' crude stems (rank.query_stems)
    families: frozenset[str] = frozenset()  # the attributes it asks about (parse.attributes.asked)
    entities: frozenset[str] = frozenset()  # the entity keys it names that memory knows
    quantity: bool = False  # it asks for an amount, a count or a version (parse.attributes.asks_quantity)
    expects: frozenset[str] = frozenset()  # the types of value it asks for (parse.answers.expects)
    relative: str = ""  # the named entity's relative it asks about ("zoe's son": parse.entities.asked_relation)
    counted: str = ""  # the noun a "how many" question counts (parse.attributes.counted)
    occasion: bool = False  # it asks about an occasion, not how things stand (parse.mood.asks_occasion)


class _Said(NamedTuple):
    """What `newer_first` reads of a candidate, once."""

    ev: str  # event day, "" if none
    rid: int  # row id: ids follow the timeline, so a larger id was recorded later
    ents: frozenset[str]
    subject: str  # whom the statement is about (parse.entities.subject; "" for an unnamed relative)
    kind: str  # "opinion", "observation" or "fact" (world, experience, notes)
    asks: bool  # the question has words besides the entities' names ("warelay" alone has none)
    asked: frozenset[str]  # the question's stems it contains, the entities' names left out
    attrs: frozenset[str]  # the attribute families it gives a value of
    words: frozenset[str]  # its content words (5-letter stems), for "about the same thing"
    for_now: bool  # "currently ...", "until 12 March": holds for a while only
    text: str  # its content (numbers are read from it only when a pair needs them)
    stems: frozenset[str]  # the question's stems that are not names
    ending: bool  # ends a state ("gave up", "let ... lapse": attributes.ENDS_STATE)
    event: bool  # reports something done ("Sang a solo at the concert": supersede.is_event)
    own: bool  # about the entity it is filed under (its first), not a relative or another @person
    mover: bool  # may go ahead of older statements (not past)
    over: bool  # holds for a while only and that while is over (`past`)
    until: str = ""  # for one that holds for a while only: the last day of the window it writes ("" if none)
    asserts: bool = True  # states how things stand, by its mood: no plan, wish, condition, hearsay, story retold
    ends_on: frozenset[str] = frozenset()  # holds until something else happens: that clause's content words (`_ends_while`)
    occasion: bool = False  # tells of one occasion (parse.mood.occasion: "today", "first time in years")


def _said(c: Candidate, q: Asked, past: set[int], stored: bool = False, known: Reading | None = None) -> _Said:
    """`stored`: the committed row's `last_day` column may answer whether it holds for a while
    only (`_last_day`). `known`: the row's readings as the index stored them (index/readings.py),
    else they are read from its text."""
    if c.uncommitted:
        return _Said("", 0, frozenset(), "", "", False, frozenset(), frozenset(), frozenset(), False,
                     "", frozenset(), False, False, False, False, False)
    row = c.row
    r = known or derive(row)
    content = row[CONTENT] or ""
    ent_list = (row[ENTITIES] or "").split()
    ents = frozenset(ent_list)
    low = content.lower()
    # The words naming an entity (the question's or the statement's) say whom, not what, is asked.
    names = q.entities | ents
    own = frozenset(st for st in q.stems if not any(e.startswith(st) or st.startswith(e) for e in names))
    # A date ahead of the log's own day is a planned value ("booked for 2025-09-06"), not when the
    # statement was true: such a statement is placed by when it was recorded.
    ev = (row[EVENT_START] or "")[:10]
    logged = log_date(row[PATH])
    planned = bool(ev and logged is not None and ev > logged.isoformat())
    if planned:
        ev = ""
    attrs = r.attrs if q.families else frozenset()
    if planned and SLOT_RECENCY:
        attrs |= {"schedule"}  # a date ahead of its log's day is the value of a date set
    # A named end or a window still to come when written ("currently ..." is asked first, so the
    # stored last day answers the rest: `_last_day`).
    for_now = FOR_NOW.search(content) is not None or (bool(q.families) and _last_day(row, stored) is not None)
    if END_NOT_EVENT and for_now and logged is not None and ev and ev < (written := logged.isoformat()) \
            and (row[EVENT_END] or "")[:10] == ev and (_last_day(row, stored) or "") >= written:
        # "Visiting his parents in Karaikudi until 12 January", written on 20 December: the one day it
        # names is its end (parse.dates read it as an event in the log's year), not when it held: it
        # is placed by the day it was written, or the older home would be "newer" than the stay.
        ev = written
    if for_now and WINDOW_EXPIRY and "residence" in q.families and _PLACE.search(content):
        # A stay somewhere for a while ("On the road with the band's tour ... in Germany", "At her
        # mother's in Cork till Sunday") says where someone is for that while: "Where is Lachlan?"
        attrs |= {"residence"}
    other = r.subject
    subject = ent_list[0] if other is None and ent_list else other or ""
    if other == "" and RELATION_SUBJECT:
        # An unnamed relative is someone all the same: "Her daughter lives in Bristol" and "Her
        # daughter moved to Leeds", both filed under Zoe, are two statements of one subject ("zoe's
        # daughter"), so the newer one answers "Where does Zoe's daughter live?".
        subject = r.relation or ""
    if RELATIVE_SUBJECT and other is None and len(q.entities) == 1 and subject not in q.entities \
            and q.entities <= ents:
        # Filed under someone the question does not name, it names the one it does: for this
        # question it speaks of them ("Where does Rosario live?": "@Amaru: Flew up to fetch @Rosario
        # and settled her into a new flat in Miraflores" is Rosario's news, not Amaru's home).
        other = subject = next(iter(q.entities))
    # Its mood, whatever is asked: a plan, a wish, a condition, hearsay or a story retold asserts nothing of now.
    asserts = not (INTENT_GUARD and r.intends) and not _no_value_read(r)
    return _Said(
        ev=ev, rid=row[ID], ents=ents, subject=subject,
        kind=statement_kind(row[KIND]), asks=bool(own), asked=frozenset(st for st in own if covered(low, {st})),
        attrs=attrs,
        words=r.words,
        for_now=for_now,
        text=content, stems=own, ending=SLOT_RECENCY and r.ending, event=SLOT_RECENCY and r.event, own=other is None,
        mover=c.score is not None and row[ID] not in past and asserts and not _no_value_asked(content, q, own)
        and not (TOLD_OF_PAST and r.told),
        over=row[ID] in past,
        until=row[EVENT_END][:10] if for_now and row[EVENT_START] and row[EVENT_END] and row[EVENT_START] < row[EVENT_END]
        else "",
        asserts=asserts,
        ends_on=content_of(clause, tuple(ent_list)) if WHILE_ENDED and ents and (clause := end_condition(content)) else frozenset(),
        occasion=OCCASION_UNDER and bool(ents) and mood.occasion(content))


# The reading `newer_first` makes of a candidate, for recall/learned.py's pair features.
said_of = _said


# A place named in a statement: a preposition before a capitalised word.
_PLACE = lazy(r"\b(?:in|to|at|near|around|across)\s+(?:the\s+)?[A-Z][a-z]")


_NUMBER_WORDS = answers.NUMBER_WORDS
# A number in digits or words, in thousands too ("61k"; "zero" gives no value worth comparing: it is read, not searched for).
_NUMBER = lazy(r"\b(?:\d+(?:[.,]\d+)?k?|" + "|".join(w for w in _NUMBER_WORDS if w != "zero") + r")\b")
_TOKEN = lazy(r"[\w.,]*\w")
_LINKS = frozenset(("of", "at", "to", "is", "now", "a", "an", "the", "version", "v", "up", "from", "on", "onto"))
# Words after a number that are no unit of it ("3 in a row", "5 to 9").
_NOT_UNITS = frozenset(("a", "an", "the", "to", "and", "of", "in", "on", "at", "for", "from", "per", "or", "with", "this",
                        "that", "is", "was", "by", "as", "after", "before", "when", "while", "but", "so", "it"))


class _Numbers(NamedTuple):
    """What `_read_numbers` reads of a statement."""

    nums: frozenset[str]  # every number it gives
    counts: frozenset[tuple[str, str]]  # (question stem, number) standing next to each other
    units: frozenset[tuple[str, str]]  # (unit, number): "82 kg", "1,290 euros", "£950"


def _numbers(said: _Said) -> _Numbers:
    """The numbers a statement gives, which question stems stand next to one ("postgres 17",
    "team of six", "Nextcloud up to 29": a few link words may stand between) and in which unit.
    Read only for the few pairs that reach `_same_slot`. A thing as the subject ("The lift to
    floors 5 to 9 is broken") gives its own numbers, not a value of the entity's, except a number
    beside a name ("The home server runs Nextcloud 28": the version of a named thing) or an amount
    in a unit ("The landlord put the rent up to 1,290 euros")."""
    return _read_numbers(said.text, said.stems)


_NONE = _Numbers(frozenset(), frozenset(), frozenset())


@lru_cache(maxsize=1024)
def _read_numbers(text: str, stems: frozenset[str]) -> _Numbers:
    low = text.lower()
    if not _NUMBER.search(low):
        return _NONE
    thing = attributes.thing_subject(low)
    # The dates of the statement's own event window say when it holds, not a value of what it
    # says ("Currently walking the harbour route daily (Nov 20–Dec 9, 2025)" gives no 20, 9 or 2025
    # for "Harbour walk note 5" to be another number of): read around them.
    if (at := event_window_at(text)) is not None:
        text = text[:at[0]] + " " + text[at[1]:]
    raw = _TOKEN.findall(text)
    toks = [t.lower() for t in raw]
    nums: set[str] = set()
    counts: set[tuple[str, str]] = set()
    units: set[tuple[str, str]] = set()
    for i, t in enumerate(toks):
        n = _NUMBER_WORDS.get(t, t if t[:1].isdigit() else None)
        if n is None:
            continue
        if i + 1 < len(toks) and toks[i + 1].isalpha() and toks[i + 1] not in _NOT_UNITS and len(toks[i + 1]) > 1:
            unit = toks[i + 1]
            units.add((attributes.singular(unit), n))
        if not thing:
            nums.add(n)
        for step in (-1, 1):
            j = i + step
            while 0 <= j < len(toks) and toks[j] in _LINKS and abs(j - i) < 4:
                j += step
            if 0 <= j < len(toks) and (not thing or raw[j][:1].isupper()):
                counts.update((st, n) for st in stems if toks[j].startswith(st))
    return _Numbers(frozenset(nums), frozenset(counts), frozenset(units))


def _new_value(mine: frozenset[tuple[str, str]], theirs: frozenset[tuple[str, str]], keys: set[str] | None = None) -> bool:
    """Whether `mine` gives a key (a thing, a unit) that `theirs` also gives a number for another
    number than `theirs` does ("Nextcloud 28" / "Nextcloud 28 to 29"; "82 kg" / "76 kg")."""
    old: dict[str, set[str]] = {}
    for k, n in theirs:
        if keys is None or k in keys:
            old.setdefault(k, set()).add(n)
    new: dict[str, set[str]] = {}
    for k, n in mine:
        if k in old:
            new.setdefault(k, set()).add(n)
    return any(not ns <= old[k] for k, ns in new.items())


def _later(c: _Said, d: _Said) -> bool:
    """Whether `c` is newer than `d`: by event day when both have one, else by when it was recorded."""
    if c.ev and d.ev:
        return c.ev > d.ev
    return c.rid > d.rid


def _same_thing(c: _Said, d: _Said, q: Asked) -> str | None:
    """Why two statements of one subject give two values of what the question asks (None: no
    reason). Ranking only: a reason here moves the newer one ahead, it hides nothing."""
    if not (c.subject and c.subject == d.subject and c.kind == d.kind):
        return None
    # The question names something the older one has and the newer one lacks ("Where does Kira's
    # brother live?", "What is Abe's dog called?"): the newer one answers something else. Words of
    # the attribute itself do not count ("Where does Yuki stay?": "stays in Osaka" / "apartment").
    missing = d.asked - c.asked
    shared = c.words & d.words
    # A weak family (likes, pastimes, media) needs the same thing named too ("Loves jazz more than
    # any other music" / "Has gone off jazz"): two likes of one person are not one attribute.
    # A statement that holds for a while only and is not over (a mover is never past) is the most
    # current value of its attribute, whatever else the older one names ("What is Ruairi's role
    # at St Columba's?": "Acting head of department ... until the end of August" over "Deputy head
    # of maths at St Columba's College").
    # An activity done once ("Stopped at the tennis club cafe", "Sang a solo at the choir's
    # concert") is an instance of a weak attribute (pastimes, likes), not a new value of it.
    instance = c.event and not d.event and not c.ending
    for fam in sorted(q.families & c.attrs & d.attrs):
        if (fam not in attributes.WEAK or shared and not instance) and (c.for_now or all(attributes.vocabulary(st, fam) for st in missing)):
            return f"same attribute {fam}"
    # ... and so it is for an attribute the question does not name ("How does Owen get to work?":
    # "Off the bike until the end of March; takes the bus" over "Cycles to work every day").
    if c.for_now and SLOT_RECENCY and any(f not in attributes.WEAK or shared and not instance for f in c.attrs & d.attrs):
        return "a temporary value of the same attribute"
    # An amount asked for, given by both in one unit ("Pays 950 pounds a month in rent" / "Landlord put
    # the rent up to 1,050 pounds a month"; "Pays 1,150 euros a month for his flat" / "The landlord
    # put the rent up to 1,290 euros"): the newer amount,
    # unless the newer one reports something done once ("Ran 21 km at the half marathon").
    # Both must hold a word of the question in common, or the older none the newer lacks: "Spends
    # about 120 euros a month on groceries" gives no new value of "Pays 700 euros a month for her
    # studio" (the question's "pay" is the older one's only).
    if q.quantity and QUANTITY_RECENCY and not c.event and (c.asked & d.asked or not d.asked - c.asked) and \
            _new_value(_numbers(c).units, _numbers(d).units):
        return "a new amount in the same unit"
    # A new count of the noun a "how many" question counts, in any wording around it: "six hives on the
    # allotment this summer" over "Keeps four beehives" (the nouns' heads agree: parse.attributes.same_noun).
    if q.counted and COUNT_ANSWERS and _recounted(c, d, q.counted):
        return "a new count of the thing asked"
    # ... and so it is for a temporary state that speaks of what the older one says ("How does Tomasz
    # get to the lab?": "Taking the tram this week; his bike has a buckled wheel" over "Rides a road
    # bike to the lab every day": both name a bike), asked while it lasts (once over it is past and
    # moves no more).
    if c.for_now and SAME_THING_WORDS and (_in_common(c, d) or attributes.said(c.text) & attributes.said(d.text)
                                           - attributes.WEAK):
        return "a temporary state on the same thing"
    if SLOT_RECENCY and (why := _same_slot(c, d, q, missing)) is not None:
        return why
    if _names_thing(missing):
        return None
    # "Currently reading War and Peace" holds for now only: a later word on the same thing ends it.
    # Later as recorded, too: a line written before the "currently ..." one cannot end it, though
    # it is dated after the start of the window that line writes ("Harbour walk note 5", logged
    # Nov 26, is no end of "Currently walking the harbour route daily (Nov 20–Dec 9)", logged Nov 27).
    # And one that writes its window has said when it ends: a word on the same thing inside that
    # window is no end of it (an end said in words still is: "ends the state" and the attribute
    # readings above).
    if d.for_now and shared and c.rid > d.rid and not (d.until and c.ev and c.ev <= d.until):
        return "ends a for-now statement"
    # Neither holds a word of a question that has some besides the name ("Which city is Priya based in?" over
    # "Rents a place in Glasgow" and "Relocated to Dublin"): the newer one is the better guess.
    # (Ties on the same non-empty words are left to RECENCY_MARGIN: "Likes the Fika café's buns"
    # does not answer "Fika café" better than "Is a barista at the Fika café" for being newer.)
    # The older one giving the asked attribute keeps its place against a newer one on something
    # else ("Where is Bob?": "Lives in Lyon" / "Allergic to cats"), not against one on the same
    # thing: a word or another @entity in common ("Engaged to @Marguerite" / "He and @Marguerite
    # said their vows on Saturday"; "Shares a house in the Holylands" / "Signed for a one-bed off the
    # Lisburn Road; his Holylands room went to ...").
    if ATTRIBUTE_TIES and c.asks and d.asks and not c.asked and not d.asked:
        if not _protected(c, d, q):
            return "no question word but the name"
        if SAME_THING_WORDS and _in_common(c, d):
            return ON_THE_SAME_THING
    return None


def _typed(c: _Said, d: _Said, q: Asked) -> str | None:
    """Why `c`, newer, gives another value of what the question asks than `d` does, read from the
    question's answer type (parse.answers: a time, an amount, a place, a name, yes or no) rather than from
    the words the two share: both are about one subject, both give a value of that type and `c`
    gives one `d` does not ("When does Wanjiru go to the gym?": "Her gym slot is 7 p.m." over
    "Goes to the gym at 6 a.m."). They must be about the thing asked: `c` holds every question word
    `d` holds (light verbs aside: "use", "go") or one naming a thing (not an attribute word) in
    common; and a shared question word, a question that names nothing but the subject ("Where is
    Dunja?"), or an old value named again ("Set up his Galaxy S25 ...; the Pixel went to his mum")
    says it is the same slot. An addition ("also", "too") or another kind of
    statement is no new value, nor is something done once that does not name the thing asked."""
    if not (TYPED_ANSWERS and q.expects and c.subject and c.subject == d.subject and c.kind == d.kind):
        return None
    if is_additive(c.text):
        return None
    shared = c.asked & d.asked - _LIGHT
    thing = _names_thing(shared)
    missing = d.asked - c.asked - _LIGHT
    anew = "name" in q.expects and _named_anew(c, d)
    renamed = anew or "name" in q.expects and _renamed(c.text, d.text)
    # A yes/no question: the older line may hold the question's attribute words alone ("sing" in "Does
    # Folake sing in a choir?" / "Gave the choir her last Sunday"), not a thing ("football").
    if missing and not thing and not renamed and (
            "polarity" not in q.expects or not all(attributes.vocabulary(st) for st in missing)):
        return None
    if _an_instance(c, q, thing, anew):
        return None
    for kind in sorted(q.expects):
        mine, theirs = answers.values(c.text, kind), answers.values(d.text, kind)
        if not mine or not theirs or mine <= theirs:
            continue
        if shared or not c.stems - _LIGHT or mine & theirs or kind == "polarity" and c.ents & d.ents - {c.subject} \
                or kind == "name" and anew:
            return f"another {kind} for the same thing"
    return None


# A report opening with "had", "was" or "were" ("Had lunch with @Pia at a noodle bar in Antwerp"):
# something done or been, like supersede.is_event's past tenses (which leave "had" out: "Had two
# kids" can be a state to supersession).
_HAD = lazy(attributes.OPENING + r"(?:had|was|were)\b", re.I)


def _renamed(new: str, old: str) -> bool:
    """Whether `new` names the name `old` gives and a new one beside it that is no place ("The kids
    started calling Moustache 'Mouse'" / "Her cat is called Moustache"; "Episode 40 of Kitchen Across
    the Sava ...; the sisters dropped the Sarma title" / "... a podcast called Sarma Sundays"): it
    speaks of the thing the old name names, whatever question word it lacks ("cat", "podcast").
    "Rex loves the beach at Howth" gives Rex no new name: Howth is a place."""
    mine, theirs = answers.values(new, "name"), answers.values(old, "name")
    return bool(mine & theirs) and not mine - answers.values(new, "place") <= theirs


def _named_anew(c: _Said, d: _Said) -> bool:
    """Whether `c` gives the thing `d` names a new name in a shape besides "called" (wave 9,
    attributes.names_anew: "The band is Fjordhest now" / "Plays bass in a band called The Loose
    Ends"; "Had Peregrine painted on the sloop's transom" / "Bought a sloop called Wandering Star"):
    a new name that is no place, where the shape names no thing or one the question or `d` names
    ("Her cat is Tom" says nothing of "a dog called Rex"). Off: NAMED_ANEW False."""
    if not NAMED_ANEW:
        return False
    ok, thing = attributes.names_anew(c.text)
    if not ok or thing and not (any(thing.startswith(st) for st in c.stems) or thing in d.text.lower()):
        return False
    theirs = answers.values(d.text, "name")
    return bool(theirs) and not answers.values(c.text, "name") - answers.values(c.text, "place") <= theirs


def _traded(c: _Said, d: _Said) -> str | None:
    """Why `c`, newer, gives a new value of the slot `d` gives a name for (wave 9): it names that
    value and, after it in one clause, another name it trades it for ("@Quang traded the Trafic in for
    an electric Vauxhall Vivaro" / "Her husband @Quang drives a Renault Trafic"; "swapped the Canon
    for a Fujifilm"): attributes.trades. No place ("Drove the Trafic to Leeds"), no @mention. Off:
    TRADED False."""
    if not (TRADED and c.subject and c.subject == d.subject and c.kind == d.kind) or not attributes.may_trade(c.text) \
            or is_additive(c.text):
        return None
    old = answers.values(d.text, "name")
    if not old:
        return None
    new = attributes.trades(c.text, old)
    if new and not new & old and not new <= answers.values(c.text, "place"):
        return "traded for another"
    return None


def _own_opinion(c: _Said, d: _Said, cc: Candidate, dc: Candidate) -> bool:
    """Whether `c`, newer, is the user's own opinion on the thing an older own opinion `d` speaks of
    (wave 9): both typed opinions naming no one ("O(c=0.6): The rowing machine was a waste of money" /
    "O(c=0.8): Twenty minutes on the rowing machine most mornings and the back pain has gone"), `c`
    holding every question word `d` holds, one of them a thing (not a word of liking), and not only as
    the qualifier of another noun ("the rowing club's fees"). Off: OPINION_WORDS False."""
    if not (OPINION_WORDS and c.kind == d.kind == "opinion" and not c.ents and not d.ents
            and cc.row[FACT] and dc.row[FACT] and d.asked and d.asked <= c.asked) or is_additive(c.text):
        return False
    return any(not attributes.vocabulary(st, "likes") for st in d.asked) \
        and not attributes.modifies_another(c.text, d.asked, d.text)


def _done(c: _Said) -> bool:
    """Whether a statement reports something done once rather than how things stand (`_typed`)."""
    return c.event or _HAD.match(c.text) is not None


def _an_instance(c: _Said, q: Asked, thing: bool, anew: bool) -> bool:
    """Whether `c` reports something done once that is an instance, not a value of the slot asked
    (`_typed`, and `refusals`' AN_INSTANCE): done once, naming no thing asked about with the older
    one (`thing`: "Switched the laptop over to Fedora" / "Her laptop runs Windows 11" is a value) and
    no new name (`anew`), and ending nothing ("Had lunch at a tapas bar in Soho" is no answer to
    "Where is Bob?"; "Gave the choir her last Sunday" answers "Does Folake sing in a choir?")."""
    ended = c.ending or "polarity" in q.expects and answers.values(c.text, "polarity") == _NO
    return _done(c) and not ended and not thing and not anew


def _names_thing(stems: Iterable[str]) -> bool:
    """Whether one of the question's `stems` names a thing: a word of no attribute's vocabulary
    ("viva", "Vespa", "hotel"; not "live" or "work")."""
    return any(not attributes.vocabulary(st) for st in stems)


def _answers_at_all(c: _Said, d: _Said, q: Asked) -> bool:
    """Whether `c` goes ahead of `d`, of one subject and whatever their ages, because the question
    names nothing but the subject ("Where is Bruno?": its words cannot tell the lines apart) and `c`
    gives a value of the type it asks for where `d` gives none ("Out on Texel with the kayak club"
    over "Repairs church organs for a living"). Not something done once ("Had lunch at a noodle bar
    in Antwerp"), not a yes/no question (every line has a polarity)."""
    if not (TYPED_ANSWERS and q.expects and c.subject and c.subject == d.subject and c.own and c.kind == d.kind):
        return False
    if c.stems - _LIGHT or _done(c):
        return False
    return _gives_where_none(c, d, q)


def _over_unasserted(c: _Said, d: _Said, q: Asked) -> bool:
    """Whether `c`, a statement of how things stand, goes ahead of `d`, of one subject and whatever
    their ages and relevance, because `d` asserts nothing of now (`_Said.asserts`: a plan, a wish, a
    condition, hearsay, a story retold) and `c` answers the question: it gives an attribute the
    question asks about or a value of the type it asks for (yes or no aside), and `d` holds no word
    of the question naming a thing `c` lacks ("Where does Pirmin live now?": "Signed the lease on a
    house in Parnu and moved in" over the same day's "Wants to get a rowing boat now that he lives
    by the sea", which holds "live"; ASSERTED_FIRST). Ranking only: the plan is still returned."""
    if not (ASSERTED_FIRST and not d.asserts and d.own and _one_subject(c, d)):
        return False
    if _names_thing(d.asked - c.asked - _LIGHT - _NOW):
        return False
    return bool(q.families & c.attrs) or any(answers.values(c.text, kind) for kind in q.expects - _POLARITY)


def _over_occasion(c: _Said, d: _Said, q: Asked) -> bool:
    """Whether `c`, a habit or standing state, goes ahead of `d`, of one subject, whatever their ages
    and relevance, because `d` tells of one occasion departing from it (`_Said.occasion`): "How does
    Krystyna get to work?": "Cycles to the office every day" over "Took the tram today because the bike
    had a puncture" (OCCASION_UNDER; parse.mood `occasion`). The habit is told by how often or how long it holds
    (parse.mood `habitual`: "every day", "without fail", "for twenty years"). Not when the question asks
    about the occasion (told in the past, naming one day: `Asked.occasion`) or the occasion holds a word
    of the question the habit lacks ("Why does she take the tram?"); and the occasion must depart from
    the habit: `c` gives the asked attribute or a word of the question, or the two share a content word
    or an attribute ("bike"). Ranking only: the occasion is still returned, below."""
    # The occasion is read of every head candidate (a few substring tests, `_said`); the habit only
    # for the pairs that get here, each text once (cached).
    if not (OCCASION_UNDER and d.occasion and not c.occasion and not q.occasion and d.own and _one_subject(c, d)) \
            or d.asked - c.asked - _LIGHT - _NOW or not _habitual(c.text):
        return False
    return bool(q.families & c.attrs or c.asked or c.words & d.words - _SAYING
                or attributes.said(c.text) & attributes.said(d.text) - attributes.WEAK)


_habitual = lru_cache(maxsize=4096)(mood.habitual)


def _one_subject(c: _Said, d: _Said) -> bool:
    """Whether `c` and `d` are statements of one kind about one subject, `c` about the entity it is
    filed under."""
    return bool(c.own and c.subject and c.subject == d.subject and c.kind == d.kind)


def _old_value_ended(c: _Said, d: _Said) -> str | None:
    """Why `c`, newer, of one subject with `d`, gives the current value where `d` gave the old one,
    read from the consequence rather than a verb of change (CONSEQUENCE): a clause of `c` names a
    content word of `d` (its value: "the Pixel", "the Accra lease") with an end of it (`_ENDS_VALUE`:
    given away, over, sold, left, replaced, no longer) and `c` gives a name `d` does not (the new
    value: "Picked up a Fairphone at the repair café and gave the Pixel away to his cousin", "Hung
    the first pictures in the Kumasi flat; the Accra lease is over"). Not an addition, not something
    done once that names nothing new ("Sold the old garage fridge")."""
    if not (CONSEQUENCE and _one_subject(c, d)):
        return None
    low = c.text.lower()  # substring hints first: this runs for every newer pair of one subject
    ended = any(h in low for h in _END_HINTS) and _ENDS_VALUE.search(c.text) is not None
    passive = PASSIVE_END and any(h in low for h in _PASSIVE_HINTS)
    if not (ended or passive) or is_additive(c.text):
        return None
    old = d.words & c.words
    if not old:
        return None
    ents = tuple(sorted(c.ents))
    if not any((ended and _ENDS_VALUE.search(clause) or passive and _PASSIVE.match(clause))
               and content_words(clause, ents) & old for clause in _CLAUSES.findall(c.text)):
        return None
    # The new value is a name, or an address to write to ("Moved everything to dv@orchardpost.net; the
    # kestrelmail account is closed": an address is the name of a mailbox; EMAIL_ENDED).
    if not (answers.values(c.text, "name") - answers.values(d.text, "name")
            or EMAIL_ENDED and answers.values(c.text, "email") - answers.values(d.text, "email")):
        return None
    return "the old value ended, a new one given"


# The word a statement opens with, its predicate ("Plays ...", "Smokes ..."): `_ends_predicate` here,
# recall/learned.py's guard beside a direct yes.
OPENING_WORD = lazy(attributes.OPENING + r"([A-Za-z][\w-]*)")
_NEXT_WORD = lazy(r"\s*([A-Za-z][\w-]*)")


def _ends_predicate(c: _Said, d: _Said, q: Asked) -> str | None:
    """Why `c`, newer, of one subject with `d`, answers a yes/no question in its place (CONSEQUENCE):
    it ends the very predicate `d` opens with, the word right after the end ("No longer plays; hung
    up his boots" / "Plays Sunday league football"; "Stopped smoking" / "Smokes ten a day"), whatever
    thing either names. Not an end of something next to it ("Quit the swimming club committee" /
    "Swims in the mornings": the end governs "the")."""
    if not (CONSEQUENCE and "polarity" in q.expects and c.ending and _one_subject(c, d)) or d.ending:
        return None
    head = OPENING_WORD.match(d.text)
    if head is None:
        return None
    heads = set(attributes.forms(head.group(1).lower()))
    for m in attributes.ENDS_STATE.finditer(c.text):
        nxt = _NEXT_WORD.match(c.text, m.end())
        if nxt is not None and heads & set(attributes.forms(nxt.group(1).lower())):
            return "ends the state the older one states"
    return None


def _abstains(c: _Said, d: _Said, q: Asked) -> str | None:
    """Why `c`, newer, of one subject with `d`, answers a yes/no question about the habit `d` states
    in its place (ABSTAINED): `c` tells a span of time gone without what the habit's verb does or
    consumes (parse.attributes `abstains`: "Six months without a cigarette today" / "Smokes a pack a
    day"; "A full year smoke-free"; "Hasn't lit the pipe since the heart scare" / "Smokes a briar pipe
    ... every evening"). The question asks the habit's verb ("Does Wieslaw smoke?"), `d` tells it with a
    rate or how often (no one-off), and the thing gone without is the verb itself, a word of `d`, or
    one of the verb's things (`HABIT_THINGS`). Ranking only: the habit is still returned, below."""
    if not (ABSTAINED and "polarity" in q.expects and d.asked and _one_subject(c, d)) or c.ending or d.ending:
        return None
    gone = attributes.abstains(c.text)
    if not gone:
        return None
    head = OPENING_WORD.match(d.text)
    if head is None:
        return None
    verbs = set(attributes.forms(head.group(1).lower()))
    if not any(v.startswith(st) for v in verbs for st in d.asked):
        return None  # the question asks something else of the line than its habit
    if not (attributes.RATE.search(d.text) or _habitual(d.text)):
        return None
    things = {t for v in verbs for t in attributes.HABIT_THINGS.get(v, ())}
    if any(g in verbs or g[:5] in d.words or g in things or g.rstrip("s") in things for g in gone):
        return "a span without what the older one's habit does"
    return None


def _recounted(c: _Said, d: _Said, noun: str) -> bool:
    """Whether `c` gives another count of `noun` than `d` does (a number standing before the noun or a
    compound of it: `_Numbers.units`)."""
    mine = {n for unit, n in _numbers(c).units | (answers.ordinal_counts(c.text) if ORDINAL_COUNTS else frozenset())
            if attributes.same_noun(unit, noun)}
    theirs = {n for unit, n in _numbers(d).units if attributes.same_noun(unit, noun)}
    return bool(mine and theirs and not mine <= theirs)


def _amounts(n: _Numbers) -> frozenset[str]:
    """Every number read, a thing's own too when it stands before a word ("Gym membership costs her
    1,800 rupees": the subject is a thing, the amount is still one)."""
    return n.nums | {v for _, v in n.units}


def _told_anew(c: _Said, d: _Said, q: Asked) -> str | None:
    """Why `c`, newer, goes ahead of `d` of the same person when the question asks an amount, a count or
    a date: `c` tells a value of that type as reached (parse.answers `reached`: "Got bumped to 61k",
    "the rent up to 715 euros", "new slot is 17 April", "she has eight people now"; an email address
    "from now on" or "instead", whatever is asked) and `d` gives a
    value of the type that `c`'s stretch does not, the amounts of both counted in one unit when both
    name one ("52k" / "61k"; not "700 euros a month" / "50k", nor "75 euros" / "12 km"). The form says it is the same value
    told anew, whatever question words either holds, unless the older one names by name a thing asked
    that the newer lacks. Not an addition, nor a value for a while only
    (those have their own rules), nor a plan or a change not yet in effect (no `mover`). Ranking
    only: nothing is marked replaced (VALUE_ANEW)."""
    if not (VALUE_ANEW and c.own and d.own and c.subject and c.subject == d.subject and c.kind == d.kind) or c.for_now:
        return None
    # Read once per candidate (cached by its text): most lines tell no value reached, and this is
    # asked of every pair of the head.
    stretches = answers.reached(c.text)
    if not stretches or is_additive(c.text):
        return None
    email = answers.values(d.text, "email")
    amount = q.quantity or "money" in q.expects
    if not (amount or "time" in q.expects or email):
        return None
    # The older line names a thing the question asks by name and the newer lacks it ("How much does
    # Gregor pay for Netflix?": "Pays £11 a month for Netflix" under "Broadband is now £26 a month"):
    # two amounts of two things.
    named = answers.values(d.text, "name")
    if any(n.startswith(st) for st in d.asked - c.asked for n in named):
        return None
    # An amount: the older one holds a thing asked, the newer no word of the question, and the older
    # gives an attribute the newer does not ("How much does Callum pay for the climbing wall?": "Pays
    # £40 a month for the climbing wall", a pastime, under "The letting agent put the Leith rent up to
    # £975"): two amounts of two things. (A date told anew keeps its place: "new slot is 17 April".)
    other_thing = amount and not c.asked and _names_thing(d.asked - _LIGHT) and bool(attributes.said(d.text) - attributes.said(c.text))
    for stretch in stretches:
        if amount and not other_thing:
            new_n, old_n = _read_numbers(stretch, frozenset()), _numbers(d)
            mine, theirs = _amounts(new_n), _amounts(old_n)
            # Units: a currency, thousands, a period (answers.amount_units), and the word after a number
            # ("12 km", "three staff"): "up to 75 euros a month" is no new value of "Cycles 12 km".
            units = answers.amount_units(stretch) | {u for u, _ in new_n.units}
            old = answers.amount_units(d.text) | {u for u, _ in old_n.units}
            if mine and theirs and not mine <= theirs and not (units and old and not units & old):
                return "an amount told anew"
        if "time" in q.expects:
            mine, theirs = answers.days_given(stretch), answers.days_given(d.text)
            if mine and theirs and not mine <= theirs:
                return "a date told anew"
        # An address to use from now on or instead, whatever is asked: it orders two addresses only.
        if email and (mine := answers.values(stretch, "email")) and not mine <= email:
            return "an email address told anew"
    return None


def _starts_work(c: _Said, d: _Said, q: Asked) -> str | None:
    """Why `c`, newer, goes ahead of `d` of the same person for a question about their work: `d` gives
    the work, `c` none by its words but tells a start at a workplace (parse.attributes `starts_work`),
    not as an addition. Ranking only (STARTED_WORK)."""
    if STARTED_WORK and "work" in q.families and "work" in d.attrs and "work" not in c.attrs and c.own and d.own \
            and c.subject and c.subject == d.subject and c.kind == d.kind and not is_additive(c.text) \
            and attributes.starts_work(c.text):
        return "a start at a workplace"
    return None


def _counts_where_none(c: _Said, d: _Said, q: Asked) -> bool:
    """Whether `c` goes ahead of `d`, of one subject and whatever their ages, because the question asks
    how many or how much and `c` gives a number where `d` gives none, holding every question word `d`
    holds ("How many children does Dervla have?": "Has two kids" over "Runs the parish lotto")
    (COUNT_ANSWERS)."""
    if not (COUNT_ANSWERS and q.quantity and _one_subject(c, d)) or not d.asked <= c.asked:
        return False
    return bool(_numbers(c).nums) and not _numbers(d).nums


def _gives_where_none(c: _Said, d: _Said, q: Asked) -> bool:
    """Whether `c` gives a value of a type the question asks for (yes/no aside: every line has a
    polarity) where `d` gives none (`_answers_at_all`, `_gives_instead`)."""
    return any(answers.values(c.text, kind) and not answers.values(d.text, kind) for kind in q.expects - _POLARITY)


def _in_common(c: _Said, d: _Said) -> bool:
    """Whether `c`, a newer statement of the subject of `d`, shares a content word or another @entity
    with it, and does not say it adds to what holds ("Still drives into Ljubljana on Thursdays" is
    no new home for "Rents a flat in Ljubljana"), nor has as its subject a thing the older one does
    not name ("The York flat has fibre since June" says nothing of "Moved from Leeds to York"; "The
    lurcher answers to Pernod" does speak of "Adopted a lurcher ... named him Buster")."""
    head = attributes.thing_head(c.text)
    if is_additive(c.text) or head and head not in d.text.lower():
        return False
    return bool(c.words & d.words - _SAYING) or len(c.ents & d.ents - {c.subject}) > 0


def _same_slot(c: _Said, d: _Said, q: Asked, missing: frozenset[str]) -> str | None:
    """Why two statements give two values of one slot of the thing the question asks about, read
    from their shape rather than a word list (None: no reason). Both must name that thing: a
    question word naming no attribute ("viva", "hotel", "Postgres"); the older one's further
    question words must name attributes ("PhD" in "When is Idris's PhD viva?" is a study word)."""
    both = c.asked & d.asked
    topical = {st for st in both if not attributes.vocabulary(st)}
    # Two opinions of one person on the thing asked about: the newer one is what they think now
    # ("Finds podcasts a waste of time" / "Recommends a history podcast ..."). What an opinion is
    # about may be a word of a family ("podcast" is media), not of the likes themselves.
    # Wave 9: a missing word of a weak attribute is no thing ("watching" in "What does Aarav think of
    # watching cricket?" / "Has come round to Test cricket"), and a shared word that only qualifies
    # another noun names that other thing ("Finds the new jazz bar ... overpriced" is no word on jazz).
    activities = _ACTIVITIES if OPINION_WORDS else ("likes",)
    if c.kind == "opinion" and all(any(attributes.vocabulary(st, f) for f in activities) for st in missing) \
            and any(not attributes.vocabulary(st, "likes") for st in both) \
            and not (OPINION_WORDS and attributes.modifies_another(c.text, both, d.text)):
        return "an opinion on the same thing"
    # A newer opinion in wholly new words (it holds no word of the question) that shares a word with
    # an older one that does ("What kind of hob does Desmond prefer?": "Swears by his gas hob" /
    # "Cooks on induction now ... never go back to gas"; "Can't stand open-plan offices" / "Changed
    # her mind about the open floor"): a reversal needs no preference word in common. One that
    # names part of the question only ("Thinks the coffee at the office is undrinkable" for "tea or
    # coffee?") is the rule above's.
    # The older one must hold a word of the thing asked about, not only a preference word ("what does
    # Peter prefer?" names no thing: "Prefers concise replies" and "Does not want secrets stored in
    # memory files" are two opinions, not one reversed).
    if c.kind == "opinion" and OPINION_RECENCY and not c.asked and (c.words & d.words) - _SAYING and any(
            not attributes.vocabulary(st, "likes") for st in d.asked):
        return "a newer opinion on the same thing"
    if not topical:
        return None
    # "Runs Postgres 16" / "Now on Postgres 17": the same thing with another number is its new
    # value, whatever else either says.
    cn, dn = _numbers(c), _numbers(d)
    if _new_value(cn.counts, dn.counts, topical):
        return "a new number for the same thing"
    if _names_thing(missing):
        return None
    cnums, dnums = cn.nums, dn.nums
    if cnums and dnums and not cnums <= dnums:
        return "another number for the same thing"
    # "Let the Mandarin tutoring lapse" over "Learning Mandarin with a tutor".
    if c.ending and not d.ending:
        return "ends the state"
    # Two dates set for the thing asked about ("PhD viva scheduled for 3 June" / "The examiners
    # moved the viva to 9 September"): the newer plan is the plan.
    if "schedule" in c.attrs & d.attrs & q.families:
        return "another date for the same thing"
    # The newer one gives the attribute asked for and the older gives none ("What is the app
    # called?": "went live under the name Thimble" / "an app she calls Larkspur").
    if q.families & c.attrs and not q.families & d.attrs:
        return "the asked attribute for the same thing"
    return None


def _protected(c: _Said, d: _Said, q: Asked) -> bool:
    """Whether `d` gives a value of an attribute the question asks about and `c` does not: then
    `c` answers something else ("Where is Bob?": "Lives in Lyon" over a newer "Allergic to ...")."""
    return bool(q.families & d.attrs) and not q.families & c.attrs


# The rules' trap guards, named (wave 11): where a newer statement must not answer in place of an
# older one whatever else says so. recall/learned.py's pair model acts only past them.
SOMEONE_ELSE = "about someone else"
AN_ADDITION = "an addition"
ANOTHER_ATTRIBUTE = "another attribute"
UNREAD_ATTRIBUTE = "the asked attribute, unread in it"
NOT_ASKED = "an attribute not asked"
A_THING_IT_LACKS = "the older holds a thing asked that it lacks"
AN_INSTANCE = "something done once"
NO_QUESTION_WORD = "no word of the question, the older some"
GUARDS = (SOMEONE_ELSE, AN_ADDITION, ANOTHER_ATTRIBUTE, UNREAD_ATTRIBUTE, NOT_ASKED, A_THING_IT_LACKS, AN_INSTANCE,
          NO_QUESTION_WORD)
# Wave 20: one occasion beside the habit it departs from (`_over_occasion`); named apart from GUARDS,
# whose order bench/truth_learn.py's --guards numbers (recall/learned.py lists it after its own).
ONE_OCCASION = "one occasion beside the habit it departs from"


def refusals(c: _Said, d: _Said, q: Asked) -> tuple[str, ...]:
    """Which of the rules' trap guards refuse `c`, newer, the place of `d` (a plan, a wish, a pending
    or retold change is no `mover` and never gets here): `c` about someone else than `d` or than the
    entity it is filed under ("@Linnea: @Anders opened his own studio"); an addition ("also",
    "still"); `d` gives an attribute the question asks about and `c` none (`_protected`: "Lives in
    Lyon" / "Allergic to cats"); `d` holds a word of the question naming a thing `c` lacks ("Does Ugo
    still have the Vespa?": "Sold the old garage fridge"); `c` reports something done once that ends
    nothing and names no thing asked with `d` ("Sang a solo at the choir's Easter concert" over
    "Sings soprano in the Cathedral choir"); `c` gives only attributes the question does not ask;
    `c` holds no word of the question and `d` some. Mostly the readings `_same_thing`, `_typed` and
    `_protected` refuse on; one name per guard, every one that applies."""
    out: list[str] = []
    if not (c.own and c.subject and c.subject == d.subject):
        out.append(SOMEONE_ELSE)
    if is_additive(c.text):
        out.append(AN_ADDITION)
    # `_protected`, told apart by what is read of `c`: another attribute ("Allergic to cats" for
    # "Where is Bob?") or none at all (its words for the asked one unknown to parse.attributes).
    if _protected(c, d, q):
        out.append(ANOTHER_ATTRIBUTE if c.attrs else UNREAD_ATTRIBUTE)
    # `c` gives attributes, none of them asked ("Works as a quantity surveyor" for "How many
    # children does Kagiso have?"), whatever `d` gives.
    if q.families and c.attrs and not q.families & c.attrs:
        out.append(NOT_ASKED)
    if _names_thing(d.asked - c.asked - _LIGHT):
        out.append(A_THING_IT_LACKS)
    # Wave 11, read off the guarded model's losses: `c` holds no word of the question and `d` some,
    # attribute words too ("When is the Orchard retro?": "Standup moved to 10:15" over "Retro is
    # every other Friday at 16:00"; "When is Esme's wedding?": "Hen party on 15 August").
    if d.asked and not c.asked:
        out.append(NO_QUESTION_WORD)
    if _an_instance(c, q, _names_thing(c.asked & d.asked - _LIGHT), _named_anew(c, d)):
        out.append(AN_INSTANCE)
    if c.occasion and _over_occasion(d, c, q):
        out.append(ONE_OCCASION)
    return tuple(out)


def _ends_while(c: _Said, d: _Said) -> str | None:
    """Why `c`, newer, goes ahead of `d`, a state that holds until something else happens (parse.dates
    `end_condition`: "Staying with his parents until the renovation is done"), when `c`, of the same
    subject, reports that thing ("Renovation finished; back home in Skibbereen"): the while is over,
    whatever attribute either gives. Ranking only: the stay is not marked replaced (the index's links
    do not ask this), so it is still returned, below."""
    if d.ends_on and c.subject and c.subject == d.subject and c.own and d.own and not c.ends_on and d.ends_on & c.words:
        return "what the while waited on"
    return None


def _resumes(c: _Said, d: _Said) -> bool:
    """Whether `c` is the value of an attribute that a temporary statement `d` interrupted and
    that holds again now `d` is over ("Drives a blue Skoda estate" after "Borrowing his sister's
    Fiat until around 6 March"), whatever their ages."""
    return OPEN_EXPIRY and d.over and not c.for_now and bool(c.subject) and c.subject == d.subject and c.kind == d.kind \
        and bool(c.attrs & d.attrs)


def _answers_instead(c: _Said, d: _Said, q: Asked) -> bool:
    """Whether `c` goes ahead of `d`, said the same day about the same subject, because it gives
    the attribute the question asks about and `d` does not ("Where does Isidora work?": "Pharmacist
    at the Boots in Bath" over "Swims at the Thermae spa on her birthday", written in one log),
    unless `d` holds a word of the question `c` lacks. Neither is newer, so
    recency cannot order them; a weak family (likes, health, ...) counts only against a statement
    giving no attribute at all."""
    if not SAME_DAY_ATTRIBUTE or not c.ev or c.ev != d.ev or not c.subject or c.subject != d.subject:
        return False
    if _gives_instead(c, d, q):
        return True
    fams = q.families & c.attrs
    if not fams or q.families & d.attrs or (fams <= attributes.WEAK and d.attrs):
        return False
    # Any word of the question only `d` holds keeps it first: a question's stem can look like a
    # family's word and still name a thing ("Where is Ines's bakery?": "baker").
    return d.asked <= c.asked


def _gives_instead(c: _Said, d: _Said, q: Asked) -> bool:
    """Whether `c` gives a value of the type the question asks for (parse/answers.py: a time, an
    amount, a place, a name) and `d`, of the same subject, kind and day, gives none, holding no word
    of the question `c` lacks ("What is Fionnuala's rent?": "Pays €1,450 a month for a two-bed"
    over "Cycles to work along the Grand Canal"): not something done once (SAME_DAY_TYPED)."""
    if not (SAME_DAY_TYPED and TYPED_ANSWERS and q.expects - _POLARITY and c.kind == d.kind) or _done(c):
        return False
    if not d.asked <= c.asked:
        return False
    return _gives_where_none(c, d, q)


# A state waiting on an outcome ("his A2 test is booked for April", "Waiting on her citizenship
# decision", "the hearing is due in May"): what comes of it is a later report.
_AWAITS = lazy(r"\b(?:booked (?:for|in)|waiting (?:on|for)|awaiting|pending|(?:is|are) due|scheduled for|"
               r"(?:test|exam|hearing|decision|result|results|interview|appeal|vote) (?:is|are) (?:on|in|next|this)\b)",
               re.I)


def _resolves(c: _Said, d: _Said, q: Asked) -> str | None:
    """Why `c`, newer, answers a yes/no question in place of `d` that waited on an outcome (RESOLVED):
    both of one subject and kind, `d` waiting on something (_AWAITS: "his A2 test is booked for
    April"), `c` a later word on the same thing: a name or another @entity both give ("Passed the A2
    at the second attempt"), however it is worded. Not a plan or a wish (the intention guard)."""
    if not (RESOLVED and "polarity" in q.expects and c.subject and c.subject == d.subject and c.kind == d.kind):
        return None
    if _AWAITS.search(d.text) is None:
        return None
    names = answers.values(c.text, "name") & answers.values(d.text, "name")
    if names or c.ents & d.ents - {c.subject}:
        return "the outcome it waited on"
    return None


def _before_someone_else(c: _Said, d: _Said, q: Asked) -> bool:
    """Whether `c`, about the entity the question names, goes ahead of `d`, filed under that entity
    but about someone else ("Where does Linnea work?": "@Linnea: Left Spotify; joined Klarna" over
    "@Linnea: @Anders works as a carpenter"), whatever their ages: unless `d` holds a word of the
    question `c` lacks that names no attribute ("Where does Kira's brother live?") or gives the
    asked attribute where `c` does not."""
    if q.relative and RELATION_SUBJECT:
        # "Where does Zoe's son live?" asks about her son: his lines go ahead of hers, not hers of his.
        return c.subject == q.relative != d.subject and not _protected(c, d, q)
    if not (c.own and c.subject in q.entities and d.subject not in q.entities):
        return False
    return all(attributes.vocabulary(st) for st in d.asked - c.asked) and not _protected(c, d, q)


def _plain_pair(c: _Said, d: _Said) -> bool:
    """Whether `c` may pass `d` by meaning alone: both about the entity they are filed under, one
    subject, one kind, both dated and `c` on a later day (no planned date, no same-day tie), and `c`
    a plain statement of how things stand: not temporary, not something done once, not an addition.
    Plans and pending changes never get here (`_Said.mover`)."""
    return bool(c.own and d.own and c.subject and c.subject == d.subject and c.kind == d.kind and c.ev and d.ev
                and c.ev > d.ev and not c.for_now and not _done(c) and not is_additive(c.text))


def newer_first(cands: list[Candidate], q: Asked, replaced: frozenset[int] = frozenset(),
                past: frozenset[int] = frozenset(), pending: frozenset[int] = frozenset(),
                same_question: Callable[[int, int], str | None] | None = None, stored: bool = False,
                readings: dict[int, _Said] | None = None, known: dict[int, Reading] | None = None) -> list[Candidate]:
    """Newer event time wins where two candidates answer the same question about the same entity:
    walking the head of the ranking, a candidate goes ahead of the first older one above it that
    - shares an entity with it and scores within RECENCY_MARGIN of it (a close call), or
    - is about the same subject (parse.entities.subject) and, with ATTRIBUTE_RECENCY on, gives a value of
      the same attribute (`_same_thing`: an attribute family the question asks about, a
      "currently ..." statement it speaks of, or neither holding a question word but the name), or
    - both naming none, matches the same question words and scores within UNTYPED_MARGIN of it.
    A statement without an event time is placed by when it was recorded; one about someone else
    than the entity it is filed under ("Her sister @Ana lives in Porto", "@Linnea: @Anders opened
    his own studio") passes only statements about that someone else; a `past` one (its window is
    over) never moves ahead; a `replaced` statement shown on purpose (all that matched) is never
    passed by its heirs; a `pending` one (a change not yet in effect) moves ahead of nothing, and
    what it will change may go ahead of it as of a statement that holds again (`_resumes`).
    `same_question` (hybrid recall: recall/meaning.py) is one more reason for a pair of plain
    statements (`_plain_pair`) no rule of words relates. `stored`: as for `settle` (the rows'
    `last_day` column answers `_said`'s "holds for a while only" where it can). `known`: the head's
    readings as the index stored them by row id (index/readings.py; a row without one is read)."""
    if RECENCY_MARGIN <= 0 and UNTYPED_MARGIN <= 0 and not ATTRIBUTE_RECENCY or len(cands) < 2:
        return cands
    head, tail = cands[:RECENCY_TOP], cands[RECENCY_TOP:]
    gone = set(past) | pending
    out: list[Candidate] = []
    keys: list[tuple[_Said, frozenset[str]]] = []
    for c in head:
        me = _said(c, q, gone, stored, known.get(c.row[ID]) if known and not c.uncommitted else None)
        if readings is not None and not c.uncommitted:
            readings[c.row[ID]] = me  # as read, for recall/learned.py's pair test after these rules
        words = frozenset() if me.ents or UNTYPED_MARGIN <= 0 or c.uncommitted else frozenset(
            st for st in q.stems if covered((c.row[CONTENT] or "").lower(), {st}))
        at = len(out)
        if me.mover and (me.ev or me.ents):
            for j, d in enumerate(out):
                them, dwords = keys[j]
                if d.score is None or d.uncommitted or d.row[ID] in replaced:
                    continue
                if me.ents & them.ents and (_before_someone_else(me, them, q) or _resumes(me, them)
                                            or _answers_instead(me, them, q) or _answers_at_all(me, them, q)
                                            or _counts_where_none(me, them, q)
                                            or not them.asserts and _over_unasserted(me, them, q)
                                            or them.occasion and _over_occasion(me, them, q)):
                    at = j
                    break
                if not _later(me, them) or me.occasion and _over_occasion(them, me, q):
                    continue
                if me.ents & them.ents:
                    why = (_same_thing(me, them, q) or _typed(me, them, q) or _traded(me, them)
                           or _resolves(me, them, q) or _old_value_ended(me, them) or _ends_predicate(me, them, q)
                           or _ends_while(me, them) or _told_anew(me, them, q) or _starts_work(me, them, q)
                           or _abstains(me, them, q)) \
                        if ATTRIBUTE_RECENCY else None
                    if why is None and same_question is not None and _plain_pair(me, them):
                        why = same_question(me.rid, them.rid)  # meaning (recall/meaning.py)
                    if why is not None:
                        if why == ON_THE_SAME_THING:
                            # It stands for the answer it passed: what it passes next must pass that.
                            me = me._replace(attrs=me.attrs | (q.families & them.attrs))
                        at = j
                        break
                    if not me.own or _protected(me, them, q):
                        continue
                    margin = RECENCY_MARGIN
                elif _own_opinion(me, them, c, d):
                    at = j
                    break
                elif not me.ents and not them.ents and me.ev and them.ev and len(words & dwords) >= RECENCY_SHARED:
                    margin = UNTYPED_MARGIN
                else:
                    continue
                if margin > 0 and c.score is not None and c.score >= d.score * (1 - margin):
                    at = j
                    break
        out.insert(at, c)
        keys.insert(at, (me, words))
    return out + tail


def heirs(links: dict[int, Link], ids: set[int]) -> list[int]:
    """The statements that replaced the candidates `ids` in the end (a link followed to the
    newest statement: Porto -> Lisbon -> Madrid), that are not among `ids` themselves."""
    return sorted({_last(links, i) for i in ids if i in links} - ids)


def _last(links: dict[int, Link], i: int) -> int:
    seen = {i}
    while i in links and links[i].new not in seen:
        i = links[i].new
        seen.add(i)
    return i


class Settled(NamedTuple):
    """What `settle` returns: the candidates in their settled order, the past ones' end days, the
    changes not yet in effect (`not_yet`), and how many leading places of `cands` are exactly as if
    every candidate had been settled (all of them unless `reach` was given)."""

    cands: list[Candidate]
    past: dict[int, str]
    waiting: frozenset[int]
    exact: int
    least: float | None = None  # with `reach`: the reach-th best dated score not replaced (None: all were dated)


def held_then(cands: list[Candidate], links: dict[int, Link], fetched: dict[int, Any],
              window: tuple[date, date] | None) -> frozenset[int]:
    """The replaced candidates a question about a past window asks for: those that held in it and
    were replaced only after it. "Where did Alice live in November", asked in December: the Porto
    line held then, whether it was written on Nov 3 or in June, since the move to Madrid that
    replaced it came on Dec 5 (issue 13: an answer about a time uses what held then). Of the lines
    one statement replaced in the end (Lyon in 2024, Porto in June, both replaced by the Madrid
    move), one written before the window held through it only if none of them came later and
    still before the window's end: November is Porto's, not Lyon's."""
    if window is None or not WINDOW_KEEPS or not links:
        return frozenset()
    rows = {c.row[ID]: c.row for c in cands if not c.uncommitted}
    inside: set[int] = set()
    heirs_inside: set[int] = set()
    before: dict[int, tuple[date, int]] = {}  # last heir -> the latest line it replaced from before the window
    for i, row in rows.items():
        if i not in links:
            continue
        mine = day_of(row)
        last = _last(links, i)
        heir = rows.get(last, fetched.get(last))
        theirs = day_of(heir) if heir is not None else None
        if mine is None or theirs is None or not mine <= window[1] < theirs:
            continue
        if window[0] <= mine:
            inside.add(i)
            heirs_inside.add(last)
        elif last not in before or before[last][0] < mine:
            before[last] = (mine, i)
    return frozenset(inside | {i for last, (_, i) in before.items() if last not in heirs_inside})


def _ahead_of_heirs(cands: list[Candidate], heir_of: dict[int, int]) -> list[Candidate]:
    """`held_then`'s statements each moved just ahead of its heir where the heir ranks above it: a
    question about the window asks for the one that held then, and a line written before the window
    has no time credit of its own to rank it there."""
    out = list(cands)
    for i, heir in heir_of.items():
        at = {c.row[ID]: n for n, c in enumerate(out) if not c.uncommitted}
        if i in at and heir in at and at[heir] < at[i]:
            out.insert(at[heir], out.pop(at[i]))
    return out


def settle(cands: list[Candidate], links: dict[int, Link], fetched: dict[int, Any], day: str,
           include_history: bool, reach: int | None = None, stored: bool = False,
           window: tuple[date, date] | None = None) -> Settled:
    """Order the (collapsed) candidates by currency.

    A replaced statement hands its score to the statement that replaced it (taken from the pool,
    else from `fetched`): "Where does Alice live?" matches "Lives in Porto" by its words, and
    "Moved to Madrid" is the answer to that same question now.

    `reach`: the caller reads only the first `reach` places that are not replaced (at least
    2 x RECENCY_TOP): only the candidates that could still reach them are read for their time
    window (`_settle_head`), the rest follow in their given order. Those places are exactly as if
    every candidate had been read; `exact` says how far that holds, and `least` is the score a
    candidate must beat to take one of them (a candidate left out whose `best_case` is below it
    could not have).

    `stored`: the committed rows' `last_day` column holds their reading (the index's rules are
    this code's): `_last_day`.

    `window`: the days the question's time words name. A replaced statement that held in them and
    not after (`held_then`) stands as if current, in its own place and with its own score, and lends
    its heir nothing: the window asks what held then. It is still marked superseded (the caller's
    links)."""
    past: dict[int, str] = {}
    held = held_then(cands, links, fetched, window)
    heir_of = {i: _last(links, i) for i in held}
    if held:
        links = {i: link for i, link in links.items() if i not in held}
    cands = [c for c in cands if says_something(c.row[PATH], c.row[CONTENT])]
    by_id = {c.row[ID]: c for c in cands if not c.uncommitted}
    matched = set(by_id)
    # The heir is lifted to the score of the statement it replaced. With history asked for the
    # replaced one stays, marked, right under its heir (what holds now first: `recall "Alice tea"
    # --include-history` puts the coffee opinion above the tea one it replaced); only an heir that
    # matched itself is lifted then (no statement is added that the words did not find).
    for i in [i for i in by_id if i in links]:
        c = by_id[i]
        heir = _last(links, i)
        target = by_id.get(heir)
        if target is None and heir in fetched and not include_history:
            target = by_id[heir] = Candidate(fetched[heir], None)
            cands.append(target)
        if target is not None and c.score is not None:
            target.score = max(target.score or 0.0, c.score)
    least = None
    if reach is None or include_history or len(cands) <= reach:
        for c in cands:
            _date(c, day, past, stored)
        # With history, at one score a replaced statement follows: its heir was lifted to its score.
        if include_history:
            cands.sort(key=lambda c: (-(c.score or 0.0), not c.uncommitted and c.row[ID] in links))
        else:
            cands.sort(key=lambda c: -(c.score or 0.0))
        exact = len(cands)
    else:
        cands, least = _settle_head(cands, links, day, reach, past, stored)
        exact = len(cands) if least is None else reach  # fewer places than `reach` to fill: all were dated
    # Only the head can be moved by `newer_first` (RECENCY_TOP, with room for what collapsing copies
    # drops): reading every candidate cost ~10% of a recall's CPU at 1M lines (600 per question).
    if held:
        cands = _ahead_of_heirs(cands, heir_of)
    waiting = frozenset(c.row[ID] for c in cands[:2 * RECENCY_TOP]
                        if not c.uncommitted and c.score is not None and not_yet(c.row, day))
    if not links:
        return Settled(cands, past, waiting, exact, least)
    current = [c for c in cands if c.uncommitted or c.row[ID] not in links]
    replaced = [c for c in cands if not c.uncommitted and c.row[ID] in links]
    if not any(c.uncommitted or c.row[ID] in matched for c in current):
        # Everything that matched was replaced: it is the answer, marked, followed by its heirs.
        return Settled(replaced + current, past, waiting, len(replaced) + exact, least)
    if include_history:
        return Settled(cands, past, waiting, exact, least)
    return Settled(current, past, waiting, exact, least)


def _date(c: Candidate, day: str, past: dict[int, str], stored: bool) -> None:
    """A statement that holds for a while only (`bounded`): its score halved once that while is
    over (its last day into `past`), raised while it lasts."""
    if c.uncommitted or c.score is None:
        return
    state = bounded(c.row, day, stored)
    if state is not None and state[0] == "past":
        past[c.row[ID]] = state[1]
        c.score *= PAST_FACTOR
    elif state is not None:
        c.score *= ACTIVE_FACTOR


def best_case(score: float) -> float:
    """The most `settle`'s dating can make of a score (a z-score may be negative: halving raises it)."""
    return max(score, score * PAST_FACTOR, score * ACTIVE_FACTOR)


def worst_case(score: float) -> float:
    """The least `settle`'s dating can make of a score."""
    return min(score, score * PAST_FACTOR, score * ACTIVE_FACTOR)


def _settle_head(cands: list[Candidate], links: dict[int, Link], day: str, reach: int,
                 past: dict[int, str], stored: bool) -> tuple[list[Candidate], float | None]:
    """`cands` with those that can reach the first `reach` places not replaced dated (`_date`) and
    sorted as `settle` sorts all, followed by the others in their given order; and the reach-th
    dated score not replaced (None when fewer are not replaced: every candidate was dated). Read best score
    first: dating multiplies a score by PAST_FACTOR, ACTIVE_FACTOR or 1, so once even the best of
    those for a candidate is below the reach-th dated score, it and every candidate after it (no
    better) stay below those places. Replaced ones are all dated: when everything that matched
    was replaced they come first. At 1M lines a hybrid question's ~1,150 candidates were each read
    for a time window (~5 ms); ~100-200 are now."""
    import heapq

    done = [False] * len(cands)
    kept: list[float] = []  # min-heap: the `reach` best dated scores of candidates not replaced
    for i in sorted(range(len(cands)), key=lambda i: -(cands[i].score or 0.0)):
        c = cands[i]
        if len(kept) >= reach and best_case(c.score or 0.0) < kept[0]:
            break
        _date(c, day, past, stored)
        done[i] = True
        if c.uncommitted or c.row[ID] not in links:
            (heapq.heappush if len(kept) < reach else heapq.heappushpop)(kept, c.score or 0.0)
    for i, c in enumerate(cands):
        if not done[i] and not c.uncommitted and c.row[ID] in links:
            _date(c, day, past, stored)
            done[i] = True
    head = [c for c, d in zip(cands, done) if d]
    head.sort(key=lambda c: -(c.score or 0.0))  # stable: equal scores keep their order in `cands`, as in settle
    return head + [c for c, d in zip(cands, done) if not d], kept[0] if len(kept) >= reach else None
