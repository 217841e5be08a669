"""Indexing benchmark: full rebuild against the `git log -p` floor, memory, size, hook latency.

    .venv/bin/python bench/index.py                      # sizes 1000,10000
    .venv/bin/python bench/index.py --sizes 1000,10000,100000 --write

For each size it generates (once; cached under bench/out/, keyed by the generator's source) a
synthetic workspace with bench/gen_history.py and measures, in one run:
  floor      `git log -p --first-parent > /dev/null`: what reading the history costs git alone
  rebuild    `gitmem -C REPO index --rebuild` as a subprocess (cold: the old index is deleted)
  ratio      rebuild / floor
  peak RSS   of the indexer process (and its git children), from wait4()'s rusage
  index      size of .memory/index.sqlite (+ WAL), and the chunk versions it holds
  hook       the post-commit hook script run after each of N one-file daily-log commits made with
             hooks disabled, timed from process start to exit: median and p90
Prints a Markdown table; --write also puts it in bench/RESULTS.md under "## Index" (only that
section is replaced: the file's other sections belong to other benchmarks).

    .venv/bin/python bench/index.py --split --sizes 10000,100000 [--write]

splits the CPU of an in-process rebuild (this checkout's gitmem) next to the floor: the walk alone
(git's stream through unidiff and the hunks, nothing parsed or stored), SQLite's batch writes, and
the imports. Those three are work the indexer process cannot skip, so their sum against the floor
is the lowest ratio this design can reach with one Python process beside git
(section "## Index: where a rebuild's CPU goes").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH / "out"
RESULTS = BENCH / "RESULTS.md"
SECTION = "## Index"
SPLIT_SECTION = "## Index: where a rebuild's CPU goes"
# Run in a fresh interpreter (cwd = the repo root, so this checkout's gitmem is imported).
_SPLIT = """
import gc, json, sys, time
t0 = time.process_time()
from pathlib import Path
from gitmem.index import indexer
from gitmem.timeline import git
from gitmem.timeline.history import walk
from gitmem.workspace import Workspace
imports = time.process_time() - t0
repo = Path(sys.argv[1])
gc.disable()
c0 = time.process_time()
for _ in walk(repo, git.out(repo, "rev-parse", "HEAD").strip(), None):
    pass
walk_s = time.process_time() - c0
gc.enable()
writes = [0.0]
flush = indexer._Writer.flush
def timed_flush(self, tip):
    t = time.thread_time()
    flush(self, tip)
    writes[0] += time.thread_time() - t
indexer._Writer.flush = timed_flush
c0 = time.process_time()
indexer.update(Workspace(repo), rebuild=True)
print(json.dumps({"imports": imports, "walk": walk_s, "sqlite": writes[0], "python": time.process_time() - c0}))
"""


GITMEM_EXE: str | None = None  # --gitmem: e.g. a venv where the built wheel is installed


def gitmem_exe() -> list[str]:
    if GITMEM_EXE:
        return [GITMEM_EXE]
    exe = ROOT / ".venv" / "bin" / "gitmem"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("gitmem")
    if found:
        return [found]
    return [sys.executable, "-m", "gitmem"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def history(commits: int) -> Path:
    """The generated repo for `commits`, reused while bench/gen_history.py is unchanged."""
    gen = BENCH / "gen_history.py"
    key = hashlib.sha256(gen.read_bytes()).hexdigest()[:10]
    repo = OUT / f"hist-{commits}-{key}"
    done = repo / ".git" / "gen-ok"  # written last: a generation cut short is redone
    if not done.exists():
        if repo.exists():
            shutil.rmtree(repo)
        print(f"generating {commits} commits into {repo} ...", file=sys.stderr)
        subprocess.run([sys.executable, str(gen), str(repo), "--commits", str(commits)], check=True)
        done.touch()
    return repo


def timed(
    cmd: list[str], cwd: Path | None = None, stdout: int | None = subprocess.DEVNULL
) -> tuple[float, int, int, float]:
    """(wall seconds, exit code, peak RSS in bytes, CPU seconds) of one process and the children it
    waited for (CPU is summed over them: Python and its git processes together)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read() if proc.stderr else b""
    if proc.returncode != 0:
        sys.stderr.write(err.decode("utf-8", "replace"))
    return elapsed, proc.returncode, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime  # Linux: KiB


