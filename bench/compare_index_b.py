"""Build the index of one workspace with one checkout's code and print its `.dump` (a stand-in
for part A's bench/compare_index.py, to prove a refactor leaves the index byte-identical).

    python bench/compare_index_b.py --code /tmp/main-checkout --repo /tmp/h1000 > main.sql
    python bench/compare_index_b.py --code . --repo /tmp/h1000 > mine.sql && cmp main.sql mine.sql

The workspace's index is rebuilt from scratch; `--also-rewrite` then resets the branch one commit
back with a new commit on top and updates again, so the rewrite detection's rollback is compared too
(the branch is restored after). Batches are cut by commit count only and the
migrations' run times are left out: the two things that differ between any two runs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--code", type=Path, required=True)
    p.add_argument("--repo", type=Path, required=True)
    p.add_argument("--also-rewrite", action="store_true")
    a = p.parse_args()
    sys.path.insert(0, str(a.code.resolve()))
    import gitmem
    from gitmem.index import indexer
    from gitmem.index.indexer import update
    from gitmem.workspace import Workspace

    assert Path(gitmem.__file__).resolve().is_relative_to(a.code.resolve()), gitmem.__file__
    # Batches are also cut every BATCH_SECONDS of wall time, which moves FTS5's segment layout
    # with the machine's load: cut by commit count only, so two runs can be byte-compared.
    indexer.BATCH_SECONDS = float("inf")
    ws = Workspace(a.repo)
    update(ws, rebuild=True)
    if a.also_rewrite:
        git = ["git", "-C", str(a.repo), "-c", "user.name=B", "-c", "user.email=b@example.com"]
        env = {"GIT_AUTHOR_DATE": "2030-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2030-01-01T00:00:00+0000",
               "PATH": "/usr/bin:/bin"}
        head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        subprocess.run([*git, "reset", "-q", "--soft", "HEAD~3"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "rewritten"], check=True, env=env)
        update(ws)
        subprocess.run([*git, "reset", "-q", "--soft", head], check=True)
    dump = subprocess.run(["sqlite3", str(ws.index_path), ".dump"], capture_output=True, text=True, check=True).stdout
    # The migrations table records when each migration ran: the one expected difference.
    sys.stdout.writelines(line for line in dump.splitlines(keepends=True)
                          if not line.startswith("INSERT INTO _migrations VALUES("))
    return 0


if __name__ == "__main__":
    sys.exit(main())
