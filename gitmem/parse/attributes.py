"""Attribute families: which attribute of a person or thing a statement (or a question) is about.

"Where does Yuki stay?" asks where Yuki lives; "Has her own apartment in Kyoto since June" and
"@Yuki stays in Osaka with her parents" both say where she lives, without a word in common and
without a change cue. Recall (currency.newer_first) uses these families to tell that two
statements about the same entity give two values of the same attribute, so the newer one is
the current answer; nothing is hidden on this evidence alone (ranking only).

The families are the slots a personal memory holds about someone: where they live, their work,
their partner, their schedule, their contact details, what they drive, eat, read, play, like,
their health, age, studies and what things are called. They were written from that list, not
from a benchmark's sentences. Two kinds of word per family:
- `said`: the words a statement uses to give the attribute a value (predicates and the nouns
  that only name that attribute: "lives", "relocated", "apartment"; "nurse", "employer"). A noun
  that merely can appear ("city", bare "work" as in "walks the dog before work") is not one;
- `asked`: further words a question uses to ask for it ("which city", "what does she do for a
  living", "when is ...").
A *weak* family (likes, hobbies, media, health, things owned) is too broad to say two statements
are about the same thing by itself: recall also asks them to share a content word ("Loves
jazz" / "Has gone off jazz").

Wave 9 reads some slots from a line's shape rather than its words: a home is a kind of dwelling
with a place after it, a move to a workplace noun is work, opening one's own business is work
(`_PHRASES`); a clause in which another party acts on the entity gives it nothing (`said`); a name
painted on a thing or "the band is X now" names it (`names_anew`); a name traded for another
(`trades`); a shared word that only qualifies another noun (`modifies_another`).

Also the narrow CUED_FAMILIES that index/supersede.py hides an older statement by (with a change
cue). Imports only `re` (the parse layer is the bottom of the import order; the post-commit
hook's indexer imports it).
"""

# Annotations are evaluated at import (no __future__ import): see recall/result.py.

import re
from bisect import bisect_left
from functools import lru_cache
from typing import NamedTuple

from gitmem.lazyre import lazy


class Family(NamedTuple):
    name: str
    said: frozenset[str]
    asked: frozenset[str]
    weak: bool


def _family(name: str, said: str, asked: str = "", weak: bool = False) -> Family:
    return Family(name, frozenset(said.split()), frozenset(said.split()) | frozenset(asked.split()), weak)


# Common occupations (a statement naming one gives someone's job). Base forms; plurals and
# "-s" forms are found by `forms`.
_OCCUPATIONS = (
    "accountant actor actress administrator analyst animator architect artist assistant astronaut "
    "attorney auditor author baker banker barber barista bartender biologist blacksmith bookkeeper "
    "builder butcher buyer captain caretaker carpenter cashier caterer ceo cfo chef chemist "
    "cleaner clerk coach cook counsellor counselor courier curator cto dancer dentist designer "
    "detective developer dietitian diplomat director doctor driver economist editor electrician "
    "engineer entrepreneur farmer firefighter fisherman florist founder gardener geologist "
    "hairdresser historian illustrator inspector instructor intern interpreter investor janitor "
    "journalist judge lawyer lecturer librarian lifeguard locksmith manager mechanic midwife "
    "miner musician nanny navigator negotiator nurse optician paramedic pharmacist photographer "
    "physician physicist physiotherapist pilot plumber poet policeman policewoman politician "
    "porter postman producer professor programmer psychiatrist psychologist publisher "
    "receptionist recruiter reporter researcher sailor salesman saleswoman scientist secretary "
    "surgeon solicitor soldier statistician stylist supervisor surveyor tailor teacher technician "
    "therapist translator tutor veterinarian vet waiter waitress welder writer tester "
    "paralegal principal headteacher lead"
)

_TRADES = frozenset(_OCCUPATIONS.split())

