"""Benchmark the reflection judge (fact vs opinion) of a local model on a small labelled set.

Runs `gitmem.reflect.prompts.judge` over `bench/judge_cases.jsonl` (one JSON object per line:
`fact`, `opinion`, `expected` in supports/contradicts/unrelated), without the answer cache, and
prints accuracy overall and per expected class, the confusion matrix, model load time, per-call
latency and generation speed. `--write` replaces the "## Reflect judge" section of
`bench/RESULTS.md` (other sections are left as they are).

    .venv/bin/python bench/reflect_judge.py                 # bundled SmolLM2-135M
    .venv/bin/python bench/reflect_judge.py --model x.gguf --write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from gitmem.errors import GitmemError
from gitmem.reflect.model import LlamaModel, resolve_model_path
from gitmem.reflect.prompts import RELATIONS, InvalidModelOutput, judge

HERE = Path(__file__).resolve().parent
CASES = HERE / "judge_cases.jsonl"
RESULTS = HERE / "RESULTS.md"
SECTION = "## Reflect judge"
INVALID = "invalid"


def load_cases(path: Path) -> list[dict[str, str]]:
    cases = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        case = json.loads(line)
        if case.get("expected") not in RELATIONS or not case.get("fact") or not case.get("opinion"):
            raise SystemExit(f"{path}:{n}: need fact, opinion and expected in {RELATIONS}")
        cases.append(case)
    return cases


def run(model: LlamaModel, cases: list[dict[str, str]]) -> dict:
    predictions: list[str] = []
    strengths: list[str] = []
    for case in cases:
        try:
            verdict = judge(model, case["fact"], case["opinion"])
            predictions.append(verdict.relation)
            strengths.append(verdict.strength)
        except InvalidModelOutput:
            predictions.append(INVALID)
            strengths.append("")
    labels = [*RELATIONS, INVALID]
    confusion = {e: {p: 0 for p in labels} for e in RELATIONS}
    for case, pred in zip(cases, predictions):
        confusion[case["expected"]][pred] += 1
    per_class = {
        e: (confusion[e][e], sum(confusion[e].values())) for e in RELATIONS
    }
    correct = sum(c for c, _ in per_class.values())
    stats = model.stats
    return {
        "model": model.name,
        "cases": len(cases),
        "correct": correct,
        "accuracy": correct / len(cases) if cases else 0.0,
        "per_class": per_class,
        "confusion": confusion,
        "predicted_counts": {p: predictions.count(p) for p in labels},
        "strong": strengths.count("strong"),
        "load_seconds": stats.load_seconds,
        "wall_seconds": stats.seconds,
        "median_latency": statistics.median(stats.latencies) if stats.latencies else 0.0,
        "max_latency": max(stats.latencies, default=0.0),
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens,
        "tokens_per_second": stats.tokens_per_second,
        "prompt_tokens_per_second": stats.prompt_tokens_per_second,
    }


def report(r: dict) -> str:
    labels = [*RELATIONS, INVALID]
    lines = [
        f"Model: `{r['model']}`, {r['cases']} cases (`bench/judge_cases.jsonl`), greedy decoding, "
        f"{platform.machine()} / {platform.python_version()}.",
        "",
        f"- accuracy: **{r['correct']}/{r['cases']} = {r['accuracy']:.0%}** (chance with 3 balanced classes: 33%)",
    ]
    for e, (c, n) in r["per_class"].items():
        lines.append(f"- expected `{e}`: {c}/{n} = {c / n:.0%}" if n else f"- expected `{e}`: no cases")
    lines += [
        "- predicted: " + ", ".join(f"{p} {n}" for p, n in r["predicted_counts"].items()),
        f"- load {r['load_seconds']:.2f} s; judge calls {r['wall_seconds']:.1f} s in all, median "
        f"{r['median_latency'] * 1000:.0f} ms, max {r['max_latency'] * 1000:.0f} ms per call",
        f"- tokens: {r['prompt_tokens']} prompt + {r['completion_tokens']} generated; "
        f"{r['tokens_per_second']:.1f} generated tokens/s "
        f"({r['prompt_tokens_per_second']:.0f} prompt tokens/s) of call wall time",
        f"- whole run: {r['total_seconds']:.1f} s wall, {r['cpu_seconds']:.1f} s CPU; {r['cpus']} CPUs, "
        f"load average {r['loadavg'][0]:.1f} before / {r['loadavg'][1]:.1f} after (other work on the machine "
        "inflates wall times; CPU time is the steadier number)",
        "",
        "Confusion matrix (rows: expected, columns: predicted):",
        "",
        "| expected \\ predicted | " + " | ".join(labels) + " |",
        "|---|" + "---:|" * len(labels),
    ]
    for e in RELATIONS:
        lines.append(f"| {e} | " + " | ".join(str(r["confusion"][e][p]) for p in labels) + " |")
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
    ap.add_argument("--model", help="GGUF file (default: $GITMEM_MODEL, then the bundled SmolLM2)")
    ap.add_argument("--cases", type=Path, default=CASES)
    ap.add_argument("--write", action="store_true", help=f"update the '{SECTION}' section of {RESULTS}")
    ap.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    args = ap.parse_args(argv)
    try:
        start, cpu = time.perf_counter(), time.process_time()
        load_before = os.getloadavg()[0]
        model = LlamaModel(resolve_model_path(None, args.model))
        result = run(model, load_cases(args.cases))
        result["total_seconds"] = time.perf_counter() - start
        result["cpu_seconds"] = time.process_time() - cpu
        result["loadavg"] = (load_before, os.getloadavg()[0])
        result["cpus"] = os.cpu_count()
    except GitmemError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(report(result))
    if args.write:
        write_section(RESULTS, report(result))
        print(f"\nwrote {SECTION!r} to {RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
