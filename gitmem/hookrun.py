"""What gitmem's git hooks execute: `python -m gitmem.hookrun <hook-name> [git's hook args...]`.

Runs after every commit, so start-up is the budget: no click, no pygit2, nothing beyond the
workspace lookup and the indexer itself. It never fails: a locked index is left to whoever holds
the lock (or to the next recall, which catches up), and any other error is appended to
`.memory/hook.log` for `gitmem status` to show. The exit status is always 0.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gitmem.layout import WORKSPACE_MARKS  # any of these at the top of the work tree: see _skip
# A hook indexes at most this many commits itself (~0.5 s); more (a checkout across years of
# history: 15,000 commits blocked the terminal for 34 s) go to one detached background run.
HOOK_MAX_COMMITS = 200
BACKGROUND = "--background"


def _git_dir(top: Path) -> Path:
    """This work tree's own git dir, without running git: hooks get GIT_DIR in linked worktrees;
    otherwise `.git` is the directory itself or (worktrees, submodules) a "gitdir: X" file."""
    env = os.environ.get("GIT_DIR")
    if env:
        return top / env  # an absolute GIT_DIR replaces `top` in the join
    dotgit = top / ".git"
    if dotgit.is_file():
        text = dotgit.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            return top / text[len("gitdir:") :].strip()
    return dotgit


def _skip(hook: str, args: list[str], top: Path) -> bool:
    if hook == "post-checkout":
        # args: previous HEAD, new HEAD, flag; flag "0" is a file checkout (`git checkout -- f`),
        # which does not move HEAD. A null previous HEAD is `git clone` / `git worktree add`:
        # a first full build belongs to `gitmem index` or the first recall, not to a checkout.
        if len(args) >= 3 and args[2] == "0":
            return True
        if args and set(args[0]) == {"0"}:
            return True
    if hook in ("post-commit", "post-checkout"):
        # A rebase runs these for every picked commit on a detached HEAD; its post-rewrite at the
        # end updates the index once (and an aborted rebase leaves nothing to update).
        git_dir = _git_dir(top)
        if (git_dir / "rebase-merge").is_dir() or (git_dir / "rebase-apply").is_dir():
            return True
    # A hooks directory shared by many repositories (a global core.hooksPath) must not grow a
    # .memory index in every repository that commits: only memory workspaces are indexed.
    return not any((top / name).exists() for name in WORKSPACE_MARKS)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m gitmem.hookrun <hook-name> [hook args...]", file=sys.stderr)
        return 0
    hook, rest = args[0], args[1:]
    background = hook == BACKGROUND
    if background:
        hook = "background-index"  # its name in hook.log / hook.state
    try:
        # git runs hooks from the top of the work tree (a bare repository's hooks run in the git
        # dir, where Workspace.find fails: there is no memory to index).
        top = Path.cwd()
        if not background and _skip(hook, rest, top):
            return 0
        from gitmem.workspace import Workspace

        # The work tree's top holds .git (a folder, or a file in a linked worktree): no need to
        # spend a git call asking where the top is.
        ws = Workspace(top) if (top / ".git").exists() else Workspace.find(top)
    except Exception:
        return 0

    from gitmem import githooks
    from gitmem.errors import IndexLocked

    try:
        from gitmem.index import indexer

        # The indexer's patterns as an earlier run compiled them (recall sessions keep the same file).
        ws.load_patterns()
        # The background run also takes the lock without waiting: one at a time, and a run that
        # finds another one going leaves the rest to it (or to the next recall, which catches up).
        result = indexer.update(ws, wait=0.0, max_commits=None if background else HOOK_MAX_COMMITS)
        ws.save_patterns()
        if result.deferred or result.stale_rules:
            _spawn_background(top)
            return 0
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


def _spawn_background(top: Path) -> None:
    """Start `python -m gitmem.hookrun --background` detached from git's command: its own session
    (no terminal signals), no inherited pipes (git would wait for them to close)."""
    import subprocess

    subprocess.Popen(
        [sys.executable, "-m", "gitmem.hookrun", BACKGROUND],
        cwd=top, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True,
    )


if __name__ == "__main__":
    sys.exit(main())