FAMILIES: tuple[Family, ...] = (
    _family("residence",
            "live lives lived living reside resides resided resident residence address based <dwelling> "
            "lodgings stay stays staying settle settled "
            "relocate relocated relocating <relocation> rent rents rented renting tenant flatmate "
            "roommate landlord hometown neighbourhood neighborhood",
            "where home city town village country area suburb house flat apartment"),
    _family("work",
            "works worked working job jobs employ employed employer employee employment career "
            "hire hired profession occupation promote promoted promotion retrain retrained resign "
            "resigned teach teaches teaching taught retire retired retirement freelance freelancer freelancing self-employed "
            "contractor consultant consulting intern internship unemployed jobless "
            "sabbatical <leave> <business> <workplace> title role position salary apprentice apprenticeship head heads "
            "manage manages "
            + _OCCUPATIONS,
            "work living employer company"),
    _family("partner",
            "dating seeing married marry marries marriage wed engaged engagement "
            "fiance fiancee fiancé fiancée divorce divorced separated single partner girlfriend "
            "boyfriend wife husband spouse relationship widow widowed widower wedding vows <wed>"),
    _family("schedule",
            "plan planned scheduled schedule reschedule rescheduled book booked booking postpone "
            "postponed delay delayed forward pushed due deadline appointment cancel cancelled "
            "canceled slated <rescheduled>",
            "when date"),
    _family("contact", "phone email e-mail handle username", "number reach mobile address"),
    # A car and a bike are two things one can own at once: two families.
    _family("car", "car cars drive drives driving vehicle van truck", ""),
    _family("bike", "bike bikes bicycle motorbike motorcycle scooter ride rides riding cycle cycles cycling", ""),
    _family("diet",
            "vegetarian vegan pescatarian diet meat dairy gluten keto halal kosher",
            "food eat eats eating"),
    _family("age", "age aged birthday born turns turned", "old"),
    _family("study",
            "study studies studying student degree university college graduate "
            "phd thesis enrolled enrol enroll semester",
            "school"),
    _family("name", "called named name renamed rename codename nickname formerly previously <name>", ""),
    # Weak: shared content words are needed too (see the module docstring).
    _family("likes",
            "like likes liked love loves loved enjoy enjoys prefer prefers preferred preference "
            "favourite favorite fan hate hates dislike dislikes adore adores fond keen <evaluative>",
            "want wants", weak=True),
    _family("pastime",
            "play plays playing practise practice practises training learn learning "
            "hobby hobbies club choir sing sings band gym climb climbs swim swims",
            "sport instrument weekends", weak=True),
    _family("media",
            "read reads reading book books novel watch watches watching series show listen "
            "listens listening podcast album music song",
            "", weak=True),
    _family("health",
            "sick ill illness injury injured hurt recovering recovered surgery cast pregnant "
            "pregnancy diagnosed treatment therapy allergy allergic covid flu cancer fracture fractured sprain "
            "sprained asthma diabetes migraine fever infection",
            "health", weak=True),
    _family("pets", "pet pets cat cats dog dogs kitten puppy hamster rabbit parrot tortoise", "", weak=True),
    _family("owns", "own owns owned bought sold", "have", weak=True),
)

# What a home can be, and a workplace (`_PHRASES`: "<dwelling>", "<workplace>").
_DWELLINGS = (r"(?:flat|apartment|house|farmhouse|townhouse|condo|studio|houseboat|narrowboat|place|room|cottage|"
              r"bungalow|loft|terrace|maisonette|bedsit)")
_WORKPLACES = (r"(?:clinic|hospital|practice|firm|company|agency|school|studio|start-?up|lab|laboratory|bank|office|"
               r"department|museum|library|council|ministry|university|college|consultancy|charity|newspaper|publisher)")
