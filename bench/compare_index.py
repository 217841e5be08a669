"""Is the index byte-identical under two versions of gitmem? (for refactors that must not change it)

    python bench/compare_index.py [--ref main] [--commits 1000] [--keep DIR]

Builds two workspaces once: the demo (`gitmem demo`) and a synthetic history
(`bench/gen_history.py --commits N`). Each is indexed from scratch twice, in separate processes: by
the code of git revision REF (exported with `git archive` into a temp dir) and by this checkout's
code. The two `sqlite3 .dump`s of `.memory/index.sqlite` are compared line by line; the script
prints the line counts and exits 1 on the first difference (shown with context).

Left out: when each migration was applied (`_migrations.applied_at`, wall time). Everything else,
chunks, commits, entities, the overlay and the FTS5 shadow tables byte for byte, is compared.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Batches are also cut every BATCH_SECONDS of wall time, and FTS5 lays out its segments per
# transaction: for a deterministic dump, batches here are cut by commit count only.
BUILD = """
import sys
import gitmem
from gitmem.index import indexer
from gitmem.workspace import Workspace
if not gitmem.__file__.startswith(sys.argv[2]):
    sys.exit(f"imported {gitmem.__file__}, not the code under {sys.argv[2]}")
indexer.BATCH_SECONDS = float("inf")
indexer.update(Workspace(sys.argv[1]), rebuild=True)
"""


def export(ref: str, dest: Path) -> Path:
    """The gitmem package of `ref`, as files under dest (nothing in this repo changes)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "gitmem"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def build(ws: Path, src: Path) -> list[str]:
    """Index `ws` from scratch with the gitmem package found in `src`; its SQL dump, as lines."""
    shutil.rmtree(ws / ".memory", ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(src)}
    subprocess.run([sys.executable, "-c", BUILD, str(ws), str(src / "gitmem")], check=True, env=env, cwd=src)
    conn = sqlite3.connect(ws / ".memory" / "index.sqlite")
    try:
        lines = [ln for ln in conn.iterdump() if not ln.startswith('INSERT INTO "_migrations"')]
        lines += [f"-- migration {name}" for (name,) in conn.execute("SELECT name FROM _migrations ORDER BY name")]
    finally:
        conn.close()
    return lines


def compare(name: str, ws: Path, ref_src: Path) -> bool:
    before = build(ws, ref_src)
    after = build(ws, ROOT)
    same = before == after
    print(f"{name}: {len(before)} dump lines with the reference, {len(after)} with this checkout: "
          f"{'identical' if same else 'DIFFERENT'}")
    if not same:
        diff = difflib.unified_diff(before, after, "reference", "this checkout", n=1, lineterm="")
        for i, line in enumerate(diff):
            if i > 40:
                print("...")
                break
            print(line[:200])
    return same


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", default="main", help="git revision whose gitmem/ is the reference (default main)")
    ap.add_argument("--commits", type=int, default=1000, help="commits of the synthetic history (default 1000)")
    ap.add_argument("--keep", type=Path, default=None, help="build the workspaces here and keep them")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gitmem-compare-") as tmp:
        base = args.keep or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        ref_src = export(args.ref, Path(tempfile.mkdtemp(dir=tmp)))
        demo, hist = base / "demo", base / f"history-{args.commits}"
        for ws in (demo, hist):
            shutil.rmtree(ws, ignore_errors=True)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, "-m", "gitmem", "demo", str(demo)], check=True, env=env, capture_output=True)
        subprocess.run([sys.executable, str(ROOT / "bench" / "gen_history.py"), str(hist), "--commits", str(args.commits)],
                       check=True, env=env, capture_output=True)
        ok = compare("demo", demo, ref_src) & compare(f"history ({args.commits} commits)", hist, ref_src)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
