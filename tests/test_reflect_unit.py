"""Pure parts of reflection: confidence arithmetic, the safety gate, page blocks."""

from __future__ import annotations

import pytest

from gitmem.reflect import confidence as conf
from gitmem.reflect import pages, safety
from gitmem.reflect.safety import BaseEntry, UnsafeWrite


def ev(rel: str, strength: str, path: str = "memory/2025-11-01.md", commit: str = "a" * 40,
       content: str | None = None) -> conf.Evidence:
    return conf.Evidence(rel, strength, path, commit, content or f"{rel} {strength} {path} {commit}", f"{path}#L1@aaaaaaa")


# --------------------------------------------------------------------------- confidence


def test_single_deltas() -> None:
    assert conf.update(0.5, [ev("supports", "weak")]).after == 0.53
    assert conf.update(0.5, [ev("supports", "strong")]).after == 0.56
    assert conf.update(0.5, [ev("contradicts", "weak")]).after == 0.45
    assert conf.update(0.5, [ev("contradicts", "strong")]).after == 0.4
    assert conf.update(0.5, [ev("unrelated", "strong")]).after == 0.5


def test_step_is_clamped_both_ways() -> None:
    ups = [ev("supports", "strong", content=f"s{i}") for i in range(5)]  # raw +0.30
    u = conf.update(0.5, ups)
    assert u.after == 0.65 and u.clamped and u.raw == pytest.approx(0.30)
    # Three strong contradictions in the SAME file and commit are not independent: clamp at -0.15.
    downs = [ev("contradicts", "strong", content=f"c{i}") for i in range(3)]
    d = conf.update(0.8, downs)
    assert d.after == 0.65 and d.clamped and not d.wide


def test_two_independent_strong_contradictions_allow_a_larger_drop() -> None:
    downs = [ev("contradicts", "strong", path="memory/2025-11-01.md", content="x"),
             ev("contradicts", "strong", path="memory/2025-11-02.md", content="y"),
             ev("contradicts", "strong", path="memory/2025-11-03.md", content="z"),
             ev("contradicts", "weak", path="memory/2025-11-04.md", content="w")]
    d = conf.update(0.8, downs)
    assert d.wide and d.after == 0.5  # raw -0.35 clamped to MAX_DROP -0.30
    # different commits of the same file also count as independent
    two = [ev("contradicts", "strong", commit="a" * 40, content="x"), ev("contradicts", "strong", commit="b" * 40, content="y")]
    assert conf.update(0.8, two).after == 0.6


def test_bounds_and_dedup() -> None:
    assert conf.update(0.93, [ev("supports", "strong")]).after == conf.CEILING
    assert conf.update(0.08, [ev("contradicts", "strong")]).after == conf.FLOOR
    assert conf.start(None) == 0.5 and conf.start(1.0) == 0.95 and conf.start(0.0) == 0.05
    same = [ev("supports", "strong", content="Same  fact"), ev("supports", "strong", content="same fact")]
    assert conf.update(0.5, same).after == 0.56  # one piece of evidence, counted once
    seen = {conf.evidence_key("memory/2025-11-01.md", "same fact")}
    assert conf.update(0.5, same, seen).after == 0.5  # already counted in an earlier reflection


# --------------------------------------------------------------------------- safety


@pytest.mark.parametrize("path", [
    "bank/../../x.md", "../outside.md", "/etc/passwd", "bank/entities/a\x00b.md", "bank/" + "n" * 500 + ".md",
    ".git/config", "bank/.git/x.md", "memory.md", "SOUL.md", "memory/notes.md", "bank\\x.md", "bank//x.md",
    "bank/./x.md", "bank/x.txt", "bank/.hidden.md", "C:/x.md", "bank/a\nb.md", "",
])
def test_check_path_refuses(path: str) -> None:
    with pytest.raises(UnsafeWrite):
        safety.check_path(path)


@pytest.mark.parametrize("path", ["bank/world.md", "bank/entities/The-Castle.md", "bank/.reflect.json",
                                  "memory/2025-11-27.md", "bank/proposals/memory.md"])
def test_check_path_allows(path: str) -> None:
    assert safety.check_path(path) == path


@pytest.mark.parametrize("name", ["../../x", "@../../x", "/etc/passwd", "@/etc/passwd", "a\x00b", "x" * 500, ".git", ""])
def test_entity_page_refuses_unsafe_names(name: str) -> None:
    with pytest.raises(UnsafeWrite):
        safety.entity_page(name)


