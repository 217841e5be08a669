"""Issue 13, wave 16: the guarded pair model (recall/learned.py, MODE "after") switched on, and the
trap guard that made it shippable: two statements with one event day are neither older nor newer,
so the model moves neither ahead of the other (learned.SAME_DAY). Wave 15's hybrid run lost a
question this way (a same-day line of another attribute moved ahead of the one meaning had put
first). Real git repositories, real index, the real bundled embedder, the shipped weights. The
sentences are no bench set's."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("onnxruntime", reason="semantic recall needs the embed extra (bash .ci/setup installs it)")

from test_current_truth_wave7 import history, nothing_hidden  # noqa: E402
from test_current_truth_wave10_learned import ask as lexical  # noqa: E402
from test_current_truth_wave9_meaning import ask, embedded, top  # noqa: E402

from gitmem.recall import learned, semantic  # noqa: E402


@pytest.fixture(scope="module")
def embedder() -> semantic.Embedder:
    return semantic.load_embedder()

# The laptop line and the job line are written in one log; a loaner for a fortnight comes later.
LOANER = (("2026-02-10", ("W @Oskar: Writes his papers on a 2020 ThinkPad X1 with a cracked hinge.",
                          "W @Oskar: Postdoc in glaciology at Tromso.")),
          ("2026-03-30", ("W @Oskar: On a borrowed iMac from the department until Lenovo fixes his keyboard, about two weeks.",)))


def test_a_same_day_line_never_moves_ahead_by_the_model(tmp_path: Path, embedder: semantic.Embedder,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    repo = embedded(history(tmp_path, *LOANER))
    q = "What laptop does Oskar use?"
    monkeypatch.setattr(learned, "MODE", "after")
    results = ask(repo, embedder, q, "2026-06-01")
    assert "ThinkPad" in top(results, "oskar") and nothing_hidden(results)
    assert "borrowed iMac" in top(ask(repo, embedder, q, "2026-04-02"), "oskar")  # inside the loan
    # Without the guard the model puts the job line, written the same day, first.
    monkeypatch.setattr(learned, "GUARDS", learned.GUARDS - {learned.SAME_DAY})
    assert "Postdoc" in top(ask(repo, embedder, q, "2026-06-01"), "oskar")


# As shipped (no MODE set): a change told by what is done, which no rule ties to the older line,
# goes first by the model; the rules alone keep the old opinion.
REVERSED = (("2026-01-14", ("W @Bruno: Thinks audiobooks are lazy reading.", "W @Bruno: Drives a tram in Graz.")),
            ("2026-04-06", ("W @Bruno: Gets through two audiobooks a month on his bike rides and recommends them to everyone.",)))


def test_as_shipped_a_change_told_by_what_is_done_goes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = history(tmp_path, *REVERSED)
    q, old, new = "What does Bruno think of audiobooks?", "lazy reading", "two audiobooks a month"
    results = lexical(repo, q, "2026-05-01")
    assert new in top(results, "bruno")
    assert nothing_hidden(results) and any(old in r.content for r in results)  # ranking only
    assert old in top(lexical(repo, q, "2026-03-01"), "bruno")  # before the change
    monkeypatch.setattr(learned, "MODE", "off")
    assert old in top(lexical(repo, q, "2026-05-01"), "bruno")
