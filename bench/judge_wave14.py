"""Wave 14 of the reflection judge: how far scores move between llama.cpp builds, what a calibration
measured on another build needs, and a cache-only pilot of decisions that abstain less.

Three phases, for Qwen2.5-Coder-1.5B Q4_K_M (bench only):

- `--rescore OUT --limit S`: the pairs of `--order FILE` (one JSON object per line: fact, opinion)
  asked `agree`'s questions (labels, yes/no; polarity step) by whichever llama_cpp is first on
  `sys.path`, no cache, written to OUT as JSON lines; stops after S seconds (a re-run continues).
  Run once with the project's .venv build and once with another build (PYTHONPATH=<its target>).
- `--order FILE`: writes the pairs to re-score, from the cache: the decisions of the shipped band
  nearest its edges over every set (either framing within 0.15 nats), then the calibration half.
- `--report`: from the score cache and the re-scored files only (no model): per set, the shipped
  judge as measured (no slack) and as used on another build (`judge.on_runtime`: DRIFT_SLACK), a
  sweep of slacks, the calibration re-fitted on this host's scores (what `gitmem model check` would
  store here), the drift between two re-scored files, and the second-step pilot.

    nice -n 19 .venv/bin/python bench/judge_wave14.py --order /tmp/j16/order.jsonl --cache C $H
    nice -n 19 env PYTHONPATH=/tmp/j16/altpkg .venv/bin/python bench/judge_wave14.py --rescore /tmp/j16/avx2.jsonl \\
        --limit 900 --order /tmp/j16/order.jsonl --model /work/wt/models-cache/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
    nice -n 19 .venv/bin/python bench/judge_wave14.py --report --cache C --drift /tmp/j16/avx2.jsonl $H
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.model import CachedModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_wave8 import _fmt, answered  # noqa: E402  (bench scripts import each other by path)
from judge_wave13 import NAME, _CacheOnly, load_sets  # noqa: E402

# bench/models.sh's default cache (../models-cache beside the checkout); `--model` for another.
MODEL = Path(__file__).resolve().parents[2] / "models-cache" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SLACKS = (0.0, 0.02, 0.05, 0.08, 0.10, 0.15, 0.20, 0.30)


def scored_sets(cache: Path, heldout: Sequence[Path]) -> dict[str, list[C.Scored]]:
    """Every set through the gate and `agree`'s cached scores (polarity step), as `gitmem model check` scores them."""
    model = CachedModel(_CacheOnly(NAME), cache)  # type: ignore[arg-type]
    return {k: C.score_cases(model, v, ["agree"], second=False) for k, v in load_sets(heldout).items()}


def numbers(sc: J.PairScores, cal: J.Calibration) -> tuple[float, float]:
    """(contrast past the offset, yes/no lean past its own): the two framings `agree` must both clear."""
    return J.contrast(sc) - cal.offset, J.yes_lean(sc) - cal.floor


def clearance(sc: J.PairScores, cal: J.Calibration) -> float | None:
    """How far a verdict of the shipped band clears its nearer threshold (None: it abstains)."""
    return J.clearance(sc, cal.method, cal.margin, cal.offset, cal.floor)


def write_order(sets: dict[str, list[C.Scored]], cal: J.Calibration, path: Path) -> int:
    near: list[tuple[float, dict[str, str]]] = []
    rest: list[dict[str, str]] = []
    for k, ss in sets.items():
        for s in ss:
            if s.gated:
                continue
            d = {"set": k, "fact": s.case.fact, "opinion": s.case.opinion, "expected": s.case.expected}
            c = clearance(s.scores["agree"], cal)
            if c is not None and c < 0.15:
                near.append((c, d))
            if k == "calibration":
                rest.append(d)
    seen: set[tuple[str, str]] = set()
    with path.open("w", encoding="utf-8") as f:
        for d in [d for _, d in sorted(near, key=lambda t: t[0])] + rest:
            if (d["fact"], d["opinion"]) not in seen:
                seen.add((d["fact"], d["opinion"]))
                f.write(json.dumps(d) + "\n")
    return len(seen)


def rescore(order: Path, out: Path, limit: float, model: Path) -> int:
    from gitmem.reflect.model import LlamaModel

    llm = LlamaModel(model)
    print(llm.runtime, file=sys.stderr, flush=True)
    done = {(d["fact"], d["opinion"]) for d in map(json.loads, out.open())} if out.exists() else set()
    t0 = time.perf_counter()
    with out.open("a", encoding="utf-8") as f:
        for i, line in enumerate(order.open()):
            p = json.loads(line)
            if (p["fact"], p["opinion"]) in done:
                continue
            if time.perf_counter() - t0 > limit:
                break
            sc = J.score_pair(llm, p["fact"], p["opinion"], "agree", second=False)
            f.write(json.dumps({**p, "runtime": llm.runtime, "scores": sc._asdict()}) + "\n")
            f.flush()
            print(f"{i} {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return 0


def load_rescored(path: Path) -> dict[tuple[str, str], J.PairScores]:
    out = {}
    for d in map(json.loads, path.open()):
        raw = d["scores"]
        out[(d["fact"], d["opinion"])] = J.PairScores(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()})
    return out


