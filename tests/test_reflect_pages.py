"""Pure tests of what reflection writes on pages: the grounding gate, renames and aliases, current
versus past facts, lint-rejected bullets, block removal (no git, no model)."""

from __future__ import annotations


import pytest

from gitmem.parse import entity_key, page_aliases, parse_markdown, renames
from gitmem.parse.entities import aliases_line
from gitmem.recall.result import Result
from gitmem.reflect import gate, pages
from gitmem.reflect.pages import block_hash, current_and_past, entity_blocks, expired, merge_page, moves_supersede
from gitmem.reflect.prompts import retain_prompt, summary_prompt

RELAY = ["@relay: The project formerly called warelay is now relay (since 2025-12-02).",
         "@relay: I renamed warelay to relay: repo, systemd unit relay.service and npm package."]


def summary_check(summary: str, entity: str = "relay", facts: list[str] = RELAY) -> str | None:
    return gate.problem(summary, "\n".join([entity, *facts]), gate.instructions(*summary_prompt(entity, facts)))


@pytest.mark.parametrize("garbage, why", [
    # verbatim model output from issue 15
    ("The FACTS are a list of facts about the entity, which is a person, place, project, or thing, and the entity is named",
     "repeats the prompt"),
    ("The FACTS are a project that was originally called", "names something the facts do not ('FACTS')"),
    ("The-Castle", "empty or too short"),
    ("", "empty or too short"),
    ("Relay was renamed by Andy.", "names something the facts do not ('Andy')"),
    ("Relay was renamed in 2024.", "has a number the facts do not ('2024')"),
    ("Relay is run by @Peter now.", "names something the facts do not ('@Peter')"),
    # the bundled SmolLM2's loop (bench/reflect_judge.py summaries): grounded words, said twice
    ("Relay was renamed to relay and the npm package was renamed to relay and the npm package moved.",
     "repeats itself"),
])
def test_summary_gate_rejects_issue_15_garbage(garbage: str, why: str) -> None:
    problem = summary_check(garbage)
    assert problem is not None and problem.startswith(why), problem


@pytest.mark.parametrize("good", [
    "Relay is the project formerly called warelay, renamed on 2025-12-02.",
    "It was renamed from warelay to relay. The repo and npm package changed too.",
])
def test_summary_gate_keeps_grounded_summaries(good: str) -> None:
    assert summary_check(good) is None


def test_echo_counts_only_runs_the_facts_do_not_hold() -> None:
    facts = ["@Peter: Summarize what the facts say about the project every Friday."]
    # "what the facts say about" is in the prompt's instructions, but also in the facts: not an echo.
    assert summary_check("Peter wants to summarize what the facts say about the project.", "Peter", facts) is None


def test_retain_gate() -> None:
    log = "# 2025-12-13\n\nPeter asked me to move the relay backups to 02:00 so they finish before @Peter wakes up."
    told = gate.instructions(*retain_prompt(log, "2025-12-13"))
    assert gate.problem("The most important facts from the log are: 1.", log, told, grounded=True).startswith("repeats the prompt")
    assert gate.problem("@Peter: Asked to move the relay backups to 02:00.", log, told, grounded=True) is None
    assert "not grounded" in gate.problem("@Peter: enjoys painting watercolour landscapes weekly.", log, told, grounded=True)
    assert "number" in gate.problem("@Peter: Asked to move the relay backups to 03:00.", log, told, grounded=True)


def test_renames_and_aliases_are_parsed() -> None:
    assert renames("@relay (formerly warelay): Peter's WhatsApp relay") == [("relay", "warelay")]
    assert renames(RELAY[0]) == [("relay", "warelay")] and renames(RELAY[1]) == [("relay", "warelay")]
    assert renames("warelay is now called @Relay") == [("relay", "warelay")]
    assert renames("Pete aka @Peter") == [("pete", "peter")]
    assert renames("I renamed the repo to relay") == []  # "the" is never an entity
    assert renames("run `renamed foo to bar` in a shell") == []  # code spans are not statements
    page = "# relay\n\n<!-- gitmem:begin aliases -->\n" + aliases_line(["warelay", "@Wa_Relay"]) + "\n<!-- gitmem:end aliases -->\n"
    assert page_aliases(page) == ("warelay", "wa-relay")
    # the line is plain text to the indexer: it parses without diagnostics
    assert parse_markdown(page, "bank/entities/relay.md").diagnostics == []


