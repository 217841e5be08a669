"""The click group: it finds each command in its module under gitmem/cli/ (COMMAND_MODULES).

Only the module of the command being run is imported, and command modules import the library
lazily (inside the command function), so `gitmem recall` pays neither for the other commands'
click options nor for reflection, pygit2 or llama.cpp at start-up.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import click

from gitmem import __version__
from gitmem.cli import COMMAND_MODULES
from gitmem.cli.output import set_cwd


class _Commands(click.Group):
    """A group whose commands are imported when named (click's documented lazy-loading pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(cmd_name)
        if module is None:
            return None
        commands = importlib.import_module(f"gitmem.cli.{module}").commands
        return next(c for c in commands if c.name == cmd_name)


def all_commands() -> dict[str, click.Command]:
    """Every top-level command by name (imports every command module: docs and tests)."""
    ctx = click.Context(cli)
    return {name: cmd for name in cli.list_commands(ctx) if (cmd := cli.get_command(ctx, name)) is not None}


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="gitmem")
@click.option(
    "-C",
    "directory",
    type=click.Path(path_type=Path),
    default=None,
    help="Run as if gitmem was started in this directory (like git -C).",
)
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON (also accepted after the command).")
@click.pass_context
def cli(ctx: click.Context, directory: Path | None, as_json: bool) -> None:
    """gitmem: an assistant's memory as Markdown in git, with time-travel recall.

    \b
    Example:
      gitmem init ~/assistant && gitmem -C ~/assistant recall "what does Peter prefer?"
    """
    ctx.ensure_object(dict)
    ctx.obj["json"] = as_json  # json_option reads it: `gitmem --json recall x` == `gitmem recall x --json`
    if directory is not None and not directory.is_dir():
        from gitmem.errors import NotAWorkspace

        raise NotAWorkspace(f"{directory} is not a directory", "pass -C an existing workspace folder")
    ctx.obj["cwd"] = (directory or Path.cwd()).resolve()
    set_cwd(ctx.obj["cwd"])

