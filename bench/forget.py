"""Forget benchmark: the time `gitmem forget TEXT --yes` takes on a generated workspace history.

    .venv/bin/python bench/forget.py                    # 10000 commits
    .venv/bin/python bench/forget.py --sizes 1000,10000 --write

For each size it takes the generated history of bench/index.py (bench/gen_history.py, cached under
bench/out/), copies it (forget rewrites it), indexes the copy, picks one Retain bullet from the
first daily log (so the rewrite starts at the beginning of history: every commit after it is
rewritten) and measures, in one run, as subprocesses:

  floor     a no-op `git filter-repo --partial --refs refs/heads/main --blob-callback pass` on another
            copy: what passing every commit and blob through git-filter-repo costs alone (without a
            blob callback filter-repo would not even read the blobs, which forget must)
  dry run   `gitmem forget TEXT --json` (the same pass with --dry-run: nothing is imported)
  forget    `gitmem forget TEXT --yes --json`: backup refs, the rewrite with gitmem's blob,
            commit and message callbacks, the compare-and-swap ref moves and the work tree's
            switch, index rebuild from scratch, cache cleanup
  rebuild   `gitmem index --rebuild` on the rewritten copy: the part of `forget` that is the index
  ratio     forget / floor

Prints a Markdown table; --write puts it in bench/RESULTS.md under "## Forget".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from index import OUT, gitmem_exe, history, timed, write_section  # noqa: E402

SECTION = "## Forget"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def copy(src: Path, name: str) -> Path:
    dst = OUT / name
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(".memory"))
    return dst


def pick_text(repo: Path) -> str:
    """A bullet of an early daily log, the one of the first 50 with the most commits: a text in
    several versions of a file, whose forgetting rewrites nearly all of history."""
    created = [p for p in git(repo, "log", "--reverse", "--format=", "--name-only", "--diff-filter=A", "--",
                              "memory/").split("\n") if p][:50]
    touched = git(repo, "log", "--format=", "--name-only", "--", *created).split("\n")
    first = max(created, key=lambda p: (touched.count(p), p))
    text = git(repo, "show", f"HEAD:{first}")
    bullet = next(ln for ln in text.splitlines() if ln.startswith("- W ") or ln.startswith("- B "))
    return bullet[4:].strip()


def measure(commits: int) -> dict[str, object]:
    src = history(commits)
    floor_repo = copy(src, f"forget-floor-{commits}")
    floor = timed([sys.executable, "-m", "git_filter_repo", "--force", "--quiet", "--partial", "--blob-callback", "pass",
                   "--refs", "refs/heads/main"], cwd=floor_repo)
    repo = copy(src, f"forget-{commits}")
    gm = gitmem_exe()
    assert timed([*gm, "-C", str(repo), "index"])[1] == 0
    text = pick_text(repo)
    dry_s, code, _, dry_cpu = timed([*gm, "-C", str(repo), "forget", text, "--json"])
    assert code == 0
    out = OUT / f"forget-{commits}.json"
    with out.open("wb") as fh:
        t = timed([*gm, "-C", str(repo), "forget", text, "--yes", "--json"], stdout=fh.fileno())
    forget_s, code, rss, cpu = t
    assert code == 0
    report = json.loads(out.read_text())
    rebuild_s = timed([*gm, "-C", str(repo), "index", "--rebuild"])[0]
    left = subprocess.run(["git", "-C", str(repo), "log", "-p", f"--exclude={report['backup']}/*", "--all"],
                          capture_output=True, check=True).stdout
    return {"commits": commits, "floor": floor[0], "floor_cpu": floor[3], "dry": dry_s, "forget": forget_s, "cpu": cpu, "rss": rss,
            "rebuild": rebuild_s, "rewritten": len(report["commits"]), "lines": sum(x["versions"] for x in report["lines"]),
            "remapped": report["citations"]["remapped"], "gone": text.encode() not in left, "text": text}


def table(rows: list[dict[str, object]]) -> str:
    lines = ["| commits | floor (no-op filter-repo): wall / CPU | dry run | forget --yes: wall / CPU | ratio wall / CPU "
             "| peak RSS | of which index rebuild | commits with the text | line versions removed "
             "| gone from `git log -p --all` |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        f, fl = float(r["forget"]), float(r["floor"])
        lines.append(f"| {r['commits']:,} | {fl:.1f} s / {r['floor_cpu']:.1f} s | {r['dry']:.1f} s "
                     f"| {f:.1f} s / {r['cpu']:.1f} s | {f / fl:.1f}x / {float(r['cpu']) / float(r['floor_cpu']):.1f}x "
                     f"| {int(r['rss']) / 2**20:.0f} MB | {r['rebuild']:.1f} s "
                     f"| {r['rewritten']} | {r['lines']} | {'yes' if r['gone'] else 'NO'} |")
    return "\n".join(lines + ["", (
        f"Measured {date.today().isoformat()} on {platform.machine()}, {os.cpu_count()} CPU(s), Python "
        f"{platform.python_version()}, one run per size, side by side in one process. The text forgotten is a "
        f"bullet of an early daily log (e.g. `{rows[0]['text']}`), so every later commit is rewritten. "
        "*floor*: a no-op git-filter-repo run over the same branch (every commit and blob exported and imported, "
        "a blob callback that does nothing). *forget --yes* includes the backup refs, gitmem's callbacks on every blob and commit "
        "message, the compare-and-swap ref moves and the work tree's switch, deleting and rebuilding the index, "
        "and the cache cleanup; *of which index "
        "rebuild* is `gitmem index --rebuild` on the result, measured separately.")])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000", help="comma-separated commit counts (default 10000)")
    ap.add_argument("--write", action="store_true", help="also write the table into bench/RESULTS.md")
    ap.add_argument("--note", default="", help="a sentence about the run (e.g. the machine's load) added under the table")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]:
        print(f"measuring a forget on {n} commits ...", file=sys.stderr)
        rows.append(measure(n))
    body = table(rows) + (f"\n\n{args.note}" if args.note else "")
    print(body)
    if args.write:
        write_section(body, SECTION, f"--sizes {args.sizes} --write", script="bench/forget.py")
    return 0 if all(r["gone"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
