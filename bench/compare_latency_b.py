"""Recall latency of checkouts side by side on one history: the ratio, not absolute times.

    .venv/bin/python bench/compare_latency_b.py --base /tmp/main-checkout --size 100k [--rounds 6]
    .venv/bin/python bench/compare_latency_b.py --size 1m --rounds 8 --repeat 3 --cli-runs 5 \\
        --base /tmp/old:/tmp/old/bench/out/lat/g1m --base /tmp/main-checkout

The history is bench/recall_latency.py's (built and indexed once by this checkout). A base given as
CODE:REPO answers from its own indexed copy of the history (a checkout whose index schema differs);
CODE alone shares this checkout's. Each round runs every base's code and this checkout's in turn,
each in a fresh process answering recall_latency's questions (k=10, now and as of the middle)
`--repeat` times after a warm-up, then (with --cli-runs) `python -m gitmem recall --json` end to
end that many times (and `--help` twice; `--repeat 0`: the CLI alone), so load on a shared machine
hits all alike (each round starts with another code). With --semantic each child also answers
with hybrid recall in-process (the embedding model and the vectors loaded in it, as `gitmem mcp`
has them; the history needs vectors: bench/hybrid_latency.py fills random ones), interleaved with
lexical, and reports besides wall and CPU a critical path: per-thread CPU of the main thread up to
the dense side's start, the longer of its lexical work and the dense thread's CPU, then the rest
(what the answer would take on two free cores without GIL waits; a loaded machine's wall time is
mostly waiting for a core). p50/p95 of wall and CPU time
(time.process_time; for the CLI, the process and the git processes it waited for) are over every
call of every round; the ratios are this / each base.

One run's p95 on a shared host moves by +-20% with the host's spells, so a run can keep its per-call
samples (`--save FILE`: one JSON line per run, appended) and `--pool FILE [FILE ...]` reports, without
running anything, each code's p50 / p95 over every call of every saved run (pooled), the spread of
the runs' own p95, and the pooled ratios: several runs, possibly in different spells, decide
together instead of the noisiest one.

    .venv/bin/python bench/compare_latency_b.py --size 1m --rounds 6 --repeat 3 --base B:H --save /tmp/s.jsonl  # x3
    .venv/bin/python bench/compare_latency_b.py --pool /tmp/s.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# The samples kept per code: in-process wall and CPU, the CLI's, `--help`, hybrid wall, CPU, critical path.
KEYS = ("wall", "cpu", "cli", "cli_cpu", "help", "hybrid_wall", "hybrid_cpu", "hybrid_path")


def child(code: Path, repo: Path, repeat: int, plan: str, semantic: bool) -> None:
    """One code's in-process answers, timed: lexical, and with `semantic` hybrid too (the model
    and the vectors loaded in this process as `gitmem mcp` has them), interleaved question by
    question. Prints {mode: [wall ms, CPU ms]}; CPU is the process's (all threads)."""
    sys.path.insert(0, str(code.resolve()))
    from gitmem import mcp_server
    from gitmem.recall.search import Options, Session
    from gitmem.workspace import Workspace

    dense = None
    marks: dict[str, float] = {}
    if semantic:
        from gitmem.recall import semantic as sem

        dense = sem.InProcess(sem.load_embedder())
        # Per-thread CPU marks for the critical-path model (see `model`): the main thread's CPU
        # when the dense side starts, when it waits for it and when the wait returns; the dense
        # thread's own CPU.
        start, in_thread = sem.start, sem.in_thread

        def timed_start(*a: object) -> object:
            marks["start"] = time.thread_time()
            wait = start(*a)  # type: ignore[arg-type]

            def timed_wait() -> object:
                marks["wait"] = time.thread_time()
                try:
                    return wait()
                finally:
                    marks["back"] = time.thread_time()
            return timed_wait

        def timed_thread(fn: Any, *rest: Any) -> Any:
            def run() -> object:
                c0 = time.thread_time()
                try:
                    return fn()
                finally:
                    marks["bg"] = time.thread_time() - c0
            return in_thread(run, *rest)

        sem.start, sem.in_thread = timed_start, timed_thread  # type: ignore[assignment]
    modes = (False, True) if semantic else (False,)
    questions, as_of = json.loads(plan)
    got: dict[str, list[list[float]]] = {}
    with Session(Workspace(repo), catch_up=False, dense=dense) as s:
        for when in (None, as_of):
            for q in questions:  # warm-up (the first hybrid search loads the vectors)
                for mode in modes:
                    s.search(q, Options(k=10, as_of=when, semantic=mode))
            if hasattr(mcp_server, "open_session"):
                # The collector as this code's `gitmem mcp` sets it once a session is open (wave 12);
                # older codes keep the interpreter's settings until a hybrid question steadies them.
                from gitmem.recall.semantic import steady_collector

                steady_collector()
            for _ in range(repeat):
                for q in questions:
                    for mode in modes:
                        marks.clear()
                        t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
                        s.search(q, Options(k=10, as_of=when, semantic=mode))
                        m1 = time.thread_time()
                        wall, cpu, path = got.setdefault("hybrid" if mode else "lexical", [[], [], []])
                        wall.append((time.perf_counter() - t0) * 1000)
                        cpu.append((time.process_time() - c0) * 1000)
                        if {"start", "wait", "back", "bg"} <= marks.keys():
                            # On two free cores and no GIL waits: the main thread up to the start,
                            # then the longer of its share (its lexical side, and any blocks of the
                            # dense search it takes while it waits) and the dense thread's, then the rest.
                            path.append(1000 * (marks["start"] - m0 + max(marks["back"] - marks["start"], marks["bg"])
                                                + m1 - marks["back"]))
    print(json.dumps(got))


