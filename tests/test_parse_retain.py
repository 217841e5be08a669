"""The Retain grammar: kinds, confidence, sections, and every diagnostic."""

from __future__ import annotations

import pytest

from gitmem.parse import Diagnostic, RetainFact, parse_markdown, parse_retain_bullet

LOG = "memory/2025-11-27.md"


def facts(doc: str, path: str = LOG):
    pf = parse_markdown(doc, path)
    return pf.blocks, pf.diagnostics


def test_the_design_example() -> None:
    doc = (
        "# 2025-11-27\n\n## Retain\n"
        "- W @Peter: Currently in Marrakech (Nov 27–Dec 1, 2025) for Andy's birthday.\n"
        "- B @warelay: I fixed the Baileys WS crash by wrapping connection.update handlers in try/catch.\n"
        "- O(c=0.95) @Peter: Prefers concise replies (<1500 chars) on WhatsApp; long content goes into files.\n"
        "- S @The-Castle: Quiet week.\n"
    )
    blocks, diags = facts(doc)
    assert diags == []
    assert [(b.start, b.kind, b.fact, b.confidence) for b in blocks] == [
        (4, "world", True, None), (5, "experience", True, None),
        (6, "opinion", True, 0.95), (7, "observation", True, None),
    ]
    w = blocks[0]
    assert w.heading == ("2025-11-27", "Retain")
    assert w.content == "@Peter: Currently in Marrakech (Nov 27–Dec 1, 2025) for Andy's birthday."
    assert w.text.startswith("- W @Peter")
    assert w.entities == ("peter",)
    assert (w.event_start, w.event_end) == ("2025-11-27", "2025-12-01")
    assert (blocks[1].event_start, blocks[1].event_end) == ("2025-11-27", "2025-11-27")
    assert blocks[2].content.startswith("@Peter: Prefers")
    assert blocks[3].entities == ("the-castle",)


def test_retain_heading_any_level_and_case_and_section_end() -> None:
    doc = (
        "# Day\n- W not a fact: outside Retain\n"
        "### retain\n- W @a: fact one\n#### Sub of retain\n- B fact two\n"
        "### Later\n- W not a fact again\n"
        "# RETAIN\n- S fact three\n"
    )
    blocks, diags = facts(doc)
    assert [(b.start, b.fact) for b in blocks] == [(2, False), (4, True), (6, True), (8, False), (10, True)]
    assert blocks[0].content == "W not a fact: outside Retain"
    assert diags == []  # bullets outside Retain are free text


def test_continuation_lines_belong_to_the_fact_and_nested_items_are_notes() -> None:
    doc = "## Retain\n- W @Peter: moved to\n  Lisbon in 2025-12-03.\n  - evidence: his message\n- no kind\n"
    blocks, diags = facts(doc)
    assert [(b.start, b.end, b.kind) for b in blocks] == [(2, 3, "world"), (4, 4, "note"), (5, 5, "note")]
    assert blocks[0].content == "@Peter: moved to Lisbon in 2025-12-03."
    assert blocks[0].event_start == "2025-12-03"
    assert [(d.line, d.code) for d in diags] == [(5, "retain-missing-kind")]


def test_paragraphs_and_code_in_retain_are_notes_without_diagnostics() -> None:
    blocks, diags = facts("## Retain\nJust prose.\n\n```\n- X nope\n```\n")
    assert [b.kind for b in blocks] == ["note", "note"] and diags == []


@pytest.mark.parametrize(
    ("bullet", "code"),
    [
        ("- X @Peter: unknown kind", "retain-unknown-kind"),
        ("- Q(c=0.5) unknown with confidence", "retain-unknown-kind"),
        ("- w lower-case kind", "retain-unknown-kind"),
        ("- O(c=1.7) too confident", "retain-bad-confidence"),
        ("- O(c=abc) not a number", "retain-bad-confidence"),
        ("- O(0.5) no c=", "retain-bad-confidence"),
        ("- O(c=-0.1) negative", "retain-bad-confidence"),
        ("- O() empty", "retain-bad-confidence"),
        ("- W(c=0.9) confidence on world", "retain-confidence-not-opinion"),
        ("- O(c=0.9 never closed", "retain-unclosed-paren"),
        ("- @Peter: no kind at all", "retain-missing-kind"),
        ("- Went home early", "retain-missing-kind"),
        ("- **W** emphasis is not a kind", "retain-missing-kind"),
        ("- W", "retain-empty-fact"),
        ("- O(c=0.5):  ", "retain-empty-fact"),
    ],
)
def test_malformed_bullets_are_notes_with_a_diagnostic(bullet: str, code: str) -> None:
    doc = f"# 2025-11-27\n## Retain\n- W fine\n{bullet}\n- B fine too\n"
    blocks, diags = facts(doc)
    assert [(b.start, b.kind, b.fact, b.confidence) for b in blocks][1] == (4, "note", False, None)
    assert [b.fact for b in blocks] == [True, False, True]
    assert [(d.path, d.line, d.code) for d in diags] == [(LOG, 4, code)]
    assert diags[0].message
    assert blocks[1].content == " ".join(bullet[2:].split())  # only the marker is stripped


