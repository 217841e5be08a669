"""Mood: statements that say nothing of how things stand now, however new the line.

One owner for these readings, at the bottom floor, because two layers ask them: the index's derived
supersession (index/supersede.py: such a line replaces nothing) and recall's ranking
(recall/currency.py: such a line never goes ahead of what holds).

- `intends`: a change wished, planned, pending, conditional or that did not happen.
- `plans` / `planned_target`: a statement that plans, and the target of a change it plans ("upgrade
  to 17 planned" -> "17"), which a later line may report carried out (supersession only, wave 22).
- `no_present_value`: a dream or a daydream, a bid that was lost, a story of the past retold, hearsay.
- `reported`: hearsay told by its grammar, someone else's belief or what they heard (recall only).
- `yearly`: a stay that comes back once a year (a value only of when: recall asks it per question).
Measured on bench/current_truth.py: see bench/RESULTS.md (wave 12).
"""

from __future__ import annotations

import re

from gitmem.lazyre import lazy

# A statement of an intention or a possibility ("Keeps saying he might move to Porto", "Thinking
# about selling the van"): no change has happened. Not "may" (the month) nor "could" alone ("Could
# not stand the noise" reports a past state). A pending step towards a change is no change either
# ("Applied for a curator post at the Uffizi; the interview is in April"), nor a condition ("would go
# in a heartbeat if the rent were under 1,000"), nor a change that did not happen ("Turned the Berlin
# offer down", "the sale fell through"). Not "called off" nor "pulled out": those end a state.
_SUBJECTS = "she|he|they|I|we"  # the subject pronouns, one spelling for every pattern below
_PERSON_SUBJ = f"(?:{_SUBJECTS})"
# "would", and its contraction after a word ("if she ever won the lottery she'd quit nursing"): in a
# condition the contraction is the conditional's auxiliary (or the "had" of a past one, "if he'd
# known": no statement of now either); outside one ("says he'd never go back to gas") it is not read.
_WOULD = r"(?:\bwould|(?<=\w)['’]d)"
_INTENT = lazy(r"\b(?:might|thinking (?:about|of)|considering|plans? to|planning to|hoping to|hopes to|"
               r"wants? to|would like to|keeps? saying|looking (?:at|into) (?:flats|houses|jobs|moving)|"
               r"toying with|weighing up|tempted)\b", re.I)
# A statement that is itself an intention of then or a condition, read from its opening (after the
# entity it is filed under and a subject pronoun or a verb of saying): the same verbs in the past
# ("Considered rewriting the backend in Go; decided it's not worth it"), the future of the past ("Was
# all set to move to Vilnius; the offer got pulled", "was going to"), a future on a condition ("Says
# if the Volvo fails its MOT he'll go cargo bike"). Only as the opening: a clause of it after a
# change ("Moved to Sligo; if the job works out she'll buy") leaves the change standing.
_THEN_OR_IF = lazy(r"^\s*(?:@[^\W\d_][\w-]*\s*:\s*)?(?:" + _PERSON_SUBJ + r"\s+)?(?:(?:says|said|reckons|thinks)\s+(?:that\s+)?)?"
                   r"(?:considered|toyed with|weighed up|(?:was|were)\s+(?:all\s+)?set\s+to|(?:was|were)\s+going\s+to|"
                   r"if\b[^.;]{0,80}(?:\bwill|" + _WOULD + r"|['’]ll|\bgoing to|" + _PERSON_SUBJ + r"['’]s\s+[a-z]+ing)\b)", re.I)
_NOT_HAPPENED = lazy(r"\b(?:appl(?:ied|ies|ying) (?:for|to)|(?:an?|second|third|final|job) interview|"
                     r"interview(?:ing)? (?:is|was|for|with|at)|shortlisted|"
                     + _WOULD + r"\b[^.;]{0,60}\bif|if\b[^.;]{0,60}" + _WOULD + r"|"
                     r"turned (?:\w+ ){0,3}down|declined (?:the|an|a|their|his|her) (?:\w+ )?offer|"
                     r"fell through|went to (?:an? |the )?(?:\w+ )?(?:candidate|applicant)|went to someone else|"
                     r"(?:didn't|did not|never) get (?:the|it))\b", re.I)
# Substrings every _NOT_HAPPENED match holds: a cheap test first (recall reads every head candidate).
_NOT_HAPPENED_HINTS = ("appl", "interview", "shortlist", "would", "'d ", "’d ", "turned", "declined", "fell through",
                       "went to", " get ")