# Phrases folded into one marker word before the families are looked up.
_PHRASES = (
    (lazy(r"\b(?:moved|moves|moving|move) (?:to|from|in|out|away|back|house|abroad|into)\b", re.I),
     "<relocation>"),
    (lazy(r"\b(?:gone|went|go|going|goes) off\b|\bcan'?t stand\b|\bsick of\b|\btired of\b|\bwould rather\b"
                r"|\b(?:finds?|found) [\w ]{1,30}? (?:boring|dull|tedious|fun|enjoyable|exciting|great|awful)\b", re.I),
     "<evaluative>"),
    # A home is a dwelling that is someone's ("her own apartment in Kyoto", "took a flat in Porto",
    # "home is a houseboat"), not a flat mentioned in passing ("fibre at the Lisbon flat").
    # Wave 9: the kinds of dwelling a home can be (a farmhouse, a terrace, a narrowboat), and a place named
    # later in the clause ("Bought a narrowboat and moors it on the canal in Skipton").
    (lazy(r"\b(?:a|an|own|new|his|her|their|my)\s+(?:[\w-]+\s+){0,2}" + _DWELLINGS + r"\s+(?:in|on|near|at|by|outside)\b"
          r"|\bhome is\b|\b(?:a|an|own|new|his|her|their|my)\s+(?:[\w-]+\s+){0,2}" + _DWELLINGS
          + r"\b[^;.]{0,40}?\b(?:in|on|near|outside)\s+(?:the\s+)?(?-i:[A-Z])", re.I),
     "<dwelling>"),
    # Wave 9: a move to a workplace ("Moved over to a private scanning clinic in Oslo", "Switched to a
    # consultancy"): a new value of the work, as a dwelling is of the home. The nouns between may not
    # hold a preposition ("moved to a flat near the hospital" is a home).
    (lazy(r"\b(?:moved|moves|moving|switched|transferred|went|gone)(?:\s+(?:over|across|back))?\s+to\s+(?:a|an|the)\s+"
          r"(?:(?!(?:near|by|in|at|on|with|of|for|from)\b)[\w-]+\s+){0,3}" + _WORKPLACES + r"\b", re.I),
     "<workplace>"),
    # A date set or moved: "set for 2025-09-01", "moved to Friday", "pushed back to March".
    (lazy(r"\b(?:set|fixed) for\b|\btakes place\b|\b(?:moved|pushed|brought|shifted|changed)(?: back| forward| up)?"
                r" (?:to|until) (?:the )?(?:\d|mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|"
                r"next|later|earlier)", re.I), "<rescheduled>"),
    (lazy(r"\b(?:goes|go|going|went) by\b|\bknown as\b", re.I), "<name>"),
    (lazy(r"\b(?:tied|tie|tying|ties) the knot\b", re.I), "<wed>"),
    (lazy(r"\b(?:runs?|opened|opens|started|starts|set up|sets up|launched|launches) (?:his|her|their) own\b|"
                r"\bruns? (?:his|her|their|a|an) (?:own )?(?:\w+ )?(?:business|shop|company|firm|bakery|restaurant|"
                r"caf[eé]|bar|practice|studio|agency|startup|farm|clinic|salon)\b", re.I), "<business>"),
    (lazy(r"\b(?:on|parental|maternity|paternity|sick|medical|unpaid|garden(?:ing)?) leave\b", re.I), "<leave>"),
)
# A phrase is searched for only in a text holding one of its words (a substring test runs at C
# speed; the alternations do not).
_HINTS = {
    "<relocation>": ("mov",), "<evaluative>": ("off", "stand", " of", "rather", "found", "find"),
    "<dwelling>": ("flat", "apartment", "house", "condo", "studio", "place", "room", "cottage", "bungalow", "loft",
                   "home is", "terrace", "boat", "maisonette", "bedsit"),
    "<workplace>": ("moved", "moves", "moving", "switched", "transferred", "went", "gone"),
    "<rescheduled>": ("set for", "fixed for", "takes place", "moved", "pushed", "brought", "shifted", "changed"),
    "<name>": (" by", "known as"), "<wed>": ("knot",), "<business>": ("run", "s own", "r own"), "<leave>": ("leave",),
}
_WORD = lazy(r"[^\W\d_][\w'-]*", re.U)
# Words a statement uses that look like a family's but are not (a question's are):
# bare "work" is a place as often as an activity ("before work", "at work", "to work"), and a
# statement's work is its verb forms and job words.
# "Stayed at a hotel" is a visit (where one stays is where one lives; where one stayed is not).
_NOUNISH = frozenset(("work", "stayed"))


def forms(word: str) -> tuple[str, ...]:
    """The word and the base forms a regular inflection may come from ("nurses" -> "nurse",
    "relocating" -> "relocate", "stopped" -> "stop")."""
    out = [word]
    if word.endswith("'s"):
        word = word[:-2]
        out.append(word)
    if word.endswith("ies"):
        out.append(word[:-3] + "y")
    if word.endswith(("ses", "xes", "zes", "ches", "shes", "oes")):
        out.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        out.append(word[:-1])
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stem = word[: -len(suffix)]
            out += [stem, stem + "e"]
            if len(stem) > 2 and stem[-1] == stem[-2]:
                out.append(stem[:-1])
    return tuple(out)


# What a landlord does with a flat says nothing about where they live.
_NOT_HOME = lazy(r"\b(?:rents?|rented|renting|lets?|letting) (?:it |them )?out\b", re.I)
# "Repairs violins for a living", "makes a decent living": the noun is a livelihood, not a home.
_A_LIVING = lazy(r"\ban?\s+(?:[a-z]+\s+)?living\b", re.I)


def livelihood_only(text: str) -> bool:
    """Whether every "living" of a statement is the noun of a livelihood ("for a living", "an honest
    living"), which says nothing about a home: the residence families (FAMILIES here, CUED_FAMILIES
    in index/supersede.py) do not read it then."""
    low = text.lower()
    n = low.count("living")
    return n > 0 and len(_A_LIVING.findall(low)) == n


def without_livelihood(words: set[str], text: str) -> set[str]:
    """`words` (a statement's whole words) without "living" when every "living" of `text` is a
    livelihood (`livelihood_only`): what both the ranking's and the index's families read."""
    return words - {"living"} if "living" in words and livelihood_only(text) else words


