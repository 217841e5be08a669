"""Benchmark `gitmem reflect` on the demo workspace with a local model.

Builds the demo (gitmem.demo.build_demo) in a temp folder, runs one full reflection with the
bundled SmolLM2 (or --model), then re-runs it with the warm answer cache and checks that both
runs produced the identical proposal commit. Prints wall and CPU times, model calls, tokens and
tokens/s. `--write` replaces the "## Reflect" section of bench/RESULTS.md (other sections are kept).

`--before REV` measures REV's code side by side in the same run (same machine load): REV is
exported with `git archive` to a temp folder and this script is run there in a subprocess with
that code first on the import path, alternating with the current code `--rounds` times; speed is
reported as the ratio of the medians.

    .venv/bin/python bench/reflect.py
    .venv/bin/python bench/reflect.py --before main --rounds 2 --write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
SECTION = "## Reflect"


def run(model_path: str | None, max_facts: int | None) -> dict[str, Any]:
    # Imported here: with --before, the subprocess imports the other revision's gitmem.
    import gitmem
    from gitmem.config import set_value
    from gitmem.demo import build_demo
    from gitmem.index.indexer import update
    from gitmem.reflect.model import CachedModel, LlamaModel, resolve_model_path
    from gitmem.reflect.run import RunOptions, reflect
    from gitmem.workspace import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        info = build_demo(Path(tmp) / "demo")
        ws = Workspace(info.root)
        if max_facts:
            set_value(ws, "reflect.max_facts", max_facts)
        update(ws)
        path = resolve_model_path(ws, model_path)
        llm = LlamaModel(path)
        cold_model = CachedModel.for_workspace(llm, ws)
        t0, c0 = time.perf_counter(), time.process_time()
        cold = reflect(ws, RunOptions(model=lambda: cold_model))
        cold_s, cold_cpu = time.perf_counter() - t0, time.process_time() - c0
        stats = llm.stats.as_dict()
        cold_model.close()
        warm_model = CachedModel.for_workspace(llm, ws)
        t0 = time.perf_counter()
        warm = reflect(ws, RunOptions(model=lambda: warm_model))
        warm_s = time.perf_counter() - t0
        hits = warm_model.hits
        warm_model.close()
        t0 = time.perf_counter()
        plain = reflect(ws, RunOptions(model=None, dry_run=True))
        plain_s = time.perf_counter() - t0
        moved = [c for c in cold["changes"] if "opinion" in c and c.get("evidence")]
        return {"model": llm.name, "facts": cold["facts"], "files": len({c["path"] for c in cold["changes"]}),
                "rejected": len(cold["rejected"]), "cold_s": cold_s, "cold_cpu": cold_cpu, "warm_s": warm_s,
                "no_llm_s": plain_s, "identical": cold["commit"] == warm["commit"], "commit": cold["commit"],
                "warm_hits": hits, "no_llm_facts": plain["facts"], "opinions_moved": len(moved),
                "code": str(Path(gitmem.__file__).resolve()),
                "notes": [n for n in cold.get("notes", []) if "judge" in n or "confidence" in n or "gate" in n],
                **stats}


def run_before(rev: str, model_path: str | None, max_facts: int | None) -> dict[str, Any]:
    """This script's `run` on revision `rev`'s code, in a subprocess."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", rev, "gitmem"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        cmd = [sys.executable, str(Path(__file__).resolve()), "--json"]
        cmd += ["--model", model_path] if model_path else []
        cmd += ["--max-facts", str(max_facts)] if max_facts else []
        env = {**os.environ, "PYTHONPATH": tmp + os.pathsep + os.environ.get("PYTHONPATH", "")}
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
        result: dict[str, Any] = json.loads(out.stdout)
        if not result["code"].startswith(str(Path(tmp).resolve())):
            raise SystemExit(f"--before measured the wrong code: {result['code']}")
        return result


def _row(label: str, before: Any, after: Any) -> str:
    return f"| {label} | {before} | {after} |"


