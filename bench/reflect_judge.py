"""Benchmark the reflection judge (fact vs opinion) of local models on the labelled cases.

The cases are the ones `gitmem model check` runs (`gitmem/reflect/data/judge_cases.jsonl`, shipped
in the package): 261 (fact, opinion, expected) cases, a third each supports / contradicts /
unrelated, in two halves by opinion. For each model this runs exactly what `gitmem model check`
does (relevance gate, then every scoring method; method and its numbers chosen on the calibration
half) and reports on the REPORT half:

- the calibrated judge (gate + chosen method + margin): accuracy, wrong direction, abstain;
- each method at its own calibrated margin;
- the plain baseline in the same run: no gate, 3-label scoring, the best label taken (margin 0);
- tokens/s: prompt tokens evaluated per second of scoring (the judge generates nothing).

`--write` replaces the "## Reflect judge" section of bench/RESULTS.md; `--store` also records each
model's calibration in gitmem/reflect/data/calibration.json (keyed by the weights' fingerprint),
which is what reflection uses when the workspace has not checked the model itself.

`--heldout FILE` also judges a fresh case file (same JSONL format; every line is judged, whatever
its split) with each model's calibration **as shipped** in gitmem/reflect/data/calibration.json:
nothing is fitted or chosen on those cases. It reports them beside the shipped report half judged
with that same calibration; with `--write` it replaces the "## Reflect judge: fresh held-out set"
section instead of "## Reflect judge" (whose hand-written notes stay untouched), and `--store`
keeps each shipped judge calibration, adding only the measured summary and Retain shares.

    .venv/bin/python bench/reflect_judge.py                                # bundled SmolLM2-135M
    .venv/bin/python bench/reflect_judge.py --model /path/a.gguf --model /path/b.gguf --write --store
    .venv/bin/python bench/reflect_judge.py --model /path/a.gguf --heldout bench/judge_heldout2.jsonl --write

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
from typing import Any, NamedTuple

from gitmem.errors import GitmemError
from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.model import CachedModel, LlamaModel, resolve_model_path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
SECTION = "## Reflect judge"
HELDOUT_SECTION = "## Reflect judge: fresh held-out set"
OUT = HERE / "out"
SHIPPED = Path(str(resources.files("gitmem.reflect").joinpath("data/calibration.json")))


def baseline(model: J.Scorer, scored: list[C.Scored]) -> C.Metrics:
    """No gate, labels scored about the opinion as written (no polarity step), the best one taken:
    what scoring alone does, for comparison. Asked here for every pair (cached answers cost nothing)."""
    ungated = [C.Scored(s.case, False, {"labels": J.score_pair(model, s.case.fact, s.case.opinion, "labels", polarity=False)})
               for s in scored]
    return C.metrics(ungated, "labels", 0.0)


def speed_sample(llama: LlamaModel, cases: list[C.Case], method: J.Method, n: int = 8) -> float:
    """Prompt tokens scored per second on the first `n` report cases the gate lets through with the
    calibrated `method`, straight on the model (no cache): the judge's speed as a reflection sees it."""
    sample = [c for c in cases if c.split == "report" and J.relevant(c.fact, c.opinion).passed][:n]
    tokens0, seconds0 = llama.stats.prompt_tokens, llama.stats.seconds
    for c in sample:
        J.score_pair(llama, c.fact, c.opinion, method)
    seconds = llama.stats.seconds - seconds0
    return round((llama.stats.prompt_tokens - tokens0) / seconds, 1) if seconds else 0.0


class Heldout(NamedTuple):
    """A model's calibration as shipped, applied unchanged to the shipped report half and a fresh file."""

    calibration: J.Calibration
    source: str  # where the calibration came from
    shipped_report: C.Metrics
    metrics: C.Metrics
    baseline: C.Metrics | None
    scored: list[C.Scored]


