"""The demo workspace: reproducible history whose facts change on the documented days."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gitmem import demo
from gitmem.cli import cli
from gitmem.cli.output import run_guarded
from gitmem.config import Config, load_config
from gitmem.parse import parse_markdown
from gitrepo import GitRepo, sealed_demo


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[demo.DemoInfo, GitRepo]:
    info = sealed_demo(tmp_path_factory, "demo")
    return info, GitRepo(info.root)


def at(repo: GitRepo, day: str, path: str) -> str:
    """`path` as it stood at the end of `day` (UTC) on the first-parent history."""
    oid = repo.git("rev-list", "-1", "--first-parent", f"--before={day}T23:59:59+00:00", "HEAD")
    return repo.git("show", f"{oid}:{path}")


def test_same_oids_every_run(tmp_path: Path, built: tuple[demo.DemoInfo, GitRepo]) -> None:
    info, _ = built
    again = demo.build_demo(tmp_path / "again")
    assert again.head == info.head
    assert again.commits == info.commits == len(demo.history())


def test_history_shape(built: tuple[demo.DemoInfo, GitRepo]) -> None:
    info, repo = built
    assert 30 <= info.commits <= 45
    assert repo.git("status", "--porcelain") == ""  # the working tree is checked out and clean
    assert repo.git("branch", "--format=%(refname:short)") == demo.BRANCH
    merges = repo.git("rev-list", "--merges", "HEAD").split()
    assert len(merges) == 1
    merge = merges[0]
    assert repo.git("log", "-1", "--format=%ad", "--date=short", merge) == demo.MERGE_DATE
    side = repo.git("rev-parse", f"{merge}^2")
    assert repo.git("diff-tree", "--no-commit-id", "--name-only", "-r", side) == "bank/entities/The-Castle.md"
    dates = repo.git("log", "--format=%ad", "--date=format:%Y-%m-%d", "HEAD").split()
    assert min(dates) == demo.FIRST_DAY and max(dates) == demo.LAST_DAY
    authors = set(repo.git("log", "--format=%an", "HEAD").split())
    assert authors == {"Clawd", "Peter"}
    logs = sorted(p.name for p in (info.root / "memory").iterdir())
    assert len(logs) == len(demo.LOGS) and all(re.fullmatch(r"2025-1[12]-\d\d\.md", n) for n in logs)
    assert (info.root / "bank/entities/Peter.md").is_file() and (info.root / "bank/entities/The-Castle.md").is_file()


def test_plain_layout_files(built: tuple[demo.DemoInfo, GitRepo]) -> None:
    info, repo = built
    assert ".memory/" in (info.root / ".gitignore").read_text().splitlines()
    assert load_config(info.root) == Config()
    for rel in ("bank/world.md", "bank/experience.md", "bank/opinions.md", ".gitmem.toml"):
        assert repo.git("ls-files", rel) == rel


def test_facts_change_on_the_documented_days(built: tuple[demo.DemoInfo, GitRepo]) -> None:
    _, repo = built
    before, after = at(repo, demo.ASK_BEFORE_MOVE, "memory.md"), at(repo, demo.ASK_AFTER_MOVE, "memory.md")
    assert demo.HOME_LINE_BEFORE in before and demo.CITY_AFTER not in before
    assert demo.HOME_LINE_AFTER in after and demo.CITY_BEFORE not in after
    prev_day = "2025-11-19"
    assert demo.HOME_LINE_BEFORE in at(repo, prev_day, "memory.md")
    assert demo.HOME_LINE_AFTER in at(repo, demo.MOVE_DATE, "memory.md")

    assert demo.DELETED_FACT in at(repo, "2025-11-27", "memory.md")
    assert demo.DELETED_FACT not in at(repo, demo.DELETE_DATE, "memory.md")

    old, new = at(repo, demo.ASK_BEFORE_RENAME, "memory.md"), repo.git("show", "HEAD:memory.md")
    assert "- @warelay:" in old and "@relay" not in old
    assert "- @relay (formerly warelay):" in new and "- @warelay" not in new
    assert repo.git("log", "-1", "--format=%ad", "--date=short", "-S", "@relay (formerly", "--", "memory.md") \
        == demo.RENAME_DATE


def test_opinion_strengthens_then_is_contradicted(built: tuple[demo.DemoInfo, GitRepo]) -> None:
    info, _ = built
    for day, c in demo.OPINION_HISTORY:
        text = (info.root / f"memory/{day}.md").read_text()
        assert f"O(c={c}) @Peter: {demo.OPINION}" in text
    assert demo.OPINION_HISTORY[0][1] < demo.OPINION_HISTORY[1][1]
    assert demo.OPINION_HISTORY[1][0] < demo.CONTRADICTED_ON
    contra = (info.root / f"memory/{demo.CONTRADICTED_ON}.md").read_text()
    assert "W @Peter:" in contra and "inline" in contra


def test_logs_parse_into_typed_facts(built: tuple[demo.DemoInfo, GitRepo]) -> None:
    info, _ = built
    kinds: set[str] = set()
    ranged = []
    for path in sorted((info.root / "memory").glob("*.md")):
        rel = path.relative_to(info.root).as_posix()
        parsed = parse_markdown(path.read_bytes(), rel)
        assert parsed.diagnostics == [], rel
        facts = [b for b in parsed.blocks if b.fact]
        assert facts, rel
        kinds |= {b.kind for b in facts}
        ranged += [b for b in facts if b.event_start != b.event_end]
    assert kinds == {"world", "experience", "opinion", "observation"}
    trip = [b for b in ranged if demo.TRIP in b.text]
    assert trip and (trip[0].event_start, trip[0].event_end) == ("2025-11-27", "2025-12-01")


def test_cli_demo_refuses_non_empty_and_git_dirs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "d"
    target.mkdir()
    (target / "mine.txt").write_text("keep")
    assert run_guarded(cli, ["demo", str(target), "--json"]) == 1
    assert "not empty" in json.loads(capsys.readouterr().out)["error"]
    assert run_guarded(cli, ["demo", str(target), "--force", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["head"] == demo.build_demo(tmp_path / "ref").head and data["facts"]["city_after"] == "Lisbon"
    assert (target / "mine.txt").read_text() == "keep"
    assert run_guarded(cli, ["demo", str(target), "--force", "--json"]) == 1
    assert "already a git repository" in json.loads(capsys.readouterr().out)["error"]


def test_demo_forget_removes_the_deleted_hint_from_history(tmp_path: Path) -> None:
    from gitmem import forget
    from gitmem.workspace import Workspace
    from indexoracle import recalled

    ws = Workspace(demo.build_demo(tmp_path / "ws").root)
    before = recalled(ws, "2025-11-25")
    assert any(demo.FORGET_TEXT in c for _, c in before)  # deleted on DELETE_DATE, still in history
    report = forget.forget(ws, forget.target_for(ws, demo.FORGET_TEXT, None), dry_run=False)
    assert report.files == ["memory.md"] and report.refs
    # The commit that deleted the hint only did that: it disappears, and the report says so.
    gone = [c for c in report.commits if c.new is None]
    assert [c.subject for c in gone] == ["memory: no password hints in memory"] and gone[0].files == ["memory.md"]
    after = recalled(ws, "2025-11-25")
    assert not any(demo.FORGET_TEXT in c for _, c in after)
    assert after == {(p, c) for p, c in before if demo.FORGET_TEXT not in c}
    assert demo.FORGET_TEXT not in GitRepo(ws.root).git("log", "-p", f"--exclude={forget.BACKUP_NS}/*", "--all")

