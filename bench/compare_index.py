"""Is the index byte-identical under two versions of gitmem? (for refactors that must not change it)

    python bench/compare_index.py [--ref main | --ref-code DIR] [--commits 1000] [--keep DIR]
                                  [--repo PATH ...] [--also-rewrite]
    python bench/compare_index.py --dump [--code DIR] --repo PATH > index.sql

Builds two workspaces once: the demo (`gitmem demo`) and a synthetic history
(`bench/gen_history.py --commits N`), or takes the workspaces given with --repo. Each is indexed
from scratch twice, in separate processes: by the reference code (git revision REF exported with
`git archive` into a temp dir, or the checkout DIR of --ref-code) and by this checkout's code. The
two `sqlite3 .dump`s of `.memory/index.sqlite` are compared line by line; the script prints the
line counts and exits 1 on the first difference (shown with context).

--also-rewrite: after the rebuild, the branch is reset three commits back with one new commit on
top (fixed identity and dates, so both sides make the same commit) and the index updated, so the
rewrite detection's rollback and re-index are compared too; the branch is restored afterwards.
--dump prints one checkout's dump (this one, or --code DIR) instead, to compare across machines.

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
import subprocess
import sys
import gitmem
from gitmem.index import indexer
from gitmem.workspace import Workspace
repo, code, rewrite = sys.argv[1], sys.argv[2], sys.argv[3] == "rewrite"
if not gitmem.__file__.startswith(code):
    sys.exit(f"imported {gitmem.__file__}, not the code under {code}")
indexer.BATCH_SECONDS = float("inf")
ws = Workspace(repo)
indexer.update(ws, rebuild=True)
if rewrite:
    git = ["git", "-C", repo, "-c", "user.name=B", "-c", "user.email=b@example.com"]
    env = {"GIT_AUTHOR_DATE": "2030-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2030-01-01T00:00:00+0000",
           "PATH": "/usr/bin:/bin"}
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([*git, "reset", "-q", "--soft", "HEAD~3"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "rewritten"], check=True, env=env)
    try:
        indexer.update(ws)
    finally:
        subprocess.run([*git, "reset", "-q", "--soft", head], check=True)
"""


def export(ref: str, dest: Path) -> Path:
    """The gitmem package of `ref`, as files under dest (nothing in this repo changes)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "gitmem"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def build(ws: Path, src: Path, rewrite: bool = False) -> list[str]:
    """Index `ws` from scratch with the gitmem package found in `src` (then, with `rewrite`,
    rewrite its branch's last commits and update); its SQL dump, as lines."""
    shutil.rmtree(ws / ".memory", ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(src)}
    subprocess.run([sys.executable, "-c", BUILD, str(ws), str(src.resolve() / "gitmem"), "rewrite" if rewrite else "-"],
                   check=True, env=env, cwd=src)
    conn = sqlite3.connect(ws / ".memory" / "index.sqlite")
    try:
        lines = [ln for ln in conn.iterdump() if not ln.startswith('INSERT INTO "_migrations"')]
        lines += [f"-- migration {name}" for (name,) in conn.execute("SELECT name FROM _migrations ORDER BY name")]
    finally:
        conn.close()
    return lines


def compare(name: str, ws: Path, ref_src: Path, rewrite: bool = False) -> bool:
    before = build(ws, ref_src, rewrite)
    after = build(ws, ROOT, rewrite)
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
    ap.add_argument("--ref-code", type=Path, default=None, metavar="DIR",
                    help="a checkout whose gitmem/ is the reference (instead of --ref)")
    ap.add_argument("--commits", type=int, default=1000, help="commits of the synthetic history (default 1000)")
    ap.add_argument("--keep", type=Path, default=None, help="build the workspaces here and keep them")
    ap.add_argument("--repo", type=Path, action="append", default=[], metavar="PATH",
                    help="compare on this workspace instead of the demo and a synthetic history (repeatable)")
    ap.add_argument("--also-rewrite", action="store_true", help="also compare the index after a rewrite (see above)")
    ap.add_argument("--dump", action="store_true", help="print the dump of one checkout's index of --repo instead")
    ap.add_argument("--code", type=Path, default=ROOT, metavar="DIR", help="with --dump: the checkout (default this one)")
    args = ap.parse_args(argv)
    if args.dump:
        if len(args.repo) != 1:
            ap.error("--dump takes exactly one --repo")
        print("\n".join(build(args.repo[0], args.code, args.also_rewrite)))
        return 0
    with tempfile.TemporaryDirectory(prefix="gitmem-compare-") as tmp:
        ref_src = args.ref_code or export(args.ref, Path(tempfile.mkdtemp(dir=tmp)))
        if args.repo:
            ok = all([compare(str(ws), ws, ref_src, args.also_rewrite) for ws in args.repo])
            return 0 if ok else 1
        base = args.keep or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        demo, hist = base / "demo", base / f"history-{args.commits}"
        for ws in (demo, hist):
            shutil.rmtree(ws, ignore_errors=True)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, "-m", "gitmem", "demo", str(demo)], check=True, env=env, capture_output=True)
        subprocess.run([sys.executable, str(ROOT / "bench" / "gen_history.py"), str(hist), "--commits", str(args.commits)],
                       check=True, env=env, capture_output=True)
        ok = (compare("demo", demo, ref_src, args.also_rewrite)
              & compare(f"history ({args.commits} commits)", hist, ref_src, args.also_rewrite))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
