"""`gitmem reflect` (propose bank/ updates on a review branch) and `gitmem review` (show/merge/discard)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from gitmem.cli.output import cwd, emit, json_option


@contextmanager
def _progress(enabled: bool, terminal: bool) -> Iterator[Callable[[int, int, str], None] | None]:
    """Progress on stderr, fed by the library's (done, total, label) callback: a click progress bar
    on a terminal; otherwise (cron, a log file) a plain line at every tenth of the work, so a log
    shows that a long reflection is moving and where it stopped."""
    if not enabled:
        yield None
        return
    bar: Any = None
    last_tenth = -1

    def line(done: int, total: int, label: str) -> None:
        nonlocal last_tenth
        tenth = 10 * done // max(total, 1)
        if tenth != last_tenth:
            last_tenth = tenth
            click.echo(f"reflecting: {done}/{total} {label}", err=True)

    def update(done: int, total: int, label: str) -> None:
        nonlocal bar
        if bar is None:
            bar = click.progressbar(length=total, label="reflecting", file=sys.stderr, show_pos=True)
            bar.__enter__()
        bar.length = total
        bar.label = f"reflecting: {label[:40]:<40}"
        bar.update(max(0, done - bar.pos))

    try:
        yield update if terminal else line
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)


def _change_lines(summary: dict[str, Any], *, evidence: bool) -> list[str]:
    """One line per proposed change, skipped block and rejected model output (reflect and review
    share it; review also lists each opinion's evidence)."""
    from gitmem.reflect.records import OpinionChange, read_changes

    lines: list[str] = []
    for c in read_changes(summary.get("changes", [])):
        if isinstance(c, OpinionChange) and not c.evidence:
            lines.append(f"  opinion {c.opinion[:70]}: c={c.after:.2f} (as stated in memory)")
        elif isinstance(c, OpinionChange):
            lines.append(f"  opinion {c.opinion[:70]}: {c.before:.2f} -> {c.after:.2f} ({c.delta:+.2f}, "
                         f"{len(c.evidence)} evidence)")
            if evidence:
                lines += [f"    {e.label} {e.source}" for e in c.evidence]
        else:
            lines.append(f"  {c.status:<8} {c.path}")
    lines += [f"  skipped  {sk['path']} [{sk['block']}]: {sk['reason']}" for sk in summary.get("skipped", [])]
    lines += [f"  rejected {j['item']}: {j['reason']}" for j in summary.get("rejected", [])]
    return lines


def _reflect_text(r: dict[str, Any]) -> str:
    status = r["status"]
    if status in ("nothing-new", "up-to-date"):
        return r.get("message", status)
    lines = []
    head = {"written": "Proposal written to", "unchanged": "Proposal unchanged on", "dry-run": "Dry run (no ref written) for"}
    lines.append(f"{head.get(status, status)} {r['branch']} ({(r.get('commit') or '')[:7]}), "
                 f"{r['facts']} facts through {r['through'][:7]}, model: {r.get('model') or 'none'}")
    lines += _change_lines(r, evidence=False)
    for n in r.get("notes", []):
        lines.append(f"  note: {n}")
    if r.get("diffstat"):
        lines += ["", r["diffstat"]]
    if status != "dry-run":
        lines += ["", "Next: gitmem review   (then gitmem review --merge or --discard)"]
    return "\n".join(lines)


@click.command("reflect")
@click.option("--since", metavar="WHEN", help="Read facts added after WHEN (date, 30d, rev) instead of since the last reflection.")
@click.option("--model", "model_path", metavar="PATH", help="GGUF model file (default: reflect.model, $GITMEM_MODEL, bundled SmolLM2).")
@click.option("--dry-run", is_flag=True, help="Print the proposal summary and diff stat; write no branch.")
@click.option("--no-llm", is_flag=True, help="Deterministic part only: no summaries, judgements or drafted Retain.")
@click.option("--if-needed", is_flag=True, help="Exit 0 at once when nothing is new (for cron).")
@json_option
@click.pass_context
def reflect_command(ctx: click.Context, since: str | None, model_path: str | None, dry_run: bool, no_llm: bool,
                    if_needed: bool, as_json: bool) -> None:
    """Propose bank/ page updates from the facts since the last reflection, as a commit on a
    review branch (default gitmem/reflect). Your branch, index and working tree are never touched.

    \b
    Example:
      gitmem reflect                  # then: gitmem review
      gitmem reflect --no-llm --dry-run
      gitmem reflect --if-needed      # cheap no-op when nothing is new (cron)
    """
    from gitmem.reflect.run import RunOptions, reflect
    from gitmem.workspace import Workspace

    ws = Workspace.find(cwd(ctx))
    if model_path is not None and not no_llm:
        from gitmem.reflect.model import resolve_model_path

        resolve_model_path(ws, model_path)  # a bad --model is said now, not after the facts are gathered (or never)

    def load_model() -> Any:
        from gitmem.reflect.model import CachedModel, LlamaModel

        return CachedModel.for_workspace(LlamaModel.from_workspace(ws, model_path), ws)

    with _progress(not as_json, sys.stderr.isatty()) as progress:
        result = reflect(ws, RunOptions(since=since, model=None if no_llm else load_model, dry_run=dry_run,
                                        if_needed=if_needed, progress=progress))
    emit(result, as_json, _reflect_text)


def _review_lead(s: dict[str, Any]) -> list[str]:
    """The summary a review opens with: each opinion move with its evidence text and citation,
    then one line per page change, then what was skipped or rejected."""
    from gitmem.recall.render import confidence_move
    from gitmem.reflect.records import OpinionChange, PageChange, RetainChange, listed, read_changes

    changes = read_changes(s.get("changes", []))
    moves = [c for c in changes if isinstance(c, OpinionChange)]
    others = [p for p in changes if isinstance(p, (PageChange, RetainChange))]
    lines: list[str] = []
    if moves:
        lines += ["", f"Opinions ({len(moves)})"]
    for c in moves:
        if not c.evidence:
            lines.append(f"  c {c.after:.2f} (as stated in memory)  {c.opinion}")
            continue
        lines.append(f"  {confidence_move(c.before, c.after)}  {c.opinion}")
        for e in c.evidence:
            text = " ".join(e.content.split())
            text = text if len(text) <= 160 else text[:159] + "…"
            lines.append(f"      {e.label}: \"{text}\" {e.source}")
    if others:
        lines += ["", f"Pages ({len(others)})"]
    for p in others:
        lines.append(f"  {p.status:<8} {p.path}: {listed(p, 'Retain bullet(s) appended')}")
    skipped = [f"  skipped  {sk['path']} [{sk['block']}]: {sk['reason']}" for sk in s.get("skipped", [])]
    rejected = [f"  rejected {j['item']}: {j['reason']}" for j in s.get("rejected", [])]
    if skipped or rejected:
        lines += ["", "Left out", *skipped, *rejected]
    return lines


def _review_text(r: dict[str, Any]) -> str:
    if r.get("status") == "merged":
        return f"Merged proposal {r['commit'][:7]} as {r['merge'][:7]} ({len(r['paths'])} files); the index is updated."
    if r.get("status") == "discarded":
        return (f"Discarded proposal {r['commit'][:7]}; branch {r['branch']} deleted. "
                "Reflection will not propose the same again unless new facts arrive.")
    if r.get("status") == "html":
        return f"Wrote the review of proposal {r['commit'][:7]} to {r['path']}"
    s = r.get("summary") or {}
    lines = [f"Proposal {r['commit'][:7]} on {r['branch']} (base {r['base'][:7]}, {s.get('facts', '?')} facts, "
             f"model: {s.get('model') or 'none'})"]
    for n in r.get("notes", []):
        lines.append(f"NOTE: {n}")
    lines += _review_lead(s)
    lines += ["", r["diffstat"]]
    if r.get("hidden"):
        lines.append(f"(the diff below leaves out {', '.join(r['hidden'])}: `gitmem review --full` shows it)")
    lines += ["", r.get("diff", ""), "", "Merge with `gitmem review --merge`, drop with `gitmem review --discard`."]
    return "\n".join(lines)


@click.command("review")
@click.option("--merge", "do_merge", is_flag=True, help="Merge the proposal into the current branch (git merge --no-ff).")
@click.option("--discard", "do_discard", is_flag=True,
              help="Delete the proposal branch; the same proposal is not made again unless new facts arrive.")
@click.option("--full", is_flag=True, help="Also show the diff of the state file bank/.reflect.json (hidden by default).")
@click.option("--html", "html_file", metavar="FILE",
              help="Write the review as one self-contained HTML page (evidence inline, confidence charts) to FILE "
                   "inside the workspace, or to stdout with '-'.")
@json_option
@click.pass_context
def review_command(ctx: click.Context, do_merge: bool, do_discard: bool, full: bool, html_file: str | None,
                   as_json: bool) -> None:
    """Show the pending reflection proposal (summary of opinion moves with their evidence, page
    changes, then the diff), or merge/discard it.

    \b
    Example:
      gitmem review
      gitmem review --html .memory/review.html
      gitmem review --merge
      gitmem review --discard --json
    """
    from pathlib import Path

    from gitmem.reflect import review
    from gitmem.workspace import Workspace

    if sum((do_merge, do_discard, html_file is not None)) > 1:
        raise click.UsageError("choose one of --merge, --discard and --html")
    ws = Workspace.find(cwd(ctx))
    if do_merge:
        result = review.merge(ws)
    elif do_discard:
        result = review.discard(ws)
    elif html_file == "-":
        click.echo(review.html(ws, full=full), nl=False)
        return
    elif html_file is not None:
        path = review.write_html(ws, Path(cwd(ctx)) / html_file, full=full)
        result = {"status": "html", "commit": review.show(ws, diff=False)["commit"], "path": str(path)}
    else:
        result = review.show(ws, full=full)
    emit(result, as_json, _review_text)


commands: list[click.Command] = [reflect_command, review_command]
