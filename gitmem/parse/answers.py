"""Typed answers: what kind of value a question asks for, and the values of that kind a statement gives.

"When does Wanjiru go to the gym?" asks for a time; "Goes to the gym at 6 a.m." and "Her gym slot is
7 p.m. after work" both give one, and give two different ones. "What OS is on Lotte's laptop?" asks
for a name of a thing; "Her laptop runs Windows 11" and "Switched the laptop over to Fedora" both
give one. Recall (currency.newer_first) reads the question's type and compares the two statements'
values of it: two statements about one subject that both answer the question, with different values,
are two values of one slot, whatever words they say it in (no word list per attribute: the types are
shapes of an answer, read from the text). Ranking only; nothing is hidden on this evidence.

Types (`expects`):
- "time": when / what time / which day; values are clock times, weekdays, parts of the day, months;
- "money": how much, rent, price, cost, fee, pay; values are amounts in a currency;
- "place": where; values are the capitalised words after a preposition ("in Split", "on Samsø",
  "in the Trafford Centre");
- "name": "what is X called", "which/what <noun> ..."; values are capitalised words not at the start
  of a sentence and not an @mention ("Fedora", "Galaxy S25", "Spotify Individual");
- "email" (wave 20, read of statements only, never asked for: recall/currency.py `_told_anew`): an
  email address ("isidor@brandl-tischlerei.at");
- "polarity": a yes/no question about a state ("Does Folake sing in a choir?", "Is Njeri seeing
  anyone?"); the value is "no" when the statement ends a state ("Gave the choir her last Sunday",
  "Split up with @Rafferty": attributes.ENDS_STATE and the endings of a relationship, a stay, a last
  time) or a plan ("The Vienna plan is off", "Deferred her entry to 2027", "called off"), else "yes".
Imports only the parse layer (the bottom of the import order).
"""

from __future__ import annotations

import re
from functools import lru_cache

from gitmem.lazyre import lazy
from gitmem.parse.attributes import ENDS_STATE, singular

_WHEN = lazy(r"^\s*when\b(?!\s+(?:did|was|were|had)\b)|\bwhat time\b|\b(?:which|what) days?\b", re.I)
_MONEY = lazy(r"\bhow much\b|\b(?:rent|price|prices|cost|costs|fee|fees|pay|pays|paid|salary|subscription|earn|earns|charge|charges)\b",
              re.I)
# A yes/no question about how things stand (not "did/was": a past event).
_YES_NO = lazy(r"^\s*(?:does|do|is|are|has|have)\b", re.I)
# Endings ENDS_STATE does not list: of a relationship, of a place left, of a last time.
_ENDED = lazy(r"\b(?:split up|splits up|broke up|broken up|separated|left|moved out|(?:his|her|their|my) last|"
              r"any ?more|called off|(?:deferr|postpon)(?:ed|es|ing)|put off|pushed back|pulled out|withdr[ea]w|"
              r"withdrawn|(?:is|are|was|were|'s) (?:now |all )?off(?=\s*(?:[;,.!]|$)))", re.I)
_WHERE = lazy(r"^\s*where\b", re.I)
# "What is the podcast called?", "Which Spotify plan ...", "What phone does Xavier use?": a name of
# a thing; not "what does X think" nor "what is X's rent" (an auxiliary, not a noun, follows).
_NAME = lazy(r"\bcalled\b|\bnamed?\b|^\s*(?:what|which)\s+(?!(?:does|do|did|is|are|was|were|has|have|had|kind|sort|"
             r"type|time|days?|can|could|would|will|should)\b)[\w-]+", re.I)

# "What does Quang drive?": the question ends on its verb, so the answer is the verb's object, a
# thing (often named: "a Renault Trafic"). Not what someone does, thinks, feels, says or likes.
_WHAT_OBJECT = lazy(r"^\s*what\s+(?:does|do)\s+@?[\w'’-]+\s+(?!(?:do|think|feel|say|mean|like|love|prefer|want|need|"
                    r"make|have|get|teach|study|weigh|charge|cost|pay)\b)[a-z]+\s*\?\s*$", re.I)

# A clock time ("6 a.m.", "7pm", "18:30"), a weekday, a part of the day or a month.
_TIME_VALUE = lazy(r"\b\d{1,2}(?::\d{2})?\s*[ap]\.?m\b\.?|\b\d{1,2}:\d{2}\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|"
                   r"\b(?:mornings?|afternoons?|evenings?|nights?|lunchtimes?|weekends?)\b|"
                   r"\b(?:january|february|march|april|june|july|august|september|october|november|december)\b", re.I)
