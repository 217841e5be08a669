"""`gitmem index` and `gitmem status`."""

from __future__ import annotations

import sys
from typing import Any

import click

from gitmem.cli.output import cwd, emit, json_option


@click.command("index")
@click.option("--rebuild", is_flag=True, help="Drop the index and rebuild it from the whole history.")
@click.option("--wait", type=float, default=10.0, show_default=True,
              help="Seconds to wait for another indexer to finish.")
@click.option("--vectors", is_flag=True, help="Also embed the chunk versions that have no vector yet, for semantic recall"
              " (current ones first, then history; resumable: Ctrl-C keeps what is done). Needs the embed extra.")
@click.option("--vectors-limit", type=click.IntRange(1), default=None, metavar="N",
              help="With --vectors: embed at most N chunk versions this time.")
@json_option
@click.pass_context
def index_command(ctx: click.Context, rebuild: bool, wait: float, vectors: bool, vectors_limit: int | None,
                  as_json: bool) -> None:
    """Index the commits not yet indexed on the current branch's first-parent history.

    \b
    Example:
      gitmem index            # catch up with HEAD
      gitmem index --rebuild  # start over from the first commit
      gitmem index --vectors  # and embed what has no vector yet (semantic recall)
    """
    from gitmem.index.indexer import update
    from gitmem.workspace import Workspace

    ws = Workspace.find(cwd(ctx))
    show_bar = sys.stderr.isatty() and not as_json
    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = click.progressbar(length=max(total, 1), label="indexing", file=sys.stderr)
            bar.__enter__()
        bar.update(1)

    try:
        result = update(ws, rebuild=rebuild, wait=wait, progress=progress if show_bar else None)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    data = {
        "indexed": result.tip,
        "head": result.head,
        "commits": result.commits,
        "added": result.added,
        "closed": result.closed,
        "rolled_back": result.rolled_back,
        "rebuilt": result.rebuilt,
        "shallow": result.shallow,
        "notes": result.notes,
        "problems": result.problems,
        "vectors": _embed(ws, wait, vectors_limit, quiet=as_json) if vectors else None,
    }

    def text(d: dict[str, Any]) -> str:
        lines = [f"note: {n}" for n in d["notes"]]
        lines += [f"skipped: {p['path']}: {p['message']}" for p in d["problems"]]
        tip = (d["indexed"] or "nothing")[:12]
        lines.append(
            f"indexed {d['commits']} commit(s): {d['added']} chunk version(s) added, "
            f"{d['closed']} closed; index at {tip}"
        )
        v = d["vectors"]
        if v is not None:
            lines.append(f"vectors: {v['linked']} chunk version(s) given a vector ({v['embedded']} new text(s) embedded)"
                         f" in {v['seconds']:.1f} s; {v['left']} without one"
                         + (": run `gitmem index --vectors` again" if v["left"] else ""))
        return "\n".join(lines)

    emit(data, as_json, text)


def _embed(ws: Any, wait: float, limit: int | None, quiet: bool) -> dict[str, Any]:
    """Fill the vectors, with a progress line on stderr every few seconds (not under --json)."""
    import time

    from gitmem.recall.semantic import fill_vectors

    t0 = last = time.monotonic()

    def progress(done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if not quiet and (now - last >= 2.0 or done == total):
            last = now
            click.echo(f"vectors: {done}/{total} chunk version(s) embedded (current first),"
                       f" {done / max(now - t0, 1e-9):.0f} per second", err=True)

    return fill_vectors(ws, wait=wait, progress=progress, limit=limit)._asdict()


@click.command("status")
@json_option
@click.pass_context
def status_command(ctx: click.Context, as_json: bool) -> None:
    """Show what the index reflects: indexed commit, HEAD, lag, counts, vectors, uncommitted files.

    \b
    Example:
      gitmem status --json
    """
    from gitmem.githooks import last_hook_error
    from gitmem.index.status import workspace_status
    from gitmem.recall.warm import missing_extra
    from gitmem.workspace import Workspace

    ws = Workspace.find(cwd(ctx))
    data = workspace_status(ws, last_hook_error(ws), missing_extra())

    def text(d: dict[str, Any]) -> str:
        c = d["counts"]
        lag = {None: "history rewritten; next `gitmem index` rolls back and catches up", 0: "up to date"}.get(
            d["behind"], f"{d['behind']} commit(s) behind; run `gitmem index`"
        )
        lines = [
            f"workspace: {d['workspace']} (branch {d['branch'] or 'detached'})",
            f"HEAD:      {(d['head'] or 'no commits')[:12]}",
            f"indexed:   {(d['indexed'] or 'nothing')[:12]} ({lag})",
            f"index:     {c['commits']} commits, {c['chunks_current']} current chunks "
            f"({c['facts_current']} facts), {c['chunks_total']} versions, {c['entities']} entities",
        ]
        v = d["vectors"]
        todo = ("" if not v["chunks_missing"] else
                "; run `gitmem index --vectors`" if v["extra_installed"] else f"; {v['extra_missing']}")
        lines.append(f"vectors:   {v['texts_embedded']} of {v['texts_total']} distinct current texts embedded"
                     f" (embed extra {'installed' if v['extra_installed'] else 'not installed'}{todo})")
        if d["shallow"]:
            lines.append("shallow:   yes (history before the shallow boundary is not indexed)")
        if d["uncommitted"]:
            lines.append("uncommitted Markdown: " + ", ".join(d["uncommitted"]))
        for p in d["problems"]:
            lines.append(f"skipped:   {p['path']}: {p['message']}")
        if d["recovered"]:
            lines.append(f"note: {d['recovered']}")
        if d["last_hook_error"]:
            lines.append(f"last hook error: {d['last_hook_error']} (see .memory/hook.log)")
        return "\n".join(lines)

    emit(data, as_json, text)


commands: list[click.Command] = [index_command, status_command]
