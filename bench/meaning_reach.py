"""Does wave 9's meaning test (gitmem/recall/meaning.py) reach the LoCoMo and LongMemEval haystack
questions? Hybrid recall with meaning.MEANING_SLOT off and on, side by side in one process, on copies
of bench/hybrid.py's embedded workspaces; counts the pair tests that ran, how many said "the same
question", and the answers (result ids at k=10 and at 1000 and 2000 tokens) that differ.

    cp -a <rank-out>/hybrid-locomo bench/out/locomo-meaning           # bench/hybrid.py's workspaces
    cp -a <rank-out>/hybrid-haystack/<qid>-45 bench/out/hay-meaning/   # (those holding 2+ chunks naming an entity)
    .venv/bin/python bench/meaning_reach.py bench/out/locomo-meaning bench/out/hay-meaning

The test only runs for two candidates naming one entity (currency.newer_first), and chat turns name
none: a question whose workspace holds fewer than two such chunks cannot reach it, so copying only
the haystack workspaces that hold two or more covers every question it could change.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benchlib import LME, LOCOMO  # noqa: E402
from gm import Options  # noqa: E402

from gitmem.recall import meaning, semantic  # noqa: E402
from gitmem.recall.search import Session  # noqa: E402
from gitmem.workspace import Workspace  # noqa: E402


def questions(root: Path) -> list[str]:
    """The questions asked of the workspace `root` (a LoCoMo conversation or a haystack question)."""
    if root.name.startswith("conv-"):
        sample = next(s for s in json.loads(LOCOMO.read_text()) if s["sample_id"] == root.name)
        return [q["question"] for q in sample["qa"] if q.get("category") in (1, 2, 3, 4)]
    qid = root.name.rsplit("-", 1)[0]
    return [q["question"] for q in json.loads(LME.read_text()) if q["question_id"] == qid]


def main(argv: list[str]) -> int:
    emb = semantic.load_embedder()
    tally = {"tests": 0, "same": 0}
    test = meaning.SameQuestion.__call__

    def counted(self: meaning.SameQuestion, new: int, old: int) -> Any:
        said = test(self, new, old)
        tally["tests"] += 1
        tally["same"] += said is not None
        return said

    meaning.SameQuestion.__call__ = counted  # type: ignore[method-assign]
    for top in map(Path, argv):
        spaces = sorted(p for p in top.iterdir() if (p / ".memory").is_dir())
        asked = changed = 0
        for ws in spaces:
            day = subprocess.run(["git", "-C", str(ws), "log", "-1", "--format=%cI"], capture_output=True, text=True,
                                 check=True).stdout.strip()
            with Session(Workspace(ws), catch_up=False, dense=semantic.InProcess(emb)) as s:
                for q in questions(ws):
                    for opts in (Options(k=10, as_of=day, semantic=True), Options(budget=1000, as_of=day, semantic=True),
                                 Options(budget=2000, as_of=day, semantic=True)):
                        ids = []
                        for on in (False, True):
                            meaning.MEANING_SLOT = on
                            ids.append([r.id for r in s.search(q, opts).results])
                        asked += 1
                        changed += ids[0] != ids[1]
        print(f"{top}: {len(spaces)} workspaces, {asked} answers compared, {changed} differ; "
              f"pair tests so far {tally['tests']}, said the same question {tally['same']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
