"""The CLI's start-up work: a read command's `git status` starts before click is imported."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem import cli as cli_pkg
from gitmem.cli import recall_cmd, views_cmd
from gitmem.recall.search import Session
from gitmem.timeline import git
from gitmem.workspace import Workspace
from gitrepo import GitRepo


def test_session_commands_are_the_read_commands() -> None:
    assert cli_pkg.SESSION_COMMANDS == {c.name for c in [*recall_cmd.commands, *views_cmd.commands]}


def test_command_modules_name_every_command_where_it_is_defined() -> None:
    # The group imports only the module COMMAND_MODULES names: every command of every module
    # under gitmem/cli/ must be listed, with its own module, and nothing else.
    found: dict[str, str] = {}
    for path in sorted((Path(cli_pkg.__file__).parent).glob("*_cmd.py")):
        module = importlib.import_module(f"gitmem.cli.{path.stem}")
        found |= {c.name: path.stem for c in module.commands if c.name}
    assert cli_pkg.COMMAND_MODULES == found


def test_a_read_command_imports_no_other_command_module(tmp_path: Path) -> None:
    code = ("import sys\nfrom gitmem.cli import main\ntry:\n    main(['-C', sys.argv[1], 'recall', 'x', '--json'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('gitmem.cli.') and m.endswith('_cmd')), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert proc.stderr.strip().splitlines()[-1] == "['gitmem.cli.recall_cmd']"


@pytest.fixture()
def repo(tmp_path: Path) -> GitRepo:
    r = GitRepo.init(tmp_path / "ws")
    r.commit("one", files={"memory.md": "# Memory\n\n- W @Peter: Lives in Lisbon.\n"})
    (r.path / "sub").mkdir()
    r.write("memory/2025-11-02.md", "- B @Peter: Uncommitted note about Lisbon.\n")
    return r


@pytest.mark.parametrize("args", [["-C", "{ws}/sub", "recall", "x"], ["-C{ws}", "about", "Peter"]])
def test_prestarted_status_is_the_one_the_session_uses(repo: GitRepo, args: list[str]) -> None:
    cli_pkg._prestart_status([a.format(ws=repo.path) for a in args])
    early = git.Status._early
    assert early is not None
    with Session(Workspace.find(repo.path)) as s:
        assert s._status is early[1]
        assert git.Status._early is None
        assert ("M", "memory/2025-11-02.md") in s._status.result()
        assert "memory/2025-11-02.md" in s.overlay()


def test_prestart_elsewhere_is_not_taken(repo: GitRepo, tmp_path: Path) -> None:
    other = GitRepo.init(tmp_path / "other")
    other.commit("x", files={"memory.md": "- W @Ann: Other.\n"})
    cli_pkg._prestart_status(["-C", str(other.path), "recall", "x"])
    early = git.Status._early
    with Session(Workspace.find(repo.path)) as s:
        assert early is not None and s._status is not early[1]
        assert "memory/2025-11-02.md" in s.overlay()


def test_write_commands_start_nothing(repo: GitRepo) -> None:
    cli_pkg._prestart_status(["-C", str(repo.path), "index"])
    assert git.Status._early is None


def test_recall_cli_sees_uncommitted_edit_through_prestarted_status(repo: GitRepo) -> None:
    out = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(repo.path / "sub"), "recall", "Uncommitted"],
                         capture_output=True, text=True, check=True).stdout
    assert "Uncommitted note about Lisbon" in out and "uncommitted" in out.lower()
