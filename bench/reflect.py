"""Benchmark `gitmem reflect` on the demo workspace with a local model.

Builds the demo (gitmem.demo.build_demo) in a temp folder, runs one full reflection with the
bundled SmolLM2 (or --model), then re-runs it with the warm answer cache and checks that both
runs produced the identical proposal commit. Prints wall times, model calls, tokens and tokens/s.
`--write` replaces the "## Reflect" section of bench/RESULTS.md (other sections are kept).

    .venv/bin/python bench/reflect.py
    .venv/bin/python bench/reflect.py --max-facts 20 --write
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gitmem.config import set_value
from gitmem.demo import build_demo
from gitmem.index.indexer import update
from gitmem.reflect.model import CachedModel, LlamaModel, resolve_model_path
from gitmem.reflect.run import RunOptions, reflect
from gitmem.workspace import Workspace

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
SECTION = "## Reflect"


def run(model_path: str | None, max_facts: int | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        info = build_demo(Path(tmp) / "demo")
        ws = Workspace(info.root)
        if max_facts:
            set_value(ws, "reflect.max_facts", max_facts)
        update(ws)
        path = resolve_model_path(ws, model_path)
        llm = LlamaModel(path)
        cold_model = CachedModel.for_workspace(llm, ws)
        t0 = time.perf_counter()
        cold = reflect(ws, RunOptions(model=lambda: cold_model))
        cold_s = time.perf_counter() - t0
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
        return {"model": llm.name, "facts": cold["facts"], "files": len({c["path"] for c in cold["changes"]}),
                "rejected": len(cold["rejected"]), "cold_s": cold_s, "warm_s": warm_s, "no_llm_s": plain_s,
                "identical": cold["commit"] == warm["commit"], "commit": cold["commit"], "warm_hits": hits,
                "no_llm_facts": plain["facts"], **stats}


def render(r: dict[str, Any]) -> str:
    return "\n".join([
        SECTION,
        "",
        f"`bench/reflect.py` on the demo workspace ({r['facts']} facts), model `{r['model']}`, "
        f"{platform.machine()} / Python {platform.python_version()}.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| reflection, cold cache (wall) | {r['cold_s']:.1f} s |",
        f"| model calls / prompt tokens / generated tokens | {r['calls']} / {r['prompt_tokens']} / {r['completion_tokens']} |",
        f"| generation speed (generated tokens / s of model time) | {r['tokens_per_second']:.1f} tok/s |",
        f"| model load | {r['load_seconds']:.2f} s |",
        f"| re-run, warm cache (wall) | {r['warm_s']:.2f} s ({r['warm_hits']} cache hits) |",
        f"| `--no-llm` dry run (wall) | {r['no_llm_s']:.2f} s |",
        f"| files in the proposal / rejected model outputs | {r['files']} / {r['rejected']} |",
        f"| cold and warm runs give the identical commit | {'yes' if r['identical'] else 'NO'} ({r['commit'][:7]}) |",
        "",
    ])


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
    ap.add_argument("--write", action="store_true", help="update the '## Reflect' section of bench/RESULTS.md")
    args = ap.parse_args(argv)
    result = run(args.model, args.max_facts)
    text = render(result)
    print(text)
    if args.write:
        write_section(text)
    return 0 if result["identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
