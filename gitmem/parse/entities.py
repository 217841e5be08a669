"""@mentions, entity keys (for matching) and entity slugs (for bank/entities/<Slug>.md file names)."""

from __future__ import annotations

import re
import unicodedata

from gitmem.lazyre import lazy

# A mention is "@" + a letter, then letters/digits/"_", with single "-" or "." joining word runs
# (so "@The-Castle" works and a trailing "." / ":" / "-" is punctuation, not part of the name).
# No apostrophe: "@Peter's car" is about Peter, and "'" could not be part of a file slug anyway.
# The character before "@" must not be a letter, digit, "_" or one of "@./+-": that rejects e-mail
# addresses ("a@b.com"), "@@x", URL paths ("/@user") and "x.@y".
_NAME = lazy(r"[^\W\d_]\w*(?:[-.][^\W_]\w*)*")
_NOT_BEFORE = frozenset("@./+-")
_CODE_SPAN = lazy(r"`+[^`\n]*`+")
_SEPARATORS = lazy(r"[\s_\-]+")
MAX_SLUG = 80


def mentions(text: str) -> list[str]:
    """The raw names of @mentions in `text` (without "@"), in order; inline `code` is ignored."""
    if "@" not in text:
        return []
    if not text.isascii():
        # A decomposed "José" (e + U+0301) would end the name at the combining accent ("jose"):
        # compose first so it is the same entity as the composed spelling.
        text = unicodedata.normalize("NFC", text)
    if "`" in text:
        # `@decorator` or `npm i @scope/pkg` inside code spans is code, not a person or project.
        text = _CODE_SPAN.sub(" ", text)
    # str.find + match at each "@" is ~5x faster than one regex with a look-behind scanning all text.
    found: list[str] = []
    i = text.find("@")
    while i >= 0:
        if i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_" or text[i - 1] in _NOT_BEFORE):
            m = _NAME.match(text, i + 1)
            if m:
                found.append(m.group())
                i = text.find("@", m.end())
                continue
        i = text.find("@", i + 1)
    return found


def mention_keys(text: str) -> tuple[str, ...]:
    """entity_key of each mention in `text`, in order of first appearance, deduplicated."""
    names = mentions(text)
    if not names:
        return ()
    # Deduplicate names before keying: a huge pasted file can repeat one mention millions of times.
    return tuple(dict.fromkeys(k for k in map(entity_key, dict.fromkeys(names)) if k))


def entity_key(name: str) -> str:
    """The canonical matching key: "The Castle", "The-Castle", "@the_castle", "THE castle" -> "the-castle".

    Case-insensitive, and spaces, "_" and "-" are one separator, because people and models write
    the same entity all of these ways. NFC first so a decomposed "José" equals a composed one.
    """
    name = unicodedata.normalize("NFC", name).strip()
    if name.startswith("@"):
        name = name[1:]
    return _SEPARATORS.sub("-", name.lower()).strip("-")


def _slug_char_ok(ch: str) -> bool:
    if ch.isascii():
        return ch.isalnum() or ch in "._-"
    # Non-ASCII letters, digits and combining marks are fine in file names on every platform we
    # target; symbols and punctuation (e.g. fullwidth "／", "：") are not allowed through.
    return ch.isalnum() or unicodedata.category(ch).startswith("M")


def entity_slug(name: str) -> str:
    """A safe file-name stem for bank/entities/<slug>.md, keeping the user's casing.

    "The Castle" -> "The-Castle", "@the_castle" -> "the-castle", "José" -> "José". Separators
    (spaces, "_", "-") become single "-", so entity_key(entity_slug(x)) == entity_key(x).
    Raises ValueError for an empty name, a path separator, NUL, "..", a leading ".", any other
    character outside [A-Za-z0-9._-] and non-ASCII letters, or more than 80 characters: the slug
    becomes a path that reflection writes to, so it must never be able to leave bank/entities/.
    """
    raw = unicodedata.normalize("NFC", name).strip()
    if raw.startswith("@"):
        raw = raw[1:]
    slug = _SEPARATORS.sub("-", raw).strip("-")
    if not slug:
        raise ValueError(f"empty entity name: {name!r}")
    if len(slug) > MAX_SLUG:
        raise ValueError(f"entity name longer than {MAX_SLUG} characters: {name[:40]!r}...")
    if slug.startswith(".") or ".." in slug:
        raise ValueError(f"entity name may not start with '.' or contain '..': {name!r}")
    bad = next((ch for ch in slug if not _slug_char_ok(ch)), None)
    if bad is not None:
        raise ValueError(f"entity name has a character not allowed in a file name ({bad!r}): {name!r}")
    return slug