# An amount in a currency: "£35", "$1,200", "780 euros", "12 EUR".
_MONEY_VALUE = lazy(r"[£$€¥]\s?\d[\d,.]*|\b\d[\d,.]*\s?(?:euros?|eur|pounds?|quid|gbp|dollars?|usd|kroner|krona|kronor|"
                    r"francs?|chf|zloty|yen|rupees?|lei|rand)\b", re.I)
# A capitalised word after a preposition, a determiner or a possessive and up to two words between
# ("In Split", "at a hotel on the Riva", "in the Álvaro Cunqueiro hospital").
_PLACE_VALUE = lazy(r"\b(?:in|at|to|on|near|outside|from|off)\s+(?:(?:the|a|an|his|her|their|my|our)\s+)?"
                    r"(?:[\w'-]+\s+){0,2}?([^\W\d_][\w'-]*)", re.I)
_WORD = lazy(r"@?[^\W\d_][\w'-]*|\d[\w.-]*")
# An email address (not an @mention: something stands before the "@").
_EMAIL = lazy(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A sentence's start (the statement's own, after an "@Name:" prefix, a full stop or a semicolon).
_STARTS = frozenset((".", ";", ":", "!", "?"))


def expects(question: str) -> frozenset[str]:
    """The types of value a question asks for (empty: none this module reads)."""
    out = set()
    if _WHEN.search(question):
        out.add("time")
    if _MONEY.search(question):
        out.add("money")
    if _WHERE.search(question):
        out.add("place")
    if _NAME.search(question) or _WHAT_OBJECT.search(question):
        out.add("name")
    if _YES_NO.search(question):
        out.add("polarity")
    return frozenset(out)


@lru_cache(maxsize=8192)
def values(text: str, kind: str) -> frozenset[str]:
    """The values of type `kind` a statement gives, lowercased ("Her gym slot is 7 p.m." -> {"7 p.m"})."""
    if kind == "time":
        return frozenset(" ".join(m.group().lower().rstrip(".").split()) for m in _TIME_VALUE.finditer(text))
    if kind == "money":
        return frozenset(re.sub(r"[\s,]", "", m.group().lower()) for m in _MONEY_VALUE.finditer(text))
    if kind == "place":
        return frozenset(w.lower() for m in _PLACE_VALUE.finditer(text) if m.group(1)[0].isupper()
                         for w in _capitalised_run(text, m.start(1))) - values(text, "time")
    if kind == "name":
        return _names(text) - values(text, "time")
    if kind == "email":
        return frozenset(m.group().lower() for m in _EMAIL.finditer(text))
    if kind == "polarity":
        return frozenset(("no",)) if ENDS_STATE.search(text) or _ENDED.search(text) else frozenset(("yes",))
    return frozenset()


# Numbers in words, by their digits (recall/currency.py reads a statement's numbers with them).
NUMBER_WORDS = {w: str(n) for n, w in enumerate("zero one two three four five six seven eight nine ten eleven "
                                                "twelve".split())} | {
    "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
    "ninety": "90", "hundred": "100"}
# An ordinal before a noun counts it (wave 20): "Adopted a third cat" has three cats, "Finished her
# fifth marathon" has run five.
_ORDINALS = {w: str(n) for n, w in enumerate("first second third fourth fifth sixth seventh eighth ninth tenth eleventh "
                                             "twelfth".split(), 1)}
_ORDINAL = lazy(r"\b(" + "|".join(_ORDINALS) + r")\s+(?:[a-z-]+\s+)?([a-z][\w-]*)", re.I)


def ordinal_counts(text: str) -> frozenset[tuple[str, str]]:
    """(noun, count) an ordinal before a noun gives, the noun singular ("a third cat" -> ("cat", "3");
    one word may stand between: "her fourth full marathon" gives ("marathon", "4") and ("full", "4"))."""
    out: set[tuple[str, str]] = set()
    for m in _ORDINAL.finditer(text):
        n = _ORDINALS[m.group(1).lower()]
        out.add((singular(m.group(2).lower()), n))
        nxt = text[m.end(1):].split()
        if nxt:
            out.add((singular(nxt[0].lower().strip(".,;:")), n))
    return frozenset(out)