def render(after: list[dict[str, Any]], before: list[dict[str, Any]] | None, rev: str | None) -> str:
    a = after[-1]
    med = lambda rs, k: statistics.median(r[k] for r in rs)  # noqa: E731
    lines = [SECTION, "",
             f"`bench/reflect.py` on the demo workspace ({a['facts']} facts), model `{a['model']}`, "
             f"{platform.machine()} / Python {platform.python_version()}, {os.cpu_count()} CPUs shared with other work; "
             f"medians of {len(after)} cold runs" + (f", alternating with `{rev}`'s code in the same run." if before else "."),
             ""]
    if before:
        b = before[-1]
        lines += ["| measure | before (" + str(rev) + ") | after |", "|---|---|---|",
                  _row("reflection, cold cache (wall)", f"{med(before, 'cold_s'):.1f} s", f"{med(after, 'cold_s'):.1f} s"),
                  _row("reflection, cold cache (CPU of this process)", f"{med(before, 'cold_cpu'):.1f} s",
                       f"{med(after, 'cold_cpu'):.1f} s"),
                  _row("model calls / prompt tokens / generated tokens",
                       f"{b['calls']} / {b['prompt_tokens']} / {b['completion_tokens']}",
                       f"{a['calls']} / {a['prompt_tokens']} / {a['completion_tokens']}"),
                  _row("generation speed (generated tokens / s of model time)", f"{med(before, 'tokens_per_second'):.1f}",
                       f"{med(after, 'tokens_per_second'):.1f}"),
                  _row("opinions moved by judged evidence", b.get("opinions_moved", "?"), a["opinions_moved"]),
                  _row("re-run, warm cache (wall)", f"{b['warm_s']:.2f} s", f"{a['warm_s']:.2f} s"),
                  _row("`--no-llm` dry run (wall)", f"{b['no_llm_s']:.2f} s", f"{a['no_llm_s']:.2f} s"),
                  _row("cold and warm runs give the identical commit", "yes" if b["identical"] else "NO",
                       "yes" if a["identical"] else "NO"),
                  "",
                  f"Cold reflection wall time, after / before: **{med(after, 'cold_s') / med(before, 'cold_s'):.2f}x** "
                  f"(CPU {med(after, 'cold_cpu') / med(before, 'cold_cpu'):.2f}x)."]
    else:
        lines += ["| measure | value |", "|---|---|",
                  f"| reflection, cold cache (wall / CPU) | {med(after, 'cold_s'):.1f} s / {med(after, 'cold_cpu'):.1f} s |",
                  f"| model calls / prompt tokens / generated tokens | {a['calls']} / {a['prompt_tokens']} / {a['completion_tokens']} |",
                  f"| generation speed (generated tokens / s of model time) | {a['tokens_per_second']:.1f} tok/s |",
                  f"| opinions moved by judged evidence | {a['opinions_moved']} |",
                  f"| re-run, warm cache (wall) | {a['warm_s']:.2f} s ({a['warm_hits']} cache hits) |",
                  f"| `--no-llm` dry run (wall) | {a['no_llm_s']:.2f} s |",
                  f"| cold and warm runs give the identical commit | {'yes' if a['identical'] else 'NO'} ({a['commit'][:7]}) |"]
    lines += [""] + [f"- {n}" for n in a.get("notes", [])] + [""]
    return "\n".join(lines)


def write_section(text: str) -> None:
    old = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    lines = old.split("\n")
    start = next((i for i, ln in enumerate(lines) if ln.strip() == SECTION), None)
    if start is None:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        stop = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        new = "\n".join(lines[:start] + text.rstrip("\n").split("\n") + [""] + lines[stop:])
    RESULTS.write_text(new.rstrip("\n") + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="GGUF file (default: the bundled SmolLM2)")
    ap.add_argument("--max-facts", type=int, default=None, help="cap facts per run (reflect.max_facts)")
    ap.add_argument("--before", metavar="REV", help="also measure REV's code, alternating, in the same run")
    ap.add_argument("--rounds", type=int, default=1, help="cold runs of each (default 1)")
    ap.add_argument("--json", action="store_true", help="print one run's numbers as JSON (used by --before)")
    ap.add_argument("--write", action="store_true", help="update the '## Reflect' section of bench/RESULTS.md")
    args = ap.parse_args(argv)
    if args.json:
        print(json.dumps(run(args.model, args.max_facts)))
        return 0
    after: list[dict[str, Any]] = []
    before: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        if args.before:
            before.append(run_before(args.before, args.model, args.max_facts))
        after.append(run(args.model, args.max_facts))
    text = render(after, before or None, args.before)
    print(text)
    if args.write:
        write_section(text)
    return 0 if all(r["identical"] for r in after) else 1


if __name__ == "__main__":
    sys.exit(main())
