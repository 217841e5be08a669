"""LongMemEval haystack bench: each question's own sessions among ~45 distractor sessions.

    .venv/bin/python bench/haystack.py [--limit N] [--distractors 45] [--seed 16] [--write]

Built from the LongMemEval *oracle* file (only each question's evidence sessions), the shape of
the held-out set of issue 16: ~50 user/assistant sessions per question, of which 1-6 hold the
answer.

- Per question, a real gitmem workspace under bench/out/haystack/<question_id>: its own sessions
  at their own dates, plus `--distractors` sessions drawn (seeded per question id, so every run
  draws the same) from the other questions' sessions — never from the question itself or its
  `_abs` twin, which share sessions — and re-dated uniformly at random over the range from
  min(first own session, question day - 120 days) to the start of the question's day. Sessions
  are committed in date order as daily logs `memory/YYYY-MM-DD.md` (one `## HH:MM` heading per
  session, one list item `- user: …` / `- assistant: …` per turn, whitespace collapsed) and indexed
  by gitmem's own indexer. A workspace is rebuilt only when its sessions change (cached by digest).
- Asked in-process as of the question's day (end of that day): in the oracle file 43 questions
  (40 temporal-reasoning, 3 knowledge-update) have answer sessions a few hours after the question's
  clock time on the same day, an artefact of the data; their answers would otherwise be hidden.
- Metric: evidence-turn recall (the `has_answer` turns whose line lies inside a returned result)
  at 1000 / 2000 / 4000 tokens, packed by gitmem's `pack`, per question type; questions without
  `has_answer` turns (most `_abs` ones) are not scored. The plain FTS5 floor (bench/benchlib.py)
  runs in the same loop over the turns visible on that day, costed the same way.
- Split: a stable hash of the question id puts each question in the tune or the report half;
  both halves are printed, a ranking change is judged on the report half.
- Diagnostics at 2000 tokens (for the cost-aware context work): sessions the returned results
  span, the share of spent tokens that went to assistant turns and to results holding none of
  the question's words (they ride on a neighbour's score), and today's ranking with neighbour
  smoothing switched off (a diagnostic, not a shipped setting).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benchlib import (  # noqa: E402
    LME,
    OUT,
    Built,
    Floor,
    LogSession,
    Tally,
    cached_log_repo,
    covered,
    fmt,
    half,
    lme_time,
    matches_none,
    one_line,
    publish,
    question_stems,
)
from gm import Asker, Result, cost, index, no_smoothing  # noqa: E402

BUDGETS = (1000, 2000, 4000)
DIAG_BUDGET = 2000
DISTRACTORS = 45
SEED = 16
SPAN_DAYS = 120  # the least span the distractors are dated across, ending at the question's day


@dataclass(frozen=True)
class Source:
    """One oracle session: its id, its original date and its turns (role, content, has_answer)."""

    sid: str
    date: str
    turns: tuple[tuple[str, str, bool], ...]


@dataclass
class Haystack:
    qid: str
    qtype: str  # question_type, with "-abs" for abstention questions
    question: str
    day: str  # the question's day: asked as of its end
    built: Built
    answer_turns: list[str]  # turn ids of the has_answer turns, in date order of their sessions
    own: set[str]  # session ids of the question's own sessions

    def visible(self, tid: str) -> bool:
        return self.built.dates[tid] <= self.day


def qtype_of(q: dict[str, Any]) -> str:
    return q["question_type"] + ("-abs" if q["question_id"].endswith("_abs") else "")


def base_id(qid: str) -> str:
    return qid.removesuffix("_abs")


def sources(q: dict[str, Any]) -> list[Source]:
    return [Source(sid, date, tuple((t["role"], t["content"], bool(t.get("has_answer"))) for t in sess))
            for sid, date, sess in zip(q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"])]


def session_pool(data: list[dict[str, Any]]) -> dict[str, tuple[Source, set[str]]]:
    """Every distinct oracle session, with the base ids of the questions that hold it."""
    pool: dict[str, tuple[Source, set[str]]] = {}
    for q in data:
        for s in sources(q):
            pool.setdefault(s.sid, (s, set()))[1].add(base_id(q["question_id"]))
    return pool


def turns_of(s: Source, has_answer: bool) -> tuple[list[tuple[str, str]], list[str]]:
    """List items of a session, and the has_answer turn ids (only for the question's own sessions:
    a distractor's flags answer another question)."""
    items, answers = [], []
    for j, (role, content, flag) in enumerate(s.turns):
        tid = f"{s.sid}:{j}"
        items.append((tid, f"{role}: {one_line(content)}"))
        if flag and has_answer:
            answers.append(tid)
    return items, answers


def plan(q: dict[str, Any], pool: dict[str, tuple[Source, set[str]]], n: int, seed: int) -> list[tuple[datetime, Source, bool]]:
    """(when, session, own?) for a question's haystack, sorted by time; deterministic per (seed, id)."""
    own = sources(q)
    asked = lme_time(q["question_date"])
    day_start = asked.replace(hour=0, minute=0)
    first = min(lme_time(s.date) for s in own)
    start = min(first, day_start - timedelta(days=SPAN_DAYS))
    rng = random.Random(f"{seed}:{q['question_id']}")
    me = base_id(q["question_id"])
    mine = {s.sid for s in own}
    others = sorted(sid for sid, (_, holders) in pool.items() if sid not in mine and me not in holders)
    picked = rng.sample(others, min(n, len(others)))
    span = int((day_start - start).total_seconds() // 60)
    out = [(lme_time(s.date), s, True) for s in own]
    out += [(start + timedelta(minutes=rng.randrange(span)), pool[sid][0], False) for sid in picked]
    out.sort(key=lambda x: (x[0], x[1].sid))
    return out


def build(q: dict[str, Any], pool: dict[str, tuple[Source, set[str]]], *, n: int = DISTRACTORS,
          seed: int = SEED, root: Path | None = None) -> Haystack:
    """The question's haystack workspace, built (or reused from the cache) and indexed."""
    sessions: list[LogSession] = []
    answers: list[str] = []
    own: set[str] = set()
    for when, s, mine in plan(q, pool, n, seed):
        items, ans = turns_of(s, mine)
        sessions.append((when, when.strftime("%H:%M"), items))
        answers += ans
        if mine:
            own.add(s.sid)
    key = hashlib.sha1(json.dumps([(w.isoformat(), h, t) for w, h, t in sessions]).encode()).hexdigest()
    root = root or OUT / "haystack" / q["question_id"]
    built = cached_log_repo(root, sessions, key)
    index(built.root)
    day = lme_time(q["question_date"]).date().isoformat()
    return Haystack(q["question_id"], qtype_of(q), q["question"], day, built, answers, own)


def load(path: Path = LME) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(path.read_text())
    return data


# -- the run -------------------------------------------------------------------------------------

def session_of(tid: str) -> str:
    return tid.rsplit(":", 1)[0]


def returned_turns(h: Haystack, results: list[Result]) -> list[str]:
    return [tid for tid, w in h.built.lines.items() if covered(results, w)]


def run(data: list[dict[str, Any]], limit: int, n: int, seed: int) -> tuple[Tally, dict[str, float]]:
    pool = session_pool(data)
    t = Tally()
    secs = {"build+index": 0.0, "ask": 0.0}
    for q in data[:limit]:
        t0 = time.perf_counter()
        h = build(q, pool, n=n, seed=seed)
        t1 = time.perf_counter()
        secs["build+index"] += t1 - t0
        if not h.answer_turns:
            continue
        groups = [(p, g) for p in (half(h.qid), "all") for g in (h.qtype, "all")]
        where = [h.built.lines[tid] for tid in h.answer_turns]
        floor = Floor(h.built, h.visible)
        with Asker(h.built.root) as asker:
            for b in BUDGETS:
                res = asker.ask(h.question, as_of=h.day, budget=b)
                fres = floor.ask(h.question, budget=b)
                t.add(f"gitmem {b}", groups, sum(covered(res, w) for w in where) / len(where))
                t.add(f"floor {b}", groups, sum(covered(fres, w) for w in where) / len(where))
                if b == DIAG_BUDGET:
                    stems = question_stems(h.question)
                    for name, rs in (("gitmem", res), ("floor", fres)):
                        spent = sum(cost(r) for r in rs) or 1
                        asst = sum(cost(r) for r in rs if r.content.startswith("assistant:"))
                        t.add(f"{name} no-term share", groups,
                              sum(cost(r) for r in rs if matches_none(r.content, stems)) / spent)
                        t.add(f"{name} sessions", groups, len({session_of(x) for x in returned_turns(h, rs)}))
                        t.add(f"{name} assistant share", groups, asst / spent)
                        t.add(f"{name} results", groups, len(rs))
            with no_smoothing():
                for b in BUDGETS:
                    res = asker.ask(h.question, as_of=h.day, budget=b)
                    t.add(f"unsmoothed {b}", groups, sum(covered(res, w) for w in where) / len(where))
        floor.close()
        secs["ask"] += time.perf_counter() - t1
    return t, secs


def recall_table(t: Tally, part: str) -> str:
    cols = [f"{b} tok floor / gitmem" for b in BUDGETS]
    rows = ["| question type | n | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 2)]
    types = sorted({g for (_, (p, g)) in t.counts if p == part and g != "all"}) + ["all"]
    for g in types:
        cells = [f"{fmt(t.get(f'floor {b}', (part, g)))} / {fmt(t.get(f'gitmem {b}', (part, g)))}" for b in BUDGETS]
        label = "**all**" if g == "all" else g
        rows.append(f"| {label} | {t.n('gitmem 1000', (part, g))} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def diag_table(t: Tally, part: str) -> str:
    cols = ["sessions spanned floor / gitmem", "assistant share of tokens floor / gitmem",
            "share of tokens on results with no question word floor / gitmem",
            "results floor / gitmem"] + [f"unsmoothed {b} tok" for b in BUDGETS]
    rows = ["| question type | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 1)]
    types = sorted({g for (_, (p, g)) in t.counts if p == part and g != "all"}) + ["all"]
    for g in types:
        key = (part, g)
        cells = [f"{t.get(f'floor {m}', key):.2f} / {t.get(f'gitmem {m}', key):.2f}"
                 for m in ("sessions", "assistant share", "no-term share", "results")]
        cells += [fmt(t.get(f"unsmoothed {b}", key)) for b in BUDGETS]
        rows.append(f"| {'**all**' if g == 'all' else g} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--longmemeval", type=Path, default=LME)
    ap.add_argument("--limit", type=int, default=500, help="first N questions of the oracle file (default all)")
    ap.add_argument("--distractors", type=int, default=DISTRACTORS)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--write", action="store_true", help="update the Haystack section of bench/RESULTS.md")
    args = ap.parse_args(argv)
    t, secs = run(load(args.longmemeval), args.limit, args.distractors, args.seed)
    out = []
    for part, title in (("report", "report half"), ("tune", "tune half"), ("all", "both halves")):
        out += [f"### Evidence-turn recall, {title} (floor = plain FTS5 per turn / gitmem)\n", recall_table(t, part), ""]
    out += [(f"### Diagnostics at {DIAG_BUDGET} tokens, both halves (floor / gitmem; unsmoothed = today's ranking "
             "with neighbour smoothing off)\n"), diag_table(t, "all"), ""]
    out.append(f"{args.distractors} distractor sessions per question, seed {args.seed}. "
               f"Build + index {secs['build+index']:.1f}s (0 when cached), ask {secs['ask']:.1f}s "
               "(gitmem, floor and the unsmoothed diagnostic).")
    cmd = ".venv/bin/python bench/haystack.py" + (f" --limit {args.limit}" if args.limit != 500 else "") + (
        f" --distractors {args.distractors}" if args.distractors != DISTRACTORS else "") + (
        f" --seed {args.seed}" if args.seed != SEED else "") + " --write"
    publish(out, "Recall: LongMemEval haystack", cmd, args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