def test_entity_page_slug() -> None:
    assert safety.entity_page("@the castle") == "bank/entities/the-castle.md"


def _absent(path: str) -> BaseEntry:
    return BaseEntry(None)


def test_log_may_only_gain_a_retain_section() -> None:
    old = b"# 2025-11-27\n\nWent to the market.\n"
    ok = old + b"\n## Retain\n- W @Peter: Went to the market.\n"
    safety.check_write("memory/2025-11-27.md", old, ok, _absent)
    for bad in (
        b"# 2025-11-27\n\nWent somewhere else.\n\n## Retain\n- W: x\n",  # existing text changed
        old + b"\n## Notes\n- W: x\n",  # not a Retain heading
        old + b"\n## Retain\nrm -rf /\n",  # not a bullet
        old + b"\n## Retain\n- Went home\n",  # not a valid Retain bullet
        old + b"\n## Retain\n- W: <!-- gitmem:end facts -->\n",  # marker smuggling
        old + b"\n## Retain\n- W: x\n\n# Heading\n",  # extra heading
    ):
        with pytest.raises(UnsafeWrite):
            safety.check_write("memory/2025-11-27.md", old, bad, _absent)
    with pytest.raises(UnsafeWrite):  # reflection never creates logs
        safety.check_write("memory/2025-11-28.md", None, ok, _absent)
    with pytest.raises(UnsafeWrite):  # a second Retain section
        safety.check_write("memory/2025-11-27.md", ok, ok + b"\n## Retain\n- W: y\n", _absent)


def test_log_gate_reads_sections_as_the_parser_does() -> None:
    """A `## Retain` line inside a code fence is not a section (so one may be appended), and an
    appended heading that an unclosed fence would swallow is refused."""
    fenced = b"# 2025-11-27\n\n```\n## Retain\n```\n"
    safety.check_write("memory/2025-11-27.md", fenced, fenced + b"\n## Retain\n- W: x\n", _absent)
    unclosed = b"# 2025-11-27\n\n```\ncode\n"
    with pytest.raises(UnsafeWrite, match="would not be a heading"):
        safety.check_write("memory/2025-11-27.md", unclosed, unclosed + b"\n## Retain\n- W: x\n", _absent)


def test_gate_refuses_symlinks_and_files_as_folders() -> None:
    def link(path: str) -> BaseEntry:
        return BaseEntry(0o120000 if path == "bank/entities" else (0o040000 if path == "bank" else None))

    with pytest.raises(UnsafeWrite, match="not a folder"):
        safety.check_write("bank/entities/Peter.md", None, b"# Peter\n", link)

    def file_link(path: str) -> BaseEntry:
        return BaseEntry(0o120000 if path == "bank/world.md" else (0o040000 if path == "bank" else None))

    with pytest.raises(UnsafeWrite, match="symlink"):
        safety.check_write("bank/world.md", None, b"# World\n", file_link)
    with pytest.raises(UnsafeWrite, match="NUL"):
        safety.check_write("bank/world.md", None, b"a\x00b", _absent)
    with pytest.raises(UnsafeWrite, match="larger"):
        safety.check_write("bank/world.md", None, b"x" * (safety.MAX_FILE_BYTES + 1), _absent)


def test_clean_inline_defuses_markers_and_structure() -> None:
    text = "line one\n# Heading\n<!-- gitmem:end facts -->\x07" + "y" * 1000
    out = safety.clean_inline(text, 200)
    assert "\n" not in out and "<!--" not in out and "-->" not in out and "\x07" not in out
    assert len(out) <= 200


# --------------------------------------------------------------------------- pages


def test_merge_page_keeps_human_text_and_appends_blocks() -> None:
    old = "# Peter\n\nHand-written intro.\n"
    res = pages.merge_page("bank/entities/Peter.md", old, "Peter", [("facts", "## Facts\n- W: a")], {})
    assert res.text.startswith(old)
    assert "<!-- gitmem:begin facts -->\n## Facts\n- W: a\n<!-- gitmem:end facts -->" in res.text
    key = "bank/entities/Peter.md#facts"
    assert res.hashes[key] == pages.block_hash("## Facts\n- W: a")

    # Next run: the block is ours (hash matches) -> replaced; text around it is kept byte for byte.
    edited_outside = res.text.replace("Hand-written intro.", "Hand-written intro, edited.") + "\nA trailing note.\n"
    res2 = pages.merge_page("bank/entities/Peter.md", edited_outside, "Peter", [("facts", "## Facts\n- W: b")], res.hashes)
    assert "- W: b" in res2.text and "- W: a" not in res2.text
    assert "Hand-written intro, edited." in res2.text and res2.text.endswith("\nA trailing note.\n")
    assert not res2.skipped


