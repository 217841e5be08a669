"""`gitmem recall`, and what every read command shares: its session and how it prints an answer.

The other read commands (about, opinions, why, changes, core, show) are in views_cmd.py: a recall
does not build their click options (~3 M instructions of every call)."""

from __future__ import annotations

from typing import Any

import click

from gitmem.cli.output import clean, cwd, json_option

FORMATS = ("text", "json", "jsonl", "md")


def open_session(ctx: click.Context, semantic: bool | None = False) -> Any:
    """A recall session; with `semantic` (None: as recall.semantic in .gitmem.toml says), one whose
    dense hits come from the workspace's warm embedder process (started on first need)."""
    from gitmem.cli import imports_done
    from gitmem.recall.search import Session
    from gitmem.workspace import Workspace

    imports_done()
    ws, located = Workspace.find_at_head(cwd(ctx))  # one git call for the root and HEAD
    _note_if_never_initialised(ws)
    session = Session(ws, located=located)
    try:
        if semantic is None:
            from gitmem.config import load_config
            from gitmem.recall.semantic import default_for

            # Asked on the session's own connection: opening the index again cost a CLI recall ~2.4 M instructions.
            default = default_for(ws, load_config(ws).recall.semantic, session.conn)
            semantic = default.use
            if default.note:
                session.notes.append(default.note)
        if semantic:
            from gitmem.recall.warm import Client

            session.dense = Client(ws)
    except BaseException:
        session.close()
        raise
    return session


def _note_if_never_initialised(ws: Any) -> None:
    """A plain git repository works as memory (every *.md is memory), but say so: once, on stderr,
    the first time its index is made (.memory/ exists afterwards, so the note is not repeated)."""
    from gitmem.layout import WORKSPACE_MARKS

    if not any((ws.root / name).exists() for name in WORKSPACE_MARKS):
        click.echo(f"note: {ws.root} was never set up with `gitmem init`: treating every *.md in it as memory"
                   " (run `gitmem init` there for the memory layout, config and hooks)", err=True)


def print_answer(answer: Any, fmt: str, as_json: bool) -> None:
    """Print a recall or about answer (gitmem.recall.render.Rendered) in FMT."""
    from gitmem.recall.render import render

    fmt = "json" if as_json else fmt
    out = render(answer, fmt)
    click.echo(out if fmt in ("json", "jsonl") else clean(out))  # JSON escapes control characters itself


@click.command("recall")
@click.argument("query", required=False, default="")
@click.option("-k", "--k", "k", type=click.IntRange(1, 1000), default=None, help="How many results (default from config, 10).")
@click.option("--as-of", "as_of", metavar="WHEN", help="Answer from memory as it stood at WHEN (date, datetime, 30d, HEAD~3, tag, oid).")
@click.option("--since", metavar="WHEN", help="Only what entered memory after WHEN (record time).")
@click.option("--until", metavar="WHEN", help="Only what entered memory up to WHEN (record time).")
@click.option("--during", metavar="PERIOD", help="Only facts whose event time overlaps PERIOD (2025-11, 'Nov 2025', 2025-11-01..2025-11-30).")
@click.option("--kind", "kinds", multiple=True, help="world|experience|opinion|observation|note (repeatable).")
@click.option("--entity", metavar="NAME", help="Only chunks that mention this entity.")
@click.option("--include-history", is_flag=True, help="Include superseded and removed versions.")
@click.option("--budget", type=click.IntRange(0), default=None, metavar="TOKENS", help="Pack the best results into this many tokens.")
@click.option("--raw", is_flag=True, help="Pass QUERY to SQLite FTS5 unchanged (FTS5 syntax).")
@click.option("--semantic/--no-semantic", default=None,
              help="Fuse in the bundled embedding model's ranking (needs the embed extra and `gitmem index --vectors`)."
                   " Default: recall.semantic in .gitmem.toml (auto: on when the index has vectors).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@json_option
@click.pass_context
def recall_command(ctx: click.Context, query: str, k: int | None, as_of: str | None, since: str | None,
                   until: str | None, during: str | None, kinds: tuple[str, ...], entity: str | None,
                   include_history: bool, budget: int | None, raw: bool, semantic: bool | None, fmt: str,
                   as_json: bool) -> None:
    """Search memory: lexical, temporal (--as-of), by entity, kind or event time.

    \b
    Example:
      gitmem recall "what does Peter prefer?"
      gitmem recall Peter --as-of 2025-11-30 --format md --budget 500
      gitmem recall --entity Peter --during "Nov 2025" --kind world
      gitmem recall "what are Peter's hobbies?" --semantic
    """
    from gitmem.recall.search import options_for

    with open_session(ctx, semantic) as s:
        opts = options_for(s.ws, k=k, budget=budget, as_of=as_of, since=since, until=until, during=during,
                           kinds=kinds, entity=entity, include_history=include_history, raw=raw,
                           semantic=s.dense is not None)
        answer = s.search(query, opts)
    print_answer(answer, fmt, as_json)


commands: list[click.Command] = [recall_command]