def _words(text: str) -> set[str]:
    low = text.lower()
    words = {w.strip("'-") for w in _WORD.findall(low)}
    # "e-bike" is a bike, "self-employed" is itself a word of the list: both forms are looked up.
    words |= {p for w in words if "-" in w for p in w.split("-") if len(p) > 2}
    # The patterns ignore case but for a place's capital ("<dwelling>"): they read the text as written.
    markers = {m for pat, m in _PHRASES if any(h in low for h in _HINTS[m]) and pat.search(text)}
    if "<rescheduled>" in markers:
        markers.discard("<relocation>")  # "moved to Friday" moves a date, not a home
    return words | markers


# "-ist" names a trade ("novelist", "pianist", "dentist") but for these words.
_NOT_IST = frozenset("list exist wrist twist mist fist gist resist insist assist persist consist enlist "
                     "playlist checklist wishlist shortlist waitlist tourist".split())


def _occupation(word: str) -> bool:
    w = word[:-1] if word.endswith("s") else word
    # "-ician" and "-grapher" name trades too (technician, dietician; radiographer, cartographer).
    return len(w) > 5 and (w.endswith("ist") and w not in _NOT_IST or w.endswith(("ician", "grapher")))


def _index(table: str) -> dict[str, tuple[str, ...]]:
    """Each word of a table -> the families whose table holds it (one dict lookup per form)."""
    out: dict[str, list[str]] = {}
    for fam in FAMILIES:
        for w in fam.said if table == "said" else fam.asked:
            out.setdefault(w, []).append(fam.name)
    return {w: tuple(names) for w, names in out.items()}


_SAID = _index("said")
_ASKED = _index("asked")


def _lookup(words: set[str], table: dict[str, tuple[str, ...]],
            skip: frozenset[str] = frozenset()) -> dict[str, set[str]]:
    """The families the words belong to, each with the words that do."""
    out: dict[str, set[str]] = {}
    for w in words:
        if w in skip:
            continue
        for f in forms(w):
            for name in table.get(f, ()):
                out.setdefault(name, set()).add(w)
        if _occupation(w):
            out.setdefault("work", set()).add(w)
    return out


# A start at a workplace (wave 20): "Started at the hospital pharmacy in Hildesheim this week", "Started this
# week as a clinical trials coordinator at the university hospital", "Began with a consultancy": the
# inchoative of a job, told by its form (a verb of starting, a workplace after it), no list of jobs; only
# a day may stand between ("Started Spanish classes at the college" is no job).
_STARTS_WORK = lazy(r"\b(?:started|starts|starting|began|begins|beginning)\s+"
                    r"(?:(?:this|last|on)\s+[a-z]+\s+|today\s+|yesterday\s+)?(?:as\s+(?:a|an)\s+(?:[\w-]+\s+){0,4}?)?"
                    r"(?:at|with|in)\s+(?:a|an|the)\s+(?:(?!(?:near|by|in|at|on|with|of|for|from)\b)[\w-]+\s+){0,3}?"
                    + _WORKPLACES + r"\b", re.I)


def starts_work(text: str) -> bool:
    """Whether a statement tells a start at a workplace (`_STARTS_WORK`): a new value of the work, read
    by recall (currency `_starts_work`) where the families read no work word in it."""
    return ("start" in text or "Start" in text or "beg" in text or "Beg" in text) and _STARTS_WORK.search(text) is not None


# A statement's opening, up to what it says first: where it starts and the @entity it is filed under
# ("@Alice: ", "@Alice's "). Every pattern that reads a statement's first words (here, in
# index/supersede.py and recall/currency.py) starts with it, so the opening is spelled once. The
# name is taken whole (possessive "++"): a pattern after it never starts inside the name, so
# "@Ulfried: Staying with his parents" is no past tense ("Ulfri" + "ed"), nor "@Khaled: Lives ..." a
# report of something done.
OPENING = r"^\s*(?:@[\w-]++'?s?:?\s*)?"
# A statement whose subject is a thing ("@Peter: The Lisbon flat has fibre", "The farm now has
# solar panels") says something about that thing: the words of its subject ("flat", "farm") are
# not a value of the entity's attributes. The subject runs from the determiner to the first
# verb-like word after it (a closed list, or a word ending in -s / -ed).
_SUBJECT_TAIL = (r"\s+[\w'-]+(?:[\s,]+(?!(?:is|are|was|were|has|have|"
                 r"had|will|would|can|now|no|still|got|gets|\w+ed|\w+s)\b)[\w'-]+)*")
_THING_SUBJECT = lazy(OPENING + r"(?:the|this|that|these|those|our|its)" + _SUBJECT_TAIL, re.I)
# The same with a possessive ("His car's manual is missing", "Her neighbour is moving out"): the
# subject is still a thing (or another person) around the entity, not the entity itself.
_OWNED_SUBJECT = lazy(OPENING + r"(?:the|this|that|these|those|our|its|his|her|their)"
                            + _SUBJECT_TAIL, re.I)


