"""The read commands besides recall: about, opinions, why, changes, core, show (their session and
printing are recall_cmd.py's)."""

from __future__ import annotations

from typing import Any

import click

from gitmem.cli.output import clean, cwd, emit, json_option
from gitmem.cli.recall_cmd import FORMATS, print_answer, open_session


@click.command("about")
@click.argument("entity")
@click.option("--as-of", "as_of", metavar="WHEN", help="As memory stood at WHEN.")
@click.option("-k", "--k", "k", type=click.IntRange(1, 1000), default=25, show_default=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@json_option
@click.pass_context
def about_command(ctx: click.Context, entity: str, as_of: str | None, k: int, fmt: str, as_json: bool) -> None:
    """Tell me about ENTITY: its bank/entities page plus the facts that mention it, newest first.

    \b
    Example:
      gitmem about Peter
      gitmem about "The Castle" --as-of 2025-11-30 --json
    """
    from gitmem.recall.views import about

    with open_session(ctx) as s:
        data = about(s, entity, as_of=as_of, k=k)
    if as_json or fmt in ("json", "jsonl"):
        print_answer(data, "json" if as_json else fmt, as_json)
        return
    from gitmem.recall.render import render

    page = data.page
    head = f"# {data.entity}\n" + (f"{page['text']}\n(source: {page['source']})\n" if page else "(no entity page)\n")
    click.echo(clean(head + render(data, fmt)))


@click.command("opinions")
@click.option("--entity", metavar="NAME", help="Only opinions mentioning this entity.")
@click.option("--min-confidence", type=click.FloatRange(0, 1), default=0.0, show_default=True)
@click.option("--as-of", "as_of", metavar="WHEN")
@click.option("--history", is_flag=True, help="Show each opinion's confidence trajectory over time.")
@json_option
@click.pass_context
def opinions_command(ctx: click.Context, entity: str | None, min_confidence: float, as_of: str | None,
                     history: bool, as_json: bool) -> None:
    """Opinions with confidence and evidence.

    \b
    Example:
      gitmem opinions --entity Peter --min-confidence 0.5
      gitmem opinions --history --json
    """
    from gitmem.recall.views import opinions
    from gitmem.reflect.state import opinion_history

    with open_session(ctx) as s:
        data = opinions(s, entity=entity, min_confidence=min_confidence, as_of=as_of,
                        history=opinion_history if history else None)

    def text(d: dict[str, Any]) -> str:
        lines = [f"note: {n}" for n in d["notes"]]
        if not d["opinions"]:
            lines.append("no opinions")
        for o in d["opinions"]:
            conf = "?" if o["confidence"] is None else f"{o['confidence']:.2f}"
            lines.append(f"- c={conf} {o['statement']} ({o['source']})")
            for step in o.get("history", []):
                c = "?" if step["confidence"] is None else f"{step['confidence']:.2f}"
                lines.append(f"    {step['record_time'][:10] if step['record_time'] else '-'} c={c} {step['source']}")
            for step in o.get("reflections", []):
                c = "?" if step.get("confidence") is None else f"{step['confidence']:.2f}"
                lines.append(f"    reflected {str(step.get('at') or '-')[:10]} c={c} "
                             f"({step.get('delta', 0):+.2f}) {step.get('reason') or ''}")
            for ev in o.get("evidence", []):
                lines.append(f"    {ev['relation']}: {ev['content']} ({ev['source']})")
        return "\n".join(lines)

    emit(data, as_json, text)


@click.command("why")
@click.argument("target")
@json_option
@click.pass_context
def why_command(ctx: click.Context, target: str, as_json: bool) -> None:
    """git blame for a belief: where TARGET (text or result id) came from and how it changed.

    \b
    Example:
      gitmem why "Peter lives in"
      gitmem why 42 --json
    """
    from gitmem.recall.render import confidence_move
    from gitmem.recall.views import why

    with open_session(ctx) as s:
        data = why(s, target)

    def text(d: dict[str, Any]) -> str:
        lines = [f"note: {n}" for n in d["notes"]]
        prev: dict[str, Any] | None = None
        for v in d["versions"]:
            mark = "->" if v["id"] == d["match"] else "  "
            lines.append(f"{mark} {v['record_time'] or '-'}  {v['commit'][:7] if v['commit'] else '-'}  "
                         f"{v['author'] or ''}: {v['message'] or ''}")
            if prev is not None and prev["confidence"] != v["confidence"]:
                lines.append(f"     {confidence_move(prev['confidence'], v['confidence'])}")
            lines.append(f"     {v['content']} ({v['source']})")
            prev = v
            if v.get("valid_until"):
                lines.append(f"     until {v['valid_until']['time']} ({v['valid_until']['commit'][:7]})")
        for key, says in (("superseded_by", "superseded by"), ("supersedes", "replaced")):
            for link in d.get(key, []):
                r = link["result"]
                lines.append(f"   {says} ({link['reason']}), {r['record_time'] or '-'}:")
                lines.append(f"     {r['content']} ({r['source']})")
        return "\n".join(lines)

    emit(data, as_json, text)


@click.command("changes")
@click.option("--since", default="7d", show_default=True, metavar="WHEN")
@click.option("--until", default=None, metavar="WHEN")
@click.option("--by-entity", is_flag=True, help="Group the changes by entity.")
@json_option
@click.pass_context
def changes_command(ctx: click.Context, since: str, until: str | None, by_entity: bool, as_json: bool) -> None:
    """Facts added, changed and removed in a window of record time.

    \b
    Example:
      gitmem changes --since 7d
      gitmem changes --since 2025-11-01 --until 2025-11-30 --by-entity --json
    """
    from gitmem.recall.render import confidence_move
    from gitmem.recall.views import changes

    with open_session(ctx) as s:
        data = changes(s, since=since, until=until, by_entity=by_entity)

    def text(d: dict[str, Any]) -> str:
        lines = [f"note: {n}" for n in d["notes"]]
        lines.append(f"changes since {d['since']}" + (f" until {d['until']}" if d["until"] else ""))
        groups = d["by_entity"] if d.get("by_entity") else {"": d["changes"]}
        for name, items in groups.items():
            if name:
                lines.append(f"@{name}:")
            for c in items:
                prev = c.get("previous")
                # An edit of the confidence alone reads "c 0.70 → 0.20", not two lines of the same text.
                moved = (f"{confidence_move(prev['confidence'], c['confidence'])}  "
                         if prev and prev["confidence"] != c["confidence"] else "")
                lines.append(f"  {c['change']:>7}  {moved}{c['content']} ({c['source']})")
                if prev and prev["content"] != c["content"]:
                    lines.append(f"           was: {prev['content']}")
        if not d["changes"]:
            lines.append("  nothing changed")
        return "\n".join(lines)

    emit(data, as_json, text)


@click.command("core")
@click.option("--budget", type=click.IntRange(50), default=1500, show_default=True, metavar="TOKENS")
@click.option("--as-of", "as_of", metavar="WHEN")
@json_option
@click.pass_context
def core_command(ctx: click.Context, budget: int, as_of: str | None, as_json: bool) -> None:
    """memory.md plus the top current facts, packed for a prompt.

    \b
    Example:
      gitmem core --budget 800 > context.md
    """
    from gitmem.recall.views import core

    with open_session(ctx) as s:
        data = core(s, budget=budget, as_of=as_of)
    emit(data, as_json, lambda d: d["markdown"])


@click.command("show")
@click.argument("citation")
@json_option
@click.pass_context
def show_command(ctx: click.Context, citation: str, as_json: bool) -> None:
    """Print the lines a citation names, exactly as they were at its commit.

    \b
    Example:
      gitmem show 'memory/2025-11-27.md#L12-L13@1a2b3c4'
    """
    from gitmem.recall.views import show
    from gitmem.workspace import Workspace

    data = show(Workspace.find(cwd(ctx)), citation)
    emit(data, as_json, lambda d: "\n".join(f"{n:>5}  {line}" for n, line in zip(
        range(d["start"], d["end"] + 1), d["lines"])))


commands: list[click.Command] = [about_command, opinions_command, why_command, changes_command, core_command,
                                 show_command]
