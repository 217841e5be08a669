"""The click group: it finds each command in its module under gitmem/cli/ (COMMAND_MODULES).

Only the module of the command being run is imported, and command modules import the library
lazily (inside the command function), so `gitmem recall` pays neither for the other commands'
click options nor for reflection, pygit2 or llama.cpp at start-up.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import click
from click.core import ParameterSource

from gitmem import __version__
from gitmem.cli import COMMAND_MODULES, global_options
from gitmem.cli.output import set_cwd


class _Commands(click.Group):
    """A group whose commands are imported when named (click's documented lazy-loading pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """As click parses them, but a sole `-C DIR` is taken out of the line and given to its
        option here: click's parser tries every one-letter option as a long one first, and the
        error it builds for that try imports difflib to suggest close matches (~2.5 M instructions,
        ~0.7% of a `gitmem -C DIR recall` at 1M lines) before it reads -C as the short option. The
        value goes through the option's own conversion and checks (Parameter.process_value),
        after the eager options (--help, --version) as before. `-CDIR` or -C twice: click's way."""
        at, _ = global_options(args)
        i = at[0] if len(at) == 1 and args[at[0]] == "-C" and at[0] + 1 < len(args) else None
        if i is None:
            return super().parse_args(ctx, args)
        rest = super().parse_args(ctx, args[:i] + args[i + 2:])
        option = next(p for p in self.params if p.name == "directory")
        try:
            ctx.params["directory"] = option.process_value(ctx, args[i + 1])
        except Exception:
            if not ctx.resilient_parsing:  # shell completion: a bad value is None, as click has it
                raise
        ctx.set_parameter_source("directory", ParameterSource.COMMANDLINE)
        return rest

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

