"""Property tests: parse_markdown never raises and its line ranges are always exact."""

from __future__ import annotations

from datetime import date

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.parse import decode, entity_key, entity_slug, mentions, parse_event_time, parse_markdown, split_lines
from gitmem.parse.model import KIND_LETTERS

# Markdown-ish fragments so generated text actually exercises headings, lists, fences, Retain
# sections, confidence prefixes, mentions, dates and line endings (pure random text rarely does).
FRAGMENTS = [
    "#", "## ", "### Retain", "## Retain\n", "Retain", "-", "- ", "* ", "+ ", "1. ", "2) ", "  ", "    ", "\t",
    "`", "```", "~~~", "---", "...", "===", "@", "@Peter", "@The-Castle", "a@b.com", "(", ")", "c=", "O(c=",
    "O(c=0.9) ", "W ", "B ", "S ", "X ", "0", "1", "1.7", "2025", "-11-27", "Nov 27", "–", "Dec 1, 2025",
    "\n", "\n\n", "\r", "\r\n", "\x00", "\ufeff", "é", "José", " ", "text", ":", ".",
]
LINE_STARTS = ["", "", "# ", "### ", "- ", "  - ", "    - ", "* ", "1. ", "```", "~~~", "---", "> "]
KIND_STARTS = ["", "W ", "B ", "S ", "O ", "O(c=0.5) ", "O(c=", "X ", "W(c=0.1) "]
fragment_run = st.lists(st.sampled_from(FRAGMENTS), max_size=8).map("".join)
line = st.one_of(
    st.sampled_from(["## Retain", "# Retain", "### retain ###", "## Other", "Retain", "==="]),
    st.tuples(st.sampled_from(LINE_STARTS), st.sampled_from(KIND_STARTS), fragment_run).map("".join),
    st.tuples(st.sampled_from(["- ", "* ", "1. "]), st.sampled_from(KIND_STARTS), fragment_run).map("".join),
)
ending = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r", "\n\n"])
# Line-shaped documents: most lines start like Markdown structure, so Retain sections with valid
# and broken facts, nested lists and fences occur often, not by luck.
structured = st.lists(st.tuples(line, ending).map("".join), max_size=25).map("".join)
markdownish = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join)
texts = st.one_of(structured, markdownish, st.text(max_size=300))
PATHS = st.sampled_from(["memory/2025-11-27.md", "notes.md", "memory/2024-02-29.md"])

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_invariants(text: str, path: str) -> None:
    pf = parse_markdown(text, path)
    assert all(d.code != "internal-error" for d in pf.diagnostics), pf.diagnostics
    lines = split_lines(text)
    prev_end = 0
    for b in pf.blocks:
        assert 1 <= b.start <= b.end <= len(lines)
        assert b.start > prev_end  # ordered, non-overlapping
        prev_end = b.end
        assert "\n".join(lines[b.start - 1 : b.end]) == b.text
        assert b.kind in (*KIND_LETTERS.values(), "note")
        assert b.fact == (b.kind != "note")
        assert b.confidence is None or (b.kind == "opinion" and 0.0 <= b.confidence <= 1.0)
        assert (b.event_start is None) == (b.event_end is None)
        assert b.event_start is None or b.event_start <= b.event_end  # type: ignore[operator]
        assert len(set(b.entities)) == len(b.entities) and all(b.entities)
        assert " " * 2 not in b.content and b.content == b.content.strip()
    for d in pf.diagnostics:
        assert d.path == path and 1 <= d.line <= max(len(lines), 1)


@SETTINGS
@given(texts, PATHS)
def test_text_never_raises_and_ranges_are_exact(text: str, path: str) -> None:
    check_invariants(text, path)


@SETTINGS
@given(st.one_of(st.binary(max_size=300), markdownish.map(lambda s: s.encode("utf-8", "surrogatepass"))), PATHS)
def test_bytes_never_raise(data: bytes, path: str) -> None:
    pf = parse_markdown(data, path)
    assert all(d.code != "internal-error" for d in pf.diagnostics)
    if b"\x00" in data[:8192]:
        assert pf.blocks == [] and [d.code for d in pf.diagnostics] == ["binary"]
    else:
        text, _ = decode(data)
        lines = split_lines(text)
        for b in pf.blocks:
            assert "\n".join(lines[b.start - 1 : b.end]) == b.text


@SETTINGS
@given(texts)
def test_event_time_never_raises(text: str) -> None:
    start, end = parse_event_time(text, None)
    assert (start is None) == (end is None)
    start, end = parse_event_time(text, date(2025, 11, 27))
    assert start is not None and end is not None and start <= end


@SETTINGS
@given(st.text(max_size=100))
def test_entity_slug_is_safe_or_raises_value_error(name: str) -> None:
    try:
        slug = entity_slug(name)
    except ValueError:
        return
    assert slug and len(slug) <= 80 and not slug.startswith(".") and ".." not in slug
    assert not any(c in slug for c in "/\\\x00:*?\"<>| ")
    assert entity_key(slug) == entity_key(name)


@SETTINGS
@given(texts)
def test_every_mention_has_a_slug(text: str) -> None:
    # Reflection turns each mentioned entity into bank/entities/<slug>.md: a mention the parser
    # accepts must never be refused as a file name (other than for its length).
    for name in mentions(text):
        if len(name) <= 80:
            assert entity_key(entity_slug(name)) == entity_key(name)