def fact(id: int, content: str, day: str, *, kind: str = "world", end: str | None = None, ents: tuple[str, ...] = ("peter",),
         fact: bool = True, heading: str = "2025 > Retain") -> Result:
    return Result(id=id, content=content, kind=kind, fact=fact, entities=ents, confidence=None, timestamp=day,
                  event_start=day, event_end=end or day, record_time=f"{day}T22:00:00+00:00", status="current",
                  source=f"memory/{day}.md#L{id}@abcdef0", heading=heading, path=f"memory/{day}.md",
                  lines=(id, id), commit="abcdef0", score=None)


def test_expired_time_bounded_facts() -> None:
    trip = fact(1, "@Peter: Currently in Marrakech (Nov 27–Dec 1, 2025).", "2025-11-27", end="2025-12-01")
    assert not expired(trip, "2025-12-01") and expired(trip, "2025-12-02")
    moved = fact(2, "@Peter: Moved from Berlin to Lisbon on 2025-11-20.", "2025-11-20")
    assert not expired(moved, "2025-12-12")  # an event, not a state with a shelf life
    for_now = fact(3, "@The-Castle: Stays in Berlin for now.", "2025-11-17")
    assert expired(for_now, "2025-11-18") and not expired(for_now, "2025-11-17")
    upcoming = fact(4, "@The-Castle: Arrival expected Dec 15–16, 2025.", "2025-12-15", end="2025-12-16")
    assert not expired(upcoming, "2025-12-12")


def test_current_and_past_supersession_and_duplicates() -> None:
    facts = [fact(1, "@Peter: Lives in Berlin.", "2025-11-05"),
             fact(2, "@Peter: Back in Berlin from Munich.", "2025-11-14"),
             fact(3, "@Peter: Moved from Berlin to Lisbon on 2025-11-20.", "2025-11-20"),
             fact(4, "@Peter: Signed a lease in Lisbon, leaving Berlin.", "2025-11-17"),
             fact(5, "@Andy: Lives in Berlin.", "2025-11-05", ents=("andy",)),
             fact(6, "@Peter: Currently in Marrakech (Nov 27–Dec 1, 2025).", "2025-11-27", end="2025-12-01"),
             fact(7, "@Peter: lives in  berlin", "2025-11-06")]  # the same text as fact 1, later
    assert set(moves_supersede(facts)) == {1, 2, 7}
    current, past = current_and_past(facts, "2025-12-12")
    assert [r.id for r in current] == [3, 4, 5]  # newest first; Andy did not move
    assert [(p.fact.id, p.why) for p in past] == [
        (6, "ended 2025-12-01"), (2, "replaced by memory/2025-11-20.md#L3@abcdef0"), (7, "replaced by memory/2025-11-20.md#L3@abcdef0")]
    assert all(r.id != 1 for r in current + [p.fact for p in past])  # listed once: the newer duplicate won
    # the extension point: another rule (the index's supersession, issue 13) can replace the local one
    _, past2 = current_and_past(facts, "2025-11-30", supersede=lambda rows: {})
    assert past2 == []


def test_entity_page_lists_each_fact_once_and_never_lint_rejected_bullets() -> None:
    rejected = fact(9, "N: O(c=1.7) @Alice: Hates cortados now.", "2025-11-20", kind="note", fact=False, ents=("alice",))
    note = fact(8, "@Alice is Peter's sister.", "2025-11-01", kind="note", fact=False, ents=("alice",), heading="Memory > People")
    good = fact(10, "@Alice: Adopted a cat named Miso.", "2025-11-21", ents=("alice",))
    blocks = dict(entity_blocks(None, [rejected, note, good], [], "2025-12-01", ["Ali"]))
    text = blocks["facts"] or ""
    assert "Hates cortados" not in text
    assert text.count("Adopted a cat named Miso") == 1 and "Alice is Peter's sister" in text
    assert text.index("### World") < text.index("### Notes")
    assert blocks["aliases"] == "aliases: Ali" and blocks["timeline"] is None


def test_merge_page_removes_an_owned_block_only() -> None:
    inner = "## Timeline\n- old"
    page = f"# P\n\nmine\n\n{pages.begin('timeline')}\n{inner}\n{pages.end('timeline')}\n"
    recorded = {"bank/entities/P.md#timeline": block_hash(inner)}
    res = merge_page("bank/entities/P.md", page, "P", [("timeline", None)], recorded)
    assert res.text == "# P\n\nmine\n" and res.written == ["timeline"]
    edited = page.replace("- old", "- mine now")
    res = merge_page("bank/entities/P.md", edited, "P", [("timeline", None)], recorded)
    assert res.text == edited and res.hashes == recorded  # edited by hand: kept


def test_entity_key_of_aliases_matches_pages() -> None:
    assert entity_key("@Wa_Relay") == "wa-relay"
