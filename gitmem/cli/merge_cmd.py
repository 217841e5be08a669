"""`gitmem merge-driver %O %A %B %P`: the git merge driver (run by git, not by people)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("merge-driver")
@click.argument("base", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("ours", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("theirs", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("path")
def merge_driver(base: Path, ours: Path, theirs: Path, path: str) -> None:
    """Merge one memory file for git: BASE, OURS and THEIRS are git's %O %A %B, PATH is %P.

    Writes the result into OURS; exits 0 when clean, 1 when conflict markers were left (git then
    reports an ordinary conflict). Installed by `gitmem init` and `gitmem hooks install` through
    .gitattributes and this clone's merge.gitmem.driver config.

    \b
    Example (what git runs):
      gitmem merge-driver .merge_file_O .merge_file_A .merge_file_B memory/2025-11-27.md
    """
    from gitmem.merge_driver import merge_paths

    # git runs merge drivers at the top of the work tree.
    raise click.exceptions.Exit(merge_paths(Path.cwd(), base, ours, theirs, path))


commands: list[click.Command] = [merge_driver]
