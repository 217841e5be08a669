"""Issue 13, wave 7: recall knows what is true now in wordings no cue list holds: a stay with a
written window of days (no "currently"), a state for "this week" or "around three weeks", two
lines of one day of which one gives the asked attribute, an amount in the same unit, a version
beside a name, an opinion reversed in wholly new words, and a newer line on the same thing as a
protected older one. Each rule is ranking only (nothing is hidden: the index-side supersession is
unchanged), and each test also runs with its rule off to show the rule is what decides. Real git
repositories, real index; the sentences are not any bench set's."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from gitrepo import GitRepo
from test_attribute_recency import ask, log, top_about

from gitmem.index.indexer import update
from gitmem.parse.attributes import asks_quantity, said, thing_head
from gitmem.parse.dates import ends
from gitmem.recall import currency
from gitmem.recall.result import Result
from gitmem.workspace import Workspace


def history(tmp_path: Path, *days: tuple[str, tuple[str, ...]]) -> GitRepo:
    repo = GitRepo.init(tmp_path / "ws")
    for n, (day, bullets) in enumerate(days):
        files = log(day, *bullets)
        if n == 0:
            files[".gitignore"] = ".memory/\n"
        repo.commit(f"log {day}", day, files)
    update(Workspace(repo.path))
    return repo


def top(repo: GitRepo, q: str, entity: str, as_of: str) -> str:
    return top_about(ask(repo, q, as_of=as_of), entity)


def nothing_hidden(results: list[Result]) -> bool:
    return all(r.status != "superseded" and r.superseded_by is None for r in results)


def test_the_end_of_a_state_for_this_week_or_for_a_while() -> None:
    tue = date(2026, 3, 10)  # a Tuesday
    assert ends("Taking the ferry this week; the bridge is shut.", tue) == date(2026, 3, 15)  # that Sunday
    assert ends("At the cabin for the weekend.", tue) == date(2026, 3, 15)
    assert ends("Has a courtesy car around three weeks while his is fixed.", tue) == date(2026, 3, 31)
    assert ends("On crutches, about two weeks, says the physio.", tue) == date(2026, 3, 24)
    # Counts of how long or how often something is, not ends.
    assert ends("Has lived in Tromso for about ten years.", tue) is None
    assert ends("Swims about three days a week.", tue) is None
    assert ends("Moved here about two weeks ago.", tue) is None
    assert ends("Goes running every day this week.", tue) is None
    assert ends("The puppy is about two weeks old.", tue) is None


def test_a_stay_with_a_written_window_is_current_inside_it_and_past_after(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    repo = history(
        tmp_path,
        ("2026-01-13", ("W @Oona: Lives in Tampere, in a wooden house by the lake.",
                        "W @Oona: Sings in a jazz quartet.")),
        ("2026-05-04", ("W @Oona: Crewing a research ship in the Barents Sea, 11 May to 20 June.",)),
        ("2026-05-18", ("W @Ravid: Joined the Haifa office in May 2026 as team lead.",)),
        ("2026-01-20", ("W @Ravid: Works at the Tel Aviv office of a chip maker.",)),
    )
    assert "Barents Sea" in top(repo, "Where is Oona?", "oona", "2026-06-01")
    after = ask(repo, "Where is Oona?", as_of="2026-07-01")
    assert "Lives in Tampere" in top_about(after, "oona")
    assert nothing_hidden(after) and any("Barents Sea" in r.content and r.past for r in after)
    # A month named alone is when something happened, not a while: the new job stays current.
    assert "Haifa office" in top(repo, "Where does Ravid work?", "ravid", "2026-09-01")
    # Without the rule the window is no while ("currently" is not written): inside it, the home
    # outranks the voyage by its words (wave 8's typed answers off too: a place asked for, given anew,
    # would put the voyage first on its own).
    monkeypatch.setattr(currency, "WINDOW_EXPIRY", False)
    monkeypatch.setattr(currency, "TYPED_ANSWERS", False)
    assert "Lives in Tampere" in top(repo, "Where is Oona?", "oona", "2026-06-01")


def test_a_temporary_state_passes_what_it_interrupts_while_it_lasts(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    repo = history(
        tmp_path,
        ("2026-01-12", ("W @Joaquin: Cycles to the depot on a cargo bike every morning.",)),
        ("2026-03-10", ("W @Joaquin: Getting lifts from a colleague this week; the cargo bike has a flat.",)),
    )
    assert "Getting lifts" in top(repo, "How does Joaquin get to the depot?", "joaquin", "2026-03-12")
    assert "Cycles to the depot" in top(repo, "How does Joaquin get to the depot?", "joaquin", "2026-04-01")
    monkeypatch.setattr(currency, "SAME_THING_WORDS", False)
    assert "Cycles to the depot" in top(repo, "How does Joaquin get to the depot?", "joaquin", "2026-03-12")


def test_of_one_days_lines_the_one_giving_the_asked_attribute_goes_first(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    repo = history(
        tmp_path,
        ("2026-02-02", ("W @Brigid: Knits jumpers.",
                        "W @Brigid: Physiotherapist at a sports clinic on the edge of Limerick, mostly treating "
                        "hurlers and camogie players after their weekend matches.",
                        "W @Aoife: Throws pots in a shared studio in Ennis.",
                        "W @Aoife: Lives in Limerick by the river.")),
    )
    assert "Physiotherapist" in top(repo, "Where does Brigid work?", "brigid", "2026-03-01")
    # A question word only the other line holds keeps that line first ("studio" is the thing asked).
    assert "shared studio in Ennis" in top(repo, "Where is Aoife's studio?", "aoife", "2026-03-01")
    monkeypatch.setattr(currency, "SAME_DAY_ATTRIBUTE", False)
    assert "Knits jumpers" in top(repo, "Where does Brigid work?", "brigid", "2026-03-01")


def test_a_new_amount_in_the_same_unit_and_a_version_beside_a_name(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    assert asks_quantity("How much does Ilse pay for parking?") and asks_quantity("Which Redis version runs there?")
    assert not asks_quantity("Where does Ilse park?")
    repo = history(
        tmp_path,
        ("2026-01-09", ("W @Ilse: Pays 60 euros a month for a parking space under the office.",
                        "W @Ilse: Cycles 12 km along the canal every Sunday.",
                        "W @Tern: The media box runs Jellyfin 10.8 for the family's films.")),
        ("2026-03-02", ("W @Ilse: Spends about 90 euros a month on train tickets.",
                        "W @Ilse: Cycled 80 km at the Amstel Gold sportive.")),
        ("2026-04-01", ("W @Ilse: The garage put the parking space up to 75 euros a month.",
                        "W @Tern: I took Jellyfin up to 10.9 last night; subtitles work again.")),
    )
    assert "75 euros" in top(repo, "How much does Ilse pay for parking?", "ilse", "2026-05-01")
    assert "60 euros" in top(repo, "How much does Ilse pay for parking?", "ilse", "2026-03-15")  # train tickets: no
    assert "12 km along the canal" in top(repo, "How far does Ilse cycle on Sundays?", "ilse", "2026-05-01")  # event
    assert "10.9" in top(repo, "Which Jellyfin version does Tern run?", "tern", "2026-05-01")
    monkeypatch.setattr(currency, "QUANTITY_RECENCY", False)
    monkeypatch.setattr(currency, "TYPED_ANSWERS", False)  # an amount asked for, given anew: wave 8's rule too
    monkeypatch.setattr(currency, "VALUE_ANEW", False)  # "put ... up to 75 euros": wave 20's value told as reached too
    assert "60 euros" in top(repo, "How much does Ilse pay for parking?", "ilse", "2026-05-01")


def test_an_opinion_reversed_in_new_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = history(
        tmp_path,
        ("2026-01-21", ("O(c=0.8) @Matteo: Swears by his paper diary; won't touch a calendar app.",
                        "W @Matteo: Coaches the under-12s at the rugby club.",
                        "O(c=0.7) @Saoirse: Prefers tea over coffee in the morning.")),
        ("2026-04-09", ("O(c=0.7) @Matteo: Runs his whole week from a phone app now and would never go back.",
                        "O(c=0.6) @Saoirse: Thinks the coffee at the office is undrinkable.")),
    )
    assert "phone app" in top(repo, "What kind of diary does Matteo prefer?", "matteo", "2026-05-01")
    # A newer opinion that holds part of the question names another thing: the older one stays.
    assert "Prefers tea" in top(repo, "Does Saoirse prefer tea or coffee?", "saoirse", "2026-05-01")
    monkeypatch.setattr(currency, "OPINION_RECENCY", False)
    assert "paper diary" in top(repo, "What kind of diary does Matteo prefer?", "matteo", "2026-05-01")


def test_a_newer_line_on_the_same_thing_passes_the_protected_one(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert thing_head("@Sam: The York flat has fibre.") == "flat" and thing_head("@Sam: Lives in York.") == ""
    repo = history(
        tmp_path,
        ("2026-01-06", ("W @Tadhg: Engaged to @Noor; the party was in Dingle.",
                        "W @Tadhg: Restores vintage Vespas in his shed.",
                        "W @Ylva: Lives in Uppsala near the botanical garden.")),
        ("2026-05-02", ("W @Tadhg: He and @Noor signed the register at Tralee on Saturday.",
                        "W @Ylva: Still walks in the Uppsala botanical garden each morning.",
                        "W @Ylva: The Uppsala flat got new windows.")),
    )
    assert said("@Tadhg: He and @Noor signed the register at Tralee on Saturday.") == frozenset()
    assert "signed the register" in top(repo, "Is Tadhg married?", "tadhg", "2026-06-01")
    # "Still ..." adds to what holds; a thing as the subject says nothing of where she lives.
    assert "Lives in Uppsala" in top(repo, "Where does Ylva live?", "ylva", "2026-06-01")
    monkeypatch.setattr(currency, "SAME_THING_WORDS", False)
    assert "Engaged to @Noor" in top(repo, "Is Tadhg married?", "tadhg", "2026-06-01")


def test_an_intention_is_no_change_of_what_is_true(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # "Might move", "thinking about selling": nothing has changed yet, so the newer line must not go
    # ahead of the home it only talks about leaving (plain FTS5 got this right; the slot rules did not).
    repo = history(
        tmp_path,
        ("2026-01-10", ("W @Ambrose: Lives in a flat above the market in Braga.",
                        "W @Ambrose: Sells cheese at a stall on Saturdays.")),
        ("2026-04-02", ("W @Ambrose: Keeps saying he might move to Porto once the stall pays; has been "
                        "looking at flats in Bonfim.",)),
    )
    assert "Lives in a flat above the market in Braga" in top(repo, "Where does Ambrose live?", "ambrose", "2026-06-01")
    monkeypatch.setattr(currency, "INTENT_GUARD", False)
    assert "might move to Porto" in top(repo, "Where does Ambrose live?", "ambrose", "2026-06-01")
