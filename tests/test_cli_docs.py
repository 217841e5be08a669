"""docs/cli.md is generated from the commands' --help (scripts/gen_cli_docs.py) and must be current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click

from gitmem.cli.app import all_commands

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gen_cli_docs.py"


def _gen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_reference_is_current() -> None:
    proc = _gen("--check")
    assert proc.returncode == 0, proc.stderr + "\nrun `python scripts/gen_cli_docs.py` and commit docs/cli.md"


def test_cli_reference_has_every_command_and_subcommand_help() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    names: list[str] = []
    for name, command in sorted(all_commands().items()):
        names.append(f"gitmem {name}")
        if isinstance(command, click.Group):
            names += [f"gitmem {name} {sub}" for sub in command.commands]
    for full in names:
        assert f"## `{full}`" in text and f"Usage: {full} " in text, full
    # The page carries the help text itself, not just the names.
    assert (all_commands()["show"].help or "").splitlines()[0] in text


def test_check_fails_when_a_help_text_changes(tmp_path: Path) -> None:
    """The check is real: a page that differs from the help (one word) is reported as stale."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_cli_docs", SCRIPT)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    stale = tmp_path / "cli.md"
    stale.write_text(gen.render().replace("Print the lines a citation names", "Print lines", 1), encoding="utf-8")
    gen.DOC = stale
    assert gen.main(["--check"]) == 1
    gen.DOC.write_text(gen.render(), encoding="utf-8")
    assert gen.main(["--check"]) == 0
