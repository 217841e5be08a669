"""`gitmem hooks install|uninstall|status`: keep the index fresh from git's post-* hooks."""

from __future__ import annotations

from typing import Any

import click

from gitmem.cli.output import cwd, emit, json_option


def _render(data: dict[str, Any]) -> str:
    lines = [f"hooks dir: {data['hooks_dir']}"]
    lines += [f"  {change}" for change in data["changed"]]
    for h in data["hooks"]:
        if h["state"] == "installed":
            state = "installed" if h["current"] else "installed (outdated: run `gitmem hooks install`)"
            if not h["interpreter_ok"]:
                state = f"installed, but its python is gone ({h['interpreter']}): run `gitmem hooks install`"
        elif h["state"] == "foreign":
            state = "foreign hook (not gitmem's; `gitmem hooks install` keeps it as .legacy)"
        else:
            state = "not installed"
        legacy = "  + legacy hook, runs first" if h["legacy"] else ""
        lines.append(f"{h['hook']:<14} {state}{legacy}")
    md = data.get("merge_driver") or {}
    if md:
        state = ("installed" if md["attributes"] and md["configured"] else
                 "configured, but .gitattributes lacks its lines" if md["configured"] else
                 "in .gitattributes, not configured in this clone (git merges memory as text)" if md["attributes"] else
                 "not installed")
        lines.append(f"{'merge driver':<14} {state}")
    return "\n".join(lines)


@click.group("hooks")
def hooks() -> None:
    """Manage the git hooks that keep the index up to date.

    post-commit, post-merge, post-rewrite and post-checkout update .memory/index.sqlite after git
    changes history. They never block or fail a git command; failures go to .memory/hook.log and
    show in `gitmem status`. Existing hooks are kept and still run.

    \b
    Example:
      gitmem hooks install
      gitmem hooks status --json
    """


@hooks.command("install")
@json_option
@click.pass_context
def install_cmd(ctx: click.Context, as_json: bool) -> None:
    """Install the hooks (idempotent; an existing hook is kept as <hook>.legacy and runs first).

    Honours core.hooksPath; hooks are shared by all worktrees of the repository.

    \b
    Example:
      gitmem -C ~/assistant hooks install
    """
    from gitmem import githooks
    from gitmem.workspace import Workspace

    report = githooks.install(Workspace.find(cwd(ctx)))
    emit(report.as_dict(), as_json, _render)


@hooks.command("uninstall")
@json_option
@click.pass_context
def uninstall_cmd(ctx: click.Context, as_json: bool) -> None:
    """Remove gitmem's hooks and restore the hooks they replaced.

    \b
    Example:
      gitmem hooks uninstall
    """
    from gitmem import githooks
    from gitmem.workspace import Workspace

    report = githooks.uninstall(Workspace.find(cwd(ctx)))
    emit(report.as_dict(), as_json, _render)


@hooks.command("status")
@json_option
@click.pass_context
def status_cmd(ctx: click.Context, as_json: bool) -> None:
    """Show, per hook: installed, foreign hook, not installed; and whether a legacy hook is kept.

    \b
    Example:
      gitmem hooks status --json
    """
    from gitmem import githooks
    from gitmem.workspace import Workspace

    ws = Workspace.find(cwd(ctx))
    data = githooks.status(ws).as_dict()
    data["last_error"] = githooks.last_hook_error(ws)
    emit(data, as_json, lambda d: _render(d) + (f"\nlast hook error: {d['last_error']}" if d["last_error"] else ""))


commands: list[click.Command] = [hooks]
