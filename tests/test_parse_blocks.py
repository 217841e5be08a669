"""Chunking: heading paths, paragraphs, list items, fences, front matter, robustness, speed."""

from __future__ import annotations

import time

from gitmem.parse import Block, Section, parse_markdown, sections, split_lines


def spans(blocks: list[Block]) -> list[tuple[int, int]]:
    return [(b.start, b.end) for b in blocks]


def test_paragraphs_are_split_by_blank_lines_and_scoped_by_headings() -> None:
    doc = "# Day\n\nfirst para\nstill first\n\nsecond para\n## Work\nthird\n# Next\nfourth\n"
    pf = parse_markdown(doc, "notes.md")
    assert spans(pf.blocks) == [(3, 4), (6, 6), (8, 8), (10, 10)]
    assert [b.heading for b in pf.blocks] == [("Day",), ("Day",), ("Day", "Work"), ("Next",)]
    assert pf.blocks[0].text == "first para\nstill first"
    assert pf.blocks[0].content == "first para still first"
    assert all(b.kind == "note" and not b.fact for b in pf.blocks)
    assert pf.diagnostics == []


def test_heading_levels_pop_same_or_deeper_and_closing_hashes_are_stripped() -> None:
    doc = "# A #\n## B ##\n### C\nx\n## D\ny\n#### E\nz\n# C# notes\nw\n"
    pf = parse_markdown(doc, "n.md")
    assert [b.heading for b in pf.blocks] == [
        ("A", "B", "C"), ("A", "D"), ("A", "D", "E"), ("C# notes",),
    ]


def test_not_a_heading_without_space_or_too_indented() -> None:
    pf = parse_markdown("#hashtag line\n    # indented code\n", "n.md")
    assert spans(pf.blocks) == [(1, 2)]
    assert pf.blocks[0].heading == ()


def test_each_list_item_at_any_depth_is_its_own_block_with_continuations() -> None:
    doc = "- one\n  more of one\n  - child\n    more child\n- two\n1. three\n2) four\n* five\n+ six\n"
    pf = parse_markdown(doc, "n.md")
    assert spans(pf.blocks) == [(1, 2), (3, 4), (5, 5), (6, 6), (7, 7), (8, 8), (9, 9)]
    assert [b.content for b in pf.blocks] == [
        "one more of one", "child more child", "two", "three", "four", "five", "six",
    ]


def test_fenced_code_is_one_block_and_hides_headings_lists_and_mentions() -> None:
    doc = "# Top\n```python\n# not heading\n- not item\n@decorator\n```\nafter\n~~~~\n```\n~~~~\n"
    pf = parse_markdown(doc, "n.md")
    assert spans(pf.blocks) == [(2, 6), (7, 7), (8, 10)]
    code = pf.blocks[0]
    assert code.heading == ("Top",) and code.entities == ()
    assert code.content == "# not heading - not item @decorator"
    assert pf.blocks[1].heading == ("Top",)
    assert pf.blocks[2].content == "```"  # a shorter/different fence does not close a ~~~~ fence


def test_unclosed_fence_runs_to_end_of_file() -> None:
    pf = parse_markdown("text\n```\n# h\nmore", "n.md")
    assert spans(pf.blocks) == [(1, 1), (2, 4)]
    assert pf.blocks[1].heading == ()


def test_front_matter_is_one_block_only_at_the_top() -> None:
    doc = "---\ntitle: Peter\ntags: [a]\n---\n# Peter\nbody\n"
    pf = parse_markdown(doc, "bank/entities/Peter.md")
    assert spans(pf.blocks) == [(1, 4), (6, 6)]
    assert pf.blocks[0].heading == () and pf.blocks[1].heading == ("Peter",)
    # Not closed: no front matter; the "---" is a thematic break, the rest plain paragraphs.
    pf = parse_markdown("---\ntitle: x\n", "n.md")
    assert spans(pf.blocks) == [(2, 2)]


