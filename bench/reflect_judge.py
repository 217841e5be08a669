"""Benchmark the reflection judge (fact vs opinion) of local models on the labelled cases.

The cases are the ones `gitmem model check` runs (`gitmem/reflect/data/judge_cases.jsonl`, shipped
in the package): 159 (fact, opinion, expected) cases, a third each supports / contradicts /
unrelated, in two halves by opinion. For each model this runs exactly what `gitmem model check`
does (relevance gate, then both scoring methods; method and margin chosen on the calibration half)
and reports on the REPORT half:

- the calibrated judge (gate + chosen method + margin): accuracy, wrong direction, abstain;
- each method at its own calibrated margin;
- the plain baseline in the same run: no gate, 3-label scoring, the best label taken (margin 0);
- tokens/s: prompt tokens evaluated per second of scoring (the judge generates nothing).

`--write` replaces the "## Reflect judge" section of bench/RESULTS.md; `--store` also records each
model's calibration in gitmem/reflect/data/calibration.json (keyed by the weights' fingerprint),
which is what reflection uses when the workspace has not checked the model itself.

    .venv/bin/python bench/reflect_judge.py                                # bundled SmolLM2-135M
    .venv/bin/python bench/reflect_judge.py --model /path/a.gguf --model /path/b.gguf --write --store

Models used here beyond the bundled one (bench only, never a dependency): see bench/models.sh.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

from gitmem.errors import GitmemError
from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.model import CachedModel, LlamaModel, resolve_model_path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
SECTION = "## Reflect judge"
OUT = HERE / "out"
SHIPPED = Path(str(resources.files("gitmem.reflect").joinpath("data/calibration.json")))


def baseline(model: J.Scorer, scored: list[C.Scored]) -> C.Metrics:
    """No gate, labels scored, the best one taken: what scoring alone does, for comparison. The
    pairs the gate dropped were not scored by the check: they are scored here."""
    ungated = [s if not s.gated else C.Scored(s.case, False, {"labels": J.score_pair(model, s.case.fact, s.case.opinion, "labels")})
               for s in scored]
    return C.metrics(ungated, "labels", 0.0)


def speed_sample(llama: LlamaModel, cases: list[C.Case], n: int = 8) -> float:
    """Prompt tokens scored per second on the first `n` report cases the gate lets through, both
    methods, straight on the model (no cache): the judge's speed as a reflection sees it."""
    sample = [c for c in cases if c.split == "report" and J.relevant(c.fact, c.opinion).passed][:n]
    tokens0, seconds0 = llama.stats.prompt_tokens, llama.stats.seconds
    for c in sample:
        for method in J.METHODS:
            J.score_pair(llama, c.fact, c.opinion, method)
    seconds = llama.stats.seconds - seconds0
    return round((llama.stats.prompt_tokens - tokens0) / seconds, 1) if seconds else 0.0


