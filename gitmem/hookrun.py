"""What gitmem's git hooks execute: `python -m gitmem.hookrun <hook-name> [git's hook args...]`.

Runs after every commit, so start-up is the budget: no click, no pygit2, nothing beyond the
workspace lookup and the indexer itself. It never fails: a locked index is left to whoever holds
the lock (or to the next recall, which catches up), and any other error is appended to
`.memory/hook.log` for `gitmem status` to show. The exit status is always 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

NULL_OID = "0" * 40


def _skip(hook: str, args: list[str]) -> bool:
    if hook == "post-checkout":
        # args: previous HEAD, new HEAD, flag; flag "0" is a file checkout (`git checkout -- f`),
        # which does not move HEAD. A null previous HEAD is `git clone` / `git worktree add`:
        # a first full build belongs to `gitmem index` or the first recall, not to a checkout.
        if len(args) >= 3 and args[2] == "0":
            return True
        if args and set(args[0]) == {"0"}:
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m gitmem.hookrun <hook-name> [hook args...]", file=sys.stderr)
        return 0
    hook, rest = args[0], args[1:]
    if _skip(hook, rest):
        return 0
    try:
        from gitmem.workspace import Workspace

        # git runs hooks from the top of the work tree; a bare repository has no memory to index.
        ws = Workspace.find(Path.cwd())
    except Exception:
        return 0

    from gitmem import githooks
    from gitmem.errors import IndexLocked

    try:
        from gitmem.index import indexer

        indexer.update(ws, quiet=True, wait=0.0)
    except IndexLocked:
        return 0
    except Exception as exc:  # never let a gitmem problem surface in a git command
        try:
            githooks.record_failure(ws, hook, exc)
        except Exception:
            pass
        return 0
    try:
        githooks.record_success(ws, hook)
    except Exception:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
