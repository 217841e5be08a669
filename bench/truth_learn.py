"""Train and check recall/learned.py's pair model on the current-truth sets (issue 13, wave 10).

    .venv/bin/python bench/truth_learn.py dump            # every set's pairs, read through recall itself
    .venv/bin/python bench/truth_learn.py loso            # leave-one-set-out, offline (from the dump)
    .venv/bin/python bench/truth_learn.py loso --real     # ... and each held-out set asked through recall
    .venv/bin/python bench/truth_learn.py guarded [--real] [--cost 6]  # wave 11: the rules, then the model past their guards
    .venv/bin/python bench/truth_learn.py guarded --cos --guards 1,2,3,4,5,6,8,9,10  # wave 17: + MiniLM cosines, a guard off
    .venv/bin/python bench/truth_learn.py guards          # which trap guard refuses the current line where recall misses it
    .venv/bin/python bench/truth_learn.py write           # train on every set, write gitmem/recall/learned_model.py
    .venv/bin/python bench/truth_learn.py cost            # CPU per recall, model off / on, heldout6's questions
    .venv/bin/python bench/truth_learn.py misses          # wave 12: the misses where a later line holds the current value
    .venv/bin/python bench/truth_learn.py meaning [--guards 1,2,3]  # wave 12: MiniLM cosines as the pair decision

`dump` builds each set's workspace (bench/current_truth.py's `build`), asks each question as the
bench does (lexical, k=10, as of its day) with the model off and `learned.RECORD` on, and keeps, for
each question, the statement recall put first among those naming its entity (A) and every later one
recall would score against it (B, with its features). Labels come from the set: a pair is positive
when B holds the question's `current` substring and A does not. A question whose A is current gives
only negatives: moving anything ahead of it loses a right answer.

`loso`: for each set N, the model is trained on the other sets only (L2 logistic regression, numpy),
its threshold chosen on those sets alone (an inner leave-one-set-out gives every training pair a
probability from a model that did not see its set; the threshold maximises gains - COST x losses on
them), and then applied to set N: offline (A replaced by the best B over the threshold; right if B is
current) and, with `--real`, through recall itself (the model's weights set in process, each
question of N asked, top-1 current and the false supersession of N's kept facts judged as
bench/current_truth.py judges them). This is the estimate of what a set never seen will show.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

from benchlib import OUT  # noqa: E402
from current_truth import HALVES, K, build, judge, load, marked_superseded  # noqa: E402
from gm import Asker  # noqa: E402

from gitmem.recall import learned  # noqa: E402

GUARDS = learned.GUARD_NAMES  # currency.refusals' eight, then the model's own (learned.BESIDE_A_YES)

DUMP = OUT / "truth-learn" / "pairs.json"
MODEL = HERE.parent / "gitmem" / "recall" / "learned_model.py"
L2 = 1.0
COST = 3.0  # a right answer moved away counts this many gained ones: precision first


def workspace(half: str) -> Path:
    return OUT / "truth-learn" / half


def dump() -> None:
    """Each set twice: as recall ranks today (the rules on: the model must not undo what they got
    right) and with `newer_first` off (relevance alone: the stale line is often first, which gives
    the positives the rules left none of on the sets they were written on)."""
    from gitmem.recall import search

    sets: dict[str, list[dict[str, Any]]] = {}
    learned.MODE = "off"
    rules = search.newer_first
    for half, path in [(h, p) for h, p in HALVES.items()] + [(h + ":plain", p) for h, p in HALVES.items()]:
        search.newer_first = rules if not half.endswith(":plain") else (lambda cands, *a, **kw: cands)
        if not path.exists():
            continue
        scenarios = load(path)
        root = workspace(half.split(":")[0])
        if not (root / ".memory" / "index.sqlite").exists():
            build(scenarios, root)
        rows: list[dict[str, Any]] = []
        with Asker(root) as asker:
            for s in scenarios:
                for q in s.questions:
                    learned.RECORD = []
                    res = asker.ask(q.q, as_of=q.as_of, k=K)
                    rec = learned.RECORD[-1] if learned.RECORD else None
                    out = judge(q, s, res)
                    cur = q.current.lower()
                    rows.append({"scenario": s.name, "kind": s.kind, "q": q.q, "current": q.current,
                                 "top1": out.top1_current,
                                 "a": rec.top if rec else None, "a_cur": bool(rec and cur in rec.top.lower()),
                                 "pairs": [{"b": b, "x": x, "cur": cur in b.lower(), "g": list(g)}
                                           for b, x, _, g in rec.others]
                                 if rec else []})
        learned.RECORD = None
        search.newer_first = rules
        sets[half] = rows
        n = len(rows)
        print(f"{half}: {n} questions, top-1 {sum(r['top1'] for r in rows)}/{n}, "
              f"current reachable as a newer B {sum(any(p['cur'] for p in r['pairs']) and not r['a_cur'] for r in rows)}",
              file=sys.stderr)
    DUMP.parent.mkdir(parents=True, exist_ok=True)
    DUMP.write_text(json.dumps(sets))


def _xy(rows: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for r in rows:
        for p in r["pairs"]:
            xs.append(p["x"])
            ys.append(float(p["cur"] and not r["a_cur"]))
    return np.array(xs, dtype=float).reshape(-1, len(xs[0]) if xs else 0), np.array(ys)


def fit(rows: list[dict[str, Any]], l2: float = L2) -> SimpleNamespace:
    """L2 logistic regression by Newton's method on standardised features."""
    x, y = _xy(rows)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    z1 = np.hstack([z, np.ones((len(z), 1))])
    w = np.zeros(z1.shape[1])
    reg = np.full(z1.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-(z1 @ w)))
        g = z1.T @ (p - y) + reg * w
        h = (z1.T * (p * (1 - p))) @ z1 + np.diag(reg + 1e-9)
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return SimpleNamespace(MEAN=tuple(mean), SCALE=tuple(scale), WEIGHTS=tuple(w[:-1]), BIAS=float(w[-1]),
                           THRESHOLD=1.0)