def heldout(model: Any, name: str, report: C.CheckReport, cases: list[C.Case], with_baseline: bool) -> Heldout:
    """Judge `cases` with the model's shipped calibration: no margin, offset or method is chosen on
    them. A model with no shipped calibration falls back to the one this run fitted on the shipped
    calibration half (the same procedure; said so in `source`)."""
    cal = J.shipped_calibrations().get(J.fingerprint(name))
    source = "shipped data/calibration.json"
    if cal is None:
        cal, source = report.calibration, "fitted in this run on the shipped calibration half (none shipped)"
    # as a reflection on this llama.cpp build would use it: thresholds widened when measured on another
    cal = J.on_runtime(cal, str(getattr(model, "runtime", "")))
    if cal.slack:
        source += f", thresholds widened by {cal.slack:.2f} (measured on another llama.cpp build or CPU)"
    # The baseline needs the labels scores (labels and contrast share one question: asked once).
    methods: list[J.Method] = [cal.method] + (["labels"] if with_baseline and cal.method != "labels" else [])
    # A calibration stored before the polarity step is judged without it, as reflection would.
    scored = C.score_cases(model, cases, methods, polarity=cal.polarity, second=False)
    # a second step (query, shots) is asked, as in a reflection, only where the first abstains
    scored = C.ask_second(model, scored, cal.method, cal.margin, cal.offset, cal.floor, cal.polarity, cal.slack)
    report_half = [s for s in report.scored if s.case.split == "report"]
    # The check scores DEFAULT_METHODS; a record whose method is another ("query": agree's questions,
    # then the query where agree abstains) has its report half scored by that method, as reflection
    # asks it (a KeyError on 'query' here before).
    if not cal.polarity or any(not s.gated and cal.method not in s.scores for s in report_half):
        report_half = C.score_cases(model, [s.case for s in report_half], [cal.method], polarity=cal.polarity, second=False)
        report_half = C.ask_second(model, report_half, cal.method, cal.margin, cal.offset, cal.floor, cal.polarity, cal.slack)
    shipped = C.metrics(report_half, cal.method, cal.margin, cal.offset, cal.floor, cal.recheck, cal.slack)
    base = baseline(model, scored) if with_baseline else None
    return Heldout(cal, source, shipped, C.metrics(scored, cal.method, cal.margin, cal.offset, cal.floor, cal.recheck, cal.slack),
                   base, scored)


class KindRow(NamedTuple):
    kind: str
    expected: str
    cases: int
    correct: int
    wrong: int  # a relation claimed the wrong way, or on an unrelated pair
    abstained: int  # a related pair answered "unrelated"
    gated: int  # dropped by the relevance gate (no model call)


def per_kind(scored: list[C.Scored], cal: J.Calibration) -> list[KindRow]:
    """Where the calibrated judge goes wrong, by the cases' kind and expected label."""
    rows: dict[tuple[str, str], list[int]] = {}
    for s in scored:
        got = C.predict(s, cal.method, cal.margin, cal.offset, cal.floor, cal.recheck, cal.slack)
        e = s.case.expected
        r = rows.setdefault((s.case.kind or "-", e), [0, 0, 0, 0, 0])
        r[0] += 1
        r[1] += got == e
        r[2] += got != e and got != "unrelated"
        r[3] += e != "unrelated" and got == "unrelated"
        r[4] += s.gated
    return [KindRow(k, e, *v) for (k, e), v in sorted(rows.items())]


