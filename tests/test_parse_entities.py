"""@mentions, entity keys and safe slugs."""

from __future__ import annotations

import pytest

from gitmem.parse import entity_key, entity_slug, mention_keys, mentions, parse_markdown


@pytest.mark.parametrize("name", ["The Castle", "The-Castle", "@the_castle", "THE castle", "  the--castle ", "The_ Castle"])
def test_entity_key_normalises_case_and_separators(name: str) -> None:
    assert entity_key(name) == "the-castle"


def test_entity_key_unicode() -> None:
    assert entity_key("José") == entity_key("Jose\u0301") == "josé"
    assert entity_key("@Zoë_Ann") == "zoë-ann"
    assert entity_key("@") == ""


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("- W @Peter: hi", ["Peter"]),
        ("mail a@b.com or peter.smith@example.org", []),
        ("@The-Castle, @the_castle and @warelay.", ["The-Castle", "the_castle", "warelay"]),
        ("(@José) @Zoë's @node.js", ["José", "Zoë", "node.js"]),
        ("trailing @Peter- and @Ann_ @Bob:", ["Peter", "Ann_", "Bob"]),
        ("@@double @123 @-x @ nobody", []),
        ("https://x.com/@user and +@y", []),
        ("in code `@decorator` not, but @real yes", ["real"]),
        ("@start of text", ["start"]),
    ],
)
def test_mentions(text: str, names: list[str]) -> None:
    assert mentions(text) == names


def test_mention_keys_dedupe_in_order() -> None:
    assert mention_keys("@Peter met @The_Castle then @peter and @The-Castle, @Andy") == ("peter", "the-castle", "andy")


def test_mentions_in_any_block_become_entities() -> None:
    pf = parse_markdown("# @Heading not a block\nSaw @Peter.\n\n- item with @Andy\n", "notes.md")
    assert [b.entities for b in pf.blocks] == [("peter",), ("andy",)]


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("The Castle", "The-Castle"),
        ("@the_castle", "the-castle"),
        ("Peter", "Peter"),
        ("warelay", "warelay"),
        ("José", "José"),
        ("node.js", "node.js"),
        ("  spaced   name ", "spaced-name"),
        ("a" * 80, "a" * 80),
    ],
)
def test_entity_slug_keeps_casing_and_is_safe(name: str, slug: str) -> None:
    assert entity_slug(name) == slug
    assert entity_key(entity_slug(name)) == entity_key(name)


@pytest.mark.parametrize(
    "name",
    ["", "   ", "@", "../etc/passwd", "a/b", "a\\b", "nul\x00byte", ".hidden", "a..b", "a" * 81,
     "what?", "x:y", "semi;colon", "full\uff0fwidth", "tab\x07bell"],
)
def test_entity_slug_rejects_unsafe_names(name: str) -> None:
    with pytest.raises(ValueError):
        entity_slug(name)