def floor_time(repo: Path) -> tuple[float, int, float]:
    """(wall seconds, peak RSS in bytes, CPU seconds) of the floor: `git log -p --first-parent`."""
    elapsed, code, rss, cpu = timed(["git", "-C", str(repo), "log", "-p", "--first-parent"])
    assert code == 0
    return elapsed, rss, cpu


def status(repo: Path) -> dict[str, object]:
    proc = subprocess.run([*gitmem_exe(), "-C", str(repo), "status", "--json"], capture_output=True, text=True)
    try:
        return json.loads(proc.stdout)
    except ValueError:
        return {}


def index_bytes(repo: Path) -> int:
    return sum(p.stat().st_size for p in (repo / ".memory").glob("index.sqlite*"))


def hook_latency(repo: Path, n: int) -> tuple[list[float], str | None]:
    """Seconds per post-commit hook run, and the hook error if it failed (then times are void)."""
    head = git(repo, "rev-parse", "HEAD")
    subprocess.run([*gitmem_exe(), "-C", str(repo), "hooks", "install"], check=True, capture_output=True)
    hook = Path(git(repo, "rev-parse", "--path-format=absolute", "--git-path", "hooks")) / "post-commit"
    last = max(p.stem for p in (repo / "memory").glob("*.md"))
    day = date.fromisoformat(last)
    times: list[float] = []
    try:
        for i in range(n):
            day += timedelta(days=1)
            rel = f"memory/{day.isoformat()}.md"
            (repo / rel).write_text(
                f"# {day.isoformat()}\n\nShort day.\n\n## Retain\n"
                f"- W @Peter: Benchmark fact number {i} about the hook latency.\n"
                f"- O(c=0.8) @Peter: Prefers fast hooks.\n"
            )
            git(repo, "add", rel)
            stamp = f"{day.isoformat()}T12:00:00+00:00"
            subprocess.run(
                ["git", "-C", str(repo), "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", f"log {day}"],
                check=True, env={**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp},
            )
            # git runs post-commit with the work tree root as cwd and no arguments.
            elapsed, code, _, _ = timed(["sh", str(hook)], cwd=repo)
            times.append(elapsed)
        error = status(repo).get("last_hook_error")
        behind = status(repo).get("behind")
        if not error and behind not in (0, None):
            error = f"index is {behind} commit(s) behind after the hooks ran"
    finally:
        subprocess.run([*gitmem_exe(), "-C", str(repo), "hooks", "uninstall"], check=True, capture_output=True)
        git(repo, "reset", "-q", "--hard", head)
    return times, error  # type: ignore[return-value]


def measure(commits: int, hook_commits: int, repeat: int = 3) -> dict[str, object]:
    repo = history(commits)
    # Warm the page cache once, then time: the floor and the rebuild see the same warm cache.
    floor_time(repo)
    # Each rebuild is timed right after its own floor and the ratio is the median of those pairs:
    # on a shared machine the speed drifts by 10-30% between minutes, much less within a pair.
    pairs: list[tuple[float, float]] = []
    floor_cpus: list[float] = []
    cpus: list[float] = []
    floor_rss = rss = 0
    for _ in range(max(1, repeat)):
        floor, f_rss, f_cpu = floor_time(repo)
        shutil.rmtree(repo / ".memory", ignore_errors=True)
        rebuild, code, r_rss, cpu = timed([*gitmem_exe(), "-C", str(repo), "index", "--rebuild"])
        if code != 0:
            return {"commits": commits, "floor_s": floor, "ok": False}
        pairs.append((floor, rebuild))
        floor_cpus.append(f_cpu)
        cpus.append(cpu)
        floor_rss, rss = max(floor_rss, f_rss), max(rss, r_rss)
    floor = statistics.median(f for f, _ in pairs)
    rebuild = statistics.median(r for _, r in pairs)
    row: dict[str, object] = {"commits": commits, "floor_s": floor, "floor_rss_mb": floor_rss / 2**20, "ok": True,
                              "floor_cpu_s": statistics.median(floor_cpus), "cpu_s": statistics.median(cpus),
                              "runs": len(pairs)}
    st = status(repo)
    counts = st.get("counts") if isinstance(st.get("counts"), dict) else {}
    row.update(
        rebuild_s=rebuild,
        ratio=statistics.median(r / f for f, r in pairs if f),
        rss_mb=rss / 2**20,
        index_mb=index_bytes(repo) / 2**20,
        versions=counts.get("chunks_total"),  # type: ignore[union-attr]
        facts=counts.get("facts_current"),  # type: ignore[union-attr]
    )
    if hook_commits:
        times, error = hook_latency(repo, hook_commits)
        row["hook_error"] = error
        if times:
            ms = sorted(t * 1000 for t in times)
            row["hook_median_ms"] = statistics.median(ms)
            row["hook_p90_ms"] = ms[min(len(ms) - 1, round(0.9 * (len(ms) - 1)))]
    return row


