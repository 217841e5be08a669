"""@mentions, entity keys (for matching) and entity slugs (for bank/entities/<Slug>.md file names)."""

from __future__ import annotations

import re
import unicodedata

# A mention is "@" + a letter, then letters/digits/"_", with single "-" or "." joining word runs
# (so "@The-Castle" works and a trailing "." / ":" / "-" is punctuation, not part of the name).
# No apostrophe: "@Peter's car" is about Peter, and "'" could not be part of a file slug anyway.
# The character before "@" must not be a letter, digit, "_" or one of "@./+-": that rejects e-mail
# addresses ("a@b.com"), "@@x", URL paths ("/@user") and "x.@y".
_NAME = re.compile(r"[^\W\d_]\w*(?:[-.][^\W_]\w*)*")
_NOT_BEFORE = frozenset("@./+-")
_CODE_SPAN = re.compile(r"`+[^`\n]*`+")
_SEPARATORS = re.compile(r"[\s_\-]+")
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