def thing_subject(text: str, *, possessive: bool = False) -> bool:
    """Whether a statement's subject is a thing ("The lift to floors 5 to 9 is broken", "The
    examiners moved the viva"), not the entity it names; with `possessive`, a thing of the
    entity's counts too ("His flight is delayed")."""
    return (_OWNED_SUBJECT if possessive else _THING_SUBJECT).match(text) is not None


def thing_head(text: str) -> str:
    """The last word of a statement's subject when it is a thing ("lurcher" in "The lurcher answers
    to Pernod", "flat" in "The York flat has fibre"), lowercased; "" when the subject is no thing."""
    m = _THING_SUBJECT.match(text)
    return m.group().split()[-1].lower().strip("'-,") if m is not None else ""


# A later clause in which someone or something else acts on the entity ("...; the rescue wants her
# as their on-call vet", "...; the studio gave her a leaving card"): its words are that other
# party's doing (a wish, an offer, a gift), not a value of the entity's attributes.
# Not when the verb itself gives the attribute ("...; the hospital hired her as a nurse").
_OTHER_ACTS = lazy(r";\s*(?:the|this|that|their|a|an)\s+(?:[\w'-]+\s+){0,3}?([a-z]+)\s+(?:her|him|them)\b[^;]*",
                   re.I)


def _others_doing(m: re.Match[str]) -> str:
    return m.group() if _lookup({m.group(1).lower()}, _SAID) else " "



@lru_cache(maxsize=8192)
def said(text: str) -> frozenset[str]:
    """The families a statement gives a value of ("Relocated to Dublin" -> {"residence"}).
    Cached: recall asks it of the same statements question after question."""
    text = _THING_SUBJECT.sub(" ", text, count=1)
    if ";" in text:
        text = _OTHER_ACTS.sub(_others_doing, text)
    out = _lookup(without_livelihood(_words(text), text), _SAID, _NOUNISH)
    if _NOT_HOME.search(text):
        out.pop("residence", None)
    return frozenset(out)


# The question's attribute read from its structure (`asked`, wave 13). Off: False.
ASKED_STRUCTURE = True
# "When did she move?" asks about an event, not a schedule.
_PAST_WHEN = lazy(r"\bwhen\s+(?:did|was|were|had)\b", re.I)
# "What does Pia do?", "what do they do for a living": the job.
_WHAT_DO = lazy(r"\bwhat (?:does|do) [\w' -]+? do\b", re.I)


# The noun a "what"/"which" question asks for ("What editor does Priyanka use?", "Which doctor does
# she see?"): the kind of thing the answer is, not a trade of the subject's.
_WHAT_KIND = lazy(r"^\s*(?:what|which)\s+([\w-]+)\s+(?:does|do|did|is|are|was|were|has|have)\b", re.I)


def asked(question: str) -> frozenset[str]:
    """The families a question asks about ("Which city is Priya based in?" -> {"residence"}).

    Read from the question's structure, not its wh-word alone (wave 13): "where" asks for a place,
    and it is the home only when the predicate names no attribute of its own ("Where is Bruno?";
    "Where does Anouk work?" asks about her work, "Where does Ines play chess?" her pastime). A trade
    named as the kind of thing asked for ("What editor does Priyanka use?") is a thing, not her job."""
    words = _words(question)
    if _PAST_WHEN.search(question):
        words.discard("when")
    found = _lookup(words, _ASKED)
    if ASKED_STRUCTURE:
        if found.get("residence") == {"where"} and len(found) > 1:
            del found["residence"]
        kind = _WHAT_KIND.match(question)
        noun = kind.group(1).lower() if kind is not None else ""
        if noun and found.get("work") == {noun} and (_occupation(noun) or any(f in _TRADES for f in forms(noun))):
            del found["work"]
    fams = frozenset(found)
    return fams | {"work"} if _WHAT_DO.search(question) else fams


# A question asking for an amount or a version: the slot's value is a number ("How much rent does
# Gaspard pay?", "How much does Pim weigh?", "Which Nextcloud version does Larder run?").
_QUANTITY = lazy(r"\bhow (?:much|many|old|far|long|big|tall|heavy|often)\b|\bwhich (?:\w+ )?version\b|\bwhat (?:is |'s )?"
                       r"(?:the |his |her |their )?(?:\w+ )?(?:version|price|cost|rent|salary|weight|size|number of)\b", re.I)