def dump_scores(path: Path, report: C.CheckReport) -> None:
    """Every case with the model's raw scores, one JSON line each: decisions (margins, methods) can
    be re-derived from it without asking the model again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for s in report.scored:
            f.write(json.dumps({**s.case._asdict(), "gated": s.gated,
                                "scores": {m: sc._asdict() for m, sc in s.scores.items()}}) + "\n")


def run_model(path: str | None, cases: list[C.Case], with_baseline: bool, cache: Path | None,
              fresh: list[C.Case] | None = None, methods: tuple[J.Method, ...] = J.DEFAULT_METHODS) -> dict[str, Any]:
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

    report = C.check(model, llama.name, cases, methods, progress)
    held = heldout(model, llama.name, report, fresh, with_baseline) if fresh is not None else None
    report, summaries, retain = C.with_drafts(report, model, cases)
    cal = report.calibration
    # Cached scores took no model time: measure the speed on a sample, uncached (not for --heldout,
    # whose section shows no speed and whose --store keeps the shipped numbers).
    if cache and fresh is None:
        cal = cal._replace(tokens_per_second=speed_sample(llama, cases, cal.method))
    report = report._replace(calibration=cal)
    out: dict[str, Any] = {"report": report, "summaries": summaries, "retain": retain,
                           "cpu": time.process_time() - cpu0, "wall": time.perf_counter() - t0,
                           "load": llama.stats.load_seconds}
    if with_baseline:
        out["baseline"] = baseline(model, [s for s in report.scored if s.case.split == "report"])
    if held is not None:
        out["heldout"] = held
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
        "| model | judge | accuracy | wrong direction | abstain | tokens/s | CPU s (all cases) | summaries kept "
        "| Retain bullets kept |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        rp: C.CheckReport = r["report"]
        cal = rp.calibration
        name = cal.model.split(":")[0]
        margin = "never decides" if cal.never_decides else (
            f"margin {cal.margin:.2f}" + J.describe_rule(cal.method, cal.offset, cal.floor, recheck=cal.recheck))
        m = rp.report_metrics
        lines.append(f"| {name} | **gate + {cal.method}, {margin}** (calibrated) | {_pct(m.accuracy)} | "
                     f"{_pct(m.wrong_direction)} | {_pct(m.abstain)} | {cal.tokens_per_second:.0f} | {r['cpu']:.0f} | "
                     f"{r['summaries'].passed} of {r['summaries'].tried} | {r['retain'].passed} of {r['retain'].tried} |")
        for method, pm in rp.per_method.items():
            lines.append(f"| {name} | gate + {method} (own margin) | {_pct(pm.accuracy)} | {_pct(pm.wrong_direction)} | "
                         f"{_pct(pm.abstain)} | | | | |")
        if "baseline" in r:
            b = r["baseline"]
            lines.append(f"| {name} | baseline: no gate, best label, no margin | {_pct(b.accuracy)} | "
                         f"{_pct(b.wrong_direction)} | {_pct(b.abstain)} | | | | |")
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
        if rp_ret := r["retain"].rejected:
            lines += [f"Retain bullets rejected by the Retain gate, {rp.calibration.model.split(':')[0]} "
                      f"({len(C.load_logs())} daily logs, gitmem/reflect/data/retain_logs.jsonl): " + "; ".join(rp_ret) + ".", ""]
    return "\n".join(lines)


def render_heldout(results: list[dict[str, Any]], fresh: list[C.Case], fresh_path: Path, cases: list[C.Case]) -> str:
    """The held-out section: each model's shipped calibration on the fresh file, beside the shipped
    report half judged with the same calibration, then where it fails (confusion, per kind)."""
    counts = ", ".join(f"{sum(c.expected == e for c in fresh)} {e}" for e in ("supports", "contradicts", "unrelated"))
    lines = [
        f"`bench/reflect_judge.py --heldout {fresh_path.as_posix()}`: {len(fresh)} fresh cases ({counts}), written "
        "after the judge was designed and calibrated; judged with each model's calibration **as shipped** "
        "(gitmem/reflect/data/calibration.json, fitted on the calibration half of the shipped "
        f"{len(cases)} cases): no margin, offset or method chosen on them. {platform.machine()} / Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs shared with other work.",
        "",
        "| model | judge (as shipped) | cases | accuracy | wrong direction | abstain |",
        "|---|---|---|---:|---:|---:|",
    ]
    for r in results:
        h: Heldout = r["heldout"]
        cal = h.calibration
        name = cal.model.split(":")[0]
        margin = "never decides" if cal.never_decides else (
            f"margin {cal.margin:.2f}" + J.describe_rule(cal.method, cal.offset, cal.floor, recheck=cal.recheck))
        judge = f"gate + {cal.method}, {margin}"
        for label, m in ((f"shipped report half ({h.shipped_report.cases})", h.shipped_report),
                         (f"**fresh held-out ({h.metrics.cases})**", h.metrics)):
            lines.append(f"| {name} | {judge} | {label} | {_pct(m.accuracy)} | {_pct(m.wrong_direction)} | {_pct(m.abstain)} |")
        if h.baseline is not None:
            b = h.baseline
            lines.append(f"| {name} | baseline: no gate, best label, no margin | fresh held-out ({b.cases}) | "
                         f"{_pct(b.accuracy)} | {_pct(b.wrong_direction)} | {_pct(b.abstain)} |")
        if h.source != "shipped data/calibration.json":
            lines.append(f"| {name} | calibration {h.source} | | | | |")
        refit = r["report"].calibration
        if (refit.method, refit.margin, refit.offset, refit.floor) != (cal.method, cal.margin, cal.offset, cal.floor):
            lines.append(f"| {name} | (this run's re-fit on the calibration half differs: {refit.method}, margin "
                         f"{refit.margin:.4f}, offset {refit.offset:+.4f}; not used here) | | | | |")
    gated = results[0]["heldout"].scored if results else []
    related = [s for s in gated if s.case.expected != "unrelated"]
    lines += ["", f"Relevance gate on the fresh cases (no model): {sum(s.gated for s in gated)} of {len(gated)} pairs "
              f"dropped, {sum(s.gated for s in related)} of them related.", ""]
    for r in results:
        h = r["heldout"]
        name = h.calibration.model.split(":")[0]
        lines += [f"Confusion, {name}, shipped calibration, fresh held-out cases (rows expected, columns answered):", "",
                  "| expected \\ answered | supports | contradicts | unrelated |", "|---|---:|---:|---:|"]
        for e, row in h.metrics.confusion.items():
            lines.append(f"| {e} | {row['supports']} | {row['contradicts']} | {row['unrelated']} |")
        lines += ["", f"By kind, {name}, fresh held-out cases (wrong: a relation claimed the wrong way or on an "
                      "unrelated pair; abstained: a related pair answered unrelated; gated: dropped before the model):", "",
                  "| kind | expected | cases | correct | wrong | abstained | gated |", "|---|---|---:|---:|---:|---:|---:|"]
        for k in per_kind(h.scored, h.calibration):
            lines.append(f"| {k.kind} | {k.expected} | {k.cases} | {k.correct} | {k.wrong} | {k.abstained} | {k.gated} |")
        lines.append("")
    return "\n".join(lines)


def write_section(path: Path, body: str, title: str = SECTION, after: str | None = None) -> None:
    """Replace only the `title` section of RESULTS.md; a missing one goes after the `after` section
    (or at the end)."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    section = f"{title}\n\n{body}\n"
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if ln.rstrip() == title), None)
    prev = next((i for i, ln in enumerate(lines) if ln.rstrip() == after), None) if after else None
    if start is None and prev is not None:
        end = next((i for i in range(prev + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        new = "".join(lines[:end]).rstrip("\n") + "\n\n" + section + ("\n" + "".join(lines[end:]) if end < len(lines) else "")
    elif start is None:
        new = text.rstrip("\n") + "\n\n" + section
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        tail = "".join(lines[end:])
        new = "".join(lines[:start]) + section + ("\n" + tail if tail else "")
    path.write_text(new, encoding="utf-8")


def _heldout_json(h: Heldout) -> dict[str, Any]:
    return {"calibration": h.calibration._asdict(), "source": h.source, "shipped_report": h.shipped_report._asdict(),
            "metrics": h.metrics._asdict(), "baseline": h.baseline._asdict() if h.baseline else None,
            "kinds": [k._asdict() for k in per_kind(h.scored, h.calibration)]}


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
    ap.add_argument("--methods", default=",".join(J.DEFAULT_METHODS),
                    help=f"comma-separated ways of deciding to score and choose among, of {','.join(J.METHODS)} "
                         "(default: those `gitmem model check` runs; fewer saves model time)")
    ap.add_argument("--heldout", type=Path, default=None, metavar="FILE",
                    help="also judge these fresh cases with each model's shipped calibration (nothing fitted on them); "
                         f"--write then writes '{HELDOUT_SECTION}'")
    args = ap.parse_args(argv)
    if args.heldout is not None and args.cases is not None:
        print("error: --heldout measures the shipped calibration: use it without --cases", file=sys.stderr)
        return 2
    methods = tuple(m for m in J.METHODS if m in args.methods.split(","))
    if not methods or len(methods) != len(args.methods.split(",")):
        print(f"error: --methods takes a comma-separated subset of {','.join(J.METHODS)}", file=sys.stderr)
        return 2
    try:
        cases = C.load_cases(args.cases)
        fresh = C.load_cases(args.heldout) if args.heldout is not None else None
        results = [run_model(p, cases, not args.no_baseline, args.cache, fresh, methods) for p in (args.model or [None])]
    except GitmemError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([{**C.as_json(r["report"], "", None, r["summaries"], r["retain"]), "cpu_seconds": r["cpu"],
                           "baseline": r["baseline"]._asdict() if "baseline" in r else None,
                           "heldout": _heldout_json(r["heldout"]) if "heldout" in r else None} for r in results], indent=2))
    text = render(results, cases)
    print(text)
    if fresh is not None and args.heldout is not None:
        held = render_heldout(results, fresh, args.heldout, cases)
        print("\n" + held)
    if args.write and fresh is not None:
        write_section(RESULTS, held, HELDOUT_SECTION, after=SECTION)
        print(f"\nwrote {HELDOUT_SECTION!r} to {RESULTS}", file=sys.stderr)
    elif args.write:
        write_section(RESULTS, text)
        print(f"\nwrote {SECTION!r} to {RESULTS}", file=sys.stderr)
    if args.store:
        for r in results:
            cal = r["report"].calibration
            if "heldout" in r:  # nothing about the judge is re-fitted here: the drafts' shares and the
                # fresh set's wrong-direction rate (trust goes by the worse rate) are new
                h: Heldout = r["heldout"]
                cal = h.calibration._replace(summaries=cal.summaries, retain=cal.retain,
                                             fresh_wrong_direction=round(h.metrics.wrong_direction, 4),
                                             fresh_cases=h.metrics.cases)
            else:
                # A judge re-fitted on the shipped cases has not been measured on fresh ones: the last
                # fresh rate measured for these weights stays until a --heldout run replaces it (trust
                # goes by the worse rate, and the report half is tuning data).
                old = J.shipped_calibrations().get(cal.fingerprint)
                if old is not None and old.fresh_wrong_direction is not None and cal.fresh_wrong_direction is None:
                    cal = cal._replace(fresh_wrong_direction=old.fresh_wrong_direction, fresh_cases=old.fresh_cases)
            J.write_table(SHIPPED, cal)
        print(f"stored {len(results)} calibration(s) in {SHIPPED}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
