"""`gitmem config`: show or change a setting in `.gitmem.toml`, keeping the file's comments."""

from __future__ import annotations

from typing import Any

import click

from gitmem.cli.output import cwd, emit, json_option


def _text(data: dict[str, Any]) -> str:
    lines = [f"{key} = {value!r}" for key, value in data["settings"].items()]
    if data["changed"]:
        lines.append(f"(saved to {data['path']})")
    return "\n".join(lines)


@click.command("config")
@click.argument("key", required=False)
@click.argument("value", required=False)
@json_option
@click.pass_context
def config_command(ctx: click.Context, key: str | None, value: str | None, as_json: bool) -> None:
    """Show the workspace's settings, one setting (KEY), or set KEY to VALUE in .gitmem.toml.

    Setting a value edits the file in place: comments, ordering and keys gitmem does not know
    are kept. Integers are checked (e.g. recall.k must be at least 1).

    \b
    Example:
      gitmem config
      gitmem config recall.k 20
      gitmem config reflect.model ~/models/qwen2.5-1.5b-instruct-q4_k_m.gguf
    """
    from gitmem.config import config_path, flat, known_settings, load_config, set_value
    from gitmem.errors import GitmemError
    from gitmem.workspace import Workspace

    ws = Workspace.find(cwd(ctx))
    known = known_settings()
    if key is not None and key not in known:
        raise GitmemError(f"unknown setting {key!r}", f"use one of: {', '.join(known)}")
    cfg = set_value(ws, key, value) if key is not None and value is not None else load_config(ws)
    current = flat(cfg)
    data = {
        "path": str(config_path(ws)),
        "settings": current if key is None else {key: current[key]},
        "changed": key if value is not None else None,
    }
    emit(data, as_json, _text)


commands: list[click.Command] = [config_command]