def table(rows: list[dict[str, object]], hook_commits: int) -> str:
    def f(v: object, fmt: str) -> str:
        return "—" if v is None else format(v, fmt)

    head = (
        "| commits | `git log -p` floor (s) | `index --rebuild` (s) | ratio | CPU (s): rebuild / floor "
        "| peak RSS (MB): rebuild / floor | index (MB) "
        f"| chunk versions | current facts | post-commit hook median / p90 (ms, n={hook_commits}) |"
    )
    lines = [head, "|" + "---:|" * 10]
    notes = []
    for r in rows:
        if not r.get("ok"):
            lines.append(f"| {r['commits']} | {f(r['floor_s'], '.2f')} | failed | | | | | | | |")
            continue
        hook = f"{f(r.get('hook_median_ms'), '.0f')} / {f(r.get('hook_p90_ms'), '.0f')}"
        if r.get("hook_error"):
            hook += " (failed)"
            notes.append(f"- {r['commits']} commits: hook error: {r['hook_error']}")
        lines.append(
            f"| {r['commits']} | {f(r['floor_s'], '.2f')} | {f(r.get('rebuild_s'), '.2f')} | {f(r.get('ratio'), '.1f')}x "
            f"| {f(r.get('cpu_s'), '.1f')} / {f(r.get('floor_cpu_s'), '.1f')} "
            f"| {f(r.get('rss_mb'), '.0f')} / {f(r.get('floor_rss_mb'), '.0f')} | {f(r.get('index_mb'), '.1f')} "
            f"| {r.get('versions') or '—'} "
            f"| {r.get('facts') or '—'} | {hook} |"
        )
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    load = os.getloadavg()[0]
    env = (
        f"Measured {date.today().isoformat()} on {platform.machine()}, {os.cpu_count()} CPU(s) "
        f"(load average {load:.1f} at the end{': above the CPU count, times are inflated' if load > (os.cpu_count() or 1) else ''}), "
        f"Python {platform.python_version()}, {git_version}. Histories from `bench/gen_history.py` (seed 1). "
        "Hook latency is the installed post-commit script (sh + python + incremental update of one "
        "one-file commit), process start to exit. CPU is user + system time of the process and its git "
        f"children: with {os.cpu_count()} CPU(s) a rebuild cannot take less wall time than its CPU time "
        f"divided by {os.cpu_count()}. Peak RSS is wait4()'s: the largest resident size of "
        "the indexer process or any git child it waited for (not their sum, which is at most twice it). "
        "The floor is `git log -p --first-parent` with git's default caches; the indexer runs its git with small "
        "delta-base and pack-window caches (gitmem/timeline/history.py). gitmem measured: "
        f"`{' '.join(gitmem_exe())}`" + (" (a wheel install)" if GITMEM_EXE else " (the repo's editable .venv install)") + "."
    )
    runs = max((int(r.get("runs", 1)) for r in rows), default=1)  # type: ignore[call-overload]
    env += (f" Each size ran {runs} floor + rebuild pairs back to back: times and CPU are medians, the ratio is "
            "the median of the pairs' ratios, peak RSS the largest." if runs > 1 else "")
    return "\n".join(lines + [""] + notes + ([""] if notes else []) + [env])


def split(commits: int, repeat: int) -> dict[str, float]:
    """Medians over `repeat` runs of: the floor, and the CPU split of an in-process rebuild."""
    repo = history(commits)
    floor_time(repo)  # warm the page cache, as measure() does
    runs: list[dict[str, float]] = []
    for _ in range(max(1, repeat)):
        floor, _, floor_cpu = floor_time(repo)
        out = subprocess.run([sys.executable, "-c", _SPLIT, str(repo)], cwd=ROOT, check=True, capture_output=True,
                             text=True).stdout
        runs.append({"floor": floor, "floor_cpu": floor_cpu, **json.loads(out)})
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]} | {"commits": commits, "runs": len(runs)}