def timed(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, float]:
    """Wall and CPU ms of one call (CPU: the process and its waited-for children, git's too)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True)
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (t1 - t0) * 1000, (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000


def cli(code: Path, repo: Path, questions: list[str], runs: int, offset: int) -> tuple[list[float], list[float]]:
    """`python -m gitmem recall --json Q` from `code`, wall and CPU (with its git children) per run;
    one unmeasured run first warms the page cache."""
    env = {**os.environ, "PYTHONPATH": str(code.resolve())}
    wall: list[float] = []
    cpu: list[float] = []
    for i in range(runs + 1):
        q = questions[(offset + i) % len(questions)]
        w, c = timed([sys.executable, "-m", "gitmem", "-C", str(repo), "recall", "--json", q], env, code)
        if i:
            wall.append(w)
            cpu.append(c)
    return wall, cpu


def noop(code: Path) -> float:
    """`python -m gitmem --help` from `code`: the interpreter and click doing nothing (the floor)."""
    return timed([sys.executable, "-m", "gitmem", "--help"], {**os.environ, "PYTHONPATH": str(code.resolve())}, code)[0]


def report(got: dict[str, dict[str, list[float]]], loads: list[float], semantic: bool) -> None:
    """The tables of one run (or of several runs' samples pooled: `pool`), and the ratios this / each base."""
    from recall_latency import pct
    if semantic:
        print("| code | hybrid wall p50 / p95 (ms) | hybrid CPU p50 / p95 (ms) | critical path p50 / p95 (ms) | n |")
        print("|---|---|---|---|---|")
        for name, m in got.items():
            print(f"| {name} | {pct(m['hybrid_wall'], 0.5):.1f} / {pct(m['hybrid_wall'], 0.95):.1f} | "
                  f"{pct(m['hybrid_cpu'], 0.5):.1f} / {pct(m['hybrid_cpu'], 0.95):.1f} | "
                  f"{pct(m['hybrid_path'], 0.5):.1f} / {pct(m['hybrid_path'], 0.95):.1f} | {len(m['hybrid_wall'])} |")
        print()
    print("| code | in-process wall p50 / p95 (ms) | in-process CPU p50 / p95 (ms) | CLI wall median / p95 (ms) |"
          " CLI CPU median / p95 (ms) | `--help` median (ms) | n |")
    print("|---|---|---|---|---|---|---|")
    for name, m in got.items():
        if not m["wall"]:  # --repeat 0: no in-process column (NaN, left out of the ratios)
            m["wall"] = m["cpu"] = [math.nan]
        clis = (f"{pct(m['cli'], 0.5):.0f} / {pct(m['cli'], 0.95):.0f} | {pct(m['cli_cpu'], 0.5):.0f} / "
                f"{pct(m['cli_cpu'], 0.95):.0f} | {pct(m['help'], 0.5):.0f}") if m["cli"] else "- | - | -"
        print(f"| {name} | {pct(m['wall'], 0.5):.1f} / {pct(m['wall'], 0.95):.1f} | {pct(m['cpu'], 0.5):.1f} / "
              f"{pct(m['cpu'], 0.95):.1f} | {clis} | {len(m['wall'])} |")
    print(f"load average (1 min) after each round: {', '.join(f'{x:.1f}' for x in loads)}")
    this = got["this"]
    for name, m in got.items():
        if name == "this":
            continue
        ratios = [f"{k} p{int(p * 100)} {pct(this[k], p) / pct(m[k], p):.3f}"
                  for k in KEYS if m[k] and this[k] and not math.isnan(m[k][0]) for p in (0.5, 0.95)]
        print(f"ratio this / {name}: " + ", ".join(ratios))


def pool(files: list[Path]) -> None:
    """Every saved run's per-call samples pooled per code (see the module docstring), with the
    spread of the runs' own p95 (in-process wall and CPU, hybrid wall when there is one)."""
    from recall_latency import pct

    runs = [json.loads(line) for f in files for line in f.read_text().splitlines() if line.strip()]
    if not runs:
        raise SystemExit(f"no saved runs in {', '.join(map(str, files))}: run with --save FILE first")
    got: dict[str, dict[str, list[float]]] = {}
    for run in runs:
        for name, m in run["samples"].items():
            mine = got.setdefault(name, {k: [] for k in KEYS})
            for k in KEYS:
                mine[k] += [x for x in m.get(k, []) if not math.isnan(x)]
    print(f"pooled over {len(runs)} run(s): {', '.join(str(r['when']) for r in runs)}")
    print()
    print("| code | runs' own wall p95 (ms) | runs' own CPU p95 (ms) | runs' own hybrid wall p95 (ms) |")
    print("|---|---|---|---|")
    for name in got:
        per = [[pct(r["samples"][name][k], 0.95) for r in runs if r["samples"].get(name, {}).get(k)]
               for k in ("wall", "cpu", "hybrid_wall")]
        print(f"| {name} | " + " | ".join(", ".join(f"{x:.1f}" for x in xs) or "-" for xs in per) + " |")
    print()
    report(got, [x for r in runs for x in r["loads"]], any(m["hybrid_wall"] for m in got.values()))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", action="append", default=[], help="CODE or CODE:REPO (repeatable)")
    ap.add_argument("--size", default="100k")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cli-runs", type=int, default=0)
    ap.add_argument("--child", nargs=2, type=Path, metavar=("CODE", "REPO"))
    ap.add_argument("--plan", default="")
    ap.add_argument("--save", type=Path, help="append this run's per-call samples to FILE (JSON lines) for --pool")
    ap.add_argument("--pool", nargs="+", type=Path, metavar="FILE", help="report the saved runs in FILE(s) pooled; runs nothing")
    ap.add_argument("--semantic", action="store_true",
                    help="also hybrid recall in-process (the history must have vectors: bench/hybrid_latency.py fills them)")
    a = ap.parse_args()
    if a.child:
        child(a.child[0], a.child[1], a.repeat, a.plan, a.semantic)
        return 0
    sys.path.insert(0, str(HERE))
    if a.pool:
        pool(a.pool)
        return 0
    from recall_latency import QUESTIONS, Session, build, middle_date

    ws, _ = build(a.size)
    with Session(ws, catch_up=False) as s:
        plan = json.dumps([list(QUESTIONS), middle_date(s)])
    import compileall

    runs: dict[str, tuple[Path, Path]] = {}
    for b in a.base:
        code, _, repo = b.partition(":")
        runs[f"base {Path(code).name}"] = (Path(code), Path(repo) if repo else ws.root)
    runs["this"] = (HERE.parent, ws.root)
    for code, _ in runs.values():  # start-up as a user has it: with compiled bytecode
        compileall.compile_dir(str(code / "gitmem"), quiet=1)
    got: dict[str, dict[str, list[float]]] = {k: {m: [] for m in KEYS} for k in runs}
    loads: list[float] = []
    for rnd in range(a.rounds):
        # Each code goes first in turn: a round's load falls on all alike.
        order = list(runs.items())
        order = order[rnd % len(order):] + order[:rnd % len(order)]
        for name, (code, repo) in order:
            if a.repeat:  # --repeat 0: the CLI alone
                out = subprocess.run([sys.executable, __file__, "--child", str(code), str(repo), "--repeat",
                                      str(a.repeat), "--plan", plan, *(["--semantic"] if a.semantic else [])],
                                     capture_output=True, text=True, check=True).stdout
                modes = json.loads(out)
                got[name]["wall"] += modes["lexical"][0]
                got[name]["cpu"] += modes["lexical"][1]
                if "hybrid" in modes:
                    got[name]["hybrid_wall"] += modes["hybrid"][0]
                    got[name]["hybrid_cpu"] += modes["hybrid"][1]
                    got[name]["hybrid_path"] += modes["hybrid"][2]
            if a.cli_runs:
                cw, cc = cli(code, repo, list(QUESTIONS), a.cli_runs, rnd * a.cli_runs)
                got[name]["cli"] += cw
                got[name]["cli_cpu"] += cc
                got[name]["help"] += [noop(code) for _ in range(2)]
        loads.append(os.getloadavg()[0])
        print(f"round {rnd + 1}/{a.rounds} done, load {loads[-1]:.1f}", file=sys.stderr)
    if a.save:
        with a.save.open("a") as f:  # per-call samples of this run, for --pool
            f.write(json.dumps({"when": datetime.now().isoformat(timespec="seconds"), "size": a.size, "rounds": a.rounds,
                                "repeat": a.repeat, "loads": loads, "samples": got}) + "\n")
    report(got, loads, a.semantic)
    return 0


if __name__ == "__main__":
    sys.exit(main())