def test_thematic_breaks_end_blocks_and_are_not_blocks() -> None:
    pf = parse_markdown("- a\n***\n- b\n\n---\n\ntext\n", "n.md")
    assert spans(pf.blocks) == [(1, 1), (3, 3), (7, 7)]


def test_setext_headings() -> None:
    pf = parse_markdown("Title\n=====\nbody\n\nSub\n---\nmore\n", "n.md")
    assert spans(pf.blocks) == [(3, 3), (7, 7)]
    assert [b.heading for b in pf.blocks] == [("Title",), ("Title", "Sub")]


def test_sections_are_fence_aware_with_spans_and_the_retain_rule() -> None:
    text = ("---\n# not: a heading\n---\n# Day\n\n```\n## Retain\n```\n\nRetain:\n======\n"
            "### Sub\n- W: x\n## Notes\n- n\n")
    got = sections(text)
    assert got == [
        Section(4, 4, 9, 1, "Day", ("Day",)),
        Section(10, 11, 15, 1, "Retain:", ("Retain:",)),
        Section(12, 12, 13, 3, "Sub", ("Retain:", "Sub")),
        Section(14, 14, 15, 2, "Notes", ("Retain:", "Notes")),
    ]
    assert [(s.is_retain, s.in_retain) for s in got] == [(False, False), (True, True), (False, True), (False, True)]
    # The same rule makes the parser's facts: the item under "Sub" is a Retain fact.
    assert [b.start for b in parse_markdown(text, "x.md").blocks if b.fact] == [13]


def test_crlf_and_lone_cr_keep_exact_lines() -> None:
    doc = "# H\r\n\r\npara one\r\nline\rwith lone cr\r\n- item\r\n"
    pf = parse_markdown(doc, "n.md")
    lines = split_lines(doc)
    assert lines[3] == "line\rwith lone cr"
    assert spans(pf.blocks) == [(3, 4), (5, 5)]
    assert pf.blocks[0].text == "para one\nline\rwith lone cr"
    assert pf.blocks[0].content == "para one line with lone cr"
    assert pf.blocks[1].heading == ("H",)


def test_split_lines_is_git_line_numbering() -> None:
    assert split_lines("a\r\nb\n\x0bc\u2028d\r\r\n") == ["a", "b", "\x0bc\u2028d\r", ""]
    assert split_lines("") == [""]


def test_bytes_decode_replacement_is_reported_at_its_line() -> None:
    pf = parse_markdown(b"ok\nbad \xff byte @Peter\n", "n.md")
    assert [(d.line, d.code) for d in pf.diagnostics] == [(2, "decode-replaced")]
    assert pf.blocks[0].text == "ok\nbad \ufffd byte @Peter"
    assert pf.blocks[0].entities == ("peter",)


def test_bom_is_not_content() -> None:
    pf = parse_markdown("\ufeff---\na: 1\n---\nx\n".encode(), "n.md")
    assert spans(pf.blocks) == [(1, 3), (4, 4)]


def test_binary_and_too_large_give_no_blocks() -> None:
    pf = parse_markdown(b"# x\n\x00\x01\x02", "n.md")
    assert pf.blocks == [] and [d.code for d in pf.diagnostics] == ["binary"]
    pf = parse_markdown("a\x00b", "n.md")
    assert pf.blocks == [] and [d.code for d in pf.diagnostics] == ["binary"]
    pf = parse_markdown(b"x" * 101, "n.md", max_bytes=100)
    assert pf.blocks == [] and [d.code for d in pf.diagnostics] == ["too-large"]
    pf = parse_markdown("é" * 60, "n.md", max_bytes=100)  # 120 bytes of UTF-8
    assert [d.code for d in pf.diagnostics] == ["too-large"]
    assert parse_markdown(b"x" * 100, "n.md", max_bytes=100).blocks[0].text == "x" * 100


def test_empty_and_blank_files() -> None:
    for doc in ("", "\n\n\n", b"", "   \r\n\t\n"):
        pf = parse_markdown(doc, "n.md")
        assert pf.blocks == [] and pf.diagnostics == []