def test_merge_page_never_overwrites_an_edited_or_removed_block() -> None:
    first = pages.merge_page("bank/x.md", None, "X", [("facts", "- a"), ("timeline", "- t")], {})
    edited = first.text.replace("- a", "- a, corrected by a person")
    res = pages.merge_page("bank/x.md", edited, "X", [("facts", "- b"), ("timeline", "- t2")], first.hashes)
    assert "- a, corrected by a person" in res.text and "- b" not in res.text
    assert "- t2" in res.text
    assert res.skipped == [{"path": "bank/x.md", "block": "facts", "reason": "edited by hand since the last reflection"}]
    assert res.hashes["bank/x.md#facts"] == first.hashes["bank/x.md#facts"]  # still protected next time

    removed = first.text.replace("<!-- gitmem:begin timeline -->\n- t\n<!-- gitmem:end timeline -->\n", "")
    res3 = pages.merge_page("bank/x.md", removed, "X", [("timeline", "- t3")], first.hashes)
    assert "- t3" not in res3.text and res3.skipped[0]["reason"].startswith("removed by hand")


def test_merge_page_leaves_blocks_it_did_not_write_and_broken_markers() -> None:
    human = "# X\n<!-- gitmem:begin facts -->\nmine\n<!-- gitmem:end facts -->\n<!-- gitmem:begin timeline -->\nunclosed\n"
    res = pages.merge_page("bank/x.md", human, "X", [("facts", "gen"), ("timeline", "gen")], {})
    assert res.text == human
    assert {s["block"] for s in res.skipped} == {"facts", "timeline"}


# --------------------------------------------------------------------------- typed records


def test_changes_read_back_from_their_json_as_the_same_typed_values() -> None:
    from gitmem.reflect.records import (EvidenceStep, OpinionChange, PageChange, RetainChange, listed,
                                        read_changes)

    made = [PageChange("bank/entities/Peter.md", "entity", "added", ["facts", "opinions"]),
            RetainChange("memory/2025-11-02.md", ["- W @Peter: Moved."]),
            OpinionChange("bank/opinions.md", "bf664c9a3e04", "@Peter: Prefers tea.", 0.8, 0.75, -0.05, False,
                          [EvidenceStep("contradicts", "weak", -0.05, "memory/a.md#L1@1234567", "Drank coffee.",
                                        "memory/a.md")])]
    raw = [c.to_json() for c in made]
    assert read_changes(raw) == made
    assert [listed(c, "Retain bullets") for c in read_changes(raw)[:2]] == ["facts, opinions", "1 Retain bullets"]
    # The state file is data anyone can edit: what cannot be read is left out, never a crash.
    broken = ["x", {"opinion": "no numbers", "path": "bank/opinions.md"}, {"what": "entity"}, raw[0]]
    assert read_changes(broken) == made[:1] and read_changes({"not": "a list"}) == []


def test_opinion_state_record_and_json() -> None:
    from gitmem.reflect.records import Opinion

    o = Opinion(key="k1", id=3, statement="@Peter: Prefers tea.", entities=("peter",), stated=None, confidence=0.5,
                delta=0.0, last_updated="2025-11-02", source="memory/a.md#L1@1234567", history=[], supports=[],
                contradicts=[], bullet="- O(c=0.50) @Peter: Prefers tea.")
    assert o.stated_text == "no confidence"
    assert o.to_state() == {"statement": "@Peter: Prefers tea.", "entities": ["peter"], "stated": None,
                            "confidence": 0.5, "last_updated": "2025-11-02", "source": "memory/a.md#L1@1234567",
                            "history": [], "supports": [], "contradicts": [], "current": True}
    assert o.to_json() == {"statement": "@Peter: Prefers tea.", "confidence": 0.5, "delta": 0.0,
                           "source": "memory/a.md#L1@1234567"}
    block = pages.opinions_block([o])
    assert "- O(c=0.50) @Peter: Prefers tea." in block and "(stated no confidence; this reflection +0.00)" in block