def page_entity(stem: str, heading: str) -> str | None:
    """The entity a page's lines are about when they name none (wave 20): the page's outermost
    heading names its file, as a name (bank/people/kazue.md under "# Kazue"; layout.bank_folder_stem
    gives the stem of a page in a folder of bank/): at most four words, each capitalised. None
    otherwise ("# notes" names no one). Read by parse/blocks.py for each block and by
    index/indexer.py `rederive` for the stored ones (the heading path's first element)."""
    words = heading.split()
    if not words or len(words) > 4 or not all(w[:1].isupper() for w in words):
        return None
    key = entity_key(heading)
    return key if key and key == entity_key(stem) else None


# --- whom a statement is about ------------------------------------------------------------------
# A line filed under one entity ("@Linnea: ...", a bullet of her page or her memory.md section) can
# be about someone else: a relative or friend ("Her sister @Ana lives in Porto", "His brother lives
# in Seoul", "@Zoe's parents moved") or another @person as the subject of its sentence ("@Linnea:
# @Anders opened his own studio"). That statement gives no value of the filed entity's own
# attributes: it must not replace or pass her own statements (index/supersede.py, recall/currency.py).
# The relation nouns: kin, household and the people one works or studies beside, a closed class of
# the language ("Her flatmate Awino moved out", "His niece got a job in Lyon", "Her fiancée's visa came
# through"). Not the landlord or the employer: what they do ("put the rent up", "moved the office")
# changes the filed entity's own rent or workplace.
_RELATIVE = (r"(?:brother|sister|mother|father|mum|mom|dad|parents?|son|daughter|kids?|children|wife|husband|"
             r"partner|boyfriend|girlfriend|friends?|cousin|aunt|uncle|grand\w*|colleague|boss|neighbou?r|family|"
             r"(?:flat|room|house|team|class|work|ship|club|band|school|crew|course|gym|play)mate|co-?worker|fianc[eé]e?|spouse|nephew|niece|twin|sibling|"
             r"step-?(?:mum|mom|dad|father|mother|son|daughter|brother|sister|kids?|children)|in-laws|relatives?|"
             r"god(?:son|daughter|mother|father|parents?|child(?:ren)?)|lodger|nanny|baby|bestie|buddy|pal)s?")
_FILED = r"^\s*(?:@(?P<filed>[^\W\d_][\w-]*(?:\.[^\W_]\w*)*)\s*:\s*)?"
# Any role named before an @person is theirs, not only a relative's: "Her flatmate @Nkechi works at
# a law firm", "His landlord @Ivo raised the rent" are Nkechi's and Ivo's. A relation owned by a name
# written without "@" ("Ana's husband sold the car") or put after one ("Awino, her flatmate, moved
# out") is someone else's too; the name must be capitalised (`_named_owner`), the pattern being
# case-blind. Another @person's thing opening the clause is theirs whatever the noun ("@Gwendolyn:
# @Ceridwen's retirement do was at the rugby club" tells of Ceridwen's do, not where Gwendolyn is).
_ABOUT_OTHER = lazy(
    _FILED + r"(?:(?:(?:his|her|their|my|our)\s+(?:\w+\s+)?[^\W\d_][\w-]*,?\s*(?P<named>@[^\W\d_][\w-]*))"
    r"|(?:(?:his|her|their|(?P<mine>my|our))|(?P<at>@)?(?P<owner>[^\W\d_][\w-]*)['’]s"
    r"|(?P<apos>[^\W\d_][\w-]*),\s+(?:his|her|their))\s+(?:\w+\s+)?(?P<rel>" + _RELATIVE + r")\b(?P<comma>\s*,)?"
    r"|@(?P<other>[^\W\d_][\w-]*)(?!['’]s|\s+and\b|[\w-])"
    r"|@(?P<owns>[^\W\d_][\w-]*)['’]s\s+[^\W\d_])",
    re.I,
)


