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
from gitmem.parse.attributes import ENDS_STATE

_WHEN = lazy(r"^\s*when\b(?!\s+(?:did|was|were|had)\b)|\bwhat time\b|\b(?:which|what) days?\b", re.I)
_MONEY = lazy(r"\bhow much\b|\b(?:rent|price|prices|cost|costs|fee|fees|pay|pays|paid|salary|subscription)\b", re.I)
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
    if kind == "polarity":
        return frozenset(("no",)) if ENDS_STATE.search(text) or _ENDED.search(text) else frozenset(("yes",))
    return frozenset()


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
