"""`gitmem review`: show, merge or discard the pending reflection proposal.

show: `git diff base..proposal` plus the machine-readable summary the proposal carries in its
bank/.reflect.json (`run`: per change its evidence and confidence delta; skipped blocks; rejected
model output).
merge: a real `git merge --no-ff` of the proposal into the current branch (the user asked for it),
refused with the exact reason when HEAD moved since the proposal was built, or when uncommitted
changes touch paths the proposal changes. Then the branch is deleted (CAS) and the index updated.
discard: delete the branch (CAS): the last reflection point stays where it was.
"""

from __future__ import annotations

from typing import Any

from gitmem.config import load_config
from gitmem.errors import GitmemError
from gitmem.reflect.branch import check_ours, move, read_ref, ref_name
from gitmem.reflect.state import read_state
from gitmem.timeline import git
from gitmem.workspace import Workspace


def _pending(ws: Workspace) -> tuple[str, str, str]:
    branch = load_config(ws).reflect.branch
    ref = ref_name(ws.root, branch)
    commit = read_ref(ws.root, ref)
    if commit is None:
        raise GitmemError(f"no reflection proposal is pending (branch {branch} does not exist)",
                          "run `gitmem reflect` to make one")
    check_ours(ws.root, ref, commit)
    base = git.first_parent(ws.root, commit)
    if base is None:
        raise GitmemError(f"{branch} does not look like a reflection proposal (its commit has no parent)",
                          f"delete it with `gitmem review --discard` or `git branch -D {branch}`")
    return ref, commit, base


def changed_paths(ws: Workspace, base: str, commit: str) -> list[str]:
    text = git.out(ws.root, "diff", "--name-only", "-z", base, commit)
    return [p for p in text.split("\0") if p]


def show(ws: Workspace, *, diff: bool = True) -> dict[str, Any]:
    ref, commit, base = _pending(ws)
    head = git.head(ws.root)
    state = read_state(ws.root, commit)
    out: dict[str, Any] = {
        "branch": ref.removeprefix("refs/heads/"), "commit": commit, "base": base, "head": head,
        "stale": head != base, "paths": changed_paths(ws, base, commit),
        "summary": state.run, "diffstat": git.out(ws.root, "diff", "--stat", base, commit),
    }
    if diff:
        out["diff"] = git.out(ws.root, "diff", base, commit)
    if out["stale"]:
        out["notes"] = ["your branch moved since this proposal was built: run `gitmem reflect` to rebuild it on HEAD"]
    return out


def merge(ws: Workspace) -> dict[str, Any]:
    ref, commit, base = _pending(ws)
    head = git.head(ws.root)
    if head != base:
        raise GitmemError(
            f"HEAD moved since the proposal was built (proposal base {base[:7]}, HEAD {head[:7] if head else 'none'})",
            "run `gitmem reflect` to rebuild the proposal on top of HEAD, then `gitmem review --merge`")
    paths = changed_paths(ws, base, commit)
    overlap = sorted({p for _, p in git.status(ws.root)}.intersection(paths))
    if overlap:
        raise GitmemError(
            f"uncommitted changes touch files the proposal changes: {', '.join(overlap[:5])}"
            + (" ..." if len(overlap) > 5 else ""),
            "commit or stash those changes first (then re-run `gitmem reflect`), or `gitmem review --discard`")
    msg = f"Merge gitmem reflection {commit[:7]}\n\n{git.out(ws.root, 'log', '-1', '--format=%B', commit)}"
    # The message through a file in the git dir: a proposal's message can outgrow one argument
    # (E2BIG), and `git merge -F` does not read stdin.
    msg_file = git.git_path(ws.root, "GITMEM_MERGE_MSG")
    msg_file.write_bytes(msg.encode("utf-8"))
    try:
        proc = git.run(ws.root, ["merge", "--no-ff", "--no-edit", "-F", str(msg_file), commit], check=False)
    finally:
        msg_file.unlink(missing_ok=True)
    if proc.returncode != 0:
        # Abort only the merge this call started: a merge the user had in progress (git refuses to
        # start ours then) holds their conflict resolutions, and `merge --abort` would throw them away.
        if git.resolve(ws.root, "MERGE_HEAD") == commit:
            git.run(ws.root, ["merge", "--abort"], check=False)
        err = git.error_line(proc.stderr) or git.error_line(proc.stdout)
        raise GitmemError(f"git merge failed: {err or 'unknown error'}",
                          "resolve the problem git reports, or `gitmem review --discard`")
    merged = git.head(ws.root)
    move(ws.root, ref, None, commit)
    notes: list[str] = []
    try:
        from gitmem.index.indexer import update

        notes += update(ws, wait=5.0).notes
    except GitmemError as exc:
        notes.append(f"the index was not updated ({exc.message}); run `gitmem index`")
    return {"status": "merged", "commit": commit, "merge": merged, "paths": paths, "notes": notes}


def discard(ws: Workspace) -> dict[str, Any]:
    ref, commit, _ = _pending(ws)
    move(ws.root, ref, None, commit)
    return {"status": "discarded", "branch": ref.removeprefix("refs/heads/"), "commit": commit}
