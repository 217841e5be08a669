"""Issue 12, "tracebacks instead of a one-line error": each hostile case ends in one line (exit 1 or
2), a hint with a next step, and under --json an error object that validates against the contract.

Everything runs the real `gitmem` in subprocesses on real git repositories. The environment
failures need a read-only or full file system even as root (the tests run as root, where chmod
does not stop a write): those run gitmem inside `unshare -m` with a read-only bind mount or a tiny
tmpfs, private to that one process, so nothing is left mounted; they are skipped where mount
namespaces are not available.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

from gitmem import schemas  # noqa: E402
from gitrepo import GitRepo, sealed_demo  # noqa: E402


def _validator(name: str) -> Any:
    registry = referencing.Registry().with_resources(
        (s["$id"], referencing.Resource.from_contents(s)) for s in map(schemas.load, schemas.names()))
    return jsonschema.Draft202012Validator(schemas.load(name), registry=registry)


ERROR_SCHEMA = _validator("error")


class Run:
    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    @property
    def error(self) -> dict[str, Any]:
        data = json.loads(self.out)
        ERROR_SCHEMA.validate(data)
        return data  # type: ignore[no-any-return]


def _command(ws: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "gitmem", "-C", str(ws), *args]


def gitmem(ws: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    import os

    proc = subprocess.run(_command(ws, *args), capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    run = Run(proc)
    assert "Traceback" not in run.out + run.err, run.out + run.err
    assert run.code in (0, 1, 2)
    return run


def one_line_error(run: Run, code: int = 1) -> str:
    """The text-mode error: exit `code`, `Error: ...` and `Hint: ...`, nothing else on stderr."""
    assert run.code == code, (run.code, run.out, run.err)
    lines = run.err.strip().splitlines()
    assert lines[0].startswith("Error: ") and len(lines) == 2 and lines[1].startswith("Hint: "), run.err
    return lines[0] + "\n" + lines[1]


def _can_unshare() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=16k tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


needs_mounts = pytest.mark.skipif(not _can_unshare(), reason="needs a private mount namespace (unshare -m, root)")


def gitmem_mounted(ws: Path, mounts: str, *args: str) -> Run:
    """Run gitmem in a private mount namespace after the shell commands `mounts` (cwd: ws)."""
    import shlex

    script = f"cd {shlex.quote(str(ws))} && {mounts} && exec {shlex.join(_command(ws, *args))}"
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    run = Run(proc)
    assert "Traceback" not in run.out + run.err, run.out + run.err
    return run


def readonly(rel: str) -> str:
    return f"mount --bind {rel} {rel} && mount -o remount,ro,bind {rel} {rel}"


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sealed_demo(tmp_path_factory, "hardening").root


@pytest.fixture
def ws(demo_root: Path, tmp_path: Path) -> Path:
    """A private copy of the demo workspace, indexed, for tests that break something in it."""
    root = tmp_path / "ws"
    shutil.copytree(demo_root, root, symlinks=True)
    assert gitmem(root, "index").code == 0
    return root


def _new_commit(ws: Path) -> None:
    """A commit the index has not seen, so the next read command has to write the index."""
    repo = GitRepo(ws)
    repo.commit("one more", date="2025-12-20", files={"memory/2025-12-20.md": "# 2025-12-20\n\n- W @Peter: x\n"})


def _corrupt_copies(ws: Path) -> list[str]:
    return sorted(p.name for p in (ws / ".memory").iterdir() if ".corrupt-" in p.name)


# --- read-only index, read-only .memory/ -----------------------------------------------------------


@needs_mounts
@pytest.mark.parametrize("target", [".memory/index.sqlite", ".memory"])
def test_read_only_index_is_an_error_and_a_healthy_index_is_never_moved_aside(ws: Path, target: str) -> None:
    _new_commit(ws)
    before = (ws / ".memory/index.sqlite").read_bytes()
    run = gitmem_mounted(ws, readonly(target), "recall", "Peter", "--json")
    assert run.code == 1
    err = run.error
    assert "read-only" in err["error"] or "cannot be written" in err["error"], err
    assert "writable" in err["hint"], err
    assert _corrupt_copies(ws) == []
    assert (ws / ".memory/index.sqlite").read_bytes() == before
    assert "Error: " in one_line_error(gitmem_mounted(ws, readonly(target), "recall", "Peter"))
    # Once writable again, the same index catches up: nothing was lost or rebuilt.
    after = gitmem(ws, "recall", "Peter", "--json")
    assert after.code == 0 and not any("moved it" in n for n in json.loads(after.out)["notes"])


def test_only_a_damaged_file_counts_as_a_corrupt_index(tmp_path: Path) -> None:
    from gitmem.errors import is_corrupt_index

    db = tmp_path / "index.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    ro = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    with pytest.raises(sqlite3.DatabaseError) as readonly_error:
        ro.execute("INSERT INTO t VALUES (1)")
    ro.close()
    assert not is_corrupt_index(readonly_error.value)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all" * 200)
    with pytest.raises(sqlite3.DatabaseError) as junk_error:
        sqlite3.connect(junk).execute("SELECT * FROM sqlite_master").fetchall()
    assert is_corrupt_index(junk_error.value)


# --- a file where a folder belongs, a folder where a file belongs --------------------------------


def test_memory_folder_that_is_a_file(ws: Path) -> None:
    shutil.rmtree(ws / ".memory")
    (ws / ".memory").write_text("my notes\n")
    run = gitmem(ws, "recall", "Peter", "--json")
    assert run.code == 1
    assert ".memory" in run.error["error"] and "folder" in run.error["error"]
    assert (ws / ".memory").read_text() == "my notes\n"  # untouched
    assert ".memory" in one_line_error(gitmem(ws, "status"))


def test_index_lock_that_is_a_folder(ws: Path) -> None:
    (ws / ".memory/index.lock").unlink()
    (ws / ".memory/index.lock").mkdir()
    _new_commit(ws)
    run = gitmem(ws, "index", "--json")
    assert run.code == 1
    assert "index.lock" in run.error["error"] and "out of the way" in run.error["hint"]
    assert "index.lock" in one_line_error(gitmem(ws, "recall", "Peter"))


def test_config_file_that_is_a_folder(repo: GitRepo) -> None:
    repo.commit("first", files={"memory.md": "# Memory\n\n- W @Peter: lives in Lisbon\n"})
    (repo.path / ".gitmem.toml").mkdir()
    for args in (("recall", "Peter"), ("status",), ("config", "recall.k", "5"), ("index",)):
        run = gitmem(repo.path, *args, "--json")
        assert run.code == 1, args
        assert ".gitmem.toml" in run.error["error"] and run.error["hint"], args
    assert (repo.path / ".gitmem.toml").is_dir()


# --- disk full during index --------------------------------------------------------------------------


@needs_mounts
def test_disk_full_during_index_says_so(ws: Path) -> None:
    # Sizes from "the empty index does not fit" to "full in the middle of a batch": the last one
    # is where SQLite rolled back by itself and a second ROLLBACK hid the cause.
    for size in ("48k", "128k", "200k", "256k"):
        run = gitmem_mounted(ws, f"mount -t tmpfs -o size={size} tmpfs .memory", "index", "--rebuild", "--json")
        assert run.code == 1, (size, run.out)
        err = run.error
        assert "full" in err["error"] and "cannot rollback" not in err["error"], (size, err)
        assert "free some disk space" in err["hint"]
    # The real index (under the tmpfs) is untouched and still answers.
    assert gitmem(ws, "recall", "Peter").code == 0


# --- bad input on the read path ----------------------------------------------------------------------


@pytest.mark.parametrize(("args", "code", "says"), [
    (("recall", "--raw", "*"), 1, "FTS5 query '*' is malformed"),
    (("recall", "x", "--as-of", "0001-01-01"), 1, "too far in the past or the future"),
    (("recall", "x", "--since", "0001-01-01"), 1, "too far in the past or the future"),
    (("recall", "x", "--until", "0001-01-01"), 1, "too far in the past or the future"),
    (("changes", "--since", "0001-01-01"), 1, "too far in the past or the future"),
    (("recall", "x", "--as-of", "99999999999d"), 1, "too far in the past or the future"),
    (("core", "--as-of", "99999999999y"), 1, "too far in the past or the future"),
    (("recall", "x", "--during", "99999999999d"), 1, "too far in the past or the future"),
    (("recall", "Peter", "--budget", "1e23"), 2, "--budget"),
    (("why", "99999999999999999999999"), 1, "no chunk with id 99999999999999999999999"),
])
def test_hostile_arguments_are_one_line_errors(demo_root: Path, args: tuple[str, ...], code: int, says: str) -> None:
    run = gitmem(demo_root, *args, "--json")
    assert run.code == code
    assert says in run.error["error"] and run.error["hint"]
    text = one_line_error(gitmem(demo_root, *args), code) if code == 1 else gitmem(demo_root, *args).err
    assert says in text


def test_huge_budget_packs_everything(demo_root: Path) -> None:
    run = gitmem(demo_root, "recall", "Peter", "--budget", "99999999999999999999999", "--json")
    assert run.code == 0
    every = gitmem(demo_root, "recall", "Peter", "--budget", "10000000", "--json")
    assert json.loads(run.out)["results"] == json.loads(every.out)["results"]
    assert len(json.loads(run.out)["results"]) > 10


# --- init where nothing can be written ---------------------------------------------------------------


def test_init_below_a_file(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    run = gitmem(tmp_path, "init", str(tmp_path / "afile" / "ws"), "--json")
    assert run.code == 1
    assert "afile" in run.error["error"] and run.error["hint"]
    assert (tmp_path / "afile").read_text() == "x"


@needs_mounts
def test_init_in_a_read_only_folder(tmp_path: Path) -> None:
    target = tmp_path / "ro"
    target.mkdir()
    for where in (str(target / "ws"), str(target)):
        run = gitmem_mounted(tmp_path, readonly("ro"), "init", where, "--json")
        assert run.code == 1, run.out
        assert "read-only" in run.error["error"] or "Read-only" in run.error["error"], run.out
        assert run.error["hint"]
    assert list(target.iterdir()) == []


# --- anything unexpected: one line, the details in .memory/error.log ---------------------------------


def _break_index(ws: Path) -> None:
    """An index damaged in a way no code path anticipates (a table gone, the file still valid)."""
    conn = sqlite3.connect(ws / ".memory/index.sqlite")
    conn.execute("DROP TABLE chunks_fts")
    conn.commit()
    conn.close()


def test_unexpected_exception_is_one_line_and_logged(ws: Path) -> None:
    _break_index(ws)
    run = gitmem(ws, "recall", "Peter", "--json")
    assert run.code == 1
    err = run.error
    assert err["type"] == "InternalError" and err["error"].startswith("unexpected error: OperationalError")
    assert "error.log" in err["hint"]
    log = (ws / ".memory/error.log").read_text()
    assert "Traceback" in log and "chunks_fts" in log and "recall Peter --json" in log
    assert "unexpected error" in one_line_error(gitmem(ws, "recall", "Peter"))
    # GITMEM_DEBUG=1 asks for the traceback on stderr: the one place it may appear.
    proc = subprocess.run(_command(ws, "recall", "Peter"), capture_output=True, text=True,
                          env={**__import__("os").environ, "GITMEM_DEBUG": "1"})
    assert proc.returncode == 1 and "Traceback" in proc.stderr and "Error: unexpected error" in proc.stderr


# --- MCP ------------------------------------------------------------------------------------------------


class McpClient:
    """A line-by-line JSON-RPC client over `gitmem mcp`'s stdio, to send what an SDK client can't."""

    def __init__(self, ws: Path) -> None:
        self.proc = subprocess.Popen(_command(ws, "mcp"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"}, reply=False)

    def send(self, message: dict[str, Any] | str, reply: bool = True) -> dict[str, Any] | None:
        import select

        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
        self.proc.stdin.flush()
        if not reply:
            return None
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        assert ready, f"no reply to {message!r}"
        return json.loads(self.proc.stdout.readline())  # type: ignore[no-any-return]

    def call(self, ident: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        reply = self.send({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                           "params": {"name": tool, "arguments": arguments}})
        assert reply is not None and reply["id"] == ident
        return reply["result"]  # type: ignore[no-any-return]

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        return self.proc.stderr.read()


def _error_result(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is True
    err = result["structuredContent"]
    ERROR_SCHEMA.validate(err)
    assert json.loads(result["content"][0]["text"]) == err
    return err  # type: ignore[no-any-return]


def test_mcp_answers_lines_that_are_not_json_rpc(demo_root: Path) -> None:
    client = McpClient(demo_root)
    try:
        for line in ("this is not json", '{"jsonrpc":"2.0","id":', "\x1b[31m{"):
            assert client.send(line) == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        for line in ("[]", '{"jsonrpc":"2.0","id":9,"method":5}', "42"):
            reply = client.send(line)
            assert reply is not None and reply["error"]["code"] == -32600 and reply["id"] is None
        # ... and keeps serving.
        assert not client.call(1, "recall", {"query": "Peter"}).get("isError")
    finally:
        assert "Traceback" not in client.close()


def test_mcp_errors_are_the_contracts_error_object(ws: Path) -> None:
    client = McpClient(ws)
    try:
        err = _error_result(client.call(1, "why", {"target": "99999999999999999999999"}))
        assert err["error"] == "no chunk with id 99999999999999999999999"
        err = _error_result(client.call(2, "recall", {"query": "*", "raw": True}))
        assert err["type"] == "BadQuery"
        err = _error_result(client.call(3, "recall", {"as_of": "0001-01-01"}))
        assert err["type"] == "BadRevision" and "too far" in err["error"]
        err = _error_result(client.call(4, "recall", {"k": 0}))
        assert err["type"] == "UsageError" and "k:" in err["error"] and err["hint"]
        err = _error_result(client.call(5, "no-such-tool", {}))
        assert err["type"] == "UsageError" and "no-such-tool" in err["error"]
        assert not client.call(6, "recall", {"query": "Peter", "budget": 10**23}).get("isError")
        _break_index(ws)
        err = _error_result(client.call(7, "recall", {"query": "Peter"}))
        assert err["type"] == "InternalError" and "error.log" in err["hint"]
        assert "Error executing tool" not in err["error"]
    finally:
        assert "Traceback" not in client.close()
