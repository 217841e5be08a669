"""`gitmem lint`: report malformed Retain bullets and unreadable Markdown in the workspace."""

from __future__ import annotations

from pathlib import Path

import click

from gitmem.cli.output import cwd, emit, json_option


@click.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@json_option
@click.pass_context
def lint(ctx: click.Context, paths: tuple[Path, ...], as_json: bool) -> None:
    """Check the workspace's Markdown files for problems the index would skip or misread.

    Reports Retain bullets with an unknown kind, a bad or misplaced confidence or an unclosed
    parenthesis, bullets with no kind, files that are not UTF-8, binary or too large. Problems
    are never fatal: such bullets are still indexed as plain notes.

    PATHS are files or directories inside the workspace (default: every tracked and untracked
    *.md file, except .memory/ and .git/). Prints one `path:line: code: message` per problem.

    Exit status: 0 when there are no problems, 1 when there is at least one.

    \b
    Example:
      gitmem lint
      gitmem lint memory/2025-11-27.md --json
    """
    from gitmem.config import load_config
    from gitmem.lint import lint_workspace
    from gitmem.workspace import Workspace

    here = cwd(ctx)
    ws = Workspace.find(here)
    # Relative PATHS are relative to where the command runs (-C honoured), as in git.
    targets = [p if p.is_absolute() else here / p for p in paths]
    # The indexer's own size limit, so "too-large" here means exactly "the index skips this file".
    files, diagnostics = lint_workspace(ws.root, targets, max_bytes=load_config(ws).index.max_file_bytes)
    data = {
        "files": files,
        "ok": not diagnostics,
        "diagnostics": [{"path": d.path, "line": d.line, "code": d.code, "message": d.message} for d in diagnostics],
    }
    emit(data, as_json, lambda _: "\n".join(str(d) for d in diagnostics))
    if diagnostics:
        ctx.exit(1)


commands: list[click.Command] = [lint]
