"""Shared CLI plumbing: the --json flag, printing data, and turning errors into exit codes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from gitmem.errors import GitmemError

F = TypeVar("F", bound=Callable[..., Any])

_JSON_MODE = False
_CWD: Path | None = None  # the directory the command runs in, once the group has parsed -C


def json_option(f: F) -> F:
    """Add --json to a command; JSON mode also makes errors print as JSON."""

    def _set(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
        global _JSON_MODE
        _JSON_MODE = _JSON_MODE or bool(value)
        # `gitmem --json recall x` (the group's flag, as the README shows it beside -C) counts too.
        root = ctx.find_root().obj or {}
        return bool(value) or bool(root.get("json"))

    return click.option(
        "--json", "as_json", is_flag=True, callback=_set, expose_value=True, is_eager=True,
        help="Print machine-readable JSON.",
    )(f)


def set_cwd(path: Path) -> None:
    """Remember the command's directory, for the error log of an unexpected failure."""
    global _CWD
    _CWD = path


def cwd(ctx: click.Context) -> Path:
    """The directory the command runs in (honours -C)."""
    root = ctx.find_root()
    obj = root.obj or {}
    return obj.get("cwd") or Path.cwd()


def to_json(data: Any) -> str:
    import json  # here, not at the top: see recall/render.py

    return json.dumps(data, ensure_ascii=False, indent=2, default=str)


def emit(data: Any, as_json: bool, text: Callable[[Any], str] | str | None = None) -> None:
    """Print `data` as JSON, or as text rendered by `text` (a callable or a ready string)."""
    if as_json:
        click.echo(to_json(data))
    elif callable(text):
        rendered = text(data)
        if rendered:
            click.echo(clean(rendered))
    elif text is not None:
        click.echo(clean(text))
    else:
        click.echo(to_json(data))


def _dash_hint(exc: click.ClickException) -> str | None:
    """Text that starts with "-" (`retain '- W @P: x'`, `config recall.k -5`) reads as an option:
    say how to pass it as text."""
    if isinstance(exc, click.NoSuchOption) and (" " in exc.option_name or exc.option_name[1:2].isdigit()):
        where = exc.ctx.command_path if exc.ctx is not None else "gitmem"
        return f"text that starts with '-' is read as an option: put it after --, e.g. {where} -- '- W @Peter: ...'"
    return None


# Terminal control characters (C0 but tab and newline, DEL, C1): memory text is untrusted, and an
# ESC sequence in a bullet could rewrite what the user's terminal shows. Text output escapes them.
_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]}


def clean(text: str) -> str:
    """`text` with terminal control characters shown as \\xNN (for text output, not JSON)."""
    return text.translate(_CONTROL)


def _print_error(message: str, hint: str | None, kind: str) -> None:
    if _JSON_MODE:
        import json

        click.echo(json.dumps({"error": message, "hint": hint, "type": kind}, ensure_ascii=False))
    else:
        click.echo(f"Error: {clean(message)}", err=True)
        if hint:
            click.echo(f"Hint: {clean(hint)}", err=True)


def run_guarded(group: click.Group, argv: list[str] | None) -> int:
    """Invoke the click group; map GitmemError to exit 1, click usage errors to exit 2, and
    anything else to a one-line exit 1 (gitmem/crash.py): no traceback ever reaches a user."""
    global _JSON_MODE, _CWD
    # Per invocation (in-process callers run many commands). Seeded from argv so errors raised
    # before click parses --json (e.g. a bad -C) are JSON too.
    _JSON_MODE = "--json" in (argv if argv is not None else sys.argv[1:])
    _CWD = None
    try:
        # Without standalone mode click returns ctx.exit(N)'s code instead of exiting.
        code = group.main(args=argv, prog_name="gitmem", standalone_mode=False)
        return code if isinstance(code, int) else 0
    except GitmemError as exc:
        _print_error(exc.message, exc.hint, type(exc).__name__)
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 1
    except click.ClickException as exc:
        hint = _dash_hint(exc)
        if _JSON_MODE:
            if hint is None:
                ctx = getattr(exc, "ctx", None)
                hint = f"see `{ctx.command_path} --help`" if ctx is not None else "see `gitmem --help`"
            _print_error(exc.format_message(), hint, "UsageError")
        else:
            exc.show()
            if hint:
                click.echo(f"Hint: {hint}", err=True)
        return exc.exit_code
    except BrokenPipeError:  # `gitmem recall ... | head`
        sys.stderr.close()
        return 0
    except Exception as exc:
        from gitmem import crash

        err = crash.as_error(exc, crash.find_root(_CWD), " ".join(argv if argv is not None else sys.argv[1:]))
        _print_error(err.message, err.hint, type(err).__name__)
        return 1