def decide(rows: list[dict[str, Any]], model: SimpleNamespace, threshold: float) -> tuple[int, int, int]:
    """(gains, losses, moves) of moving the best B over `threshold` ahead of A."""
    gains = losses = moves = 0
    for r, probs in zip(rows, _probs(rows, model)):
        best = max(range(len(probs)), key=lambda i: probs[i], default=None)
        if best is None or probs[best] < threshold:
            continue
        moves += 1
        right = r["pairs"][best]["cur"]
        if r["a_cur"] and not right:
            losses += 1
        elif right and not r["a_cur"]:
            gains += 1
    return gains, losses, moves


def _probs(rows: list[dict[str, Any]], model: SimpleNamespace) -> list[list[float]]:
    return [[learned.probability(p["x"], model) for p in r["pairs"]] for r in rows]


def base(half: str) -> str:
    return half.split(":")[0]


def choose_threshold(train: dict[str, list[dict[str, Any]]], mode: str = "") -> float:
    """The threshold maximising gains - COST x losses on out-of-set probabilities of `train`'s
    rows as recall ranks them (the rules on: where the model acts)."""
    scored: list[tuple[dict[str, Any], list[float]]] = []
    for held in [h for h in train if ":" not in h]:
        rest = [r for h, rows in train.items() if base(h) != held for r in rows]
        m = fit(rest)
        scored += list(zip(train[held + mode], _probs(train[held + mode], m)))
    best_t, best_v = 1.0, 0.0
    for t in np.arange(0.30, 0.96, 0.025):
        v = _value(scored, float(t), COST)[0]
        if v > best_v:
            best_t, best_v = float(t), v
    return best_t


