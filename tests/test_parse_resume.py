"""Resumed parsing (reusing an earlier version's unchanged prefix) must equal a full parse."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gitmem.parse import parse_markdown
from test_parse_props import PATHS, SETTINGS, texts


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