def dump_scores(path: Path, report: C.CheckReport) -> None:
    """Every case with the model's raw scores, one JSON line each: decisions (margins, methods) can
    be re-derived from it without asking the model again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for s in report.scored:
            f.write(json.dumps({**s.case._asdict(), "gated": s.gated,
                                "scores": {m: sc._asdict() for m, sc in s.scores.items()}}) + "\n")


def run_model(path: str | None, cases: list[C.Case], with_baseline: bool, cache: Path | None) -> dict[str, Any]:
    llama = LlamaModel(resolve_model_path(None, path))
    # A score cache (bench/out, never the workspace's) makes an interrupted or repeated run pay only
    # for prompts not scored before; tokens/s then counts only the prompts scored in this run.
    model: Any = CachedModel(llama, cache) if cache else llama
    name = llama.name.split(":")[0]
    cpu0, t0 = time.process_time(), time.perf_counter()

    def progress(d: int, n: int) -> None:
        if d % 10 == 0 or d == n:
            print(f"  {name}: {d}/{n} cases, {time.perf_counter() - t0:.0f} s wall, "
                  f"{time.process_time() - cpu0:.0f} s CPU", file=sys.stderr, flush=True)

    report = C.check(model, llama.name, cases, J.METHODS, progress)
    report, summaries = C.with_summaries(report, model, cases)
    cal = report.calibration
    if cache:  # cached scores took no model time: measure the speed on a sample, uncached
        cal = cal._replace(tokens_per_second=speed_sample(llama, cases))
    report = report._replace(calibration=cal)
    out: dict[str, Any] = {"report": report, "summaries": summaries, "cpu": time.process_time() - cpu0, "wall": time.perf_counter() - t0,
                           "load": llama.stats.load_seconds}
    if with_baseline:
        out["baseline"] = baseline(model, [s for s in report.scored if s.case.split == "report"])
    dump_scores(OUT / f"judge-scores-{name}.jsonl", report)
    print(f"  {name}: done in {out['wall']:.0f} s wall; scores in {OUT}", file=sys.stderr, flush=True)
    return out


def _pct(x: float) -> str:
    return f"{x:.0%}"


def render(results: list[dict[str, Any]], cases: list[C.Case]) -> str:
    rep = [c for c in cases if c.split == "report"]
    lines = [
        f"`bench/reflect_judge.py`: {len(cases)} labelled cases (`gitmem/reflect/data/judge_cases.jsonl`), "
        f"{sum(c.split == 'calibration' for c in cases)} calibration / {len(rep)} report, split by opinion; "
        f"numbers on the **report half**. {platform.machine()} / Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs shared with other work.",
        "",
        "| model | judge | accuracy | wrong direction | abstain | tokens/s | CPU s (all cases) | summaries kept |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        rp: C.CheckReport = r["report"]
        cal = rp.calibration
        name = cal.model.split(":")[0]
        margin = "never decides" if cal.margin >= 1e9 else f"margin {cal.margin:.2f}" + (
            f", offset {cal.offset:+.2f}" if cal.method == "contrast" else "")
        m = rp.report_metrics
        lines.append(f"| {name} | **gate + {cal.method}, {margin}** (calibrated) | {_pct(m.accuracy)} | "
                     f"{_pct(m.wrong_direction)} | {_pct(m.abstain)} | {cal.tokens_per_second:.0f} | {r['cpu']:.0f} | "
                     f"{r['summaries'].passed} of {r['summaries'].tried} |")
        for method, pm in rp.per_method.items():
            lines.append(f"| {name} | gate + {method} (own margin) | {_pct(pm.accuracy)} | {_pct(pm.wrong_direction)} | "
                         f"{_pct(pm.abstain)} | | | |")
        if "baseline" in r:
            b = r["baseline"]
            lines.append(f"| {name} | baseline: no gate, best label, no margin | {_pct(b.accuracy)} | "
                         f"{_pct(b.wrong_direction)} | {_pct(b.abstain)} | | | |")
    lines += ["", "Relevance gate (all cases, no model): "
              + ", ".join(f"{r['report'].gate_dropped} of {r['report'].gate_pairs} pairs dropped, "
                          f"{r['report'].gate_dropped_related} of them related" for r in results[:1]) + ".", ""]
    for r in results:
        rp = r["report"]
        lines.append(f"Confusion, {rp.calibration.model.split(':')[0]}, calibrated judge, report half "
                     "(rows expected, columns answered):")
        lines += ["", "| expected \\ answered | supports | contradicts | unrelated |", "|---|---:|---:|---:|"]
        for e, row in rp.report_metrics.confusion.items():
            lines.append(f"| {e} | {row['supports']} | {row['contradicts']} | {row['unrelated']} |")
        lines.append("")
        if rp_summ := r["summaries"].rejected:
            lines += [f"Summaries rejected by the page gate, {rp.calibration.model.split(':')[0]}: "
                      + "; ".join(rp_summ) + ".", ""]
    return "\n".join(lines)


def write_section(path: Path, body: str) -> None:
    """Replace (or append) only the `## Reflect judge` section of RESULTS.md."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    section = f"{SECTION}\n\n{body}\n"
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if ln.rstrip() == SECTION), None)
    if start is None:
        new = text.rstrip("\n") + "\n\n" + section
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        tail = "".join(lines[end:])
        new = "".join(lines[:start]) + section + ("\n" + tail if tail else "")
    path.write_text(new, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", help="GGUF file (repeatable; default: the bundled SmolLM2)")
    ap.add_argument("--cases", type=Path, default=None, help="labelled cases (default: the shipped set)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the plain no-gate baseline (saves CPU)")
    ap.add_argument("--write", action="store_true", help=f"update the '{SECTION}' section of {RESULTS}")
    ap.add_argument("--store", action="store_true", help=f"record the calibrations in {SHIPPED}")
    ap.add_argument("--cache", type=Path, default=None,
                    help="remember scores in this SQLite file (e.g. bench/out/judge-cache.sqlite): a re-run scores only new prompts")
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = ap.parse_args(argv)
    try:
        cases = C.load_cases(args.cases)
        results = [run_model(p, cases, not args.no_baseline, args.cache) for p in (args.model or [None])]
    except GitmemError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([{**C.as_json(r["report"], "", None, r["summaries"]), "cpu_seconds": r["cpu"],
                           "baseline": r["baseline"]._asdict() if "baseline" in r else None} for r in results], indent=2))
    text = render(results, cases)
    print(text)
    if args.write:
        write_section(RESULTS, text)
        print(f"\nwrote {SECTION!r} to {RESULTS}", file=sys.stderr)
    if args.store:
        for r in results:
            J.write_table(SHIPPED, r["report"].calibration)
        print(f"stored {len(results)} calibration(s) in {SHIPPED}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
