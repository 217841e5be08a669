"""Property test (issue 12): hostile arguments and files never crash gitmem or reach outside.

Hypothesis drives the read commands with generated arguments (weird dates and spans, huge and
negative numbers, FTS5 syntax, unicode and control characters, `../` paths and citations, empty
strings, options given as values) against one workspace holding hostile files (a symlink out of
the workspace, control characters, a binary .md). After every example:

- no traceback, exit code 0, 1 or 2;
- under --json: stdout is the command's result or an error object, valid against gitmem/schemas;
- HEAD, the branch checked out and every ref are unchanged (read commands move nothing);
- and at the end of each test, nothing outside the workspace and .git was written: a sibling
  folder (the symlink's target) and HOME are byte-for-byte as before.

Most examples run in-process (the same `run_guarded` entry as the console script, with click's
output captured) to keep the file well under a minute on 2 cores; a smaller set runs as real
processes, and the MCP server gets its own generated tool calls over real stdio.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

from click.testing import CliRunner  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from gitmem import schemas  # noqa: E402
from gitmem.cli.app import cli  # noqa: E402
from gitmem.cli.output import run_guarded  # noqa: E402
from gitrepo import GitRepo, seal_git_env  # noqa: E402
from test_hardening_errors import McpClient  # noqa: E402

_REGISTRY = referencing.Registry().with_resources(
    (s["$id"], referencing.Resource.from_contents(s)) for s in map(schemas.load, schemas.names()))


def validate(name: str, data: Any) -> None:
    jsonschema.Draft202012Validator(schemas.load(name), registry=_REGISTRY).validate(data)


# --- the workspace and what must not change ------------------------------------------------------------


class Place:
    def __init__(self, root: Path, outside: Path, home: Path) -> None:
        self.root = root
        self.outside = outside
        self.home = home


def _snapshot(folder: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink():
            out[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            out[rel] = "dir"
    return out


def _refs(root: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True).stdout

    return git("symbolic-ref", "-q", "HEAD") + git("rev-parse", "HEAD") + git("for-each-ref")


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Place]:
    base = tmp_path_factory.mktemp("fuzz")
    home = base / "home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        seal_git_env(mp, home)
        outside = base / "outside"
        outside.mkdir()
        (outside / "secret.md").write_text("- W @Secret: the password is hunter2\n")
        repo = GitRepo.init(base / "ws")
        repo.commit("first", date="2025-11-01", files={
            "memory.md": "# Memory\n\n- W @Peter: lives in Lisbon\n- O(c=0.8) @Peter: likes \x1b[31mred\x1b[0m\n",
            "memory/2025-11-02.md": "# 2025-11-02\n\n## Retain\n- W @José: café ☕ at 2025-11-02\n- B: I did \x07 a thing\n",
        })
        repo.commit("second", date="2025-11-05", files={
            "memory/2025-11-05.md": "# 2025-11-05\n\n## Retain\n- W @Peter: moved to Porto on 2025-11-05\n",
            "bank/entities/Peter.md": "# Peter\n\nLives in Porto.\n",
        })
        # Hostile files in the work tree: a symlink out, a binary .md, a symlinked folder.
        (repo.path / "memory" / "leak.md").symlink_to(outside / "secret.md")
        (repo.path / "memory" / "2025-11-06.md").write_bytes(b"\xff\xfe\x00binary\x00")
        (repo.path / "outlink").symlink_to(outside)
        assert run_guarded(cli, ["-C", str(repo.path), "index"]) == 0
        yield Place(repo.path, outside, home)


@pytest.fixture(scope="module")
def unchanged(place: Place) -> Iterator[None]:
    """Checks, after a test's examples, that nothing outside the workspace was written."""
    outside, home, refs = _snapshot(place.outside), _snapshot(place.home), _refs(place.root)
    yield
    assert _snapshot(place.outside) == outside
    assert _snapshot(place.home) == home
    assert _refs(place.root) == refs


# --- generated arguments --------------------------------------------------------------------------------

HOSTILE = [
    "", " ", "0", "-1", "1e23", "nan", "inf", "99999999999999999999999", "9223372036854775808",
    "0001-01-01", "9999-12-31", "9999-12-31T23:59:59-14:00", "0000-00-00", "2025-02-30", "2025-11",
    "Nov 2025", "2025-11-01..2025-11-30", "2025-11-30..2025-11-01", "..", "99999999999d", "-5d", "1y",
    "HEAD", "HEAD~999999", "HEAD^{tree}", "@{-1}", "refs/heads/main", "main..HEAD", ":/Peter", "--all",
    "*", '"', "NEAR(", "a:b", "AND", "Peter OR", "content:x", "-Peter", "^Peter", "(",
    "--json", "-C", "--help", "-k", "--as-of", "../../etc/passwd#L1@worktree", "/etc/passwd#L1@HEAD",
    ".git/config#L1@worktree", "memory.md#L1@HEAD", "memory.md#L0-L99999999999@HEAD",
    "memory/leak.md#L1@worktree", "outlink/secret.md#L1@worktree", "memory.md#L2-L1@HEAD",
    "@José", "Jose\u0301", "\u202e", "\x1b[2J", "\x07", "\t\n", "☕" * 50, "x" * 5000,
]
VALUE = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20),
    st.integers().map(str),
    st.floats(allow_nan=True).map(repr),
)

