"""The click group: every command module is registered here.

Command modules import the library lazily (inside the command function) so `gitmem recall` does
not pay for reflection, pygit2 or llama.cpp at start-up.
"""

from __future__ import annotations

from pathlib import Path

import click

from gitmem import __version__
from gitmem.cli import agent_cmd, config_cmd, hooks_cmd, index_cmd, init_cmd, lint_cmd, recall_cmd, reflect_cmd
from gitmem.cli.output import set_cwd


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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


for _module in (init_cmd, config_cmd, lint_cmd, index_cmd, recall_cmd, hooks_cmd, reflect_cmd, agent_cmd):
    for _command in _module.commands:
        cli.add_command(_command)
