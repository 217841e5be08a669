"""The merge driver's rules on three versions of a file (the git wiring is in test_two_machines.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import GitRepo
from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem.merge_driver import merge_markdown, merge_paths
from gitmem.reflect import pages
from gitmem.reflect.state import State
from gitmem.reflect.state_merge import merge_state_bytes

LOG = "memory/2025-11-27.md"
BASE = "# 2025-11-27\n\nWent to the market.\n\n## Retain\n- W @Peter: Lives in Berlin.\n"


def test_both_sides_append_bullets_kept_once_ordered_by_time_then_text(repo: GitRepo) -> None:
    ours = BASE + "- W @Peter: Likes tea.\n- B: I booked the flight.\n"
    theirs = BASE + "- W @Anna: Arrives Nov 28, 2025.\n- W @Peter: Likes tea.\n- S: Zebra crossing fixed.\n"
    got = merge_markdown(repo.path, LOG, BASE, ours, theirs)
    assert got.conflicts == 0
    lines = got.text.splitlines()
    assert lines[:6] == BASE.splitlines()
    # No date in the text: the log's day (2025-11-27) sorts before Anna's Nov 28; then by text.
    assert lines[6:] == ["- B: I booked the flight.", "- S: Zebra crossing fixed.", "- W @Peter: Likes tea.",
                         "- W @Anna: Arrives Nov 28, 2025."]
    # The same merge from the other side gives the same file: which machine merges does not matter.
    assert merge_markdown(repo.path, LOG, BASE, theirs, ours).text == got.text


def test_new_file_on_both_machines(repo: GitRepo) -> None:
    ours = "# 2025-11-27\n\n## Retain\n- W @Peter: Lives in Lisbon.\n"
    theirs = "# 2025-11-27\n\n## Retain\n- B: I called Anna.\n"
    got = merge_markdown(repo.path, LOG, "", ours, theirs)
    assert got.conflicts == 0
    assert got.text == "# 2025-11-27\n\n## Retain\n- B: I called Anna.\n- W @Peter: Lives in Lisbon.\n"


def test_edits_on_both_sides_of_one_line_are_an_ordinary_conflict(repo: GitRepo) -> None:
    ours = BASE.replace("Berlin", "Lisbon") + "- W: ours new.\n"
    theirs = BASE.replace("Berlin", "Porto") + "- W: theirs new.\n"
    got = merge_markdown(repo.path, LOG, BASE, ours, theirs)
    assert got.conflicts >= 1
    assert "<<<<<<< ours:memory/2025-11-27.md" in got.text and ">>>>>>> theirs:memory/2025-11-27.md" in got.text
    for kept in ("Lisbon", "Porto", "ours new", "theirs new", "Went to the market."):
        assert kept in got.text  # nothing dropped
    # The narrative section merged on its own: the conflict is confined to the Retain section.
    assert got.text.index("<<<<<<<") > got.text.index("## Retain")


def test_delete_on_one_side_and_append_on_the_other_merge_cleanly(repo: GitRepo) -> None:
    ours = BASE.replace("Went to the market.\n\n", "")
    theirs = BASE + "- W: New fact.\n"
    got = merge_markdown(repo.path, LOG, BASE, ours, theirs)
    assert got.conflicts == 0
    assert got.text == "# 2025-11-27\n\n## Retain\n- W @Peter: Lives in Berlin.\n- W: New fact.\n"


def test_narrative_appended_on_both_sides_keeps_both(repo: GitRepo) -> None:
    base = "# Day\n\nMorning.\n"
    got = merge_markdown(repo.path, LOG, base, base + "\nOurs evening.\n", base + "\nTheirs evening.\n")
    assert got.conflicts == 0
    assert got.text == "# Day\n\nMorning.\n\nOurs evening.\n\nTheirs evening.\n"


def test_generated_block_union_is_stamped_and_stays_reflections(repo: GitRepo) -> None:
    def page(*facts: str) -> str:
        inner = "## Facts\n" + "\n".join(facts)
        return f"# Peter\n\nHand-written intro.\n\n{pages.begin('facts')}\n{inner}\n{pages.end('facts')}\n"

    base = page("- W: Lives in Berlin. (memory/2025-11-01.md#L4@aaaaaaa)")
    ours = page("- W: Lives in Berlin. (memory/2025-11-01.md#L4@bbbbbbb)", "- W: Likes tea. (memory/2025-11-20.md#L5@bbbbbbb)")
    theirs = page("- W: Lives in Berlin. (memory/2025-11-01.md#L4@ccccccc)", "- W: Has a cat. (memory/2025-11-03.md#L6@ccccccc)")
    got = merge_markdown(repo.path, "bank/entities/Peter.md", base, ours, theirs)
    assert got.conflicts == 0
    spans, bad = pages.find_blocks(got.text)
    assert not bad
    inner = spans["facts"].inner
    facts = [ln for ln in inner.split("\n") if ln.startswith("- ")]
    assert facts == ["- W: Lives in Berlin. (memory/2025-11-01.md#L4@bbbbbbb)",
                     "- W: Likes tea. (memory/2025-11-20.md#L5@bbbbbbb)",
                     "- W: Has a cat. (memory/2025-11-03.md#L6@ccccccc)"]
    assert "Hand-written intro." in got.text
    assert pages.stamp_ok(inner)
    # Reflection recorded ours' hash, which no longer matches: the stamp lets it rewrite the block...
    rec = {"bank/entities/Peter.md#facts": pages.block_hash(pages.find_blocks(ours)[0]["facts"].inner)}
    res = pages.merge_page("bank/entities/Peter.md", got.text, "Peter", [("facts", "## Facts\n- W: New.")], rec)
    assert res.written == ["facts"] and "- W: New." in res.text
    # ...but once a person edits the stamped block, it is theirs again.
    edited = got.text.replace("Has a cat.", "Has two cats.")
    res = pages.merge_page("bank/entities/Peter.md", edited, "Peter", [("facts", "## Facts\n- W: New.")], rec)
    assert res.written == [] and res.skipped[0]["reason"] == "edited by hand since the last reflection"


def test_state_files_merge_as_data() -> None:
    ev = {"path": "memory/a.md", "content": "x", "delta": 0.05, "strength": "strong", "source": "s", "commit": "c",
          "at": "2025-11-02"}
    op = {"statement": "Peter likes tea", "confidence": 0.6, "history": [{"at": "2025-11-01", "confidence": 0.6}],
          "supports": [], "contradicts": [], "last_updated": "2025-11-01"}
    base = State(through="a" * 40, through_time="t0", blocks={"p#facts": "h0"}, opinions={"k": op})
    ours = State(through="b" * 40, through_time="t1", blocks={"p#facts": "h1", "q#facts": "hq"},
                 opinions={"k": dict(op, confidence=0.65, supports=[ev], last_updated="2025-11-02",
                                     history=[*op["history"], {"at": "2025-11-02", "confidence": 0.65}])})
    ev2 = dict(ev, path="memory/b.md", delta=0.1)
    theirs = State(through="c" * 40, through_time="t2", blocks={"p#facts": "h2", "r#facts": "hr"},
                   opinions={"k": dict(op, confidence=0.7, supports=[ev2], last_updated="2025-11-03",
                                       history=[*op["history"], {"at": "2025-11-03", "confidence": 0.7}]),
                             "new": dict(op, statement="Anna likes jazz")})
    merged = State.from_bytes(merge_state_bytes(base.to_bytes(), ours.to_bytes(), theirs.to_bytes()))
    assert merged.through == "b" * 40  # ours is the first-parent side
    assert merged.blocks == {"p#facts": "h1", "q#facts": "hq", "r#facts": "hr"}
    k = merged.opinions["k"]
    assert [e["path"] for e in k["supports"]] == ["memory/a.md", "memory/b.md"]
    assert k["confidence"] == 0.75  # ours 0.65 + theirs' own evidence +0.10
    assert [h["at"] for h in k["history"]] == ["2025-11-01", "2025-11-02", "2025-11-03"]
    assert k["last_updated"] == "2025-11-03"
    assert merged.opinions["new"]["statement"] == "Anna likes jazz"


def test_driver_writes_ours_and_falls_back_to_text_merge_for_bad_json(repo: GitRepo, tmp_path: Path) -> None:
    files = {}
    for name, text in (("O", '{"version": 1}\n'), ("A", '{"version": 1, "x": 1}\n'), ("B", "not json\n")):
        files[name] = tmp_path / name
        files[name].write_text(text)
    code = merge_paths(repo.path, files["O"], files["A"], files["B"], "bank/.reflect.json")
    assert code == 1
    text = files["A"].read_text()
    assert '"x": 1' in text and "not json" in text and "<<<<<<<" in text
    assert json.loads('{"version": 1}')  # sanity


_BULLET = st.builds(lambda k, w: f"- {k} @Peter: {w}.", st.sampled_from("WBS"),
                    st.text(alphabet="abcdefgh ", min_size=1, max_size=12).map(lambda s: " ".join(s.split()) or "x"))


@settings(max_examples=60, deadline=None)
@given(base=st.lists(_BULLET, max_size=4, unique=True), ours=st.lists(_BULLET, max_size=4, unique=True),
       theirs=st.lists(_BULLET, max_size=4, unique=True), narrative=st.booleans())
def test_appends_on_both_sides_keep_every_bullet_once(tmp_path_factory: pytest.TempPathFactory, base: list[str],
                                                      ours: list[str], theirs: list[str], narrative: bool) -> None:
    root = tmp_path_factory.getbasetemp()
    head = "# 2025-11-27\n\n" + ("Some narrative.\n\n" if narrative else "") + "## Retain\n"
    o = head + "".join(f"{b}\n" for b in base)
    a = o + "".join(f"{b}\n" for b in ours)
    b = o + "".join(f"{b}\n" for b in theirs)
    got = merge_markdown(root, LOG, o, a, b)
    assert got.conflicts == 0 and "<<<<<<<" not in got.text
    lines = got.text.splitlines()
    assert got.text.startswith(o)  # the base is untouched, new bullets come after it
    new = lines[len(o.splitlines()):]
    assert sorted(set(new)) == sorted(new)  # each once
    assert set(new) == set(ours) | set(theirs)
    assert merge_markdown(root, LOG, o, b, a).text == got.text  # symmetric


def test_crlf_logs_and_fenced_headings(repo: GitRepo) -> None:
    base = "# Day\r\n\r\n```\r\n## Retain\r\n- W: inside a fence, not a fact\r\n```\r\n\r\n## Retain\r\n- W: one.\r\n"
    ours = base + "- W: two.\r\n"
    theirs = base.replace("inside a fence", "inside a code fence") + "- W: three.\r\n"
    got = merge_markdown(repo.path, LOG, base, ours, theirs)
    assert got.conflicts == 0
    assert got.text == ("# Day\r\n\r\n```\r\n## Retain\r\n- W: inside a code fence, not a fact\r\n```\r\n\r\n"
                        "## Retain\r\n- W: one.\r\n- W: three.\r\n- W: two.\r\n")
