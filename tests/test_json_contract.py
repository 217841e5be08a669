"""The JSON contract: every command's --json output validates against its shipped schema.

Runs the real `gitmem` CLI in subprocesses on a real workspace (the demo, plus an uncommitted edit)
and validates with jsonschema against gitmem/schemas/*.json. A command that gains --json without
a schema fails `test_every_json_command_is_covered`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

from gitmem import demo, schemas  # noqa: E402
from gitmem.cli import cli  # noqa: E402
from gitmem.cli.app import all_commands  # noqa: E402
from gitrepo import sealed_demo  # noqa: E402

# command path -> schema name; every --json command must be listed here.
COMMAND_SCHEMAS = {
    "init": "init", "demo": "demo", "lint": "lint", "index": "index", "status": "status",
    "recall": "recall", "about": "about", "opinions": "opinions", "why": "why", "changes": "changes",
    "core": "core", "show": "show", "retain": "retain", "config": "config",
    "hooks install": "hooks", "hooks uninstall": "hooks", "hooks status": "hooks",
    "reflect": "reflect", "review": "review", "forget": "forget", "model check": "model_check",
}


def _registry() -> Any:
    resources = [(s["$id"], referencing.Resource.from_contents(s)) for s in map(schemas.load, schemas.names())]
    return referencing.Registry().with_resources(resources)


REGISTRY = _registry()


def validate(name: str, data: Any) -> None:
    schema = schemas.load(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema, registry=REGISTRY)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    assert not errors, f"{name}: " + "; ".join(
        f"at {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}" for e in errors[:5]
    )


def run(cwd: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    pre = ["-C", str(cwd)] if cwd is not None else []
    return subprocess.run([sys.executable, "-m", "gitmem", *pre, *args], capture_output=True, text=True, timeout=120)


def check(schema: str, cwd: Path | None, *args: str) -> Any:
    """Run `gitmem args... --json`, expect exit 0, validate against `schema`, return the data."""
    proc = run(cwd, *args, "--json")
    assert proc.returncode == 0, f"gitmem {' '.join(args)}: exit {proc.returncode}: {proc.stderr}{proc.stdout}"
    data = json.loads(proc.stdout)
    validate(schema, data)
    return data


def check_error(cwd: Path | None, *args: str, code: int = 1) -> dict[str, Any]:
    proc = run(cwd, *args)
    assert proc.returncode == code, f"gitmem {' '.join(args)}: exit {proc.returncode}: {proc.stderr}"
    data = json.loads(proc.stdout)
    validate("error", data)
    assert data["error"]
    return data


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = sealed_demo(tmp_path_factory, "contract").root
    # An uncommitted edit: recall answers from the working tree too, cited @worktree.
    (root / "memory.md").write_text((root / "memory.md").read_text() + "\n- @Peter ordered a zeppelin kit.\n")
    return root


def test_schemas_are_valid_and_shipped() -> None:
    names = schemas.names()
    assert set(COMMAND_SCHEMAS.values()) | {"result", "error", "defs"} <= set(names)
    for name in names:
        s = schemas.load(name)
        jsonschema.Draft202012Validator.check_schema(s)
        assert s["$id"] == schemas.ID_PREFIX + name


def _json_commands(group: click.Group, prefix: str = "") -> set[str]:
    found: set[str] = set()
    for name, cmd in (all_commands() if group is cli else group.commands).items():
        path = f"{prefix}{name}"
        if isinstance(cmd, click.Group):
            found |= _json_commands(cmd, path + " ")
        elif any(p.name == "as_json" for p in cmd.params):
            found.add(path)
    return found


def test_every_json_command_is_covered() -> None:
    missing = _json_commands(cli) - set(COMMAND_SCHEMAS)
    assert not missing, f"commands with --json but no schema in the contract: {sorted(missing)}"


def test_setup_commands(tmp_path: Path) -> None:
    info = check("demo", None, "demo", str(tmp_path / "demo"))
    assert info["commits"] > 0
    with_hooks = check("init", None, "init", str(tmp_path / "a"))
    assert with_hooks["hooks"]["hooks"] and with_hooks["git_initialized"]
    no_hooks = check("init", None, "init", "--no-hooks", str(tmp_path / "b"))
    assert no_hooks["hooks"] is None
    again = check("init", None, "init", str(tmp_path / "a"))
    assert again["skipped"]
    st = check("hooks", tmp_path / "b", "hooks", "status")
    assert {h["state"] for h in st["hooks"]} == {"absent"} and "last_error" in st
    installed = check("hooks", tmp_path / "b", "hooks", "install")
    assert installed["changed"]
    check("hooks", tmp_path / "b", "hooks", "uninstall")
    # An empty repository: nothing indexed, nothing to recall.
    empty = check("status", tmp_path / "b", "status")
    assert empty["head"] is None and empty["indexed"] is None
    assert check("recall", tmp_path / "b", "recall", "anything")["results"] == []


def test_index_and_status(ws: Path) -> None:
    first = check("index", ws, "index")
    assert first["indexed"] == first["head"]
    rebuilt = check("index", ws, "index", "--rebuild")
    assert rebuilt["rebuilt"] is True and rebuilt["added"] > 0
    st = check("status", ws, "status")
    assert st["up_to_date"] and st["uncommitted"] == ["memory.md"]


def test_recall_and_views(ws: Path) -> None:
    now = check("recall", ws, "recall", "where does Peter live")
    assert now["results"] and now["as_of"] is None
    then = check("recall", ws, "recall", "Peter", "--as-of", demo.ASK_BEFORE_MOVE, "--include-history")
    assert then["as_of"]["commit"] and any("valid_until" in r for r in then["results"])
    wt = check("recall", ws, "recall", "zeppelin")
    assert wt["results"][0]["status"] == "uncommitted" and wt["results"][0]["source"].endswith("@worktree")
    check("recall", ws, "recall", "", "--kind", "opinion", "--entity", "Peter", "--during", "Nov 2025")
    packed = check("recall", ws, "recall", "Peter", "--budget", "60")
    assert packed["results"]
    before_all = check("recall", ws, "recall", "Peter", "--as-of", "2020-01-01")
    assert before_all["results"] == [] and before_all["as_of"]["commit"] is None and before_all["notes"]
    jsonl = run(ws, "recall", "Peter", "--format", "jsonl")
    assert jsonl.returncode == 0
    for line in jsonl.stdout.splitlines():
        validate("result", json.loads(line))

    about = check("about", ws, "about", "Peter")
    assert about["page"] and about["results"]
    unknown = run(ws, "about", "Nobody-At-All", "--json")  # issue 12: nothing known is a problem (exit 1)
    assert unknown.returncode == 1 and json.loads(unknown.stdout)["error"].startswith("nothing in memory mentions")
    check("about", ws, "about", "Peter", "--as-of", demo.ASK_BEFORE_MOVE, "-k", "3")

    ops = check("opinions", ws, "opinions", "--history")
    assert ops["opinions"] and all("history" in o for o in ops["opinions"])
    check("opinions", ws, "opinions", "--entity", "Peter", "--min-confidence", "0.5", "--as-of", demo.ASK_AFTER_MOVE)

    why = check("why", ws, "why", "Peter lives in")
    assert len(why["versions"]) >= 2
    check("why", ws, "why", str(why["match"]))

    ch = check("changes", ws, "changes", "--since", "2025-11-01", "--until", demo.LAST_DAY, "--by-entity")
    assert {c["change"] for c in ch["changes"]} == {"added", "changed", "removed"} and ch["by_entity"]
    check("changes", ws, "changes")

    core = check("core", ws, "core", "--budget", "300")
    assert core["facts"] and core["tokens"] > 0
    check("core", ws, "core", "--as-of", demo.ASK_BEFORE_MOVE)

    src = now["results"][0]["source"]
    shown = check("show", ws, "show", src)
    assert shown["lines"]
    assert check("show", ws, "show", "memory.md#L1@worktree")["commit"] is None


def test_retain(ws: Path) -> None:
    done = check("retain", ws, "retain", "W @Peter: Signed up for a pottery class.", "--date", "2025-12-13")
    assert done["committed"] and done["created_file"]
    draft = check("retain", ws, "retain", "O(c=0.4) @Peter: Might enjoy clay.", "--date", "2025-12-13", "--no-commit")
    assert not draft["committed"] and draft["source"].endswith("@worktree")
    alias = check("retain", ws, "retain", "alias: @Peter = Pete, P", "--date", "2025-12-13")
    assert (alias["kind"], alias["letter"], alias["entities"], alias["names"]) == ("alias", None, ["peter"], ["Pete", "P"])


def test_errors_are_json(ws: Path, tmp_path: Path) -> None:
    assert check_error(ws, "recall", "--raw", "a AND (", "--json")["type"] == "BadQuery"
    assert check_error(tmp_path, "status", "--json")["type"] == "NotAWorkspace"
    check_error(ws, "show", "not-a-citation", "--json")
    check_error(ws, "why", "987654321", "--json")
    check_error(ws, "retain", "X: no such kind", "--json")
    check_error(ws, "recall", "Peter", "--as-of", "not-a-time-or-revision", "--json")
    usage = check_error(ws, "recall", "-k", "0", "--json", code=2)
    assert usage["type"] == "UsageError"


def test_reflect_and_review(tmp_path: Path) -> None:
    root = demo.build_demo(tmp_path / "ws").root
    dry = check("reflect", root, "reflect", "--no-llm", "--dry-run")
    assert dry["status"] == "dry-run" and dry["changes"]
    written = check("reflect", root, "reflect", "--no-llm")
    assert written["status"] == "written" and written["commit"]
    assert check("reflect", root, "reflect", "--no-llm", "--if-needed")["status"] == "up-to-date"
    shown = check("review", root, "review")
    assert shown["commit"] == written["commit"] and shown["paths"]
    assert check("review", root, "review", "--discard")["status"] == "discarded"
    assert "discarded" in check("reflect", root, "reflect", "--no-llm")["message"]  # not proposed again
    (root / "memory/2025-12-13.md").write_text("# 2025-12-13\n\n## Retain\n- W @Peter: Back at the coworking space.\n")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "log"], check=True)
    assert check("reflect", root, "reflect", "--no-llm")["status"] == "written"  # new facts: a proposal again
    html = check("review", root, "review", "--html", ".memory/review.html")
    assert html["status"] == "html" and (root / ".memory/review.html").is_file()
    merged = check("review", root, "review", "--merge")
    assert merged["status"] == "merged" and merged["merge"]
    assert check("reflect", root, "reflect", "--no-llm")["status"] == "nothing-new"
    assert check_error(root, "review", "--json")["type"] == "GitmemError"


def test_missing_directory_error_is_json() -> None:
    assert check_error(None, "-C", "/not/a/repo", "status", "--json")["type"] == "NotAWorkspace"


def test_index_problems_are_objects(repo: Any) -> None:
    repo.commit("binary", files={"memory.md": "# Memory\n", "blob.md": b"\x00\x01binary"})
    data = check("index", repo.path, "index")
    assert data["problems"]


def test_lint(ws: Path, repo: Any) -> None:
    clean = check("lint", ws, "lint")
    assert clean["ok"] is True and clean["diagnostics"] == [] and clean["files"] > 0
    repo.commit("bad", files={"memory/2025-11-27.md": "# Day\n\n## Retain\n- Q @Peter: no such kind\n"})
    proc = run(repo.path, "lint", "--json")
    assert proc.returncode == 1  # findings: exit 1, but stdout is the lint object, not an error
    data = json.loads(proc.stdout)
    validate("lint", data)
    assert data["ok"] is False and data["diagnostics"][0]["code"] == "retain-unknown-kind"


def test_config(tmp_path: Path) -> None:
    ws = tmp_path / "c"
    check("init", None, "init", "--no-hooks", str(ws))
    shown = check("config", ws, "config")
    assert shown["settings"]["recall.k"] == 10 and shown["changed"] is None
    text_before = (ws / ".gitmem.toml").read_text()
    changed = check("config", ws, "config", "recall.k", "20")
    assert changed == {"path": str((ws / ".gitmem.toml").resolve()), "settings": {"recall.k": 20}, "changed": "recall.k"}
    text_after = (ws / ".gitmem.toml").read_text()
    # Only that value changed: every comment line of the template is still there.
    assert [ln for ln in text_before.splitlines() if ln.startswith("#")] == [ln for ln in text_after.splitlines() if ln.startswith("#")]
    assert check("config", ws, "config", "recall.k")["settings"] == {"recall.k": 20}
    bad = run(ws, "config", "recall.kk", "3", "--json")
    assert bad.returncode == 1 and "recall.k" in json.loads(bad.stdout)["hint"]
    assert run(ws, "config", "recall.k", "zero", "--json").returncode == 1


def test_forget(tmp_path: Path) -> None:
    root = demo.build_demo(tmp_path / "ws").root
    dry = check("forget", root, "forget", "Marrakech")
    assert dry["status"] == "dry-run" and dry["commits"] and dry["refs"] == []
    assert check("forget", root, "forget", "no such text anywhere")["status"] == "nothing-found"
    done = check("forget", root, "forget", "Marrakech", "--yes")
    assert done["status"] == "forgotten" and done["refs"] and done["backup"]
    purged = check("forget", root, "forget", "--purge-backup")
    assert purged["status"] == "purged" and purged["target"] is None
    assert check_error(root, "forget", "ab", "--json")["type"] == "GitmemError"


def test_forget_concurrent_refs_match_the_schema() -> None:
    """A ref forget did not move (a commit made on it while it ran) is part of the contract."""
    from gitmem import forget

    old, found = "1" * 40, "2" * 40
    report = forget.Report("forgotten", forget.Target("text", "bank PIN", ("bank pin",)), backup="refs/gitmem/forget-backup/x",
                           other_refs=["refs/heads/main"],
                           concurrent=[forget.Concurrent("refs/heads/main", old, found, "main moved while forget ran")])
    data = report.as_dict()
    validate("forget", data)
    assert data["concurrent"] == [{"ref": "refs/heads/main", "old": old, "found": found, "reason": "main moved while forget ran"}]
