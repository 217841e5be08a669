"""Recall quality at scale: labelled questions asked of one memory of 100k-1M lines.

    .venv/bin/python bench/scale.py [--lines 200000] [--names shared|other] [--variants shipped,scored1500] [--limit N] [--cache DIR]

LoCoMo and the haystack judge a ranking on memories of a few hundred to a few thousand lines, where
the first stage (store.match_plan's SCORED_ROWS, rank.MIN_CANDIDATES' pool) never cuts anything.
This bench puts the same labelled questions into ONE workspace of `--lines` list items, so a
cheaper first stage can be judged where it bites:

- all ten LoCoMo conversations (one commit per session at its own date, as bench/recall.py; two
  conversations on one day share the day's log under their own `## <time>` headings),
- every distinct LongMemEval oracle session once (as bench/haystack.py's turns, at its own date),
- filler up to `--lines` turns: two-person chats dated uniformly over 2019-2024 (LoCoMo's and
  LongMemEval's dates lie inside, so filler is both older and newer than the labelled turns).
  Each filler turn is `Name: ` and 1-3 sentences drawn from the oracle sessions' turns that answer
  no question (`has_answer` unset; so no evidence sentence is ever copied into the filler, and no
  LoCoMo text is used at all). The names come from LoCoMo's speakers plus as many others: a
  LoCoMo name speaks in a few thousand filler turns at 200k lines, as a friend does over years of
  logs, so a question's name alone no longer finds its conversation. A day's filler is one commit.
  `--names other` draws the filler's speakers from the other names only (each LoCoMo name then
  speaks in its own conversation alone: the easier memory). Everything is drawn from one seeded
  RNG (`--seed`).

The history and its index are cached outside the repository (`--cache`, default
~/.cache/gitmem-bench/scale-<lines>-<names>-<digest of every session>) and reused; gitmem's
indexer only catches up when its rules changed.

Asked in-process: LoCoMo questions as of the end of the whole history ("now": every conversation
and all the filler are in memory), LongMemEval questions as of their question day (end of day),
as bench/haystack.py. Scored as bench/recall.py and bench/haystack.py: evidence-turn recall (the
evidence / `has_answer` turns whose line lies inside a returned result) at token budgets packed
by gitmem's `pack` (`--budgets`, default 1000,2000); LoCoMo categories 1-4 per half (tune 0-4 /
validate 5-9), LongMemEval per half (benchlib.half; questions without `has_answer` turns are not
scored). The plain FTS5 floor (benchlib.Floor over every turn, limited to the day asked) runs in
the same loop. Each variant (overrides of first-stage constants, applied in-process in turn over
the same index) also reports its CPU per question (thread time of the first budget's asks) and
how many of its answers differ from the first variant's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import statistics
import sys
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import haystack  # noqa: E402
from benchlib import LOCOMO, Built, Floor, LogSession, Tally, cached_log_repo, covered, fmt, half, lme_time, patched  # noqa: E402
from gm import Asker, Result, index, pack  # noqa: E402
from recall import CATS, HALVES, evidence_ids, locomo_sessions  # noqa: E402

from gitmem.index import store  # noqa: E402
from gitmem.recall import rank  # noqa: E402

GENERATOR = "1"  # bump when the history's layout or drawing changes: a new cache
SEED = 18
START = datetime(2019, 1, 1, tzinfo=timezone.utc)
DAYS = 6 * 365  # 2019-2024
BUDGETS = {"locomo": (1000, 2000), "lme": (1000, 2000)}  # --budgets
# Filler speakers besides LoCoMo's own (drawn from the same list, equally often).
OTHER_NAMES = (
    "Alex", "Priya", "Marco", "Lena", "Omar", "Hannah", "Diego", "Yuki", "Fatima", "Ben", "Chloe", "Ravi",
    "Sofia", "Tom", "Aisha", "Lukas", "Mei", "Noah", "Elena", "Kofi", "Ines", "Victor", "Zara", "Paul",
)
SENTENCE = re.compile(r"(?<=[.!?])\s+")
# name -> {"module.CONSTANT": value}: the first stage's knobs (store.SCORED_ROWS: rows bm25
# scores; rank.MIN_CANDIDATES: the pool the rerank sees).
VARIANTS: dict[str, dict[str, int]] = {
    "shipped": {},
    "scored2000": {"store.SCORED_ROWS": 2000},
    "scored1500": {"store.SCORED_ROWS": 1500},
    "scored1000": {"store.SCORED_ROWS": 1000},
    "pool500": {"rank.MIN_CANDIDATES": 500},
    "scored1500+pool500": {"store.SCORED_ROWS": 1500, "rank.MIN_CANDIDATES": 500},
    "scored6000": {"store.SCORED_ROWS": 6000},
    "scoredall": {"store.SCORED_ROWS": 10**9},  # no cut: what the first stage's cut costs in quality
}
_MODULES = {"store": store, "rank": rank}


def variant(name: str) -> AbstractContextManager[None]:
    return patched(_MODULES, VARIANTS[name])


# -- the history ---------------------------------------------------------------------------------

@dataclass
class Question:
    source: str  # "locomo" | "lme"
    part: str  # tune / validate (LoCoMo) or tune / report (LongMemEval)
    group: str  # LoCoMo category or LongMemEval question type
    text: str
    as_of: str | None  # None: the end of the history
    evidence: list[tuple[str, int]]


def filler_sentences(lme: list[dict[str, Any]]) -> list[str]:
    """Sentences of the oracle turns that answer no question, 4-40 words, distinct, sorted."""
    out: set[str] = set()
    for q in lme:
        for sess in q["haystack_sessions"]:
            for t in sess:
                if t.get("has_answer"):
                    continue
                for s in SENTENCE.split(" ".join(str(t["content"]).split())):
                    s = s.strip(" *#-")
                    if 4 <= len(s.split()) <= 40 and not s[:1].isdigit():
                        out.add(s)
    return sorted(out)


def filler(rng: random.Random, sentences: list[str], names: list[str], lines: int, days: int = DAYS) -> list[LogSession]:
    """Two-person chats of 8-30 turns at random times over `days` from START until `lines` turns."""
    out: list[LogSession] = []
    n = 0
    while n < lines:
        when = START + timedelta(minutes=rng.randrange(days * 24 * 60))
        a, b = rng.sample(names, 2)
        turns = []
        for j in range(min(rng.randint(8, 30), lines - n)):
            text = " ".join(rng.choice(sentences) for _ in range(rng.randint(1, 3)))
            turns.append((f"f{len(out)}:{j}", f"{(a, b)[j % 2]}: {text}"))
        n += len(turns)
        out.append((when, when.strftime("%H:%M"), turns))
    return out


@dataclass
class Memory:
    built: Built
    questions: list[Question]
    lines: int
    names: str  # the filler's speakers: "shared" (LoCoMo's among them) or "other"


def plan(locomo: list[dict[str, Any]], lme: list[dict[str, Any]], lines: int, seed: int,
         shared: bool, days: int = DAYS) -> tuple[list[LogSession], list[bool], dict[str, list[str]]]:
    """The sessions in commit order, which of them are filler, and each oracle session's
    has_answer turn ids. LoCoMo turn ids are "<conversation>/<dia_id>"."""
    # (when, order, session, filler?): at equal times LoCoMo, then LongMemEval, then filler.
    tagged: list[tuple[datetime, int, LogSession, bool]] = []
    for ci, sample in enumerate(locomo):
        for when, heading, turns in locomo_sessions(sample):
            tagged.append((when, 0, (when, heading, [(f"{ci}/{tid}", text) for tid, text in turns]), False))
    answers: dict[str, list[str]] = {}
    for sid, (src, _) in sorted(haystack.session_pool(lme).items()):
        items, ans = haystack.turns_of(src, True)
        when = lme_time(src.date)
        tagged.append((when, 1, (when, when.strftime("%H:%M"), items), False))
        answers[sid] = ans
    labelled = sum(len(s[2]) for _, _, s, _ in tagged)
    own = sorted({s for sample in locomo for s in (sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"])})
    names = (own if shared else []) + [n for n in OTHER_NAMES if n not in own]
    for s in filler(random.Random(seed), filler_sentences(lme), names, max(0, lines - labelled), days):
        tagged.append((s[0], 2, s, True))
    tagged.sort(key=lambda x: (x[0], x[1]))
    return [s for _, _, s, _ in tagged], [f for _, _, _, f in tagged], answers


def build(locomo: list[dict[str, Any]], lme: list[dict[str, Any]], lines: int, seed: int = SEED,
          shared: bool = True, cache: Path | None = None, days: int = DAYS) -> Memory:
    """The memory, built (or reused from the cache: a digest of its sessions) and indexed, and
    its labelled questions."""
    sessions, is_filler, answers = plan(locomo, lme, lines, seed, shared, days)
    key = hashlib.sha1(GENERATOR.encode() + json.dumps([(w.isoformat(), h, t) for w, h, t in sessions]).encode()).hexdigest()
    names = "shared" if shared else "other"
    root = (cache or Path.home() / ".cache" / "gitmem-bench") / f"scale-{lines}-{names}-{key[:10]}"
    built = cached_log_repo(root, sessions, key, joins=lambda i: is_filler[i] and is_filler[i - 1])
    index(built.root)
    questions: list[Question] = []
    for ci, sample in enumerate(locomo):
        part = next(h for h, r in HALVES.items() if ci in r)
        known = {tid.split("/", 1)[1]: w for tid, w in built.lines.items() if tid.startswith(f"{ci}/")}
        for qa in sample["qa"]:
            ids = evidence_ids(qa.get("evidence", []), known)
            if ids:
                questions.append(Question("locomo", part, str(qa["category"]), qa["question"], None, [known[t] for t in ids]))
    for q in lme:
        ev = [built.lines[t] for s in haystack.sources(q) for t in answers[s.sid]]
        if ev:
            day = lme_time(q["question_date"]).date().isoformat()
            questions.append(Question("lme", half(q["question_id"]), haystack.qtype_of(q), q["question"], day, ev))
    return Memory(built, questions, len(built.lines), names)


# -- the run -------------------------------------------------------------------------------------

def budgets(q: Question) -> tuple[int, ...]:
    return BUDGETS[q.source]


def groups(q: Question) -> list[tuple[str, str, str]]:
    if q.source == "locomo":
        cats = (q.group, "1-4") if q.group in ("1", "2", "3", "4") else (q.group,)
        return [(q.source, p, c) for p in (q.part, "all") for c in cats]
    return [(q.source, p, g) for p in (q.part, "all") for g in (q.group, "all")]


def recall_of(results: list[Result], q: Question) -> float:
    return sum(covered(results, w) for w in q.evidence) / len(q.evidence)


def run(mem: Memory, names: list[str], limit: int, with_floor: bool = True) -> dict[str, Any]:
    qs = mem.questions if not limit else mem.questions[::max(1, len(mem.questions) // limit)][:limit]
    now = mem.built.last
    t = Tally()
    cpu: dict[str, list[float]] = {n: [] for n in names}
    answers: dict[str, list[list[str]]] = {n: [] for n in names}
    secs: dict[str, float] = {}
    t0 = time.perf_counter()
    floor = Floor(mem.built, dated=True)
    for q in qs if with_floor else []:
        # One bm25 query at the largest budget's depth: a smaller budget's list is its prefix, packed.
        found = floor.search(q.text, Floor.depth(max(budgets(q))), q.as_of)
        for b in budgets(q):
            t.add(f"floor {b}", groups(q), recall_of(pack(found[:Floor.depth(b)], b), q))
    floor.close()
    secs["floor"] = time.perf_counter() - t0
    with Asker(mem.built.root) as asker:
        for q in qs[:20]:  # warm-up: page cache and SQLite's own caches
            asker.ask(q.text, as_of=q.as_of or now, budget=budgets(q)[0])
        for name in names:
            t0 = time.perf_counter()
            with variant(name):
                for q in qs:
                    for b in budgets(q):
                        c0 = time.thread_time()
                        res = asker.ask(q.text, as_of=q.as_of or now, budget=b)
                        if b == budgets(q)[0]:
                            cpu[name].append(time.thread_time() - c0)
                            answers[name].append([r.source for r in res])
                        t.add(f"{name} {b}", groups(q), recall_of(res, q))
            secs[name] = time.perf_counter() - t0
    return {"tally": t, "cpu": cpu, "answers": answers, "secs": secs, "n": len(qs)}


def report(mem: Memory, r: dict[str, Any], names: list[str]) -> str:
    t: Tally = r["tally"]
    out = [f"{mem.lines:,} turns in memory ({mem.built.root}, filler names {mem.names}); {r['n']} questions asked.\n"]
    for source, parts in (("locomo", ("tune", "validate", "all")), ("lme", ("tune", "report", "all"))):
        bs = BUDGETS[source]
        title = "LoCoMo categories 1-4" if source == "locomo" else "LongMemEval oracle questions, all types"
        cols = [f"{p} {b}" for p in parts for b in bs]
        out += [f"#### {title}: evidence-turn recall per half and budget\n",
                "| ranking | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
        g = "1-4" if source == "locomo" else "all"
        for name in ["floor", *names]:
            out.append(f"| {name} | " + " | ".join(fmt(t.get(f"{name} {b}", (source, p, g))) for p in parts for b in bs) + " |")
        n = t.n(f"{names[0]} {bs[0]}", (source, "all", g))
        out.append(f"\n({n} questions)\n")
    per = [("locomo", c, f"{c} {CATS[int(c)]}") for c in ("1", "2", "3", "4")]
    types = sorted({g for (_, (src, p, g)) in t.counts if src == "lme" and p == "all" and g != "all"})
    per += [("lme", ty, ty) for ty in types]
    out += [f"#### Per category / type, both halves, {' / '.join(str(b) for b in BUDGETS['locomo'])} tokens\n",
            "| set | category | n | " + " | ".join(["floor", *names]) + " |", "|---|---|---|" + "---|" * (len(names) + 1)]
    for source, g, label in per:
        cells = [" / ".join(fmt(t.get(f"{nm} {b}", (source, "all", g))) for b in BUDGETS[source]) for nm in ["floor", *names]]
        out.append(f"| {source} | {label} | {t.n(f'{names[0]} {BUDGETS[source][0]}', (source, 'all', g))} | " + " | ".join(cells) + " |")
    base = names[0]
    out += ["", f"#### CPU per question at {BUDGETS['locomo'][0]} tokens (thread time) and answers against {base}\n",
            "| ranking | CPU mean / p50 / p95 ms | CPU mean ratio | p95 ratio | answers identical | seconds (all asks) |",
            "|---|---|---|---|---|---|"]
    c0 = r["cpu"][base]
    for name in names:
        c = r["cpu"][name]
        same = sum(a == b for a, b in zip(r["answers"][name], r["answers"][base]))
        out.append(f"| {name} | {1000 * statistics.mean(c):.2f} / {1000 * pct(c, 0.5):.2f} / {1000 * pct(c, 0.95):.2f}"
                   f" | {statistics.mean(c) / statistics.mean(c0):.3f} | {pct(c, 0.95) / pct(c0, 0.95):.3f}"
                   f" | {same}/{len(c)} | {r['secs'][name]:.0f} |")
    out.append(f"\nfloor: {r['secs']['floor']:.0f} s.")
    return "\n".join(out)


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=200_000, help="turns in the memory, labelled ones included")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--names", choices=("shared", "other"), default="shared",
                    help="filler speakers: LoCoMo's names among others (default) or others only")
    ap.add_argument("--variants", default="shipped", help=f"comma-separated, the first is the reference: {', '.join(VARIANTS)}")
    ap.add_argument("--budgets", default="1000,2000", help="token budgets for both sets (default 1000,2000)")
    ap.add_argument("--no-floor", action="store_true", help="skip the floor (its numbers do not depend on gitmem: a rerun of variants)")
    ap.add_argument("--limit", type=int, default=0, help="ask only N questions, spread over the list (a quick look)")
    ap.add_argument("--cache", type=Path, default=None, help="where the history is kept (default ~/.cache/gitmem-bench)")
    args = ap.parse_args(argv)
    names = args.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {', '.join(unknown)}: choose from {', '.join(VARIANTS)}")
    BUDGETS.update(dict.fromkeys(BUDGETS, tuple(int(b) for b in args.budgets.split(","))))
    t0 = time.perf_counter()
    mem = build(json.loads(LOCOMO.read_text()), haystack.load(), args.lines, args.seed, args.names == "shared", args.cache)
    print(f"build + index {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(report(mem, run(mem, names, args.limit, not args.no_floor), names))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