def quantiles(xs: Sequence[float]) -> str:
    xs = sorted(xs)

    def q(p: float) -> float:
        return xs[min(len(xs) - 1, math.ceil(p * len(xs)) - 1)]

    return f"median {q(0.5):.3f}, 90% {q(0.9):.3f}, 99% {q(0.99):.3f}, max {xs[-1]:.3f} (n={len(xs)})"


def drift(sets: dict[str, list[C.Scored]], cal: J.Calibration, paths: Sequence[Path]) -> None:
    """How far `agree`'s two numbers move between the cache (the .venv build that filled it) and each re-scored file."""
    cached = {(s.case.fact, s.case.opinion): s.scores["agree"] for ss in sets.values() for s in ss if not s.gated}
    expected = {(s.case.fact, s.case.opinion): s.case.expected for ss in sets.values() for s in ss}

    def tally(pairs: Sequence[tuple[tuple[str, str], J.PairScores]], slack: float) -> str:
        """Right and wrong verdicts of the shipped band, widened by `slack`, on these scores."""
        got = [(J.decide(sc, "agree", cal.margin, cal.offset, cal.floor, slack=slack).relation, expected[k]) for k, sc in pairs]
        return (f"{sum(g == e for g, e in got if g != 'unrelated')} right / "
                f"{sum(g != e for g, e in got if g != 'unrelated')} wrong")

    for path in paths:
        other = load_rescored(path)
        both = [(cached[k], v) for k, v in other.items() if k in cached]
        dx = [abs(J.contrast(a) - J.contrast(b)) for a, b in both]
        dy = [abs(J.yes_lean(a) - J.yes_lean(b)) for a, b in both]
        dl = [abs(x - y) for a, b in both for x, y in zip(a.labels or (), b.labels or ())]
        flips = []
        for a, b in both:
            ra = J.decide(a, "agree", cal.margin, cal.offset, cal.floor).relation
            rb = J.decide(b, "agree", cal.margin, cal.offset, cal.floor).relation
            if ra != rb:
                flips.append(f"{ra} -> {rb} (clearance {clearance(a, cal) or clearance(b, cal) or 0:.3f})")
        print(f"\n{path.name}: {len(both)} pairs re-scored")
        print(f"- |change| of the labels contrast: {quantiles(dx)}")
        print(f"- |change| of the yes/no lean: {quantiles(dy)}")
        print(f"- |change| of one label's log-probability: {quantiles(dl)}")
        print(f"- verdicts of the shipped band that change: {len(flips)}" + (": " + "; ".join(flips) if flips else ""))
        mine = [(k, cached[k]) for k in other if k in cached]
        theirs = [(k, v) for k, v in other.items() if k in cached]
        print(f"- verdicts on these pairs, the cache's build at slack 0: {tally(mine, 0.0)}; the re-scored build at slack "
              + ", ".join(f"{s:.2f}: {tally(theirs, s)}" for s in SLACKS))


def second_step_pilot(sets: dict[str, list[C.Scored]], cal: J.Calibration, slack: float, cols: list[str]) -> None:
    """Problem 2, cache only: where the shipped band (with `slack`) abstains, one more reading of the
    numbers already scored, fitted on the calibration half (most right answers, no new wrong answer
    there, both thresholds also widened by `slack`), reported on every set."""

    def first(s: C.Scored) -> J.Relation:
        return C.predict(s, "agree", cal.margin, cal.offset, cal.floor, slack=slack)

    def feats(sc: J.PairScores) -> dict[str, float]:
        x, y = numbers(sc, cal)
        assert sc.labels is not None and sc.yes_supports is not None and sc.yes_contradicts is not None
        return {"x": x, "y": y, "u": sc.labels[2] - max(sc.labels[0], sc.labels[1]), "ys": sc.yes_supports}

    projections: dict[str, Callable[[dict[str, float]], float]] = {
        "yes/no lean": lambda f: f["y"], "labels contrast": lambda f: f["x"], "contrast + lean": lambda f: f["x"] + f["y"],
        "contrast + 2 x lean": lambda f: f["x"] + 2 * f["y"], "2 x contrast + lean": lambda f: 2 * f["x"] + f["y"],
        "yes to the supports question": lambda f: f["ys"]}
    cal_half = sets["calibration"]
    allowed = math.floor(C.CALIBRATION_WRONG * len(cal_half)) - round(answered(cal_half, first).wrong_direction * len(cal_half))

    def as_asked(s: C.Scored) -> J.Relation:
        sc = s.scores["agree"]
        return J.turn(s.case.expected) if sc.flipped else s.case.expected

    for name, proj in projections.items():
        for bounded in (False, True):
            vals = [(proj(feats(s.scores["agree"])), feats(s.scores["agree"])["u"], as_asked(s))
                    for s in cal_half if not s.gated and first(s) == "unrelated"]
            ends = C._midpoints(sorted({v for v, _, _ in vals}))
            bounds = C._midpoints(sorted({u for _, u, _ in vals}))[1:] if bounded else [1e9]
            best: tuple[int, float, float] = (0, 0.0, 0.0)
            rule: tuple[float, float, float] | None = None
            for b in bounds:
                for i, lo in enumerate(ends):
                    for hi in ends[i:]:
                        got = [("supports" if v > hi + slack else "contradicts" if v < lo - slack else None, e)
                               for v, u, e in vals if u < b]
                        right = sum(g == e for g, e in got if g)
                        wrong = sum(g != e for g, e in got if g)
                        if right and wrong <= allowed and (right, hi - lo, -b) > best:
                            best, rule = (right, hi - lo, -b), (lo, hi, b)
            label = f"{name}{', unrelated bound' if bounded else ''}"
            if rule is None:
                print(f"| {label} | " + " | ".join("-" for _ in cols) + " | nothing gained on calibration |")
                continue

            def judge(s: C.Scored, rule: tuple[float, float, float] = rule, proj: Callable[[dict[str, float]], float] = proj) -> J.Relation:
                got = first(s)
                if got != "unrelated" or s.gated:
                    return got
                f = feats(s.scores["agree"])
                if f["u"] >= rule[2]:
                    return "unrelated"
                v = proj(f)
                r: J.Relation = "supports" if v > rule[1] + slack else "contradicts" if v < rule[0] - slack else "unrelated"
                return J.turn(r) if s.scores["agree"].flipped else r

            lo = "never" if rule[0] < -500 else f"{rule[0]:+.2f}"
            print(f"| {label} | " + " | ".join(_fmt(answered(sets[k], judge)) for k in cols)
                  + f" | contradicts below {lo}, supports above {rule[1]:+.2f}"
                  + (f", unrelated below {rule[2]:+.2f}" if bounded else "") + " |")