def trained(train: dict[str, list[dict[str, Any]]], mode: str = "") -> SimpleNamespace:
    m = fit([r for rows in train.values() for r in rows])
    m.THRESHOLD = choose_threshold(train, mode)
    return m


def real(half: str, model: SimpleNamespace, plain: bool = False, guarded: bool = False) -> tuple[int, int, int, int]:
    """(top-1 current, questions, false supersession, kept) of `half` asked through recall with
    `model` (with `plain`, in place of `newer_first`'s rules; with `guarded`, recall's own "after"
    mode: the rules, then the model past their trap guards, at the model's AFTER_THRESHOLD)."""
    from gitmem.recall import learned_model, search

    saved = {k: getattr(learned_model, k, 1.01) for k in ("MEAN", "SCALE", "WEIGHTS", "BIAS", "THRESHOLD", "AFTER_THRESHOLD")}
    for k in saved:
        setattr(learned_model, k, getattr(model, k, 1.01))  # AFTER_THRESHOLD: wave 11's weights on
    learned.MODE = "after" if guarded else "replace"  # "replace": in place of newer_first (search.py)
    rules, ahead = search.newer_first, learned.ahead
    if not plain and not guarded:
        # The model after the rules, unguarded (lexical: no meaning pair test): newer_first, then the model.
        learned.ahead = lambda ranked, q, rep, past, pend, **kw: ahead(rules(ranked, q, rep, past, pend), q, rep, past, pend)
    try:
        scenarios = load(HALVES[half])
        root = workspace(half)
        top = n = false = kept = 0
        with Asker(root) as asker:
            for s in scenarios:
                for q in s.questions:
                    n += 1
                    top += judge(q, s, asker.ask(q.q, as_of=q.as_of, k=K)).top1_current
                for kp in s.keep:
                    kept += 1
                    res = asker.ask(kp.text, as_of=kp.as_of, k=K)
                    hit = next((r for r in res if kp.text.lower() in r.content.lower()), None)
                    false += hit is None or marked_superseded(hit)
        return top, n, false, kept
    finally:
        learned.MODE = "off"
        learned.ahead = ahead
        for k, v in saved.items():
            setattr(learned_model, k, v)


def loso(with_real: bool, mode: str = "") -> None:
    """mode "": the model after the rules; ":plain": the model in place of `newer_first`."""
    sets = json.loads(DUMP.read_text())
    first = "relevance alone (newer_first off)" if mode else "rules (model off)"
    print(f"| held-out set | questions | {first} | + model trained without it (offline) | gains / losses "
          "| threshold |" + (" through recall | false supersession |" if with_real else ""))
    print("|---|---:|---:|---:|---:|---:|" + ("---:|---:|" if with_real else ""))
    tot = [0, 0, 0, 0, 0, 0]
    for half, rows in [(h, r) for h, r in sets.items() if ":" not in h]:
        train = {h: r for h, r in sets.items() if base(h) != half}
        m = trained(train, mode)
        g, lost, _ = decide(sets[half + mode], m, m.THRESHOLD)
        before = sum(r["top1"] for r in sets[half + mode])
        line = (f"| {half} | {len(rows)} | {before}/{len(rows)} | {before + g - lost}/{len(rows)} | +{g} / -{lost} "
                f"| {m.THRESHOLD:.3f} |")
        tot[0] += len(rows)
        tot[1] += before
        tot[2] += before + g - lost
        if with_real:
            top, n, false, kept = real(half, m, bool(mode))
            line += f" {top}/{n} | {false}/{kept} |"
            tot[3] += top
            tot[4] += false
            tot[5] += kept
        print(line, flush=True)
    print(f"| all | {tot[0]} | {tot[1]}/{tot[0]} | {tot[2]}/{tot[0]} | | |"
          + (f" {tot[3]}/{tot[0]} | {tot[4]}/{tot[5]} |" if with_real else ""))