@pytest.mark.parametrize(
    ("bullet", "kind", "confidence", "content"),
    [
        ("- O(c=0) never", "opinion", 0.0, "never"),
        ("- O(c=1) always", "opinion", 1.0, "always"),
        ("- O(c=.5) half", "opinion", 0.5, "half"),
        ("- O( c = 0.25 ) spaced", "opinion", 0.25, "spaced"),
        ("- O plain opinion", "opinion", None, "plain opinion"),
        ("* W star marker", "world", None, "star marker"),
        ("1. B numbered", "experience", None, "numbered"),
        ("- S: colon after kind", "observation", None, "colon after kind"),
        ("-   W   spaced   out", "world", None, "spaced out"),
    ],
)
def test_valid_variants(bullet: str, kind: str, confidence: float | None, content: str) -> None:
    blocks, diags = facts(f"## Retain\n{bullet}\n")
    assert diags == []
    b = blocks[0]
    assert (b.kind, b.fact, b.confidence, b.content) == (kind, True, confidence, content)


def test_parse_retain_bullet_for_the_retain_command() -> None:
    fact = parse_retain_bullet("- O(c=0.8) @Peter: likes  @The_Castle.")
    assert fact == RetainFact("opinion", "O", 0.8, "@Peter: likes @The_Castle.", ("peter", "the-castle"))
    assert parse_retain_bullet("W @warelay: shipped") == RetainFact(
        "world", "W", None, "@warelay: shipped", ("warelay",)
    )
    bad = parse_retain_bullet("O(c=2) nope", path="memory/2025-11-27.md", lineno=9)
    assert isinstance(bad, Diagnostic)
    assert (bad.path, bad.line, bad.code) == ("memory/2025-11-27.md", 9, "retain-bad-confidence")
    multi = parse_retain_bullet("W one\n## Retain")
    assert isinstance(multi, Diagnostic) and multi.code == "retain-multiline"
    assert isinstance(parse_retain_bullet(""), Diagnostic)
    assert parse_retain_bullet("- X y").code == "retain-unknown-kind"  # type: ignore[union-attr]


def test_an_alias_bullet_is_a_valid_note_naming_its_entity() -> None:
    from gitmem.parse import Alias, alias_of

    doc = "# 2025-11-27\n\n## Retain\n- alias: @Robert = Bob, Bobby\n- Alias:@Mary-Ann= \"Annie\"\n"
    blocks, diags = facts(doc)
    assert diags == []
    assert [(b.kind, b.fact, b.entities, b.content) for b in blocks] == [
        ("note", False, ("robert",), "alias: @Robert = Bob, Bobby"),
        ("note", False, ("mary-ann",), 'Alias:@Mary-Ann= "Annie"'),
    ]
    assert alias_of(blocks[0].content) == Alias("robert", ("Bob", "Bobby"))
    assert alias_of(blocks[1].content) == Alias("mary-ann", ("Annie",))
    assert alias_of("W @Robert: aliases are fun") is None


@pytest.mark.parametrize("bullet", ["- alias: Robert = Bob", "- alias: @Robert", "- alias: @Robert = ",
                                    "- alias: @Robert = Robert", "- alias: @Robert = Bob = Bobby"])
def test_a_malformed_alias_bullet_gets_a_diagnostic(bullet: str) -> None:
    blocks, diags = facts(f"# 2025-11-27\n\n## Retain\n{bullet}\n")
    assert [(d.line, d.code) for d in diags] == [(4, "retain-bad-alias")]
    assert "`- alias: @Robert = Bob, Bobby`" in diags[0].message
    assert blocks[0].kind == "note"


def test_the_retain_command_takes_an_alias_and_the_fact_check_does_not() -> None:
    from gitmem.parse import Alias, parse_retain_line

    assert parse_retain_line("- alias: @Robert = Bob, Bobby") == Alias("robert", ("Bob", "Bobby"))
    assert parse_retain_line("alias: @Robert =").code == "retain-bad-alias"  # type: ignore[union-attr]
    # Reflection's gates ask for facts: a drafted alias would rename an entity for every question.
    got = parse_retain_bullet("alias: @Robert = Bob")
    assert isinstance(got, Diagnostic) and got.code == "retain-alias-not-fact"