def report(args: argparse.Namespace) -> int:
    sets = scored_sets(args.cache, args.heldout)
    cols = list(sets)
    cal = J.shipped_calibrations()[J.fingerprint(NAME)]
    print("| way of deciding | " + " | ".join(f"{k} ({len(v)})" for k, v in sets.items()) + " | rule |")
    print("|---|" + "---:|" * len(cols) + "---|")
    for slack in SLACKS:
        label = {0.0: "shipped, as measured (no slack; main)", J.DRIFT_SLACK: f"**shipped, on another build: slack {slack:.2f} (ships)**"}.get(
            slack, f"shipped, slack {slack:.2f}")
        print(f"| {label} | " + " | ".join(_fmt(C.metrics(sets[k], "agree", cal.margin, cal.offset, cal.floor, slack=slack))
                                          for k in cols) + " | |")
    refit = C.choose(sets["calibration"], ["agree"])
    print("| re-fitted on this host's calibration half (`gitmem model check` here) | "
          + " | ".join(_fmt(C.metrics(sets[k], "agree", refit.margin, refit.offset, refit.floor)) for k in cols)
          + f" | margin {refit.margin:.2f}, offset {refit.offset:+.2f}, lean {refit.floor:+.2f} |")
    near = {k: sorted(c for s in v if not s.gated and (c := clearance(s.scores["agree"], cal)) is not None
                      and C.predict(s, "agree", cal.margin, cal.offset, cal.floor) not in ("unrelated", s.case.expected))
            for k, v in sets.items()}
    print("| wrong verdicts' clearance past the band (nats) | " + " | ".join(
        ", ".join(f"{c:.2f}" for c in v) or "-" for v in near.values()) + " | |")
    if args.drift:
        drift(sets, cal, args.drift)
    print("\n| where agree abstains (slack %.2f), one more reading | " % J.DRIFT_SLACK + " | ".join(cols) + " | fitted on calibration |")
    print("|---|" + "---:|" * len(cols) + "---|")
    print("| none (ships) | " + " | ".join(_fmt(C.metrics(sets[k], "agree", cal.margin, cal.offset, cal.floor, slack=J.DRIFT_SLACK))
                                        for k in cols) + " | |")
    second_step_pilot(sets, cal, J.DRIFT_SLACK, cols)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--heldout", type=Path, action="append", default=[])
    ap.add_argument("--order", type=Path, help="the pairs to re-score (written from the cache unless --rescore)")
    ap.add_argument("--rescore", type=Path, metavar="OUT")
    ap.add_argument("--limit", type=float, default=1500.0, help="seconds of re-scoring")
    ap.add_argument("--model", type=Path, default=MODEL, help="--rescore: the 1.5B GGUF (default: bench/models.sh's cache)")
    ap.add_argument("--drift", type=Path, action="append", default=[], help="a --rescore output to compare with the cache")
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args(argv)
    if args.rescore:
        return rescore(args.order, args.rescore, args.limit, args.model)
    if args.report:
        return report(args)
    cal = J.shipped_calibrations()[J.fingerprint(NAME)]
    print(write_order(scored_sets(args.cache, args.heldout), cal, args.order), "pairs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
