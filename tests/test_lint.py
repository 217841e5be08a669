"""`gitmem lint` on a real workspace repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.cli import cli, main
from gitmem.lint import lint_workspace, workspace_markdown
from gitrepo import GitRepo

GOOD = "# 2025-11-27\n## Retain\n- W @Peter: fine\n"
BAD = "# 2025-11-28\n\n## Retain\n- W ok\n- X @Peter: unknown\n- O(c=1.7) too sure\n"


def run(repo: GitRepo, *args: str):
    return CliRunner().invoke(cli, ["-C", str(repo.path), "lint", *args])


def make(repo: GitRepo) -> None:
    repo.commit("logs", files={"memory/2025-11-27.md": GOOD, "memory/2025-11-28.md": BAD, "README.txt": "- X no\n"})
    repo.write("notes/draft.md", "## Retain\n- no kind\n")  # untracked files are linted too
    repo.write(".memory/cache.md", "## Retain\n- X ignored\n")  # derived data is not
    repo.write(".gitignore", "ignored.md\n")
    repo.write("ignored.md", "## Retain\n- X ignored too\n")


def test_lint_reports_each_problem_and_exits_1(repo: GitRepo) -> None:
    make(repo)
    result = run(repo)
    assert result.exit_code == 1, result.output
    assert result.output.splitlines() == [
        "memory/2025-11-28.md:5: retain-unknown-kind: unknown kind 'X': use W (world), B (experience), O (opinion) or S (observation)",
        "memory/2025-11-28.md:6: retain-bad-confidence: confidence c=1.7 is outside 0.0..1.0",
        "notes/draft.md:2: retain-missing-kind: Retain bullet has no kind: start it with W (world), B (experience), "
        "O (opinion) or S (observation), e.g. `- W @Peter: ...`",
    ]


def test_lint_json(repo: GitRepo) -> None:
    make(repo)
    result = run(repo, "--json")
    assert result.exit_code == 1
    out = json.loads(result.output)
    assert out["ok"] is False and out["files"] >= 2
    data = out["diagnostics"]
    assert [(d["path"], d["line"], d["code"]) for d in data] == [
        ("memory/2025-11-28.md", 5, "retain-unknown-kind"),
        ("memory/2025-11-28.md", 6, "retain-bad-confidence"),
        ("notes/draft.md", 2, "retain-missing-kind"),
    ]
    assert all(d["message"] for d in data)


def test_lint_clean_exits_0(repo: GitRepo) -> None:
    repo.commit("good", files={"memory/2025-11-27.md": GOOD, "memory.md": "# Core\n- prefers tea\n"})
    result = run(repo)
    assert result.exit_code == 0 and result.output == ""
    result = run(repo, "--json")
    assert result.exit_code == 0 and json.loads(result.output)["diagnostics"] == []


def test_lint_paths_limit_the_check(repo: GitRepo) -> None:
    make(repo)
    result = run(repo, "memory/2025-11-27.md", "--json")
    assert result.exit_code == 0 and json.loads(result.output) == {"files": 1, "ok": True, "diagnostics": []}
    result = run(repo, "notes", "--json")
    assert [d["path"] for d in json.loads(result.output)["diagnostics"]] == ["notes/draft.md"]
    result = CliRunner().invoke(cli, ["-C", str(repo.path / "memory"), "lint", "2025-11-28.md"])
    assert result.exit_code == 1 and result.output.startswith("memory/2025-11-28.md:5:")


def exit_code_of(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(argv)  # the real entry point: GitmemError -> exit 1 with a hint on stderr
    return int(exc.value.code)


def test_lint_missing_path_is_a_user_error(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    make(repo)
    assert exit_code_of(["-C", str(repo.path), "lint", "nope.md"]) == 1
    err = capsys.readouterr().err
    assert "no such file or directory: " in err and "Hint:" in err


def test_cli_uses_the_indexers_size_limit(repo: GitRepo) -> None:
    repo.commit("big", files={".gitmem.toml": "[index]\nmax_file_bytes = 50\n", "big.md": "x" * 100 + "\n"})
    data = json.loads(run(repo, "--json").output)["diagnostics"]
    assert [(d["path"], d["code"]) for d in data] == [("big.md", "too-large")]


def test_encoding_binary_and_size_problems(repo: GitRepo) -> None:
    repo.commit("odd", files={
        "latin1.md": "caf\xe9\n".encode("latin-1"),
        "blob.md": b"\x00\x01binary",
        "big.md": "x" * 100 + "\n",
    })
    _, diags = lint_workspace(repo.path, max_bytes=50)
    assert [(d.path, d.line, d.code) for d in diags] == [
        ("big.md", 1, "too-large"), ("blob.md", 1, "binary"), ("latin1.md", 1, "decode-replaced"),
    ]


def test_workspace_markdown_lists_tracked_and_untracked(repo: GitRepo) -> None:
    make(repo)
    repo.git("rm", "-q", "--cached", "memory/2025-11-27.md")  # untracked now, still on disk
    (repo.path / "memory" / "2025-11-28.md").unlink()  # tracked but deleted: nothing to read
    assert workspace_markdown(repo.path) == ["memory/2025-11-27.md", "notes/draft.md"]


def test_lint_outside_a_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code_of(["-C", str(tmp_path), "lint"]) == 1
    assert "not inside a git repository" in capsys.readouterr().err


def test_lint_help_documents_exit_status_and_example() -> None:
    out = CliRunner().invoke(cli, ["lint", "--help"]).output
    assert "Exit status: 0 when there are no problems, 1" in out and "Example:" in out
