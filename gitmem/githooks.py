"""Installing, removing and inspecting gitmem's git hooks, and the hook's failure record.

Install model (after pre-commit's): each hook file is a small POSIX sh script rendered from
`hooks/hook.sh` (shipped as package data `gitmem._hooks`). It records the interpreter that
installed it and a marker line identifying it as ours. A hook that was already there and is not
ours is kept as `<hook>.legacy` and run first by our script, with the same arguments and stdin.
Uninstall deletes our scripts and moves `.legacy` files back, byte for byte.

Failure record (read by `gitmem status` through `last_hook_error`), all under the work tree's
`.memory/` folder:
  hook.log    one line per failure: "<UTC ISO time> <hook> <ExceptionType>: <message>"; written by
              gitmem.hookrun, or by the sh script itself when the interpreter or gitmem is gone.
  hook.state  JSON {"last_ok": "<UTC ISO time>", "by_hook": {"<hook>": "<UTC ISO time>"}}: rewritten
              after every successful hook run, so a failure only counts while it is newer than the
              last success.

This module is imported by the hook at run time (for the failure record), so its top level stays
cheap: no click, no pygit2, and importlib.resources only when installing.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from gitmem.errors import GitmemError
from gitmem import layout
from gitmem.safefile import open_nofollow, write_atomic
from gitmem.workspace import Workspace

if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

HOOKS = ("post-commit", "post-merge", "post-rewrite", "post-checkout")
MARKER = "# gitmem-managed-hook"
TEMPLATE = "hook.sh"
LEGACY_SUFFIX = ".legacy"
_LOG_LIMIT = 256 * 1024  # a hook failing on every commit for years must not fill the disk


# NamedTuples, not dataclasses: every hook run imports this module (see parse/model.py).
class HookStatus(NamedTuple):
    name: str
    state: str  # "installed" | "foreign" | "absent"
    legacy: bool  # a replaced user hook is saved as <name>.legacy and run first
    current: bool  # the installed script is what `install` would write now (same interpreter, template)
    interpreter: str | None  # the python our script runs, when installed
    interpreter_ok: bool  # that interpreter still exists

    def as_dict(self) -> dict[str, object]:
        return {
            "hook": self.name,
            "state": self.state,
            "legacy": self.legacy,
            "current": self.current,
            "interpreter": self.interpreter,
            "interpreter_ok": self.interpreter_ok,
        }


class HooksReport(NamedTuple):
    hooks_dir: Path
    hooks: list[HookStatus]
    changed: list[str]  # what install/uninstall did, one line per action; empty for status
    merge_driver: dict[str, object] | None = None  # merge_setup.DriverStatus.as_dict()

    def as_dict(self) -> dict[str, object]:
        return {
            "hooks_dir": str(self.hooks_dir),
            "hooks": [h.as_dict() for h in self.hooks],
            "changed": self.changed,
            "merge_driver": self.merge_driver,
        }


def _driver(ws: Workspace) -> dict[str, object]:
    from gitmem import merge_setup

    return merge_setup.status(ws).as_dict()


def hooks_dir(ws: Workspace) -> Path:
    """Where git looks for this work tree's hooks: core.hooksPath (relative paths resolved against
    the work tree root, as git does) or the common git dir's hooks/, shared by all worktrees."""
    from gitmem.timeline import git

    return git.git_path(ws.root, "hooks").resolve()


def render(hook: str, python: str | None = None) -> bytes:
    """The script `install` writes for `hook`, for the given interpreter (default: this one)."""
    import shlex
    from importlib.resources import files

    template = files("gitmem._hooks").joinpath(TEMPLATE).read_text(encoding="utf-8")
    text = template.replace("@@PYTHON@@", shlex.quote(python or sys.executable))
    return text.replace("@@HOOK@@", shlex.quote(hook)).encode("utf-8")


def _present(path: Path) -> bool:
    # lexists: a user's hook may be a symlink (hook managers do that), even a dangling one.
    return os.path.lexists(path)


