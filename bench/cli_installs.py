"""`gitmem recall --json Q` end to end as installed, several installs side by side.

    .venv/bin/python bench/cli_installs.py NAME=GITMEM_EXE:REPO [NAME=GITMEM_EXE:REPO ...] [--rounds 8] [--runs 6]

Each install is a `gitmem` console script (a wheel installed with `pip install .` into a venv of
its own, as README's `pip install gitmem` gives a user: no editable finder; or a checkout's
.venv/bin/gitmem) with the indexed history it answers from (one copy per code when their regex
caches or index schemas may differ; run `git update-index --refresh` in a `cp -a` copy first, or
every `git status` hashes all files). Each round runs every install in turn, the first in turn
changing from round to round, `--runs` calls over bench/recall_latency.py's questions after one
unmeasured call (the page cache), then `--help` twice. Wall and CPU (the process and the git
processes it waited for) medians and p95 over all calls, and the ratios to the first install.
compare_latency_b.py --cli-runs measures checkouts through one interpreter (`python -m gitmem`
with PYTHONPATH); this measures the installs themselves.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare_latency_b import timed  # noqa: E402
from recall_latency import QUESTIONS, pct  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("installs", nargs="+", help="NAME=GITMEM_EXE:REPO")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--runs", type=int, default=6)
    a = ap.parse_args()
    runs: dict[str, tuple[str, str]] = {}
    for spec in a.installs:
        name, _, rest = spec.partition("=")
        exe, _, repo = rest.partition(":")
        if not (name and Path(exe).is_file() and Path(repo, ".git").exists()):
            ap.error(f"{spec!r}: expected NAME=GITMEM_EXE:REPO with an executable and an indexed repository")
        runs[name] = (exe, repo)
    got: dict[str, dict[str, list[float]]] = {n: {"wall": [], "cpu": [], "help": []} for n in runs}
    # As a user runs it: the install's own code (no PYTHONPATH) with its compiled bytecode.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    loads: list[float] = []
    for rnd in range(a.rounds):
        order = list(runs.items())
        order = order[rnd % len(order):] + order[:rnd % len(order)]
        for name, (exe, repo) in order:
            for i in range(a.runs + 1):
                q = QUESTIONS[(rnd * a.runs + i) % len(QUESTIONS)]
                wall, cpu = timed([exe, "-C", repo, "recall", "--json", q], env)
                if i:
                    got[name]["wall"].append(wall)
                    got[name]["cpu"].append(cpu)
            got[name]["help"] += [timed([exe, "--help"], env)[0] for _ in range(2)]
        loads.append(os.getloadavg()[0])
        print(f"round {rnd + 1}/{a.rounds} done, load {loads[-1]:.1f}", file=sys.stderr)
    print("| install | CLI wall median / p95 (ms) | CLI CPU median / p95 (ms, with git) | `--help` median (ms) | n |")
    print("|---|---|---|---|---|")
    for name, m in got.items():
        print(f"| {name} | {pct(m['wall'], 0.5):.0f} / {pct(m['wall'], 0.95):.0f} | {pct(m['cpu'], 0.5):.0f} / "
              f"{pct(m['cpu'], 0.95):.0f} | {pct(m['help'], 0.5):.0f} | {len(m['wall'])} |")
    print(f"load average (1 min) after each round: {', '.join(f'{x:.1f}' for x in loads)}")
    first, *rest = got
    for name in rest:
        ratios = [f"{k} p{int(p * 100)} {pct(got[name][k], p) / pct(got[first][k], p):.3f}"
                  for k in ("wall", "cpu", "help") for p in (0.5, 0.95)]
        print(f"ratio {name} / {first}: " + ", ".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
