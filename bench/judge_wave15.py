"""Wave 15 of the reflection judge: scores that do not depend on the order pairs are asked in.

`LlamaModel.score` now evaluates every prompt in the same pieces (`model.SCORE_SCHEME`); every
cached score of the old scheme (the longest prefix shared with the previous prompt reused) is
stale, and the score cache keys the scheme. For Qwen2.5-Coder-1.5B Q4_K_M (bench only):

- `--score`: `agree`'s questions (labels, yes/no; polarity step) for every pair the gate passes,
  set by set in the order given (`--sets`: calibration, report, then held-out set names), into the
  score cache under the new scheme; one line per set with its pairs and seconds. Stopping it
  loses nothing: a re-run asks only the prompts not in the cache yet.
- `--order-check N`: the first N gate-passing pairs of the calibration half asked in their order
  and in reverse by one model, no cache: how many scores differ (the new scheme: none).
- `--report`: from the cache only (no model): per set, accuracy / wrong direction / abstain of the
  judge under the old scheme (as main does on this host) and the new (the shipped record, and the
  record re-fitted on the new scheme's calibration half as `gitmem model check` fits it), the plain
  baseline (no gate, best label; old-scheme scores, the only ones asked for every case).

    C=bench/out/judge-cache.sqlite   # any file; a re-run asks only what it lacks
    nice -n 19 .venv/bin/python bench/judge_wave15.py --score --cache $C --sets calibration,report,heldout10,heldout3
    nice -n 19 .venv/bin/python bench/judge_wave15.py --report --cache $C
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.model import CachedModel, InvalidModelOutput, LlamaModel, cache_key

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_wave8 import _fmt  # noqa: E402  (bench scripts import each other by path)
from judge_wave13 import NAME, _CacheOnly, load_sets  # noqa: E402
from judge_wave14 import MODEL  # noqa: E402

HERE = Path(__file__).resolve().parent
HELDOUT = [HERE / f"judge_heldout{i}.jsonl" for i in range(2, 17)]


class OldScheme(CachedModel):
    """The score cache read with the keys of the scores stored before `SCORE_SCHEME` (81899fe and earlier)."""

    def score_key(self, system: str, user: str, continuations: Sequence[str]) -> str:
        return cache_key(self.name, system, user, {"score": list(continuations)}, 0)


def score(cache: Path, names: Sequence[str], model_path: Path) -> int:
    llama = LlamaModel(model_path)
    print(llama.runtime, file=sys.stderr, flush=True)
    sets = load_sets(HELDOUT)
    with CachedModel(llama, cache) as model:
        for name in names:
            t0, misses0 = time.perf_counter(), model.misses
            scored = C.score_cases(model, sets[name], ["agree"], second=False)
            pairs = sum(not s.gated for s in scored)
            print(f"{name}: {pairs} pairs of {len(scored)}, {model.misses - misses0} prompts asked, "
                  f"{time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return 0


def same(cache: Path, names: Sequence[str], model_path: Path) -> int:
    """A model's scores under the new scheme against its old-scheme scores in the cache, prompt by
    prompt (every set of `names` asked through the cache first), and `gitmem model check`'s fit
    on the calibration half under each."""
    llama = LlamaModel(model_path)
    sets = load_sets(HELDOUT)
    old = OldScheme(_CacheOnly(llama.name), cache)  # type: ignore[arg-type]
    with CachedModel(llama, cache) as model:
        for name in names:
            t0 = time.perf_counter()
            new_scored = C.score_cases(model, sets[name], J.DEFAULT_METHODS, second=False)
            old_scored = cached(old, sets[name])
            if old_scored is None:
                print(f"{name}: no old-scheme scores cached", file=sys.stderr)
                continue
            diffs = [abs(a - b) for so, sn in zip(old_scored, new_scored) if not so.gated
                     for a, b in zip(_flat(so.scores["agree"]), _flat(sn.scores["agree"]))]
            print(f"{name}: {len(diffs)} numbers of {sum(not s.gated for s in new_scored)} pairs, "
                  f"{sum(d > 0 for d in diffs)} differ, largest {max(diffs, default=0):.2e}; {time.perf_counter() - t0:.0f} s")
            if name == "calibration":
                for label, sc in (("old", old_scored), ("new", new_scored)):
                    f = C.choose(sc, J.DEFAULT_METHODS)
                    print(f"  fit on {label}: {f.method} margin {f.margin} offset {f.offset} floor {f.floor}: {_fmt(f.metrics)}")
    return 0


def _flat(sc: J.PairScores) -> list[float]:
    return [*(sc.labels or ()), sc.yes_supports or 0.0, sc.yes_contradicts or 0.0]


def order_check(n: int, model_path: Path) -> int:
    llama = LlamaModel(model_path)
    cases = [c for c in load_sets([])["calibration"] if J.relevant(c.fact, c.opinion).passed][:n]
    ask = [(c.fact, c.opinion) for c in cases]
    first = {p: J.score_pair(llama, *p, "agree") for p in ask}
    again = {p: J.score_pair(llama, *p, "agree") for p in reversed(ask)}
    moved = [max(abs(J.contrast(first[p]) - J.contrast(again[p])), abs(J.yes_lean(first[p]) - J.yes_lean(again[p])))
             for p in ask]
    print(f"{len(ask)} pairs asked in two orders: {sum(m > 0 for m in moved)} changed; "
          f"largest move of the contrast or the yes/no lean {max(moved):.4f} nats")
    return 0


def cached(model: CachedModel, cases: list[C.Case]) -> list[C.Scored] | None:
    try:
        return C.score_cases(model, cases, J.DEFAULT_METHODS, second=False)
    except InvalidModelOutput:
        return None  # some pair not scored under this scheme yet


def baseline(model: CachedModel, cases: list[C.Case]) -> C.Metrics | None:
    try:
        ungated = [C.Scored(c, False, {"labels": J.score_pair(model, c.fact, c.opinion, "labels", polarity=False)}) for c in cases]
    except InvalidModelOutput:
        return None
    return C.metrics(ungated, "labels", 0.0)


def report(cache: Path) -> int:
    sets = load_sets(HELDOUT)
    old = OldScheme(_CacheOnly(NAME), cache)  # type: ignore[arg-type]
    new = CachedModel(_CacheOnly(NAME), cache)  # type: ignore[arg-type]
    shipped = J.shipped_calibrations()[J.fingerprint(NAME)]
    here = J.on_runtime(shipped, "this host")  # no runtime recorded: widened on every build
    by_set = {k: (cached(old, v), cached(new, v)) for k, v in sets.items()}
    cal_new = by_set["calibration"][1]
    # what `gitmem model check` fits (`check.check`): every default method, on the calibration half
    refit = C.choose(cal_new, J.DEFAULT_METHODS) if cal_new else None
    names = list(sets)
    print("| judge | " + " | ".join(f"{k} ({len(sets[k])})" for k in names) + " |")
    print("|---|" + "---:|" * len(names))

    def row(label: str, which: int, cal: J.Calibration | C.Fit, slack: float = 0.0) -> None:
        cells = []
        for k in names:
            sc = by_set[k][which]
            cells.append("not scored" if sc is None else
                         _fmt(C.metrics(sc, cal.method, cal.margin, cal.offset, cal.floor, cal.recheck, slack)))
        print(f"| {label} | " + " | ".join(cells) + " |")

    row(f"old scheme, shipped record, slack {here.slack:.2f} (main on this host)", 0, shipped, here.slack)
    row("old scheme, shipped record, no slack", 0, shipped)
    row(f"**new scheme, shipped record, slack {here.slack:.2f}**", 1, shipped, here.slack)
    row("new scheme, shipped record, no slack", 1, shipped)
    if refit is not None:
        rule = f"{refit.method}, margin {refit.margin:.2f}, offset {refit.offset:.2f}, lean {refit.floor:.2f}"
        row(f"new scheme, re-fitted on its calibration half ({rule}), no slack", 1, refit)
        row(f"new scheme, re-fitted, slack {J.DRIFT_SLACK:.2f}", 1, refit, J.DRIFT_SLACK)
    cells = []
    for k in names:
        b = baseline(old, sets[k])
        cells.append("not scored" if b is None else _fmt(b))
    print("| baseline: no gate, best label, no margin (old-scheme scores) | " + " | ".join(cells) + " |")
    # How far the new scheme moved each pair's two numbers from the old one, where both are cached.
    moves: list[float] = []
    for k in names:
        o, n = by_set[k]
        if o is None or n is None:
            continue
        for so, sn in zip(o, n):
            if not so.gated:
                a, b2 = so.scores["agree"], sn.scores["agree"]
                moves.append(abs(J.contrast(a) - J.contrast(b2)))
                moves.append(abs(J.yes_lean(a) - J.yes_lean(b2)))
    if moves:
        moves.sort()
        q = [moves[min(len(moves) - 1, int(f * len(moves)))] for f in (0.5, 0.9, 0.99)]
        print(f"\nold -> new scheme, per pair (contrast and yes/no lean, {len(moves)} numbers): "
              f"median {q[0]:.3f}, 90% {q[1]:.3f}, 99% {q[2]:.3f}, max {moves[-1]:.3f} nats")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--model", type=Path, default=MODEL)
    ap.add_argument("--score", action="store_true")
    ap.add_argument("--sets", default="calibration,report,heldout10,heldout3,heldout9,heldout8,heldout6,heldout5,heldout7,heldout4,"
                                          "heldout2,heldout11,heldout12")
    ap.add_argument("--order-check", type=int, default=0, metavar="N")
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--same", action="store_true", help="--model's new-scheme scores of --sets against its old-scheme ones")
    args = ap.parse_args(argv)
    if args.same:
        return same(args.cache, args.sets.split(","), args.model)
    if args.order_check:
        return order_check(args.order_check, args.model)
    if args.score:
        return score(args.cache, args.sets.split(","), args.model)
    return report(args.cache)


if __name__ == "__main__":
    sys.exit(main())
