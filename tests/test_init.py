"""`gitmem init`: layout from templates, idempotence, and never losing a byte of the user's files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from gitmem.cli import cli
from gitmem.cli.output import run_guarded
from gitmem.errors import GitmemError
from gitmem.scaffold import init_workspace, layout_files
from gitrepo import GitRepo

LAYOUT = [
    ".gitignore", ".gitmem.toml", "bank/entities/.gitkeep", "bank/experience.md", "bank/opinions.md",
    "bank/world.md", "memory.md", "memory/.gitkeep",
]


def snapshot(root: Path) -> dict[str, str]:
    """sha256 of every file outside .git (symlinks by target), keyed by relative path."""
    out: dict[str, str] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith(".git/"):
            continue
        if p.is_symlink():
            out[rel] = "link:" + str(p.readlink())
        elif p.is_file():
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_layout_comes_from_templates() -> None:
    assert [rel for rel, _ in layout_files()] == LAYOUT


def test_init_empty_folder(tmp_path: Path) -> None:
    ws = tmp_path / "new" / "assistant"
    report = init_workspace(ws, install_hooks=False)
    assert report.git_initialized and report.root == ws.resolve()
    assert sorted(report.created) == LAYOUT and report.skipped == [] and report.updated == []
    repo = GitRepo(ws)
    assert repo.git("rev-parse", "--show-toplevel") == str(ws.resolve())
    assert repo.git("rev-list", "--all") == ""  # nothing committed
    assert repo.git("diff", "--cached", "--name-only") == ""  # nothing staged
    assert ".memory/" in (ws / ".gitignore").read_text().splitlines()
    repo.git("check-ignore", "-q", ".memory/index.sqlite")
    assert (ws / "memory").is_dir() and (ws / "bank" / "entities").is_dir()
    assert "[reflect]" in (ws / ".gitmem.toml").read_text()
    assert not (ws / ".git" / "hooks" / "post-commit").exists()


def test_init_existing_repo_loses_nothing(repo: GitRepo) -> None:
    user_memory = "# My memory\n\n- @Peter: likes tea.\n"
    user_ignore = "*.swp\nnode_modules/\n# no trailing newline next"
    repo.commit("notes", date="2025-10-01", files={
        "memory.md": user_memory, ".gitignore": user_ignore, "memory/2025-10-01.md": "# day\n",
        "SOUL.md": "be kind\n", "bank/world.md": "mine\n",
    })
    repo.write("scratch.md", "untracked \u00e9 bytes\r\n")
    repo.write("memory/2025-10-02.md", "draft\n")  # untracked log
    repo.write("bank/opinions.md", b"\x00\xffbinary-ish")
    (repo.path / "link.md").symlink_to("SOUL.md")
    head, staged = repo.head(), repo.git("ls-files", "-s")
    before = snapshot(repo.path)

    report = init_workspace(repo.path, install_hooks=False)

    after = snapshot(repo.path)
    assert not report.git_initialized
    changed = {k for k in before if after.get(k) != before[k]}
    assert changed == {".gitignore"}
    ignore = (repo.path / ".gitignore").read_text()
    assert ignore == user_ignore + "\n.memory/\n"  # appended, the user's bytes untouched
    assert set(after) - set(before) == {".gitmem.toml", "bank/experience.md", "bank/entities/.gitkeep"}
    skipped = dict(report.skipped)
    assert "already exists" in skipped["memory.md"] and "already exists" in skipped["bank/world.md"]
    assert skipped["memory/.gitkeep"] == "folder already has files"
    assert report.updated == [(".gitignore", "appended .memory/")]
    assert repo.head() == head and repo.git("ls-files", "-s") == staged  # no commit, nothing staged


def test_second_run_skips_everything(tmp_path: Path) -> None:
    init_workspace(tmp_path, install_hooks=False)
    before = snapshot(tmp_path)
    again = init_workspace(tmp_path, install_hooks=False)
    assert again.created == [] and again.updated == [] and not again.git_initialized
    assert sorted(p for p, _ in again.skipped) == LAYOUT
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("line", [".memory", "/.memory/", ".memory/"])
def test_existing_ignore_rule_is_respected(repo: GitRepo, line: str) -> None:
    repo.write(".gitignore", f"dist/\n{line}\n")
    report = init_workspace(repo.path, install_hooks=False)
    assert (repo.path / ".gitignore").read_text() == f"dist/\n{line}\n"
    assert (".gitignore", "already ignores .memory/") in report.skipped


def test_user_file_where_a_folder_belongs_is_reported(repo: GitRepo) -> None:
    repo.write("bank", "I am a file\n")
    report = init_workspace(repo.path, install_hooks=False)
    assert (repo.path / "bank").read_text() == "I am a file\n"
    reasons = dict(report.skipped)
    assert reasons["bank/world.md"] == "bank exists and is not a folder"
    assert "memory.md" in report.created


def test_subfolder_of_a_repo_is_refused(repo: GitRepo) -> None:
    repo.commit("x", files={"notes/a.md": "a\n"})
    with pytest.raises(GitmemError) as err:
        init_workspace(repo.path / "notes", install_hooks=False)
    assert "top level" in err.value.message and err.value.hint and "gitmem init" in err.value.hint
    assert sorted(p.name for p in (repo.path / "notes").iterdir()) == ["a.md"]


def test_hooks_installed_when_asked(tmp_path: Path) -> None:
    pytest.importorskip("gitmem.githooks")
    report = init_workspace(tmp_path)
    assert report.hooks is not None
    assert (tmp_path / ".git" / "hooks" / "post-commit").is_file()
    assert init_workspace(tmp_path).created == []


def test_cli_init_json_and_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "ws"
    assert run_guarded(cli, ["-C", str(tmp_path), "init", "ws", "--no-hooks", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["git_initialized"] is True and sorted(data["created"]) == LAYOUT and data["hooks"] is None
    assert (target / "memory.md").is_file()
    assert run_guarded(cli, ["init", str(target), "--no-hooks"]) == 0
    text = capsys.readouterr().out
    assert "skipped  memory.md (already exists" in text and "created" not in text


def test_cli_init_on_a_file_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # output._JSON_MODE is process-global and stays set after an earlier --json invocation in-process.
    monkeypatch.setattr("gitmem.cli.output._JSON_MODE", False)
    (tmp_path / "f").write_text("x")
    assert run_guarded(cli, ["init", str(tmp_path / "f"), "--no-hooks"]) == 1
    assert "not a folder" in capsys.readouterr().err