def intends(content: str) -> bool:
    """Whether a statement says a change is wished, planned, pending, conditional or did not happen
    (_INTENT, _THEN_OR_IF, _NOT_HAPPENED): no change to rank ahead of what holds."""
    if _INTENT.search(content):
        return True
    low = content.lower()
    # Substrings every _THEN_OR_IF match holds, tested one by one (recall reads every head candidate:
    # a generator over a tuple of them cost ~1 us a text more).
    if ("if " in low or "consider" in low or "toyed" in low or "weighed" in low or " set " in low or "going to" in low) \
            and _THEN_OR_IF.match(content):
        return True
    return any(map(low.__contains__, _NOT_HAPPENED_HINTS)) and _NOT_HAPPENED.search(content) is not None


# A planned change and what it changes to (wave 22): "upgrade to 17 planned with the SSD swap", "Wants
# to move to Lisbon someday", "switching to Hetzner next month". Why: a later line that names the
# target where the plan's thing stood ("Now on ... Postgres 17") tells that the plan was carried out,
# and the state the plan was to change is no longer current (index/supersede.py `_carries_out`). A
# clause plans when it intends (`intends`), says "plan" or when the change is due; it names a change (a verb
# or its noun), up to two words, "to" and the target: the word after "to" (an article skipped), not a time.
_PLAN_WHEN = lazy(r"\b(?:plan(?:s|ned|ning)?|scheduled|pending|due(?! to\b)|soon|upcoming|in the works|on the cards|"
                  r"next (?:week|month|year|spring|summer|autumn|winter)|later this (?:week|month|year))\b", re.I)
