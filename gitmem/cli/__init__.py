"""The `gitmem` command: a thin click layer over the library (the group is in `app.py`).

`main` starts the working-tree scan of a read command before importing click: on a large
workspace `git status` costs tens of milliseconds of lstat calls, and the ~50 ms of imports that
follow are the best place to hide them (recall picks the scan up through `git.Status.take`).

A read command also keeps the cyclic garbage collector off its start-up: importing click and the
read path allocates ~100k objects that live until the process exits, and the collector walked them
again and again while they were being made, then once more at exit (~32 M instructions, 8% of a
`gitmem recall` at 1M lines: bench/RESULTS.md, "Recall latency, wave 9"). Once the command's modules
are imported (`imports_done`) they are frozen (never walked again) and the collector runs as usual
for the command's own work, which may be a long catch-up of the index.

And a read command run as the process (`main()` with no argv) leaves without the interpreter's
teardown (`_leave`): unloading ~100 modules and freeing what they hold was ~8 M instructions (2%) of
a `gitmem recall` at 1M lines, and nothing of a read command is left to finish by then (its index
is closed, its output is flushed first). A process with exit handlers or other threads exits as
usual.
"""

from __future__ import annotations

import gc
import sys

# typing is not imported before `main` has paused the collector: importing it made three young
# collections of the interpreter's start-up objects (~1 M instructions); click imports it later.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

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


def global_options(args: list[str]) -> tuple[list[int], int]:
    """Where a command line's global options (those before the command's name) give -C: the
    index of each `-C` token (`-C DIR` or `-CDIR`), and the index of the command's name."""
    at: list[int] = []
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i].startswith("-C"):
            at.append(i)
            if args[i] == "-C" and i + 1 < len(args):
                i += 1
        i += 1
    return at, i


def _read_command(args: list[str]) -> tuple[str, bool]:
    """The directory the global options name ("." without -C), and whether the command line runs
    a read command (one that opens a recall session). Click parses the line properly later: this
    only decides what to start early, and a line it misreads just starts nothing."""
    at, i = global_options(args)
    directory = "."
    if at:
        last = at[-1]
        directory = args[last + 1] if args[last] == "-C" and last + 1 < len(args) else args[last][2:]
    return directory, i < len(args) and args[i] in SESSION_COMMANDS


def _prestart(directory: str) -> None:
    """A read command's two git calls, started before click is imported: `git status` (recall
    waits for it last) and the `git rev-parse` that finds the workspace and its HEAD (waited for
    first: started here, its fork and exec overlap the imports instead of following them)."""
    from gitmem.timeline import git

    git.Status.prestart(directory)
    git.prestart_locate(directory)


_gc_paused = False  # main() turned the collector off for a read command's start-up
_threshold: tuple[int, ...] | None = None  # the collector's thresholds before imports_done raised them


def imports_done() -> None:
    """Called by a read command once its modules are imported (recall_cmd.open_session): everything
    made so far lives until exit, so it is frozen out of the collector's walks, and the collector
    runs again for the command's own work. Nothing happens unless `main` paused it (in-process
    callers and tests keep the interpreter's own collector settings; the MCP server sets its own
    for many questions: mcp_server.open_session)."""
    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.freeze()
        # A young collection every 10,000 allocations instead of 700: a recall's work makes tens of
        # thousands of short-lived rows and tuples, freed by reference counting, that the collector
        # kept walking (~2 M instructions); cyclic garbage is still collected, a little later.
        global _threshold
        _threshold = gc.get_threshold()
        gc.set_threshold(10_000, *_threshold[1:])
        gc.enable()


def main(argv: list[str] | None = None) -> None:
    """Console entry point: usage errors exit 2, user errors exit 1 with a next step."""
    global _gc_paused, _threshold
    args = sys.argv[1:] if argv is None else argv
    directory, reads = _read_command(args)
    if reads:
        if gc.isenabled():
            gc.disable()  # until imports_done (see the module docstring)
            _gc_paused = True
        try:
            _prestart(directory)
        except OSError:
            pass  # no git, no directory: the command itself reports it properly
    from gitmem.cli.app import cli
    from gitmem.cli.output import run_guarded

    try:
        code = run_guarded(cli, args)
    finally:
        if reads:
            from gitmem.timeline.git import discard_locate

            discard_locate()  # not taken: a usage error, --help
            # The interpreter's last collection at exit would walk every object once more; what the
            # command made is freed by reference counting as the modules are torn down either way.
            gc.freeze()
            if _gc_paused:  # the command never got to imports_done (--help, a usage error)
                _gc_paused = False
                gc.enable()
            if _threshold is not None:  # for an in-process caller of main
                gc.set_threshold(*_threshold)
                _threshold = None
    if reads and argv is None:
        _leave(code)
    sys.exit(code)


def _leave(code: int) -> NoReturn:
    """Exit now, skipping the interpreter's teardown (see the module docstring): only once the
    output is flushed, and only when no exit handler or other thread could still need it."""
    import atexit
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe or stream: the usual exit reports it as before
        sys.exit(code)
    threading = sys.modules.get("threading")
    handlers = getattr(atexit, "_ncallbacks", None)  # CPython's count of registered exit handlers
    if handlers is not None and handlers() == 0 and (threading is None or threading.active_count() == 1):
        os._exit(code)
    sys.exit(code)


def __getattr__(name: str) -> Any:
    # `from gitmem.cli import cli` (tests, embedding) without paying for click in `main`'s path.
    if name == "cli":
        from gitmem.cli.app import cli

        return cli
    raise AttributeError(name)