# The rules' first blind run on each set (bench/RESULTS.md: waves 5-22; from heldout14 the rules with
# the guarded model off, as the earlier sets were run), to compare against.
FIRST_BLIND = {"heldout2": 23, "heldout3": 42, "heldout4": 59, "heldout5": 62, "heldout6": 58, "heldout7": 64, "heldout8": 70, "heldout9": 64,
               "heldout10": 76, "heldout11": 68, "heldout12": 71, "heldout13": 80,
               "heldout14": 72, "heldout15": 67, "heldout16": 76, "heldout17": 69, "heldout18": 78, "heldout19": 76,
               "heldout20": 61}
COST_AFTER = 6.0  # guarded: a right answer moved away counts six gained ones (see `guarded`)


def passing(rows: list[dict[str, Any]], guards: frozenset[str] = frozenset(learned.GUARDS)) -> list[dict[str, Any]]:
    """`rows` with only the pairs none of `guards` refuses (currency.refusals): where the model may act."""
    return [dict(r, pairs=[p for p in r["pairs"] if not guards.intersection(p["g"])]) for r in rows]


def _value(scored: list[tuple[dict[str, Any], list[float]]], t: float, cost: float) -> tuple[float, int, int]:
    """(gains - cost x losses, gains, losses) of moving each row's best pair over `t` ahead of A."""
    g = lost = 0
    for r, probs in scored:
        i = int(np.argmax(probs)) if probs else -1
        if i < 0 or probs[i] < t:
            continue
        right = r["pairs"][i]["cur"]
        g += right and not r["a_cur"]
        lost += r["a_cur"] and not right
    return g - cost * lost, g, lost


def _subsets(guards: tuple[str, ...]) -> list[frozenset[str]]:
    from itertools import combinations

    return [frozenset(c) for n in range(len(guards), -1, -1) for c in combinations(guards, n)]


def choose_after(train: dict[str, list[dict[str, Any]]], cost: float = COST_AFTER,
                 fixed: frozenset[str] | None = None) -> tuple[frozenset[str], float]:
    """The guarded decision's trap guards and threshold, chosen on `train` alone: every training set
    scored by a model trained without it (an inner leave-one-set-out); for each set of guards the
    threshold maximising gains - cost x losses on the relevance-only ranking's pairs past them (after
    the rules only a handful of positives are left on the sets they were written on: too few to
    place a threshold), then the guards whose decision, at that threshold, does best after the
    rules (ties: more guards). `fixed`: those guards, only the threshold chosen."""

    # Every pair's out-of-set probability, once; a set of guards only filters them.
    scored: dict[str, list[tuple[dict[str, Any], list[float]]]] = {"": [], ":plain": []}
    for held in [h for h in train if ":" not in h]:
        m = fit([r for h, rows in train.items() if base(h) != held for r in rows])
        for mode in scored:
            scored[mode] += list(zip(train[held + mode], _probs(train[held + mode], m)))

    def past(mode: str, gs: frozenset[str]) -> list[tuple[dict[str, Any], list[float]]]:
        out = []
        for r, ps in scored[mode]:
            keep = [i for i, p in enumerate(r["pairs"]) if not gs.intersection(p["g"])]
            out.append((dict(r, pairs=[r["pairs"][i] for i in keep]), [ps[i] for i in keep]))
        return out

    best: tuple[float, int, frozenset[str], float] | None = None
    for gs in [fixed] if fixed is not None else _subsets(GUARDS):
        plain = past(":plain", gs)
        t = float(max(np.arange(0.30, 0.991, 0.025), key=lambda t: (_value(plain, float(t), cost)[0], -t)))
        if _value(plain, t, cost)[0] <= 0:
            t = 1.01
        v = _value(past("", gs), t, cost)[0]
        if best is None or (v, len(gs)) > best[:2]:
            best = (v, len(gs), gs, t)
    assert best is not None
    return best[2], best[3]


