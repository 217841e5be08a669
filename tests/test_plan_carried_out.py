"""A plan carried out, and a fault fixed, replace the state they changed (issues 13 and 15, wave 22).

The demo had both: "Runs Postgres 16; upgrade to 17 planned with the SSD swap." (Dec 5) then "Now on a
2 TB SSD with Postgres 17." (Dec 9), and "An exception inside a Baileys connection.update handler
crashes the process." (Nov 11) then "I fixed the Baileys WS crash ..." (Nov 12). The index linked
neither, so reflection's bank/world.md listed Postgres 16 and the crash as current. A newer line that
names the target an older one planned to change to, next to a word the two share, carries the plan
out (parse/mood.py `planned_target`, index/supersede.py `_carries_out`); "fixed" and "resolved" are
change cues, but not as the adjective of a fixed rate, term or price. Real git repositories, real
index, real `gitmem why`."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from test_current_truth_wave7 import history

from gitmem.index.supersede import _carries_out, has_cue
from gitmem.parse.mood import planned_target
from gitmem.workspace import Workspace

PG16 = "@The-Castle: Runs Postgres 16; upgrade to 17 planned with the SSD swap."
PG17 = "@The-Castle: Now on a 2 TB SSD with Postgres 17."
CRASH = "@warelay: An exception inside a Baileys connection.update handler crashes the process."
FIXED = "@warelay: I fixed the Baileys WS crash by wrapping connection.update handlers in try/catch."


def links(root: Path) -> dict[str, tuple[str, str]]:
    """{old line: (the line the index says replaced it, the rule's reason)}."""
    con = sqlite3.connect(Workspace(root).index_path)
    try:
        return {o: (n, r) for o, n, r in con.execute(
            "SELECT o.content, n.content, s.reason FROM supersessions s JOIN chunks o ON o.id = s.old"
            " JOIN chunks n ON n.id = s.new")}
    finally:
        con.close()


def test_the_target_a_plan_names() -> None:
    assert planned_target(PG16) == "17"
    assert planned_target("@Ana: Wants to move to Lisbon someday.") == "lisbon"
    assert planned_target("Switching the VPS to Hetzner next month.") == "hetzner"
    assert planned_target("Plans to move to the coast once the lease is up.") == "coast"
    assert planned_target("Still planning the upgrade to 17.") == "17"
    # No plan, no change, or no target: nothing planned to carry out.
    assert planned_target("@The-Castle: Runs Postgres 16.") is None
    assert planned_target("Moved to Lisbon soon after the wedding.") is None  # done, not planned
    assert planned_target("Due to the rain, the party is in the hall.") is None
    assert planned_target("Wants to learn the cello.") is None  # a wish, but no change to a target
    # A time is no target: a postponed move names when, not where.
    assert planned_target("The Ioannina move is pushed to next year; his buyer pulled out.") is None
    assert planned_target("Mymensingh move pushed to September — the flat fell through.") is None


def test_what_carries_a_plan_out() -> None:
    assert _carries_out(PG16, PG17)  # "Postgres 17": the target next to the shared "postgres"
    # A newer line that itself plans carries nothing out.
    assert not _carries_out(PG16, "@The-Castle: Still planning the upgrade to 17 with the SSD swap.")
    assert not _carries_out(PG16, "@The-Castle: Postgres 17 upgrade scheduled for the SSD swap.")
    # The target named, but not where the planned thing stands.
    assert not _carries_out(PG16, "@The-Castle: Backs up 17 databases to the SSD nightly.")
    assert not _carries_out("@The-Castle: Runs Postgres 16.", PG17)  # nothing was planned
    assert not _carries_out("@Ana: Teaches piano in Porto and wants to move to Lisbon someday.",
                            "@Ana: Teaches piano in Porto, now mostly adults; a Lisbon weekend in May.")


def test_a_plan_carried_out_replaces_the_state_it_changed(tmp_path: Path) -> None:
    repo = history(tmp_path, ("2025-12-05", ("W " + PG16,)), ("2025-12-09", ("W " + PG17,)))
    assert links(repo.path) == {PG16: (PG17, "plan carried out, shared words postg/ssd")}
    proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(repo.path), "why", "Runs Postgres 16"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "superseded by (plan carried out, shared words postg/ssd)" in proc.stdout


def test_a_newer_line_that_still_plans_replaces_nothing(tmp_path: Path) -> None:
    repo = history(tmp_path, ("2025-12-05", ("W " + PG16,)),
                   ("2025-12-09", ("W @The-Castle: Still planning the upgrade to 17; the SSD is now in the drawer.",)))
    assert links(repo.path) == {}


def test_a_wish_with_no_change_done_later_replaces_nothing(tmp_path: Path) -> None:
    repo = history(tmp_path, ("2026-01-10", ("W @Ana: Teaches piano in Porto and wants to move to Lisbon someday.",)),
                   ("2026-03-02", ("W @Ana: Teaches piano in Porto, now mostly adults; a Lisbon weekend in May.",)))
    assert links(repo.path) == {}


def test_fixed_and_resolved_are_cues_but_not_a_fixed_rate() -> None:
    assert has_cue(FIXED) and has_cue("@Oskar: Resolved the flaky CI runner.")
    for adjective in ("Mortgage on a fixed rate of 3.1%", "Fixed rate ends in March", "On a fixed-term contract",
                      "Fixed costs went up", "Keeps fixed hours", "Lives on a fixed income", "The fixed menu at Lume"):
        assert not has_cue(adjective), adjective


def test_a_fault_fixed_replaces_the_fault(tmp_path: Path) -> None:
    repo = history(tmp_path, ("2025-11-11", ("W " + CRASH,)), ("2025-11-12", ("B " + FIXED,)))
    found = links(repo.path)
    assert list(found) == [CRASH] and found[CRASH][0] == FIXED
    assert found[CRASH][1].startswith("cue 'fixed', shared words ")


def test_a_fixed_rate_mortgage_is_no_fix(tmp_path: Path) -> None:
    repo = history(tmp_path, ("2026-01-12", ("W @Ilse: Mortgage on a fixed rate of 3.1%.",)),
                   ("2026-02-20", ("W @Ilse: Fixed rate ends in March, she is shopping around.",)))
    assert links(repo.path) == {}