# Each read command: its positional argument (if any) and its options (None: a flag).
COMMANDS: dict[str, tuple[bool, dict[str, Any]]] = {
    "recall": (True, {"--as-of": VALUE, "--since": VALUE, "--until": VALUE, "--during": VALUE, "--kind": VALUE,
                      "--entity": VALUE, "-k": VALUE, "--budget": VALUE, "--raw": None, "--include-history": None,
                      "--format": st.sampled_from(["text", "json", "jsonl", "md", "xml"])}),
    "about": (True, {"--as-of": VALUE, "-k": VALUE}),
    "opinions": (False, {"--entity": VALUE, "--min-confidence": VALUE, "--as-of": VALUE, "--history": None}),
    "why": (True, {}),
    "changes": (False, {"--since": VALUE, "--until": VALUE, "--by-entity": None}),
    "core": (False, {"--budget": VALUE, "--as-of": VALUE}),
    "show": (True, {}),
    "status": (False, {}),
    "lint": (False, {}),
}


@st.composite
def argvs(draw: Any) -> tuple[str, list[str]]:
    command = draw(st.sampled_from(sorted(COMMANDS)))
    positional, options = COMMANDS[command]
    args = [command]
    if positional and draw(st.booleans()):
        args.append(draw(VALUE))
    for name in draw(st.lists(st.sampled_from(sorted(options)), max_size=3)) if options else []:
        value = options[name]
        args += [name] if value is None else [name, draw(value)]
    return command, args


def check(command: str, args: list[str], code: int, out: str, err: str) -> None:
    assert "Traceback" not in out + err, (args, out, err)
    assert code in (0, 1, 2), (args, code, out, err)
    if code == 0 and out.startswith("Usage:"):
        return  # `--help` landed where click reads it as the flag
    data = json.loads(out)
    if "error" in data:
        assert code in (1, 2), (args, code, data)
        validate("error", data)
    else:
        assert code == 0 or (command == "lint" and code == 1), (args, code, data)
        validate(command, data)


def run_in_process(root: Path, args: list[str]) -> tuple[int, str, str]:
    argv = ["-C", str(root), *args, "--json"]
    with CliRunner().isolation() as (out, err, _):
        code = run_guarded(cli, argv)
    return code, out.getvalue().decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(argvs())
def test_read_commands_in_process(place: Place, unchanged: None, case: tuple[str, list[str]]) -> None:
    command, args = case
    code, out, err = run_in_process(place.root, args)
    check(command, args, code, out, err)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(argvs())
def test_read_commands_as_processes(place: Place, unchanged: None, case: tuple[str, list[str]]) -> None:
    command, args = case
    proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(place.root), *args, "--json"],
                          capture_output=True, text=True, timeout=120)
    check(command, args, proc.returncode, proc.stdout, proc.stderr)
    # Without --json: one line of error at most, never a traceback.
    text = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(place.root), *args],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in text.stdout + text.stderr and text.returncode in (0, 1, 2), (args, text.stderr)


# --- MCP ----------------------------------------------------------------------------------------------

ARG_VALUE = st.one_of(VALUE, st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(),
                      st.lists(VALUE, max_size=3), st.just({"nested": "x"}))
TOOL_ARGS = {
    "recall": ["query", "k", "as_of", "since", "until", "during", "kinds", "entity", "include_history", "budget", "raw"],
    "about": ["entity", "as_of", "k"],
    "opinions": ["entity", "min_confidence", "as_of", "history"],
    "changes": ["since", "until", "by_entity"],
    "why": ["target"],
    "core": ["budget", "as_of"],
}


@st.composite
def tool_calls(draw: Any) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from(sorted(TOOL_ARGS)))
    names = draw(st.lists(st.sampled_from(TOOL_ARGS[tool] + ["bogus"]), max_size=4, unique=True))
    return tool, {n: draw(ARG_VALUE) for n in names}


@pytest.fixture(scope="module")
def mcp(place: Place) -> Iterator[McpClient]:
    client = McpClient(place.root)
    yield client
    assert "Traceback" not in client.close()


_ids = iter(range(1, 1 << 30))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(tool_calls())
def test_mcp_tool_calls(mcp: McpClient, unchanged: None, call: tuple[str, dict[str, Any]]) -> None:
    tool, arguments = call
    result = mcp.call(next(_ids), tool, arguments)
    text = result["content"][0]["text"]
    assert "Traceback" not in text and not text.startswith("Error executing tool"), text
    data = json.loads(text)
    validate("error" if result.get("isError") else tool, data)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x00\x85\u2028\u2029"),
               min_size=1, max_size=40))
def test_mcp_lines_that_are_not_json_rpc(mcp: McpClient, line: str) -> None:
    try:
        message = json.loads(line)
    except ValueError:
        message = None
    if isinstance(message, dict) and "jsonrpc" in message:
        return  # a generated valid message is not this test's business
    if not line.strip():
        return  # blank lines are skipped by the transport, like most JSON-RPC servers
    reply = mcp.send(line)
    assert reply is not None and reply["id"] is None and reply["error"]["code"] in (-32700, -32600), (line, reply)


def test_fuzz_workspace_is_hostile(place: Place) -> None:
    """The hostile files are really there (a fixture change must not quietly defang the tests)."""
    assert (place.root / "memory/leak.md").is_symlink() and (place.root / "outlink").is_symlink()
    assert shutil.which("git")