def threshold_after(train: dict[str, list[dict[str, Any]]], cost: float = COST_AFTER) -> float:
    """The threshold with every trap guard on (`choose_after`)."""
    return choose_after(train, cost, frozenset(learned.GUARDS))[1]


def _short(gs: frozenset[str]) -> str:

    return ",".join(str(i + 1) for i, g in enumerate(GUARDS) if g in gs) or "none"


def guarded(with_real: bool, cost: float = COST_AFTER, select: bool = False, only: frozenset[str] | None = None,
            with_cos: bool = False) -> None:
    """Leave-one-set-out of the wave 11 decision: the rules, then the model where none of their trap
    guards refuses the newer line, at a threshold (and, with `select`, a set of guards) chosen
    without the held-out set; beside today's rules and the rules' first blind run on each set. `only`:
    these guards instead of all eight (wave 12: the ones against the model's known failures)."""

    sets = json.loads(DUMP.read_text())
    if with_cos:
        sets = with_cosines(sets)
    print("guards: " + "; ".join(f"{i + 1} {g}" for i, g in enumerate(GUARDS)) + "\n")
    print("| held-out set | questions | rules' first blind run | today's rules | rules + guarded model (offline) "
          "| gains / losses | guards | threshold |" + (" through recall | false supersession |" if with_real else ""))
    print("|---|---:|---:|---:|---:|---:|---|---:|" + ("---:|---:|" if with_real else ""))
    tot = [0, 0, 0, 0, 0, 0]
    for half in [h for h in sets if ":" not in h]:
        train = {h: r for h, r in sets.items() if base(h) != half}
        m = fit([r for rows in train.values() for r in rows])
        gs, m.AFTER_THRESHOLD = choose_after(train, cost, None if select else only or frozenset(learned.GUARDS))
        g, lost, _ = decide(passing(sets[half], gs), m, m.AFTER_THRESHOLD)
        n, rules = len(sets[half]), sum(r["top1"] for r in sets[half])
        line = (f"| {half} | {n} | {FIRST_BLIND.get(half, '-')} | {rules}/{n} | {rules + g - lost}/{n} | +{g} / -{lost} "
                f"| {_short(gs)} | {m.AFTER_THRESHOLD:.3f} |")
        tot[:3] = [tot[0] + n, tot[1] + rules, tot[2] + rules + g - lost]
        if with_real:
            saved = learned.GUARDS
            learned.GUARDS = gs
            try:
                top, _, false, kept = real(half, m, guarded=True)
            finally:
                learned.GUARDS = saved
            line += f" {top}/{n} | {false}/{kept} |"
            tot[3:] = [tot[3] + top, tot[4] + false, tot[5] + kept]
        print(line, flush=True)
    print(f"| all | {tot[0]} | | {tot[1]}/{tot[0]} | {tot[2]}/{tot[0]} | | | |"
          + (f" {tot[3]}/{tot[0]} | {tot[4]}/{tot[5]} |" if with_real else ""))


def guards() -> None:
    """Where the current line is when recall misses it, and which trap guard refuses it (a question
    counts under a guard when that guard refuses every later line holding the current value); and
    how many right answers some later line could displace, by the guards that refuse such a line."""

    sets = json.loads(DUMP.read_text())
    for mode in ("", ":plain"):
        print(f"\nranking: {'relevance alone' if mode else 'the rules (today)'}\n")
        print("| set | misses, current among the later lines | refused by: " + " / ".join(GUARDS)
              + " | by none | right answers with a later line | a later line refused by each guard |")
        print("|---|---:|---:|---:|---:|---:|")
        for half in [h for h in sets if ":" not in h]:
            miss, trap = dict.fromkeys(GUARDS, 0), dict.fromkeys(GUARDS, 0)
            missed = free = exposed = 0
            for r in sets[half + mode]:
                cur = [set(p["g"]) for p in r["pairs"] if p["cur"]]
                if not r["a_cur"] and cur:
                    missed += 1
                    every = set.intersection(*cur)
                    free += not every
                    for gname in every:
                        miss[gname] += 1
                if r["a_cur"] and r["pairs"]:
                    exposed += 1
                    for gname in GUARDS:
                        trap[gname] += any(gname in p["g"] for p in r["pairs"])
            print(f"| {half} | {missed} | " + " / ".join(map(str, miss.values())) + f" | {free} | {exposed} | "
                  + " / ".join(map(str, trap.values())) + " |")