def test_event_time_of_notes_defaults_to_the_log_date() -> None:
    pf = parse_markdown("went out\n\nback on Nov 29\n", "memory/2025-11-27.md")
    assert [(b.event_start, b.event_end) for b in pf.blocks] == [
        ("2025-11-27", "2025-11-27"), ("2025-11-29", "2025-11-29"),
    ]
    pf = parse_markdown("went out\n\nback on Nov 29\n", "notes.md")
    assert [(b.event_start, b.event_end) for b in pf.blocks] == [(None, None), (None, None)]


def _daily_log() -> str:
    lines = ["# 2025-11-27", ""]
    for s in range(3):
        lines += [f"## Session {s}", ""]
        for p in range(3):
            lines += [
                f"Talked with @Peter about the deploy of warelay v{p}.{s}; it crashed on Nov {20 + s}.",
                "We agreed to wrap the handlers and retry with backoff; see `connection.update`.",
                "",
            ]
        lines += ["- checked logs on the box", "- restarted the service", "  - it came back after 30s", ""]
    lines += ["## Todo"] + [f"- follow up item {n} with @Andy" for n in range(55 - len(lines) - 1)]
    lines += [
        "## Retain",
        "- W @Peter: Currently in Marrakech (Nov 27–Dec 1, 2025) for Andy's birthday.",
        "- B @warelay: I fixed the Baileys WS crash by wrapping connection.update handlers in try/catch.",
        "- O(c=0.95) @Peter: Prefers concise replies (<1500 chars) on WhatsApp; long content goes into files.",
        "- S @The-Castle: quiet week, mostly maintenance.",
    ]
    return "\n".join(lines) + "\n"


def test_a_daily_log_parses_in_about_a_millisecond() -> None:
    from gitmem.parse import blocks

    data = _daily_log().encode()
    assert data.count(b"\n") == 60
    best = float("inf")
    for i in range(30):
        blocks._derive.cache_clear()  # measure the cold path: every block is new
        t = time.process_time()
        pf = parse_markdown(data + b" " * i, "memory/2025-11-27.md")
        best = min(best, time.process_time() - t)
    assert sum(b.fact for b in pf.blocks) == 4
    # Measured ~0.3-0.5 ms on a loaded 2-core box; the bound only catches an accidental blow-up
    # (a quadratic loop or a backtracking regex), not machine noise.
    assert best < 0.01


def test_large_input_is_linear() -> None:
    unit = _daily_log()
    # Distinct names per copy so the per-block memo cannot hide the cost of new text.
    copies = [unit.replace("Peter", f"Peter{i}").replace("Andy", f"Andy{i}") for i in range(2000)]
    small, big = "".join(copies[:200]), "".join(copies)  # ~0.5 MB and ~5 MB
    t = time.process_time()
    parse_markdown(small, "a.md")
    t_small = time.process_time() - t
    t = time.process_time()
    pf = parse_markdown(big, "a.md")
    t_big = time.process_time() - t
    assert len(pf.blocks) == len(parse_markdown(unit, "a.md").blocks) * 2000
    assert t_big < t_small * 25  # 10x the input: linear is ~10x, quadratic would be ~100x


def test_pathological_single_lines_are_fast() -> None:
    for doc in ("#" + " " * 200_000 + "x", "@" * 200_000, "- " * 100_000, "`" * 200_000,
                "1" * 200_000, "Nov " * 50_000, "a@" * 100_000, "(" * 100_000 + "O(c="):
        t = time.process_time()
        parse_markdown(doc, "memory/2025-11-27.md")
        assert time.process_time() - t < 2.0, doc[:10]


def test_whitespace_only_lines_are_blank() -> None:
    pf = parse_markdown("a\n\r\nb\n\x0c\u00a0\nc\n", "n.md")
    assert spans(pf.blocks) == [(1, 1), (3, 3), (5, 5)]