# "How many beehives ...", "how many kids ...": the noun counted.
_COUNTED = lazy(r"\bhow many ([a-z][\w-]*)", re.I)


def singular(noun: str) -> str:
    """A lowercased noun without a plural "s" ("hives" -> "hive"; "bus" and "gas" kept): the one
    form both a "how many" question's noun (`counted`) and the unit after a number (recall's
    `currency._read_numbers`) are compared in."""
    return noun[:-1] if noun.endswith("s") and len(noun) > 3 else noun


def counted(question: str) -> str:
    """The noun a "how many" question counts, singular and lowercased ("beehive"; "" if none)."""
    m = _COUNTED.search(question)
    return "" if m is None else singular(m.group(1).lower())


def same_noun(a: str, b: str) -> bool:
    """Whether two nouns name one kind of thing by their head: equal, or one a compound ending in the
    other ("beehive" / "hive", "grandchild" / "child"; three letters at least)."""
    return a == b or len(a) > 2 and len(b) > 2 and (a.endswith(b) or b.endswith(a))


def asks_quantity(question: str) -> bool:
    """Whether a question asks for an amount, a count or a version (its answer is a number)."""
    return _QUANTITY.search(question) is not None


# Shapes that give a thing a name without "called" or "named" (wave 9): a name painted or lettered
# on it ("Painted Sjöstjärnan on the transom", "Had Peregrine painted on the sloop's transom"), a
# copula from the thing to a capitalised word ("The band is Fjordhest now"), a rename or a christening
# ("Renamed the boat Kestrel", "Rechristened her Osprey"). group "thing": the noun named, when the
# shape says it.
_NAME_RUN = r"['\"‘“]?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*['\"’”]?"
_NAMING = lazy(
    r"\b(?i:painted|lettered|stencill?ed|wrote)\s+" + _NAME_RUN + r"\s+(?i:on|onto|across)\b|"
    r"\b(?i:had)\s+" + _NAME_RUN + r"\s+(?i:painted|lettered|stencill?ed)\b|"
    r"\b(?i:re-?named|re-?christened|christened)\s+(?:(?i:it|her|him|them)\s+|(?i:the|his|her|their)\s+"
    r"(?P<thing1>[a-z]+)\s+)?(?:(?i:to|as)\s+)?['\"‘“]?[A-Z]|"
    r"(?:^|[:;.]\s*)(?i:the|his|her|their)\s+(?P<thing2>[a-z]+)\s+(?i:is)\s+(?:(?i:now)\s+)?(?:(?i:called|named)\s+)?"
    + _NAME_RUN + r"\s*(?:(?i:now)\b|[;.,]|$)|"
    # A thing put out, entered or billed under a name ("Rebranded as Trailmark", "Went out to the
    # public as Pennywise", "re-registered the mare as Boira", "bill his band as The Umgeni Drifters"):
    # a verb in -ed / -s (or "bill", "went out"), not one that takes a role ("works as", "joined as").
    r"\b(?!(?i:works|worked|serves|served|joined|started|signed|qualified|trained|acts|acted|poses|posed|is|was|has|does)\b)"
    r"(?i:[a-z-]+ed|[a-z-]+s|bill|went|goes|go)\s+(?:(?i:it|her|him|them)\s+|(?i:the|his|her|their|its)\s+(?P<thing3>[a-z]+)\s+)?"
    r"(?:(?i:out)\s+(?:(?i:to\s+the)\s+[a-z]+\s+)?)?(?i:as)\s+['\"‘“]?(?!I\b)[A-Z]|"
    # A label reads a name: a thing (no person: "she says Leeds ...", no manner: "regularly read The
    # Atlantic") that says, reads or carries it ("her badge says Vlinder Group now", "the team kit says
    # Kilele FC", "all read Tidewater Life").
    r"\b(?!(?i:she|he|they|I|we|you|who|it|everyone|people|gossip)\b)(?![a-z]*ly\b)[a-z]+\s+(?i:says|say|read|reads|carry|carries|bears?)\s+"
    + _NAME_RUN)


def names_anew(text: str) -> tuple[bool, str]:
    """Whether a statement gives a thing a name in a shape besides "called" / "named" (`_NAMING`),
    and the noun it names ("" when the shape does not say: a name painted on a transom)."""
    m = _NAMING.search(text)
    if m is None:
        return False, ""
    return True, (m.group("thing1") or m.group("thing2") or m.group("thing3") or "").lower()


# After an old value, in its clause: what it is traded for ("the Trafic in for an electric Vauxhall
# Vivaro", "the Canon for a Fujifilm", "the Pixel with a Galaxy S25").
_TRADED_FOR = lazy(r"[^;.]{0,25}?\b(?:in\s+)?(?:for|with|into)\s+(?:(?:a|an|the|his|her|their)\s+)?"
                   r"(?:(?-i:[a-z])[\w-]*\s+){0,2}((?-i:[A-Z])[\w-]*(?:\s+(?-i:[A-Z0-9])[\w-]*)*)", re.I)