def _floats(xs: tuple[float, ...]) -> str:
    rows = [", ".join(f"{v:.6g}" for v in xs[i:i + 8]) for i in range(0, len(xs), 8)]
    return "(\n" + "".join(f"    {r},\n" for r in rows) + ")"


def write() -> None:
    """The shipped model: trained on every set, its threshold chosen for use in place of the rules."""
    sets = json.loads(DUMP.read_text())
    m = trained(sets, ":plain")
    after = threshold_after(sets)
    MODEL.write_text(
        '"""The weights of recall/learned.py\'s pair model, written by bench/truth_learn.py (do not edit by\n'
        "hand): feature means and scales (standardisation), the weights, the bias and the threshold at which\n"
        "a newer statement goes ahead. Trained on:\n"
        + "".join(f"{line}\n" for line in textwrap.wrap(", ".join(h for h in sets if ":" not in h) + ",", 100))
        + "each ranked with and without newer_first's rules; THRESHOLD for use in place of the rules,\n"
        'AFTER_THRESHOLD after them past their trap guards (waves 11, 14)."""\n\n'
        f"MEAN: tuple[float, ...] = {_floats(m.MEAN)}\n"
        f"SCALE: tuple[float, ...] = {_floats(m.SCALE)}\n"
        f"WEIGHTS: tuple[float, ...] = {_floats(m.WEIGHTS)}\n"
        f"BIAS = {m.BIAS:.6g}\n"
        f"THRESHOLD = {m.THRESHOLD:.6g}\n"
        f"AFTER_THRESHOLD = {after:.6g}\n")
    print(f"wrote {MODEL} (threshold {m.THRESHOLD:.3f}, after the rules {after:.3f})")


def cost(half: str = "heldout6", repeat: int = 3) -> None:
    """CPU time of a recall with the model off (the rules), in their place and after them (guarded), interleaved
    question by question in one process over `half`'s workspace (built by `dump`)."""
    import statistics
    import time

    qs = [(q.q, q.as_of) for s in load(HALVES[half]) for q in s.questions]
    times: dict[str, list[float]] = {"off": [], "replace": [], "after": []}
    with Asker(workspace(half)) as asker:
        for q, day in qs:  # warm-up
            asker.ask(q, as_of=day, k=K)
        for _ in range(repeat):
            for q, day in qs:
                for mode in times:
                    learned.MODE = mode
                    t = time.process_time()
                    asker.ask(q, as_of=day, k=K)
                    times[mode].append(time.process_time() - t)
    learned.MODE = "off"
    for mode, xs in times.items():
        xs.sort()
        print(f"{mode:8}: CPU p50 {1000 * statistics.median(xs):.2f} ms, "
              f"p95 {1000 * xs[int(0.95 * len(xs))]:.2f} ms ({len(xs)} calls)")


def misses() -> None:
    """Wave 12: per set, the questions the rules miss with a later line holding the current value (an
    update recall does not read as one), and the same after relevance alone; each listed."""
    sets = json.loads(DUMP.read_text())
    for half in [h for h in sets if ":" not in h]:
        rows = [r for r in sets[half] if not r["a_cur"] and any(p["cur"] for p in r["pairs"])]
        plain = sum(1 for r in sets[half + ":plain"] if not r["a_cur"] and any(p["cur"] for p in r["pairs"]))
        print(f"{half}: {len(sets[half])} questions, rules miss {len(sets[half]) - sum(r['top1'] for r in sets[half])}, "
              f"of them with a later line holding the current value {len(rows)} (relevance alone {plain})")
        for r in rows:
            print(f"  - {r['q']!r}: {r['a'][:70]!r} -> {next(p['b'] for p in r['pairs'] if p['cur'])[:70]!r}")


