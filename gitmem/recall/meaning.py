"""Meaning in currency (issue 13, wave 9): with hybrid recall, whether a newer statement answers the
same question as an older one, decided from the sentence vectors rather than from shared words.

The words-only rules of `currency.newer_first` decide "the same thing" from the words two statements
share, the attribute families they give and the type of value the question asks for. A change told in
wholly new words ("No longer on LastPass; every login lives in Bitwarden since March" after "Keeps all
his passwords in LastPass") gives them nothing to hold. Where the index has vectors (`gitmem index
--vectors`) and the question was embedded for hybrid recall, `SameQuestion` reads the stored vectors of
the head's candidates and says two statements of one subject answer the same question when

- they say the same kind of thing: the cosine of their vectors is at least SLOT_SIMILARITY, and
- the newer one is about what the question asks nearly as much as the older one: its cosine to the
  question is at least QUESTION_SHARE of the older one's (a newer line on another thing of the same
  topic, "Broadband is now 26 a month" for "How much does Gregor pay for Netflix?", is not).

Not when both give a sum of money (AMOUNTS_APART: amount lines lie near each other whatever is paid
for), nor when the newer one takes effect from a month after the day asked (parse.dates.starts: "On a
four-day week from June", asked in May, is a plan). Ranking only, nothing hidden; currency keeps its
guards (a plan, a pending or conditional change, someone else's news, an addition, something done
once, a stay that is over, a planned date) in front of it (`currency._plain_pair`). Numbers and the
variants tried: bench/RESULTS.md, "Recall: current truth, wave 9 (w9/truth9, meaning)".
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gitmem.index.store import CONTENT, ID
from gitmem.parse import answers
from gitmem.recall.currency import takes_effect_after
from gitmem.recall.rank import Candidate

if TYPE_CHECKING:
    import numpy as np

# Off: False (the words-only rules alone, also under hybrid recall).
MEANING_SLOT = True
SLOT_SIMILARITY = 0.45
QUESTION_SHARE = 0.7
AMOUNTS_APART = True
REASON = "answers the same question (meaning)"


class SameQuestion:
    """The pair test above for one question: called with (newer chunk id, older chunk id), it gives
    REASON or None. The candidates' vectors are read once, on the first call (most questions make
    none: only pairs that pass currency's guards and no rule of words reach it)."""

    def __init__(self, conn: sqlite3.Connection, question: Sequence[float], cands: Sequence[Candidate],
                 day: str) -> None:
        self.conn = conn
        self.question = question
        self.rows = {c.row[ID]: c.row for c in cands if not c.uncommitted}
        self.day = day
        self.vecs: dict[int, np.ndarray] | None = None
        self.q: Any = None

    def __call__(self, new: int, old: int) -> str | None:
        if self.vecs is None:
            import numpy as np

            from gitmem.index.vectors import vectors_of

            self.vecs = vectors_of(self.conn, list(self.rows))
            self.q = np.asarray(self.question, dtype=np.float32)
        a, b = self.vecs.get(new), self.vecs.get(old)
        if a is None or b is None or self._ahead(new) or AMOUNTS_APART and self._amounts(new, old):
            return None
        to_new, to_old = float(self.q @ a), float(self.q @ b)
        if float(a @ b) >= SLOT_SIMILARITY and to_new > 0 and to_new >= QUESTION_SHARE * to_old:
            return REASON
        return None

    def _amounts(self, new: int, old: int) -> bool:
        """Whether both statements give a sum of money: lines of amounts a month lie near each other
        whatever is paid for ("Spends about 120 euros a month on groceries" / "Pays 700 euros a month
        for her studio": 0.64), so meaning cannot tell the rent from the groceries; the words' rules
        (currency's quantity and typed answers) decide those."""
        return all(answers.values(self.rows[i][CONTENT] or "", "money") for i in (new, old))

    def _ahead(self, i: int) -> bool:
        """Whether the statement `i` takes effect from a month after the day asked ("On a four-day
        week from June", asked in May): a plan until then (parse.dates.starts)."""
        return takes_effect_after(self.rows[i], self.day)


def same_question(conn: sqlite3.Connection, question: Sequence[float], cands: Sequence[Candidate],
                  day: str) -> SameQuestion | None:
    """The pair test for a question embedded by the dense side (`question`: its unit vector, empty
    when there is none) over the head candidates `cands`, asked on `day` (ISO); None when it cannot
    or should not run."""
    if not MEANING_SLOT or len(question) == 0 or not cands:
        return None
    return SameQuestion(conn, question, cands, day)
