"""`gitmem init` and `gitmem demo`: create a workspace, or a ready-made one to try gitmem on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gitmem.cli.output import cwd, emit, json_option


def _init_text(data: dict[str, Any]) -> str:
    lines = [f"{'Initialized git repository and m' if data['git_initialized'] else 'M'}emory workspace in {data['root']}"]
    lines += [f"  created  {p}" for p in data["created"]]
    lines += [f"  updated  {u['path']} ({u['change']})" for u in data["updated"]]
    lines += [f"  skipped  {s['path']} ({s['reason']})" for s in data["skipped"]]
    hooks = data["hooks"]
    if isinstance(hooks, dict):
        changed = hooks.get("changed") or ["already installed"]
        lines += [f"  hooks    {c}" for c in changed]
    lines.append("Nothing was committed. Next: review with `git status`, then commit when you are ready.")
    return "\n".join(lines)


@click.command("init")
@click.argument("directory", required=False, type=click.Path(path_type=Path))
@click.option("--no-hooks", is_flag=True, help="Do not install the git hooks that keep the index fresh.")
@json_option
@click.pass_context
def init(ctx: click.Context, directory: Path | None, no_hooks: bool, as_json: bool) -> None:
    """Turn DIR (default: the current folder) into a memory workspace.

    Runs `git init` if needed, adds memory.md, memory/, bank/ and a commented .gitmem.toml, makes git
    ignore .memory/ and installs the hooks. Existing files are never overwritten: they are listed as
    skipped. Safe to run again. Nothing is committed.

    \b
    Example:
      gitmem init ~/assistant
      gitmem init --no-hooks --json .
    """
    from gitmem.scaffold import init_workspace

    base = cwd(ctx)
    target = base if directory is None else (directory if directory.is_absolute() else base / directory)
    report = init_workspace(target, install_hooks=not no_hooks)
    emit(report.as_dict(), as_json, _init_text)


def _demo_text(data: dict[str, Any]) -> str:
    f = data["facts"]
    return "\n".join([
        f"Built the demo workspace in {data['root']}: {data['commits']} commits, "
        f"{data['first_day']} to {data['last_day']}, HEAD {data['head'][:12]}.",
        "Try:",
        f"  cd {data['root']}",
        "  gitmem recall \"where does Peter live\"",
        f"  gitmem recall \"where does Peter live\" --as-of {f['ask_before_move']}   # {f['city_before']}",
        f"  gitmem recall {f['old_project']} --as-of {f['ask_before_rename']}",
        f"  gitmem recall \"password hint\" --as-of {f['ask_before_move']}   # deleted on {f['delete_date']}, still in history",
        "  gitmem forget \"admin password hint\"          # dry run; add --yes to remove it from every commit",
    ])


@click.command("demo")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Write into DIR even if it is not empty (never into a git repo).")
@json_option
@click.pass_context
def demo(ctx: click.Context, directory: Path, force: bool, as_json: bool) -> None:
    """Build a demo memory workspace in DIR: six weeks of an assistant's logs (Nov 3 – Dec 12, 2025)
    with facts that change over time, to try recall and --as-of on.

    The history is reproducible: the same gitmem version builds the same commit ids.

    \b
    Example:
      gitmem demo /tmp/gitmem-demo
      gitmem -C /tmp/gitmem-demo recall "where does Peter live" --as-of 2025-11-15
    """
    from gitmem.demo import build_demo

    target = directory if directory.is_absolute() else cwd(ctx) / directory
    info = build_demo(target, force=force)
    emit(info.as_dict(), as_json, _demo_text)


commands: list[click.Command] = [init, demo]