COSINES = OUT / "truth-learn" / "cosines.json"
# Feature positions (learned.features) of what `currency._plain_pair` asks beyond kind and day order.
_FOR_NOW, _OWN, _SAME_SUBJECT, _ADDITIVE, _NOT_LATER = 16, 20, 22, 24, 46


def cosines() -> dict[str, list[list[list[float]] | None]]:
    """For every dumped pair, the bundled MiniLM's cosines (question-older, question-newer,
    older-newer), as hybrid recall's meaning test (recall/meaning.py) reads them; cached."""
    if COSINES.exists():
        return json.loads(COSINES.read_text())
    from gitmem.recall.semantic import load_embedder

    sets = json.loads(DUMP.read_text())
    texts = sorted({t for rows in sets.values() for r in rows if r["a"] is not None
                    for t in [r["q"], r["a"], *(p["b"] for p in r["pairs"])]})
    vec = dict(zip(texts, load_embedder().embed(texts)))
    out: dict[str, list[list[list[float]] | None]] = {}
    for half, rows in sets.items():
        out[half] = [None if r["a"] is None else
                     [[float(vec[r["q"]] @ vec[r["a"]]), float(vec[r["q"]] @ vec[p["b"]]), float(vec[r["a"]] @ vec[p["b"]])]
                      for p in r["pairs"]] for r in rows]
    COSINES.write_text(json.dumps(out))
    return out


