"""`gitmem review`: show, merge or discard the pending reflection proposal.

show: the machine-readable summary the proposal carries in its bank/.reflect.json (`run`: per
change its evidence text, citation and confidence delta; skipped blocks; rejected model output),
then `git diff base..proposal` without the state file's own diff unless `full` (it is hundreds of
lines of JSON that say again what the summary says). `html` renders the same as one page.
merge: a real `git merge --no-ff` of the proposal into the current branch (the user asked for it),
refused with the exact reason when HEAD moved since the proposal was built, or when uncommitted
changes touch paths the proposal changes. Then the branch is deleted (CAS) and the index updated.
merge and discard run under gitmem's writer lock (Workspace.writing), as retain and forget do.
discard: delete the branch (CAS): the last reflection point stays where it was, and what was
turned down is remembered (discarded.py) so the next `reflect` does not propose it again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitmem.config import load_config
from gitmem.errors import GitmemError
from gitmem.layout import STATE_PATH, parse_citation
from gitmem.reflect import discarded
from gitmem.reflect.branch import check_ours, move, read_ref, ref_name
from gitmem.reflect.confidence import evidence_key
from gitmem.reflect.state import read_state
from gitmem.safefile import write_atomic
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


def show(ws: Workspace, *, diff: bool = True, full: bool = False) -> dict[str, Any]:
    """The pending proposal; its diff leaves out the state file unless `full`."""
    ref, commit, base = _pending(ws)
    head = git.head(ws.root)
    state = read_state(ws.root, commit)
    hide = () if full else ("--", ".", f":(exclude){STATE_PATH}")
    out: dict[str, Any] = {
        "branch": ref.removeprefix("refs/heads/"), "commit": commit, "base": base, "head": head,
        "stale": head != base, "paths": changed_paths(ws, base, commit),
        "summary": state.run, "diffstat": git.out(ws.root, "diff", "--stat", base, commit),
        "hidden": [] if full else [STATE_PATH],
    }
    if diff:
        out["diff"] = git.out(ws.root, "diff", base, commit, *hide)
    if out["stale"]:
        out["notes"] = ["your branch moved since this proposal was built: run `gitmem reflect` to rebuild it on HEAD"]
    return out


def merge(ws: Workspace) -> dict[str, Any]:
    with ws.writing():  # commits to the user's branch: never while forget rewrites it or retain commits
        return _merge(ws)


def _merge(ws: Workspace) -> dict[str, Any]:
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
    with ws.writing():  # deletes the review branch, which forget rewrites
        ref, commit, base = _pending(ws)
        evidence, pages = turned_down(ws, base, commit)
        window = read_state(ws.root, commit).run.get("window")
        move(ws.root, ref, None, commit)
    discarded.remember(ws, window if isinstance(window, str) else None, evidence, pages)
    return {"status": "discarded", "branch": ref.removeprefix("refs/heads/"), "commit": commit}


def turned_down(ws: Workspace, base: str, commit: str) -> tuple[dict[str, list[str]], dict[str, str]]:
    """What discarding `commit` turns down: {opinion key: [evidence key]} of its confidence moves
    and {path: content hash} of the pages it writes (see discarded.py)."""
    evidence: dict[str, list[str]] = {}
    for c in read_state(ws.root, commit).run.get("changes", []):
        if not (isinstance(c, dict) and isinstance(c.get("key"), str) and isinstance(c.get("evidence"), list)):
            continue
        keys = []
        for e in c["evidence"]:
            cited = parse_citation(str(e.get("source", ""))) if isinstance(e, dict) else None
            if isinstance(e, dict) and isinstance(e.get("content"), str) and (e.get("path") or cited):
                keys.append(evidence_key(str(e.get("path") or (cited.path if cited else "")), e["content"]))
        if keys:
            evidence[c["key"]] = keys
    pages: dict[str, str] = {}
    with git.CatFile(ws.root) as cat:
        for path in changed_paths(ws, base, commit):
            data = cat.read(f"{commit}:{path}")
            if path != STATE_PATH and data is not None:
                pages[path] = discarded.content_key(data)
    return evidence, pages


def html(ws: Workspace, *, full: bool = False) -> str:
    """The pending proposal as one self-contained HTML page (report.py)."""
    from gitmem.reflect.report import render

    shown = show(ws, full=full)
    return render(shown, read_state(ws.root, shown["commit"]).opinions)


def write_html(ws: Workspace, target: Path, *, full: bool = False) -> Path:
    """Write `html()` to `target`, which must lie inside the workspace (not in .git, not through a
    symlink): gitmem writes nowhere else. Returns the path written."""
    root = ws.root.resolve()
    where = target.parent.resolve() / target.name
    try:
        rel = where.relative_to(root)
    except ValueError:
        raise GitmemError(f"{target} is outside the workspace {root}",
                          "write it inside the workspace (e.g. .memory/review.html), or use `--html -` and redirect stdout") from None
    if not rel.parts or rel.parts[0] == ".git" or where.is_symlink() or where.is_dir() or not where.parent.is_dir():
        raise GitmemError(f"cannot write the review to {target}", "name a new or regular file inside the workspace, e.g. .memory/review.html")
    write_atomic(where, html(ws, full=full).encode("utf-8"))
    return where
