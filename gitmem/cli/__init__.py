"""The `gitmem` command: a thin click layer over the library (the group is in `app.py`).

`main` starts the working-tree scan of a read command before importing click: on a large
workspace `git status` costs tens of milliseconds of lstat calls, and the ~50 ms of imports that
follow are the best place to hide them (recall picks the scan up through `git.Status.take`).
"""

from __future__ import annotations

import sys
from typing import Any

# The module under gitmem/cli/ that defines each command: the group imports only the one a command
# line names (app.py), not all eleven with their ~100 click options. A test keeps this in step with
# the modules' own `commands` lists.
COMMAND_MODULES = {
    "init": "init_cmd", "demo": "init_cmd", "config": "config_cmd", "lint": "lint_cmd", "index": "index_cmd",
    "status": "index_cmd", "recall": "recall_cmd", "about": "views_cmd", "opinions": "views_cmd",
    "why": "views_cmd", "changes": "views_cmd", "core": "views_cmd", "show": "views_cmd",
    "hooks": "hooks_cmd", "reflect": "reflect_cmd", "review": "reflect_cmd", "model": "model_cmd",
    "retain": "agent_cmd", "mcp": "agent_cmd", "merge-driver": "merge_cmd", "forget": "forget_cmd",
}
# The commands that open a recall Session: recall_cmd.py's and views_cmd.py's.
SESSION_COMMANDS = frozenset(name for name, module in COMMAND_MODULES.items() if module in ("recall_cmd", "views_cmd"))


def _prestart_status(args: list[str]) -> None:
    """Start `git status` for the workspace named by the global options, if the command reads."""
    directory = "."
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-C" and i + 1 < len(args):
            directory = args[i + 1]
            i += 1
        elif args[i].startswith("-C"):
            directory = args[i][2:]
        i += 1
    if i < len(args) and args[i] in SESSION_COMMANDS:
        from gitmem.timeline.git import Status

        Status.prestart(directory)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: usage errors exit 2, user errors exit 1 with a next step."""
    args = sys.argv[1:] if argv is None else argv
    try:
        _prestart_status(args)
    except OSError:
        pass  # no git, no directory: the command itself reports it properly
    from gitmem.cli.app import cli
    from gitmem.cli.output import run_guarded

    sys.exit(run_guarded(cli, args))


def __getattr__(name: str) -> Any:
    # `from gitmem.cli import cli` (tests, embedding) without paying for click in `main`'s path.
    if name == "cli":
        from gitmem.cli.app import cli

        return cli
    raise AttributeError(name)
