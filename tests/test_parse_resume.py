"""Resumed parsing (reusing an earlier version's unchanged prefix) must equal a full parse."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gitmem.parse import parse_markdown
from test_parse_props import PATHS, SETTINGS, line, structured, texts


@SETTINGS
@given(base=texts, edits=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 60), texts), max_size=4),
       path=PATHS)
def test_resumed_parse_equals_full_parse(base: str, edits: list[tuple[int, int, str]], path: str) -> None:
    previous = parse_markdown(base, path)
    text = base
    for at, cut, insert in edits:
        at = min(at, len(text))
        text = text[:at] + insert + text[at + cut:]
        resumed = parse_markdown(text, path, previous=previous)
        full = parse_markdown(text, path)
        assert resumed.blocks == full.blocks
        assert resumed.diagnostics == full.diagnostics
        previous = resumed


def test_appending_to_a_daily_log_reuses_the_prefix() -> None:
    path = "memory/2025-11-27.md"
    text = "# 2025-11-27\n\nWorked.\n\n## Retain\n" + "".join(f"- W @Peter: fact {i}\n" for i in range(30))
    first = parse_markdown(text, path)
    grown = parse_markdown(text + "- B @Peter: one more\n", path, previous=first)
    assert grown.reused >= 30 and grown.blocks == parse_markdown(text + "- B @Peter: one more\n", path).blocks


def test_front_matter_and_unclosed_fences_are_never_resumed() -> None:
    fm = parse_markdown("---\ntitle: x\n---\n\n- a\n", "n.md")
    assert fm.resume is None
    fence = parse_markdown("- a\n\n```\ncode\n", "n.md")
    assert fence.resume is None
    assert parse_markdown("- a\n\n```\ncode\n- b\n", "n.md", previous=fence).reused == 0


line_edits = st.lists(
    st.tuples(st.integers(0, 40), st.integers(0, 3), st.lists(st.tuples(line, st.just("\n")).map("".join), max_size=3)),
    min_size=1, max_size=5,
)


@SETTINGS
@given(base=structured, edits=line_edits, path=PATHS)
def test_line_edits_in_the_middle_equal_a_full_parse(base: str, edits: list[tuple[int, int, list[str]]], path: str) -> None:
    """Whole lines added, removed or replaced anywhere (the shape of a real commit): the resumed
    parse, which also takes over the blocks of the unchanged end, equals a full parse, and so does
    the next parse resumed from it (its resume points moved with the lines)."""
    previous = parse_markdown(base, path)
    lines = base.splitlines(keepends=True)
    for at, cut, insert in edits:
        at = min(at, len(lines))
        lines[at : at + cut] = insert
        text = "".join(lines)
        resumed = parse_markdown(text, path, previous=previous)
        full = parse_markdown(text, path)
        assert resumed.blocks == full.blocks
        assert resumed.diagnostics == full.diagnostics
        assert resumed.reused + resumed.reused_tail <= len(full.blocks)
        previous = resumed


def test_a_line_added_above_the_retain_section_takes_over_the_facts_below() -> None:
    path = "memory/2025-11-27.md"
    head = "# 2025-11-27\n\nWorked on the bridge.\n\n"
    retain = "## Retain\n" + "".join(f"- W @Peter: fact {i} on 2025-11-{i + 1:02d}\n" for i in range(20))
    first = parse_markdown(head + retain, path)
    grown_text = head + "Then the backup job.\n\n" + retain
    grown = parse_markdown(grown_text, path, previous=first)
    assert grown.reused_tail == 20  # every fact below the new paragraph, moved two lines down
    assert grown.blocks == parse_markdown(grown_text, path).blocks
    assert [b.start for b in grown.blocks[-20:]] == [b.start + 2 for b in first.blocks[-20:]]


def test_a_later_closing_line_turns_line_one_into_front_matter() -> None:
    # "---" on line 1 opens front matter only once a closing line exists: the version without one
    # must not be resumed, or the new front matter block would be missed.
    first = parse_markdown("---\ntitle: x\n\n- a\n", "n.md")
    assert first.resume is None
    text = "---\ntitle: x\n---\n- a\n"
    assert parse_markdown(text, "n.md", previous=first).blocks == parse_markdown(text, "n.md").blocks