# A time is no target: "The Ioannina move is pushed to next year" postpones a change.
_WHEN_WORD = (r"(?:next|this|later|early|late|mid|end|tomorrow|(?:19|20)\d\d|jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|"
              r"[a-z]{3,6}uary|march|april|june|july|august|[a-z]{3,6}ember|october|spring|summer|autumn|winter|"
              r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b")
_CHANGE_TO = lazy(r"\b(?:(?:upgrad|updat|mov|migrat|relocat|chang)(?:e|es|ing|ion)|switch(?:es|ing)?|convert(?:s|ing)?|"
                  r"transfer(?:s|ring)?|transition(?:s|ing)?)"
                  r"(?:\s+[\w'-]+){0,2}?\s+to\s+(?!(?:(?:an?|the)\s+)?" + _WHEN_WORD + r")(?:(?:an?|the)\s+)?(?!(?:an?|the)\b)"
                  r"([\w.-]*\w)", re.I)
_PLAN_CLAUSE = lazy(r"[;.!?](?:\s|$)|\s[–-]\s")


def plans(content: str) -> bool:
    """Whether a statement plans something: it intends (`intends`) or says "plan" or when a thing is
    due (`_PLAN_WHEN`: "Postgres 17 upgrade scheduled for the SSD swap")."""
    return _PLAN_WHEN.search(content) is not None or intends(content)


def planned_target(content: str) -> str | None:
    """The target, lower-cased, of a change a clause of `content` plans (`_CHANGE_TO` in a clause
    that `plans`): "upgrade to 17 planned" -> "17"; else None."""
    for clause in _PLAN_CLAUSE.split(content):
        m = _CHANGE_TO.search(clause)
        if m is not None and plans(clause):
            return m.group(1).lower()
    return None


# A dream, a daydream or a bid that was lost: "Daydreams about opening a dive shop on Flores", "Bid
# on a townhouse ... and was outbid". The verb of dreaming in any form, followed by what was dreamt
# (of / about / that, or the clause itself: "Dreamt she had quit teaching"), or "had a dream where";
# not the noun before a noun ("Landed her dream job": a real change) nor "dreamt up" (made up).
_PERSON = f"(?:{_SUBJECTS}|you|her|his|their|my|our)"
# The person may carry a contracted auxiliary ("Dreamt she'd moved back to Khovd": she had).
_DREAM = lazy(r"\b(?:day-?dream(?:s|ed|ing)?|dream(?:s|ed|ing|t)? (?:that |of |about |" + _PERSON + r"(?:['’][a-z]{1,2})? )|"
              r"(?:a|the) dream (?:that|where|in which|about)|fantasi[sz](?:es|ed|ing) about|"
              r"someday|some day|would love to|outbid|lost out|missed out|(?:bid|bids|made an offer|put in an offer) (?:on|for)|"
              r"(?:a|the) viewing|trial (?:service|shift|day|week|lesson))\b",
              re.I)
# A story retold: a verb of telling or remembering with a story or a span of a life ("Told us about
# the years he lived on a houseboat"), or a decade named as when: "in the nineties", or a decade of
# one's life after a past state ("lived on a boat in his twenties"; not "dating a lawyer in his
# forties", a description). A span of a life talked about is a story whatever the verb before it:
# "about" a span that a past clause or "as / at / in / when" defines ("went on about her years as a
# corporate lawyer", "Laughed about the year she lived in a hostel"); not "of her time in Leeds"
# ("Spends most of her time in Leeds" is how things stand).
_DECADE = r"(?:twen|thir|for|fif|six|seven|eigh|nine)ties"
_RETOLD = lazy(r"\b(?:(?:told|tells|telling|recounted|recounts|talked|talks|talking|spoke|speaks) (?:\w+ ){0,2}"
               r"(?:stor(?:y|ies)|(?:about|of) (?:the|those|his|her|their|my|our) (?:\w+ )?(?:years?|days|time|"
               r"summers?|winters?|months?|decade))|remembers|remembered|recalls|recalled|reminisc\w*|"
               r"(?:in|during|through) the (?:(?:19|20)?\d0'?s|'\d0s|" + _DECADE + r")|"
               r"about (?:the|those|his|her|their|my|our) (?:\w+ )?(?:years?|days|summers?|winters?) "
               r"(?:as|at|in|when|" + _PERSON_SUBJ + r" \w+ed)\b|"
               r"(?:lived|worked|spent|studied|was|were|had|owned|ran|taught)\b[^.;]{0,80}\b(?:in|during|through) "
               r"(?:his|her|their|my|our) " + _DECADE + r")\b", re.I)
# Substrings every _DREAM or _RETOLD match holds: a cheap test first.
_NO_VALUE_HINTS = ("dream", "fantasi", "some", "would love", "outbid", "lost out", "missed out", "bid", "offer",
                   "viewing", "trial", "stor", "told", "tell", "recount", "talk", "spoke", "speak", "remember",
                   "recall", "reminisc", "0s", "ties", "gossip", "rumo", "hearsay", "jok", "kidding", "jest", "cheek")
# A span of a life talked about (`_RETOLD`) holds "about " and "year", "days", "summer" or "winter".
# Hearsay: what others say may be so ("Office gossip says she's off to Leeds", "Rumour has it he's
# leaving") is no statement of how things stand.
_HEARSAY = lazy(r"\b(?:gossip|rumou?r(?:s|ed)?|hearsay)\b", re.I)
# A line its writer marks as a joke ("... moving to the Faroes with the sheep. (Joking.)", "joked that
# she'd retire to a yacht", "only kidding"): what it says is not so. Not the noun alone: "Tells jokes at
# the open mic on Fridays" is a habit.
_JOKE = lazy(r"\((?:half[- ])?jok(?:e|ing)[.!]?\)|\b(?:joked|jokes? that|jokingly|half[- ]joking|(?:only|just|was|were) "
             r"(?:joking|kidding)|in jest|tongue[- ]in[- ]cheek)\b", re.I)


# Hearsay told by its grammar (wave 18): someone else believes, suspects or heard it ("Her sous chef
# reckons she's being poached by a hotel in Benidorm", "@Oona thinks he has left the band"): a verb
# of belief or of hearing whose subject is another person, named by a possessive ("Her sous chef",
# "Tom's wife"), an @mention or no one in particular ("people", "word"), and then the clause believed.
# Not the filed person's own belief ("Thinks Santa Fe is overrun": an opinion, how things stand for
# them; "She reckons ..."), nor a verb of saying ("Her landlord says the rent goes up": told, not
# guessed), nor a bare capitalised word before the verb ("Still believes it ...": an adverb reads as one).
_REPORTED = lazy(r"^\s*(?:@[^\W\d_][\w-]*\s*:\s*)?"
                 r"(?:(?:[Hh]is|[Hh]er|[Tt]heir|[Mm]y|[Oo]ur|[A-Z][\w-]*['’]s)\s+(?:[\w'’-]+\s+){0,2}?[\w'’-]+|"
                 r"@[^\W\d_][\w-]*|[Ss]omeone|[Pp]eople|[Ee]veryone|[Ww]ord)\s+"
                 r"(?:reckon(?:s|ed)|thinks|thought|believe[sd]|suspect(?:s|ed)|claim(?:s|ed)|hears|heard|swears|swore|"
                 r"insist(?:s|ed)|guess(?:es|ed)|(?:is|was|are|were)\s+convinced)\s+(?:that\s+)?(?:she|he|they|it|@?[A-Z])\b")
# Substrings every _REPORTED match holds (its verbs' stems): a cheap test first.
_REPORTED_HINTS = ("reckon", "think", "thought", "believe", "suspect", "claim", "hear", "swear", "swore", "insist", "guess",
                   "convinced")


def reported(content: str) -> bool:
    """Whether a statement is what someone else believes or heard of the one it is filed under
    (`_REPORTED`): hearsay, no statement of how things stand. Recall's reading only: the index's
    supersession does not ask it (its links are versioned by index/rules.py, and no set holds a
    supersession by such a line)."""
    low = content.lower()
    return any(map(low.__contains__, _REPORTED_HINTS)) and _REPORTED.search(content) is not None


def no_present_value(content: str) -> str:
    """Why a statement gives no value of how things stand now, whatever is asked ("" if it may): a
    dream or a lost bid (_DREAM), a story of the past retold (_RETOLD), hearsay (_HEARSAY), a joke (_JOKE)."""
    low = content.lower()
    if not any(map(low.__contains__, _NO_VALUE_HINTS)) and not ("about " in low and ("year" in low or "days" in low or "summer" in low
                                                                              or "winter" in low)):
        return ""
    if _DREAM.search(content):
        return "a wish, a step towards a change or a lost bid"
    if _RETOLD.search(content):
        return "a story of the past"
    if _HEARSAY.search(content):
        return "hearsay"
    if _JOKE.search(content):
        return "a joke"
    return ""


# Once a year: "every August", "each summer", "every Diwali", "annually"; not a weekday ("every
# Friday": a standing routine) nor a capitalised word that qualifies a noun ("every Olympic curling
# end"). The occasion ends its phrase: a punctuation mark, a preposition, or the clause's subject
# ("Every Navruz she spends a week at her parents' village").
_YEARLY = lazy(r"\b(?:[Ee]very|[Ee]ach)\s+(?:year|summer|winter|spring|autumn|fall|"
               r"(?!(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days?\b)[A-Z][a-z]+(?=\s*(?:[,.;:)]|$)|\s+(?:with|for|at|in|on|to|and|"
               r"when|while|from|since|" + _SUBJECTS + r")\b))\b|\b(?:annually|yearly|once a year)\b")
_YEARLY_HINTS = ("very", "ach ", "annual", "yearly", "once a year")


def yearly(content: str) -> bool:
    """Whether a statement tells of something done once a year (a value only of when)."""
    low = content.lower()
    return any(h in low for h in _YEARLY_HINTS) and _YEARLY.search(content) is not None


# One occasion (wave 20): a line anchored to a single day ("Took the tram today because the bike had
# a puncture", "Skipped the gym this morning"), told as a break in a long run ("Missed Sunday dinner
# ..., first time in years", "a sip of champagne ..., his first in two decades") or said to be once
# ("this once", "for once"). Not "this week" nor "this month" ("Started at the pharmacy this week" is
# a change), nor "since yesterday" (a state since then).
_ONE_DAY = lazy(r"\b(?:today|tonight|yesterday|last night|this (?:morning|afternoon|evening)|this once|for once|"
                r"(?:the\s+)?first(?:\s+time)?\s+in\s+(?:(?:\w+\s+)?(?:years|decades|months)|ages|a\s+(?:long\s+)?while))\b", re.I)
_SINCE_ONE_DAY = lazy(r"\bsince\s+(?:today|yesterday|last night|this morning)\b", re.I)


def occasion(content: str) -> bool:
    """Whether a statement tells of one occasion rather than how things stand (_ONE_DAY). Recall reads
    it of every head candidate: the substring tests first, one by one."""
    low = content.lower()
    if not ("today" in low or "tonight" in low or "yesterday" in low or "last night" in low or "this " in low
            or "once" in low or "first" in low):
        return False
    return _ONE_DAY.search(content) is not None and _SINCE_ONE_DAY.search(content) is None


# A habit or a standing state told by how often or how long it holds: "Cycles to the office every
# day", "Has Sunday dinner at his mother's every week, without fail", "Teetotal for twenty years",
# "Never misses a home game". A date of one week ("every Friday") is a routine too; not once a year
# (`yearly`, a value only of when).
_HABIT = lazy(r"\b(?:(?:every|each)\s+(?:single\s+)?(?:day|morning|evening|night|week|weekday|workday|weekend|"
              r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)|daily|always|without fail|never miss(?:es|ed)?|"
              r"most (?:days|mornings|evenings|nights|weekends)|for (?:\w+\s+)?(?:years|decades))\b", re.I)
_HABIT_HINTS = ("every", "each", "daily", "always", "without fail", "never miss", "most ", "years", "decades")


def habitual(content: str) -> bool:
    """Whether a statement tells a habit or a standing state by how often or how long it holds."""
    low = content.lower()
    return any(map(low.__contains__, _HABIT_HINTS)) and _HABIT.search(content) is not None


# A question about an occasion: told in the past ("Why did Krystyna take the tram?", "What happened on
# Sunday?") or naming one day ("Where was he this morning?").
_ASKS_PAST = lazy(r"\b(?:did|didn't|was|wasn't|were|weren't|happened)\b", re.I)


def asks_occasion(question: str) -> bool:
    """Whether a question asks about an occasion rather than how things stand (`occasion`)."""
    return _ASKS_PAST.search(question) is not None or _ONE_DAY.search(question) is not None