def _named_owner(m: re.Match[str]) -> bool:
    """Whether a relation matched after a plain word ("Ana's husband", "Awino, her flatmate,") is
    owned by a name: capitalised, and not a word opening a sentence ("Today's", "It's")."""
    if m.group("apos") and not m.group("comma"):
        return False  # "Awino, her flatmate" must close its apposition: "Awino, her flatmate, moved"
    word = m.group("apos") or (m.group("owner") if m.group("at") is None else None)
    return word is None or (word[0].isupper() and word.lower() not in _NOT_OWNERS)


_NOT_OWNERS = frozenset("it that there here today tonight yesterday tomorrow this what who where everyone nobody "
                        "someone everybody somebody one".split())


# What follows a relation that stands alone as the line's first phrase: punctuation or the end.
_APPOSITION = lazy(r"\s*(?:[;:,.(—–]|-\s|$)")


def subject(content: str) -> str | None:
    """The entity key a statement is about, when it is not the first one it names (whom it is
    filed under): "@Linnea: @Anders opened his own studio" -> "anders", "Her husband @Anders is a
    designer" -> "anders", "His brother lives in Seoul" and "@Zoe's parents moved" -> "" (someone
    unnamed). None: the statement is about its first entity (or names none)."""
    if "@" not in content and not content[:5].lower().startswith(("his ", "her ", "thei", "my ", "our ")):
        return None
    m = _ABOUT_OTHER.match(content)
    if m is None or not _named_owner(m):
        return None
    if m.group("other") is not None or m.group("owns") is not None:
        other = entity_key(m.group("other") or m.group("owns"))
        filed = entity_key(m.group("filed") or "")
        return None if not filed or other == filed else other
    named = m.group("named")
    if named:
        return entity_key(named)
    if (m.group("mine") or m.group("owner") and m.group("at") is None) and m.group("filed") and _APPOSITION.match(content, m.end("rel")):
        # "@Gideon: My climbing partner; an A&E registrar ...", "@Tadeo: Xavier's partner; carries a
        # Pixel": the relation names who the filed entity is (no verb follows it), and what the line
        # goes on to say is theirs.
        return None
    return ""


def relation(content: str) -> str | None:
    """Whom an unnamed someone a statement is about is, as the filed entity's relation to them:
    "@Zoe: Her daughter moved to Leeds" -> "zoe's daughter", "@Zoe's parents moved" -> "zoe's
    parent" (a relation word in the singular). None when `subject` is not "" (someone named, or the
    filed entity itself) or no entity is filed."""
    if subject(content) != "":
        return None
    m = _ABOUT_OTHER.match(content)
    if m is None:
        return None
    owner = m.group("owner") or m.group("filed")
    if owner is None:
        keys = mention_keys(content)
        owner = keys[0] if keys else None
    rel = m.group("rel") or ""
    return _relation_key(owner, rel) if owner and rel else None


def _relation_key(owner: str, rel: str) -> str:
    rel = rel.lower()
    if rel.endswith("ren"):
        rel = rel[:-3]  # children -> child
    elif rel.endswith("s") and not rel.endswith("ss"):
        rel = rel[:-1]
    return f"{entity_key(owner)}'s {rel}"


# "Where does Zoe's son live?": a possessive name and a relation after it.
_ASKED_RELATION = lazy(r"(?P<owner>[^\W\d_][\w-]*)['’]s\s+(?:\w+\s+)?(?P<rel>" + _RELATIVE + r")\b", re.I)


def asked_relation(question: str, known: frozenset[str] | set[str]) -> str:
    """The relative of a known entity a question asks about, keyed as `relation` keys a line about
    them ("Where does Zoe's son live?" -> "zoe's son"); "" when it asks about no one's relative."""
    if "'" not in question and "’" not in question:
        return ""
    m = _ASKED_RELATION.search(question)
    if m is None or entity_key(m.group("owner")) not in known:
        return ""
    return _relation_key(m.group("owner"), m.group("rel"))


