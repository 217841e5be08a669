"""The agents' ways in: `gitmem retain` (write one fact) and `gitmem mcp` (the MCP server)."""

from __future__ import annotations

from typing import Any

import click

from gitmem.cli.output import cwd, emit, json_option


def _retain_text(d: dict[str, Any]) -> str:
    where = "committed" if d["committed"] else "written, not committed"
    lines = [f"note: {n}" for n in d["notes"]]
    lines.append(f"retained ({where}): {d['bullet']}")
    lines.append(f"  {d['source']}")
    return "\n".join(lines)


@click.command("retain")
@click.argument("bullet")
@click.option("--date", "day", metavar="DAY",
              help="The daily log to append to, YYYY-MM-DD (default: today, local time).")
@click.option("--no-commit", is_flag=True, help="Only append to the file; do not commit.")
@json_option
@click.pass_context
def retain_command(ctx: click.Context, bullet: str, day: str | None, no_commit: bool, as_json: bool) -> None:
    """Append one Retain BULLET to memory/<day>.md and commit only that file.

    BULLET is one line in the Retain grammar: a kind letter -- W (world), B (experience, first
    person), O (opinion, optional confidence c=0..1) or S (observation) -- then the fact, with
    @Name mentions; or an alias, `alias: @Robert = Bob, Bobby` (other names of an entity: recall
    expands a question that uses one). An invalid bullet is refused and nothing is written. Your other staged
    changes are left alone; nothing is committed while a merge or rebase is in progress.

    \b
    Example:
      gitmem retain "W @Peter: Moved to Lisbon (Alfama) on 2025-11-20."
      gitmem retain "O(c=0.8) @Peter: Prefers concise replies on WhatsApp." --json
      gitmem retain "B: I rotated the Castle's backup disk." --date 2025-11-27 --no-commit
      gitmem retain "alias: @Robert = Bob, Bobby"
    """
    from gitmem.retain import retain
    from gitmem.workspace import Workspace

    data = retain(Workspace.find(cwd(ctx)), bullet, day=day, commit=not no_commit)
    emit(data, as_json, _retain_text)


@click.command("mcp")
@click.pass_context
def mcp_command(ctx: click.Context) -> None:
    """Run the MCP server (stdio) with the tools recall, about, opinions, changes, why, core, retain.

    Each tool returns the same JSON as the matching command's --json. Needs the `mcp` extra:
    pip install 'gitmem[mcp]'.

    \b
    Example (an MCP client's server entry):
      {"command": "gitmem", "args": ["-C", "/home/me/assistant", "mcp"]}
    """
    from gitmem.mcp_server import serve
    from gitmem.workspace import Workspace

    serve(Workspace.find(cwd(ctx)))


commands: list[click.Command] = [retain_command, mcp_command]