def with_cosines(sets: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Wave 17: `sets` with every pair's features followed by what names no word: the MiniLM cosines
    of the question to the older line and to the newer, of the two lines to each other, and the
    newer's lead over the older on the question (`cosines`)."""
    cos = cosines()
    out: dict[str, list[dict[str, Any]]] = {}
    for half, rows in sets.items():
        out[half] = [dict(r, pairs=[dict(p, x=[*p["x"], qa, qb, ab, qb - qa]) for p, (qa, qb, ab) in zip(r["pairs"], cs)])
                     if cs is not None else r for r, cs in zip(rows, cos[half])]
    return out


def _meaning_moves(rows: list[dict[str, Any]], cos: list[Any], gs: frozenset[str], slot: float, share: float,
                   probs: list[list[float]] | None = None, t: float = 0.0) -> tuple[int, int]:
    """(gains, losses) of moving, ahead of each row's A, the later line none of `gs` refuses that
    `_plain_pair` would let meaning decide (own, one subject, dated later, not for now, no addition:
    something done once is *not* excluded, the point of the test), with cosine to A >= `slot` and to
    the question >= `share` x A's (and, with `probs`, the pair model's probability >= `t`)."""
    g = lost = 0
    for k, (r, cs) in enumerate(zip(rows, cos)):
        if cs is None:
            continue
        best: tuple[float, dict[str, Any]] | None = None
        for i, (p, (qa, qb, ab)) in enumerate(zip(r["pairs"], cs)):
            x = p["x"]
            if gs.intersection(p["g"]) or x[_FOR_NOW] or x[_NOT_LATER] or not (x[_OWN] and x[_SAME_SUBJECT]) or x[_ADDITIVE]:
                continue
            pr = probs[k][i] if probs is not None else qb
            if ab >= slot and qb > 0 and qb >= share * qa and pr >= t and (best is None or pr > best[0]):
                best = (pr, p)
        if best is not None:
            g += best[1]["cur"] and not r["a_cur"]
            lost += r["a_cur"] and not best[1]["cur"]
    return g, lost


def meaning(only: frozenset[str], with_model: bool, cost: float = COST_AFTER) -> None:
    """Wave 12, leave-one-set-out: the meaning test as the pair decision after the rules, for a
    newer line past `only`'s guards, its thresholds (and, `with_model`, the pair model's, the model
    trained without the set) chosen on the other sets' relevance-only pairs (gains - cost x losses)."""
    sets, cos = json.loads(DUMP.read_text()), cosines()
    halves = [h for h in sets if ":" not in h]
    grid = [(t, a, b) for t in ((0.3, 0.5, 0.7, 0.9) if with_model else (0.0,))
            for a in (0.0, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6) for b in (0.0, 0.5, 0.7, 0.8, 0.9, 1.0, 1.1)]

    def probs(half: str, mode: str, without: set[str]) -> list[list[float]] | None:
        return _probs(sets[half + mode], fit([r for h, rows in sets.items() if base(h) not in without for r in rows])) \
            if with_model else None

    print(f"guards: {_short(only)}; {'model and meaning' if with_model else 'meaning alone'}; cost {cost}\n")
    print("| held-out set | questions | today's rules | + meaning (offline) | gains / losses | model p / slot / share |")
    print("|---|---:|---:|---:|---:|---|")
    tot = [0, 0, 0, 0]
    for half in halves:
        inner = {h: probs(h, ":plain", {half, h}) for h in halves if h != half}
        best: tuple[float, float, float, float] | None = None
        for t, a, b in grid:
            v = 0.0
            for h, ps in inner.items():
                g, lost = _meaning_moves(sets[h + ":plain"], cos[h + ":plain"], only, a, b, ps, t)
                v += g - cost * lost
            if best is None or v > best[0]:
                best = (v, t, a, b)
        assert best is not None
        n, rules = len(sets[half]), sum(r["top1"] for r in sets[half])
        g, lost = (0, 0) if best[0] <= 0 else _meaning_moves(sets[half], cos[half], only, best[2], best[3],
                                                               probs(half, "", {half}), best[1])
        tot = [tot[0] + n, tot[1] + rules, tot[2] + g, tot[3] + lost]
        print(f"| {half} | {n} | {rules}/{n} | {rules + g - lost}/{n} | +{g} / -{lost} | "
              + ("no move |" if best[0] <= 0 else f"{best[1]:.2f} / {best[2]:.2f} / {best[3]:.2f} |"), flush=True)
    print(f"| all | {tot[0]} | {tot[1]}/{tot[0]} | {tot[1] + tot[2] - tot[3]}/{tot[0]} | +{tot[2]} / -{tot[3]} | |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["dump", "loso", "guarded", "guards", "write", "cost", "misses", "meaning"])
    ap.add_argument("--cost", type=float, default=COST_AFTER, help="guarded: what a lost right answer costs")
    ap.add_argument("--select", action="store_true", help="guarded: choose the trap guards too, without the held-out set")
    ap.add_argument("--guards", default="", help="guarded: only these trap guards, by number (e.g. 1,3)")
    ap.add_argument("--cos", action="store_true", help="guarded: the pairs' MiniLM cosines as four more features (wave 17)")
    ap.add_argument("--model", action="store_true", help="meaning: the pair model's probability too")
    ap.add_argument("--real", action="store_true", help="loso: also ask each held-out set through recall")
    ap.add_argument("--replace", action="store_true", help="loso: the model in place of newer_first's rules")
    args = ap.parse_args(argv)
    if args.step == "dump":
        dump()
    elif args.step == "loso":
        loso(args.real, ":plain" if args.replace else "")
    elif args.step in ("guarded", "meaning"):
        only = frozenset(GUARDS[int(i) - 1] for i in args.guards.split(",")) if args.guards else None
        if args.step == "guarded":
            guarded(args.real, args.cost, args.select, only, args.cos)
        else:
            meaning(only or frozenset(), args.model, args.cost)
    elif args.step == "misses":
        misses()
    elif args.step == "guards":
        guards()
    elif args.step == "cost":
        cost()
    else:
        write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