def about_someone_else(content: str) -> bool:
    """Whether a statement filed under an entity is about a relative, friend or another @person
    (`subject`): not a value of the filed entity's own attributes."""
    return subject(content) is not None


# --- renames and aliases -------------------------------------------------------------------------
# A rename or alias stated in memory text, e.g. "@relay (formerly warelay)", "the project formerly
# called warelay is now relay", "renamed warelay to relay", "warelay is now called relay",
# "Pete aka Peter". Names are single mention-like tokens (an optional "@" then _NAME); callers keep
# only pairs where a side is a known entity, because "renamed the repo to relay" names no old entity.
_N = r"@?(?P<{g}>[^\W\d_]\w*(?:[-.][^\W_]\w*)*)"
_CALLED = r"(?:called\s+|named\s+|known\s+as\s+)?"
_RENAME_FORMS = [
    lazy(_N.format(g="new") + r"\s*\(\s*(?:formerly|previously)\s+" + _CALLED + _N.format(g="old") + r"\s*\)", re.I),
    lazy(_N.format(g="new") + r",?\s+(?:formerly|previously)\s+" + _CALLED + _N.format(g="old"), re.I),
    lazy(r"\b(?:formerly|previously)\s+" + _CALLED + _N.format(g="old") + r",?\s+(?:is|was)\s+now\s+" + _CALLED
               + _N.format(g="new"), re.I),
    lazy(r"\brenamed\s+(?:from\s+)?" + _N.format(g="old") + r"\s+(?:to|as|into)\s+" + _N.format(g="new"), re.I),
    lazy(_N.format(g="old") + r"\s+(?:is|was)\s+now\s+(?:called|named|known\s+as)\s+" + _N.format(g="new"), re.I),
    lazy(r"\bnow\s+called\s+" + _N.format(g="new") + r",?\s+(?:formerly|previously)\s+" + _CALLED + _N.format(g="old"), re.I),
]
_AKA = lazy(_N.format(g="new") + r",?\s+(?:aka|a\.k\.a\.|also\s+known\s+as)\s+" + _N.format(g="old"), re.I)
# Words a pattern can catch that are never a renamed entity ("renamed the repo to relay").
_NOT_NAMES = frozenset("the a an it its this that his her their our my your repo project server service it's".split())
# Every statement `renames` reads holds one of these (a cheap filter before the patterns run).
RENAME_WORDS = ("formerly", "previously", "renamed", "now called", "now named", "aka", "a.k.a.", "also known as")
_ALIASES_LINE = lazy(r"^\s*aliases\s*:\s*(.*)$", re.I)


def renames(text: str) -> list[tuple[str, str]]:
    """(new, old) entity keys of every rename or alias the text states, in order: the page of `old`
    merges into the page of `new` (for "X aka Y", X is kept and Y is its alias)."""
    if "`" in text:
        text = _CODE_SPAN.sub(" ", text)
    found: list[tuple[str, str]] = []
    for form in (*_RENAME_FORMS, _AKA):
        for m in form.finditer(text):
            new, old = entity_key(m.group("new")), entity_key(m.group("old"))
            if new and old and new != old and new not in _NOT_NAMES and old not in _NOT_NAMES \
                    and (new, old) not in found:
                found.append((new, old))
    return found


def aliases_line(names: list[str]) -> str:
    """The one line a page records its aliases on: `aliases: warelay, wa-relay` (read by page_aliases)."""
    return "aliases: " + ", ".join(names)


def page_aliases(text: str) -> tuple[str, ...]:
    """Entity keys listed on `aliases:` lines of a page (see aliases_line), in order, deduplicated."""
    out: dict[str, None] = {}
    for line in text.splitlines():
        m = _ALIASES_LINE.match(line)
        if m:
            for name in m.group(1).split(","):
                key = entity_key(name.strip().strip("`*_"))
                if key:
                    out[key] = None
    return tuple(out)