def split_table(rows: list[dict[str, float]]) -> str:
    lines = [
        "| commits | floor (s) | rebuild, Python CPU (s) | walk only (s) | SQLite writes (s) | imports (s) "
        "| chunking, diffing, rows (s) | walk + SQLite + imports / floor |",
        "|" + "---:|" * 8,
    ]
    for r in rows:
        fixed = r["walk"] + r["sqlite"] + r["imports"]
        lines.append(
            f"| {r['commits']} | {r['floor']:.2f} | {r['python']:.2f} | {r['walk']:.2f} | {r['sqlite']:.2f} "
            f"| {r['imports']:.2f} | {r['python'] - r['walk'] - r['sqlite']:.2f} | {fixed / r['floor']:.2f}x |"
        )
    runs = int(max(r["runs"] for r in rows))
    return "\n".join(lines + ["", (
        f"Measured {date.today().isoformat()} on {platform.machine()}, {os.cpu_count()} CPU(s), Python "
        f"{platform.python_version()}; medians of {runs} runs, each beside its own floor. CPU seconds of the "
        "indexer process alone (its git child runs on the other CPU). *Walk only*: the same `walk()` a "
        "rebuild does, with nothing parsed or stored. *SQLite writes*: the batch transactions of a rebuild "
        "(`_Writer.flush`). *Chunking, diffing, rows*: the rest of the rebuild's Python CPU (Markdown "
        "chunking, chunk identities and diffs, row building). The last column is work the indexer cannot "
        "skip, against the floor: no schedule of one Python process beside git gets a ratio below it."
    )])


def write_section(body: str, section_name: str = SECTION, reproduce: str = "--sizes ... --write",
                  script: str = "bench/index.py") -> None:
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    lines = text.splitlines()
    section = [section_name, "", f"Reproduce: `.venv/bin/python {script} {reproduce}` (see bench/README.md).", "",
               body, ""]
    try:
        start = lines.index(section_name)
    except ValueError:
        new = lines + ([""] if lines and lines[-1] else []) + section
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        new = lines[:start] + section + lines[end:]
    RESULTS.write_text("\n".join(new).rstrip("\n") + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated commit counts (default 1000,10000)")
    ap.add_argument("--hook-commits", type=int, default=15, help="commits timed for hook latency (0 = skip)")
    ap.add_argument("--repeat", type=int, default=3, help="floor + rebuild pairs per size; medians reported (default 3)")
    ap.add_argument("--gitmem", help="the gitmem executable to measure (default: .venv's, an editable install, whose "
                                     "import hook adds ~14 ms to every start; pass a wheel install's to see a user's)")
    ap.add_argument("--write", action="store_true", help=f"also write the table into {RESULTS.relative_to(ROOT)}")
    ap.add_argument("--split", action="store_true", help="split a rebuild's CPU (walk, SQLite, imports, the rest) "
                                                         "next to the floor instead")
    args = ap.parse_args(argv)
    # Start-up time is measured as a user has it: with compiled bytecode. Under
    # PYTHONDONTWRITEBYTECODE an edited source tree would otherwise be recompiled by every process.
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "gitmem"), quiet=1)
    global GITMEM_EXE
    GITMEM_EXE = args.gitmem
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    OUT.mkdir(parents=True, exist_ok=True)
    if args.split:
        parts = []
        for n in sizes:
            print(f"splitting a rebuild of {n} commits ...", file=sys.stderr)
            parts.append(split(n, args.repeat))
        body = split_table(parts)
        print(body)
        if args.write:
            write_section(body, SPLIT_SECTION, "--split --sizes ... --write")
        return 0
    rows = []
    for n in sizes:
        print(f"measuring {n} commits ...", file=sys.stderr)
        rows.append(measure(n, args.hook_commits, args.repeat))
    body = table(rows, args.hook_commits)
    print(body)
    if args.write:
        write_section(body)
    return 0 if all(r.get("ok") and not r.get("hook_error") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