# Before the old value, in its clause: a verb of replacing (a closed class: "Took the Trafic for an
# MOT" trades nothing).
_TRADING = lazy(r"\b(?:trad|swap|exchang|replac|upgrad|switch|chang)\w*\b[^;.]{0,30}$", re.I)


_TRADING_HINTS = ("trad", "swap", "xchang", "replac", "upgrad", "switch", "chang")


def may_trade(text: str) -> bool:
    """A cheap necessary condition of `trades` (substring tests): recall asks it of many pairs."""
    low = text.lower()
    return any(h in low for h in _TRADING_HINTS)


def trades(text: str, old: frozenset[str]) -> frozenset[str]:
    """The names `text` trades one of the `old` names for, lowercased (`_TRADING` the old name
    `_TRADED_FOR` a new one): a new value of the slot the old name filled."""
    out: set[str] = set()
    low = text.lower()
    for name in old:
        at = low.find(name)
        while at >= 0:
            end = at + len(name)
            if (at == 0 or not low[at - 1].isalnum()) and (end == len(low) or not low[end].isalnum()):
                m = _TRADED_FOR.match(text, end)
                if m is not None and "@" not in text[end:m.start(1)] and _TRADING.search(text, 0, at):
                    out.update(w.lower() for w in m.group(1).split())
            at = low.find(name, end)
    return frozenset(out)


# Words that may follow a noun without making it a modifier ("jazz, especially", "cricket and").
_FUNCTION = frozenset("a an the and or but nor so yet for of to in on at by with from into over about than as "
                      "is are was were be been being am has have had do does did will would can could should may "
                      "might must shall it its this that these those he she they we you i me him her them us my his "
                      "their our your who whom which what when where while because if then there here too also "
                      "very more most less least all any some no not never ever again now still just only even "
                      "every each much many".split())


def modifies_another(text: str, stems: frozenset[str], other: str) -> bool:
    """Whether every word of `text` starting with one of `stems` (one at least) stands before a noun
    that `other` does not hold: it names a kind of that other thing ("Finds the new jazz bar on Calle
    Mayor overpriced" is about a bar, not about jazz, beside "Loves jazz, especially Coltrane"; "asks
    for ground-floor rooms only, after getting stuck in a hotel lift" still speaks of rooms)."""
    toks = list(_WORD.finditer(text))
    low_other = other.lower()
    seen = False
    for m, n in zip(toks, [*toks[1:], None]):
        w = m.group().lower()
        if not any(w.startswith(st) for st in stems):
            continue
        seen = True
        nxt = n.group() if n is not None else ""
        # The next word must follow in the same phrase (no comma or semicolon between) and be a noun.
        if n is None or text[m.end():n.start()].strip() or not nxt.islower() or len(nxt) < 3 or nxt in _FUNCTION \
                or nxt.endswith(("ly", "ed")) or nxt in low_other or nxt.rstrip("s") in low_other:
            return False
    return seen


WEAK = frozenset(f.name for f in FAMILIES if f.weak)

# The narrow list index/supersede.py uses to *hide* an older statement (with a change cue too):
# whole words, a few inflections each. Kept apart from FAMILIES on purpose: supersession built on
# FAMILIES marked "Has a sister in Edinburgh who is a vet" replaced by "Relocated to Dublin ...
# for the new role" (vet / role) on the current-truth held-out half; a ranking signal can afford
# the broad list, hiding cannot.
CUED_FAMILIES: tuple[frozenset[str], ...] = tuple(frozenset(f.split()) for f in (
    "lives live living lived <relocation> relocated relocating",
    "works work working worked job joined employed employee hired teaches teach teaching career careers role position",
    "dating dates seeing married marriage partner girlfriend boyfriend broke engaged divorced",
    "vegetarian vegan eats eat meat cheese diet",
    "drives drive driving car",
    "phone number email address",
    "planned scheduled postponed delayed rescheduled",
))
# Verbs that end a state rather than report one more event ("Gave up the piano", "Let the
# tutoring lapse", "Stopped smoking", "Sold the van"): a newer statement of one of them about the
# thing an older state names ends that state (recall's slot recency; ranking only).
ENDS_STATE = lazy(r"\b(?:quit|quits|quitting|gave up|given up|giving up|gives up|dropped out|cancell?ed|sold|"
                        r"lapsed?|no longer|retired from|packed in|(?:stopped|stops|dropped)(?!\s+(?:at|by|in|off|over|"
                        r"for|to|outside|into)\b))\b", re.I)
