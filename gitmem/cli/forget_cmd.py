"""`gitmem forget`: remove lines from memory and from every commit of its history."""

from __future__ import annotations

import shlex
from typing import Any

import click

from gitmem.cli.output import cwd, emit, json_option


def _text(data: dict[str, Any]) -> str:
    status = data["status"]
    if status == "purged":
        lines = [f"Deleted {len(data['refs'])} backup ref(s), expired the reflogs and garbage-collected: the old "
                 "history is gone from this clone."]
        return "\n".join(lines + [f"Note: {n}" for n in data["notes"]] + [f"  {r}" for r in data["other_refs"]])
    if status == "nothing-found":
        return "Nothing in memory or its history matches; nothing was changed."
    verb = "Would forget" if status == "dry-run" else "Forgot"
    nlines = sum(ln["versions"] for ln in data["lines"])
    out = [f"{verb} {len(data['lines'])} distinct line(s) ({nlines} in all versions) in {len(data['files'])} file(s), "
           f"touching {len(data['commits'])} commit(s); {data['messages']} commit message(s) lose lines too."]
    out.append("lines:")
    out += [f"  {ln['text'].strip()[:160]}  ({ln['versions']} version{'s' if ln['versions'] != 1 else ''})"
            for ln in data["lines"][:50]]
    out.append("files: " + ", ".join(data["files"]))
    out.append("commits:")
    for c in data["commits"][:50]:
        new = f" -> {c['new'][:7]}" if c.get("new") else (" -> removed (nothing else in it)" if status != "dry-run" else "")
        out.append(f"  {c['commit'][:7]}{new} {c['subject'][:60]}  ({', '.join(c['files']) or 'message only'})")
    if len(data["commits"]) > 50:
        out.append(f"  ... and {len(data['commits']) - 50} more (see --json)")
    if status == "dry-run":
        t = data["target"]
        arg = f"--entity {shlex.quote(t['value'])}" if t["kind"] == "entity" else shlex.quote(t["value"])
        out.append(f"Nothing was changed. To forget this for good: gitmem forget {arg} --yes")
        return "\n".join(out)
    for r in data["refs"]:
        out.append(f"rewrote {r['ref']}: {str(r['old'])[:7]} -> {str(r['new'])[:7] if r['new'] else 'deleted'}")
    cites = data["citations"]
    out.append(f"citations inside memory: {cites['remapped']} remapped to the rewritten commits, {len(cites['gone'])} gone"
               + (": " + ", ".join(cites["gone"][:5]) if cites["gone"] else ""))
    out.append(f"index {'rebuilt' if data['index_rebuilt'] else 'NOT rebuilt (run `gitmem index`)'}; "
               f"{data['cache_dropped']} reflection cache answer(s) dropped.")
    out.append(f"backup: {data['backup']} keeps the old history in this clone until `gitmem forget --purge-backup`.")
    if data["remotes"]:
        out.append("The remote still holds the text. Push the rewritten history:")
        out += [f"  {r['push']}" for r in data["remotes"]]
    if data["other_refs"]:
        out.append("These refs were not rewritten and still reach the text: " + ", ".join(data["other_refs"]))
    out += [f"Note: {n}" for n in data["notes"]]
    return "\n".join(out)


@click.command("forget")
@click.argument("what", required=False)
@click.option("--entity", metavar="NAME", help="Forget every line that @mentions NAME, and its bank page.")
@click.option("--dry-run", is_flag=True, help="Only list the files, commits and lines (the default without --yes).")
@click.option("--yes", is_flag=True, help="Rewrite history for real.")
@click.option("--purge-backup", is_flag=True,
              help="Delete the backup refs of earlier forgets, expire reflogs and gc (the old history leaves this clone).")
@json_option
@click.pass_context
def forget_cmd(ctx: click.Context, what: str | None, entity: str | None, dry_run: bool, yes: bool, purge_backup: bool,
               as_json: bool) -> None:
    """Forget WHAT (a text or a CITATION) or --entity NAME: remove the matching lines from the files
    and from every commit in history, so neither `recall --as-of` nor `git log -p` shows them again.

    Without --yes it is a dry run that lists the affected files, commits and lines. With --yes the
    branches, tags and gitmem's refs are rewritten (git-filter-repo); their old values are kept
    under refs/gitmem/forget-backup/ until `gitmem forget --purge-backup`. The index is rebuilt.
    Remote-tracking refs are not rewritten: the output says what to push. A ref that got a commit
    while forget ran is left as it is (listed under `concurrent`: run the same forget again).

    \b
    Example:
      gitmem forget "bank PIN" --dry-run
      gitmem forget "bank PIN" --yes
      gitmem forget 'memory/2025-11-27.md#L12@1a2b3c4' --yes
      gitmem forget --entity Peter --yes
      gitmem forget --purge-backup
    """
    from gitmem import forget
    from gitmem.workspace import Workspace

    ws = Workspace.find(cwd(ctx))
    if purge_backup:
        if what is not None or entity is not None:
            raise click.UsageError("--purge-backup takes no TEXT or --entity")
        emit(forget.purge_backup(ws).as_dict(), as_json, _text)
        return
    target = forget.target_for(ws, what, entity)
    report = forget.forget(ws, target, dry_run=dry_run or not yes)
    emit(report.as_dict(), as_json, _text)


commands: list[click.Command] = [forget_cmd]
