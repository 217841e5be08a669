"""A statement's own event window is when it holds, not a value of what it says (wave 11, num12).

"Currently walking the harbour route daily (Nov 20–Dec 9, 2025)" gives no number 20, 9 or 2025
that "Harbour walk note 5" could be another value of, and a note written the day before that
"currently ..." line cannot end it. Real git repository, real index, real recall."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from gitrepo import GitRepo

from gitmem.index.indexer import update
from gitmem.parse.dates import event_window_at, find_dates
from gitmem.recall import currency
from gitmem.recall.search import Options, Session
from gitmem.workspace import Workspace

WALKING = "@Bob: Currently walking the harbour route daily (Nov 20–Dec 9, 2025) while the dog heals."
HOTEL = "@Bob: Currently at the harbour hotel (Nov 10–Nov 20, 2025) for a walk festival."


def bullets(day: str, lines: list[str]) -> dict[str, str]:
    return {f"memory/{day}.md": f"# {day}\n\n## Retain\n" + "".join(f"- {b}\n" for b in lines)}


def _harbour(tmp_path: Path, notes: int = 120) -> Workspace:
    """tests/test_settle_head.py's workspace: many notes on one day, two "currently" stays the next."""
    repo = GitRepo.init(tmp_path / "ws")
    lines = [f"W @Bob: Harbour walk note {i} with the dog near the old harbour wall." for i in range(notes)]
    repo.commit("notes", "2025-11-26", bullets("2025-11-26", lines))
    repo.commit("stays", "2025-11-27", bullets("2025-11-27", [f"W {WALKING}", f"W {HOTEL}"]))
    ws = Workspace(repo.path)
    update(ws)
    return ws


def test_the_lines_that_match_lead_and_no_note_passes_them(tmp_path: Path) -> None:
    ws = _harbour(tmp_path)
    with Session(ws) as s:
        res = s.search("harbour hotel", Options(k=32, as_of="HEAD")).results
    # Before: 28 notes scored 0.0 went ahead of both (a note's "5" read as another number than
    # the window's 20, 9, 2025; a note of the day before read as ending the "currently" stay).
    assert [r.content for r in res[:2]] == [WALKING, HOTEL]
    assert res[0].past is False and res[1].past is True  # the hotel stay ended Nov 20
    assert all("Harbour walk note" in r.content for r in res[2:]) and len(res) == 32


def test_a_windows_dates_are_not_read_as_numbers_and_other_numbers_still_are() -> None:
    stems = frozenset({"harbour", "rent"})
    assert currency._read_numbers(WALKING, stems).nums == frozenset()
    # The numbers outside the window are still values: an amount, a count beside a question word.
    read = currency._read_numbers("@Ann: Pays 950 pounds a month in rent (Mar 3–Mar 30, 2025).", stems)
    assert read.nums == {"950"} and ("pound", "950") in read.units
    # A line without a date reads as before.
    assert currency._read_numbers("@Bob: Harbour walk note 5 with the dog.", stems).nums == {"5"}


def test_the_window_is_found_where_find_dates_reads_the_event_time() -> None:
    for text, written in [(WALKING, "Nov 20–Dec 9, 2025"), ("Off sick 27–30 Nov", "27–30 Nov"),
                          ("Viva on 2026-06-03, room 4", "2026-06-03"), ("Feb 29 leap day", "Feb 29")]:
        at = event_window_at(text)
        assert at is not None and text[at[0]:at[1]] == written, text
    # The same first date find_dates reads (an invalid "Feb 30" is skipped, as there).
    text = "Moved Feb 30 or rather Mar 2, 2025"
    at = event_window_at(text)
    assert at is not None and text[at[0]:at[1]] == "Mar 2, 2025" and find_dates(text) == (date(2025, 3, 2),) * 2
    assert event_window_at("Harbour walk note 5 with the dog") is None


def test_a_word_recorded_after_a_for_now_line_still_ends_it(tmp_path: Path) -> None:
    """The other side of the fix: only a line recorded before the "currently" one cannot end it."""
    repo = GitRepo.init(tmp_path / "ws")
    repo.commit("a", "2025-11-27", bullets("2025-11-27", [f"W {WALKING}"]))
    repo.commit("b", "2025-11-29", bullets("2025-11-29", ["W @Bob: The dog has healed; stopped the harbour route walks."]))
    ws = Workspace(repo.path)
    update(ws)
    with Session(ws) as s:
        res = s.search("harbour route", Options(k=5, as_of="HEAD")).results
    assert res[0].content.startswith("@Bob: The dog has healed")


def test_a_word_inside_a_written_window_does_not_end_it(tmp_path: Path) -> None:
    """Notes recorded after the "currently" line but dated inside its window (Nov 20–Dec 9) that
    share a word with it ("harbour", "dog"): the window says when it ends, they do not. Before,
    the notes, scored 0.0 (every line holds "harbour"), went ahead of it."""
    repo = GitRepo.init(tmp_path / "ws")
    repo.commit("stays", "2025-11-27", bullets("2025-11-27", [f"W {WALKING}", f"W {HOTEL}"]))
    repo.commit("notes", "2025-11-28", bullets("2025-11-28", [
        f"W @Bob: Harbour walk note {i} with the dog near the old harbour wall." for i in range(3)]))
    ws = Workspace(repo.path)
    update(ws)
    with Session(ws) as s:
        res = s.search("harbour hotel", Options(k=8, as_of="HEAD")).results
    assert [r.content for r in res[:2]] == [WALKING, HOTEL]
    assert res[0].past is False and all("Harbour walk note" in r.content for r in res[2:5])