# Abstinence told as how long it has lasted: "Six months without a cigarette", "Six months off the
# roll-ups", "A full year smoke-free", "Hasn't lit the pipe since the heart scare". A span of time
# without the thing says the habit of it is over, though no verb of ending is used (ENDS_STATE). The
# group is the thing gone without.
_SPAN = (r"\b(?:\d+|a|an|a full|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
         r"eighteen|twenty)\s+(?:days?|weeks?|months?|years?)\s+")
ABSTAINS = lazy(_SPAN + r"(?:without|off)\s+(?:a\s+|an\s+|any\s+|the\s+|his\s+|her\s+)?([a-z][\w-]*)|"
                + _SPAN + r"([a-z]+)-free\b|"
                r"\b(?:hasn't|has not|haven't|have not)\s+(?:[a-z]+ed|lit|had|touched|drunk|drank)\s+"
                r"(?:a\s+|an\s+|any\s+|the\s+|his\s+|her\s+)?([a-z][\w-]*)\s+(?:since|for)\b", re.I)
# A habit told with its rate ("ten a day", "a pack a day"): a span without it ends it (recall's `_abstains`).
RATE = lazy(r"\ba (?:day|night|week)\b|\bper (?:day|week)\b", re.I)
# What a habit's verb consumes, for a thing gone without that the habit's line does not name ("Smokes
# a pack a day" / "Six months without a cigarette"): the verb's base form -> its things.
HABIT_THINGS: dict[str, frozenset[str]] = {
    "smoke": frozenset("cigarette cigarettes cig cigs fag fags tobacco nicotine cigar cigars pipe roll-up "
                       "roll-ups rollies vape vaping smoking".split()),
    "drink": frozenset("alcohol booze drink drinks drinking beer wine spirits".split()),
}


def abstains(text: str) -> tuple[str, ...]:
    """The things a statement says have been gone without for a span of time (`ABSTAINS`),
    lowercased; () when it says none."""
    low = text.lower()
    if not (" without " in low or " off " in low or "-free" in low or "n't " in low or " not " in low):
        return ()
    return tuple(next(g for g in m.groups() if g).lower() for m in ABSTAINS.finditer(text))


# The relocation marker ("<relocation>") of CUED_FAMILIES: "moved" is a relocation only with a
# direction ("Moved the release notes" is about something else). Narrower than the ranking's
# phrase in _PHRASES ("moves abroad", "move into") for the same reason as the families.
CUED_RELOCATION = lazy(r"\b(?:moved|moving|relocated) (?:to|from|in|out|away|back|house)\b", re.I)
# A move told with its places: "Moved from Berlin to Lisbon on ...", "Shipped from Berlin to Lisbon",
# "Relocated to Lisbon". The places are names (capitalised); "from" is optional.
_MOVE_PLACES = lazy(r"\b(?i:moved|moves|moving|relocated|shipped)\b(?:[^.;]*?\bfrom\s+(?P<old>[A-Z][\w-]*))?"
                    r"[^.;]*?\b(?:to|into)\s+(?P<new>[A-Z][\w-]*)")


class Move(NamedTuple):
    left: str | None  # the place left, when the statement names it
    reached: str


def move_places(text: str) -> Move | None:
    """The places of the first move a statement tells with a named destination, or None."""
    m = _MOVE_PLACES.search(text)
    return Move(m.group("old"), m.group("new")) if m else None


def names_place(text: str, place: str) -> bool:
    """Whether `text` names `place` as a whole word, in any case."""
    return re.search(rf"\b{re.escape(place)}\b", text, re.I) is not None
# The families' own words as 5-letter stems: two statements sharing only these ("prefers",
# "plays") are not about the same thing.
VOCAB_STEMS = frozenset(w[:5] for f in FAMILIES for w in f.said if not w.startswith("<"))
_VOCAB = {f.name: tuple(sorted(w for w in f.asked if not w.startswith("<"))) for f in FAMILIES}
_VOCAB["*"] = tuple(sorted({w for words in _VOCAB.values() for w in words}))


def vocabulary(stem: str, family: str | None = None) -> bool:
    """Whether a question word's crude stem ("employ", "stay") starts a word of `family` (of any
    family without one): a word that names the attribute, not a particular thing ("brother",
    "bakery"; "dog" in "What is Abe's dog called?" for the name family)."""
    # In sorted words, the first one not below the stem is the one that starts with it if any
    # does (recall asks this for many statement pairs: a scan of every word was ~10% of a search).
    words = _VOCAB[family or "*"]
    i = bisect_left(words, stem)
    return i < len(words) and words[i].startswith(stem)