def is_ours(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return MARKER.encode() in head


def _interpreter(path: Path) -> str | None:
    """The PY=... value recorded in one of our scripts."""
    import shlex  # here, not at the top: the hook imports this module and never parses a script

    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("PY="):
            parts = shlex.split(line[3:])
            return parts[0] if parts else None
    return None


def _status_of(directory: Path, hook: str) -> HookStatus:
    path = directory / hook
    legacy = _present(directory / (hook + LEGACY_SUFFIX))
    if not _present(path):
        return HookStatus(hook, "absent", legacy, False, None, False)
    if not is_ours(path):
        return HookStatus(hook, "foreign", legacy, False, None, False)
    py = _interpreter(path)
    current = path.read_bytes() == render(hook) and os.access(path, os.X_OK)
    ok = py is not None and os.access(py, os.X_OK)
    return HookStatus(hook, "installed", legacy, current, py, ok)


def status(ws: Workspace) -> HooksReport:
    directory = hooks_dir(ws)
    return HooksReport(directory, [_status_of(directory, h) for h in HOOKS], [], _driver(ws))


def _make_executable(path: Path) -> None:
    mode = path.stat().st_mode
    path.chmod(mode | 0o111)


def _write_atomic(path: Path, data: bytes) -> None:
    if os.path.islink(path):
        os.unlink(path)  # a foreign hook symlink was kept as .legacy already; ours are files
    write_atomic(path, data, 0o755)


def install(ws: Workspace, python: str | None = None) -> HooksReport:
    """Install (or refresh) all hooks. Idempotent: a second run changes nothing.

    `python` is the interpreter the hooks will run (default: the one running this code, which is
    the one that has this gitmem installed)."""
    directory = hooks_dir(ws)
    _refuse_tracked_hooks_dir(ws, directory)
    # Check every hook before touching any, so a refusal leaves the hooks as they were.
    for hook in HOOKS:
        path, legacy = directory / hook, directory / (hook + LEGACY_SUFFIX)
        if _present(path) and not is_ours(path) and _present(legacy):
            raise GitmemError(
                f"{path} is not gitmem's and {legacy.name} already exists; installing would overwrite one of them",
                f"merge {path.name} into {legacy.name} (or remove one), then run `gitmem hooks install` again",
            )
    directory.mkdir(parents=True, exist_ok=True)
    changed: list[str] = []
    for hook in HOOKS:
        path, legacy = directory / hook, directory / (hook + LEGACY_SUFFIX)
        script = render(hook, python)
        if _present(path) and not is_ours(path):
            os.replace(path, legacy)
            changed.append(f"kept existing {hook} as {legacy.name}")
        if path.exists() and path.read_bytes() == script:
            if not os.access(path, os.X_OK):
                _make_executable(path)
                changed.append(f"made {hook} executable")
            continue
        refreshed = path.exists()
        _write_atomic(path, script)
        changed.append(f"{'updated' if refreshed else 'installed'} {hook}")
    from gitmem import merge_setup

    changed += merge_setup.install(ws, python)
    return HooksReport(directory, [_status_of(directory, h) for h in HOOKS], changed, _driver(ws))


def _refuse_tracked_hooks_dir(ws: Workspace, directory: Path) -> None:
    """A core.hooksPath inside the work tree (husky's `.husky/`, lefthook, ...) is a committed
    folder another tool owns: our scripts name this machine's interpreter, and moving its hooks
    aside as .legacy would be committed too. Refuse, and say how to call gitmem from there."""
    root = ws.root.resolve()
    try:
        rel = directory.relative_to(root)
    except ValueError:
        return  # outside the work tree: .git/hooks, or a machine-wide hooks folder
    if rel.parts and rel.parts[0] == ".git":
        return
    from gitmem.timeline import git

    tracked = git.run(ws.root, ["ls-files", "-z", "--", f"{rel.as_posix()}/"], check=False).stdout
    if not tracked.strip(b"\0"):
        return  # a folder of this machine's own (not committed): installing there is what was asked
    raise GitmemError(
        f"core.hooksPath is {rel.as_posix()}/, a folder committed in the work tree (a hook manager such as"
        " husky keeps it in git): gitmem will not write machine-specific scripts there nor rename its hooks",
        "add `python -m gitmem.hookrun post-commit` (and post-merge, post-rewrite, post-checkout with \"$@\")"
        " to that tool's hook scripts, or `git config --unset core.hooksPath` to use .git/hooks",
    )


def uninstall(ws: Workspace) -> HooksReport:
    """Remove our scripts and put saved `.legacy` hooks back; foreign hooks are left alone."""
    directory = hooks_dir(ws)
    changed: list[str] = []
    for hook in HOOKS:
        path, legacy = directory / hook, directory / (hook + LEGACY_SUFFIX)
        if _present(path) and is_ours(path):
            path.unlink()
            changed.append(f"removed {hook}")
        if _present(legacy) and not _present(path):
            os.replace(legacy, path)
            changed.append(f"restored {hook} from {legacy.name}")
    from gitmem import merge_setup

    changed += merge_setup.uninstall(ws)
    return HooksReport(directory, [_status_of(directory, h) for h in HOOKS], changed, _driver(ws))


# --- failure record -------------------------------------------------------------------------


def _now() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"


def _state_path(ws: Workspace) -> Path:
    return ws.derived / layout.HOOK_STATE


def read_state(ws: Workspace) -> dict[str, Any]:
    """The hook state, or {} when it is missing, unreadable, a symlink or not JSON: a bad state file
    only loses the "last ok" times, never a hook run."""
    try:
        fd = open_nofollow(_state_path(ws), os.O_RDONLY, f"{layout.DERIVED_DIR}/{layout.HOOK_STATE}")
        try:
            data = json.loads(os.read(fd, 1 << 20).decode("utf-8"))
        finally:
            os.close(fd)
    except (OSError, ValueError, GitmemError):
        return {}
    return data if isinstance(data, dict) else {}


def record_success(ws: Workspace, hook: str) -> None:
    ws.ensure_derived()
    now = _now()
    by_hook = read_state(ws).get("by_hook")
    by_hook = dict(by_hook) if isinstance(by_hook, dict) else {}
    by_hook[hook] = now
    write_atomic(ws.derived_file(layout.HOOK_STATE), json.dumps({"last_ok": now, "by_hook": by_hook}).encode("utf-8"))


def record_failure(ws: Workspace, hook: str, exc: BaseException) -> None:
    """Append one line for `exc` to hook.log (single line, so the log stays greppable)."""
    ws.ensure_derived()
    message = " ".join(str(exc).split()) or "(no message)"
    line = f"{_now()} {hook} {type(exc).__name__}: {message}\n"
    log = ws.derived_file(ws.hook_log.name)
    try:
        if log.stat().st_size > _LOG_LIMIT:
            # Keep the newer half; the oldest failures are the least useful.
            tail = log.read_bytes()[-_LOG_LIMIT // 2 :]
            write_atomic(log, tail[tail.find(b"\n") + 1 :])
    except FileNotFoundError:
        pass
    fd = open_nofollow(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, f"{layout.DERIVED_DIR}/{layout.HOOK_LOG}")
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(line)


def _parse_time(text: str) -> datetime | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def last_hook_error(ws: Workspace) -> str | None:
    """The last hook.log line when it is newer than the last successful hook run, else None."""
    try:
        with os.fdopen(os.open(ws.hook_log, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 4096))
            lines = [ln for ln in fh.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    except OSError:
        return None
    if not lines:
        return None
    last = lines[-1]
    when = _parse_time(last.split(" ", 1)[0])
    ok = _parse_time(str(read_state(ws).get("last_ok", "")))
    if when is not None and ok is not None and when <= ok:
        return None
    return last