# A value told as reached (wave 20): "to X" after "up" / "down" or a verb ("bumped to 61k", "cut to
# five", "raising the rent to 1,050", "moved the viva to 9 September"), or a clause saying "now" or
# "new" ("so she has eight people now", "new slot is 17 April", "New rate card: 55 an hour") or
# "instead" ("use gh@hollowmere.org instead"). The
# verb is read by its form (-ed, -ing, or the few irregular ones), no list of verbs of change.
_REACHED = lazy(r"\b(?:up|down|[a-z]+ed|[a-z]+ing|cut|put|set|went|goes)\s+(?:[\w'’,-]+\s+){0,3}?to\s+"
                r"(?=[£$€¥]?\d|(?:" + "|".join(w for w in NUMBER_WORDS if w != "zero") + r")\b|[A-Z][a-z]+\s+\d)|"
                r"\bnow\b|\bnew\b|\binstead\b", re.I)
_REACHED_HINTS = (" to ", "now", "new", "instead")  # `_REACHED`'s words, as substrings
# Clauses: a semicolon, a sentence's end, a comma before a space (not the one inside "1,290").
_CLAUSE_END = lazy(r"[;!?]|\.(?:\s|$)|,\s")
# What an amount is counted in: a currency, thousands ("61k"), a period ("a month", "an hour").
_AMOUNT_UNIT = lazy(r"[£$€¥]|\b\d[\d,.]*\s?(k|m)\b|\b(?:a|an|per)\s+(month|week|year|hour|day|session|lesson)\b|"
                    r"\b\d[\d,.]*\s?(euros?|eur|pounds?|quid|gbp|dollars?|usd|kroner|krona|kronor|francs?|chf|zloty|yen|"
                    r"rupees?|lei|rand)\b", re.I)


@lru_cache(maxsize=4096)
def reached(text: str) -> tuple[str, ...]:
    """The stretches of a statement that tell a value as reached (`_REACHED`): from the "to" form or
    "new" on to the end of its clause, or the whole clause saying "now" ("Hospital rang, cancelled
    again; new slot is 17 April" -> ("new slot is 17 April",)). Empty: none."""
    low = text.lower()
    if not any(h in low for h in _REACHED_HINTS):
        return ()
    out: list[str] = []
    start = 0
    for end in [m.start() for m in _CLAUSE_END.finditer(text)] + [len(text)]:
        clause = text[start:end]
        m = _REACHED.search(clause)
        if m is not None:
            out.append(clause if m.group().lower() in ("now", "instead") else clause[m.start():])
        start = end + 1
    return tuple(out)


# A day of a month, "May" too ("19 May", "May 19th", "3 March"; `values` leaves "may" alone: a modal).
_DAY_MONTH = lazy(r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|"
                  r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s+\d{1,2}(?:st|nd|rd|th)?\b", re.I)


def days_given(text: str) -> frozenset[str]:
    """The months of the days of a month a statement names, lowercased, three letters ("slot is 19 May"
    -> {"may"}; "Opening October 15" -> {"oct"})."""
    return frozenset((m.group(1) or m.group(2)).lower() for m in _DAY_MONTH.finditer(text))


def amount_units(text: str) -> frozenset[str]:
    """What the amounts of a statement are counted in, lowercased: "€", "k", "month", "euro"
    ("Pays 640 euros a month" -> {"month", "euro"}): two amounts in disjoint units are of two things."""
    out: set[str] = set()
    for m in _AMOUNT_UNIT.finditer(text):
        u = next((g for g in m.groups() if g), m.group()).lower()
        out.add(u[:-1] if u.endswith("s") and len(u) > 3 else u)
    return frozenset(out)


def _capitalised_run(text: str, at: int) -> list[str]:
    """The capitalised words from `at` on ("Kew Gardens", "Trafford Centre"): a place's whole name."""
    out = []
    for m in _WORD.finditer(text, at):
        w = m.group()
        if not w[0].isupper() or text[at:m.start()].strip():
            break
        out.append(w.rstrip(".-'"))
        at = m.end()
    return out


def _names(text: str) -> frozenset[str]:
    """Capitalised words (and words with a digit next to one: "S25") that start no sentence and are
    no @mention: the names a statement gives."""
    out: set[str] = set()
    start = True
    prev_named = False
    for m in _WORD.finditer(text):
        w = m.group()
        j = m.start() - 1
        while j >= 0 and text[j].isspace():
            j -= 1
        if j >= 0 and text[j] in _STARTS:
            start = True
        if w.startswith("@"):
            start = prev_named = False
            continue
        named = (w[0].isupper() and not start and w != "I") or (prev_named and w[0].isdigit())
        if named:
            out.add(w.lower().rstrip(".-'"))
        prev_named = named
        start = False
    return frozenset(out)
