"""`gitmem retain`: append one Retain bullet to a daily log and commit just that file.

The write path agents use most, so it is careful about three things:
- the user's file: the bullet goes after the last item of the existing Retain section and every
  other byte (CRLF line endings, a BOM, a missing final newline) stays as it was;
- the user's git state: only the log file is committed (`git commit --only`), so changes the user
  has staged elsewhere are neither committed nor unstaged; nothing is committed while a merge or
  rebase is in progress; a failed commit puts the file back as it was;
- concurrency: several agents (or one agent's parallel tool calls) may retain at once, and forget
  or review may be rewriting or merging, so the read-modify-write-commit runs under gitmem's one
  writer lock (Workspace.writing), and no bullet is lost.

The commit goes through `git commit` (not plumbing) on purpose: the user's commit hooks run,
including gitmem's post-commit hook, which indexes the new fact.
"""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path
from typing import Any

from gitmem import layout
from gitmem.config import load_config
from gitmem.errors import GitError, GitmemError
from gitmem.parse import Alias, Diagnostic, RetainFact, is_retain_heading, outline, parse_markdown, parse_retain_line, retain_alias
from gitmem.parse.retain import LIST_MARKER
from gitmem.safefile import refuse_symlink, write_atomic
from gitmem.timeline import git
from gitmem.workspace import Workspace

SUBJECT_LIMIT = 72
# git operations a commit must not land in the middle of: (git-dir entry, what to tell the user).
_IN_PROGRESS = (
    ("MERGE_HEAD", "a merge"),
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase or `git am`"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
)
# Another git process (the user's own, an editor) holding the index: wait this long for it.
INDEX_LOCK_WAIT = 10.0


def parse_day(day: str | date | None) -> date:
    """The log's day: today in local time by default, else an ISO date."""
    if day is None:
        return date.today()
    if isinstance(day, date):
        return day
    try:
        return date.fromisoformat(day.strip())
    except ValueError:
        raise GitmemError(f"{day!r} is not a day", "write the day as YYYY-MM-DD, e.g. --date 2025-11-27") from None


def validate(bullet: str) -> tuple[str, RetainFact | Alias]:
    """The normalised bullet line ("- W @Peter: ...") and what it states: a fact, or an alias
    (`alias: @Robert = Bob`, which recall reads from a Retain section); GitmemError when invalid."""
    text = bullet.strip()
    fact = parse_retain_line(text)
    if isinstance(fact, Diagnostic):
        raise GitmemError(
            f"not a valid Retain bullet: {fact.message}",
            "write one line like `W @Peter: Moved to Lisbon.`, `B: I fixed ...`, `O(c=0.8) @Peter: Prefers ...`,"
            " `S: ...` or `alias: @Robert = Bob, Bobby`",
        )
    m = LIST_MARKER.match(text)
    rest = text[m.end() :].strip() if m else text
    return f"- {rest}", fact


def operation_in_progress(ws: Workspace) -> str | None:
    for name, what in _IN_PROGRESS:
        if git.git_path(ws.root, name).exists():
            return what
    return None


def _line_offsets(raw: bytes) -> list[int]:
    """Byte offset where each line starts, plus len(raw) (lines split on b"\\n", like split_lines)."""
    starts = [0]
    pos = raw.find(b"\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = raw.find(b"\n", pos + 1)
    if starts[-1] != len(raw):
        starts.append(len(raw))
    return starts


def _insert_after(raw: bytes, line: int, bullet: bytes, eol: bytes) -> bytes:
    """`raw` with `bullet` as a new line after 1-based `line` (0 = before the first line)."""
    offsets = _line_offsets(raw)
    at = offsets[line] if line < len(offsets) else len(raw)
    if at == len(raw) and raw and not raw.endswith(b"\n"):
        # Appending after a last line without a newline: keep the file without a final newline.
        return raw + eol + bullet
    return raw[:at] + bullet + eol + raw[at:]


def _new_section(raw: bytes, bullet: bytes, eol: bytes) -> tuple[bytes, int]:
    """`raw` with a `## Retain` section holding `bullet` appended; returns (bytes, bullet's line)."""
    missing_final_newline = not raw.endswith(b"\n")
    body = raw if not missing_final_newline else raw + eol
    lines = body.split(b"\n")[:-1]
    if lines and lines[-1].strip():
        body += eol
        lines.append(b"")
    body += b"## Retain" + eol + bullet + (b"" if missing_final_newline else eol)
    return body, len(lines) + 2


def _retain_anchor(raw: bytes, path: str) -> int | None:
    """The line after which a new bullet belongs: the last block of the last Retain section, or
    that section's heading when it is still empty; None when the file has no Retain section."""
    parsed = outline(raw, path)
    in_retain = [b for b in parsed.blocks if any(is_retain_heading(h) for h in b.heading)]
    heading_line = next((s.heading_end for s in reversed(parsed.sections) if s.is_retain), None)
    last_block = in_retain[-1].end if in_retain else None
    if last_block is not None and (heading_line is None or last_block > heading_line):
        return last_block
    return heading_line


def _lands_as_bullet(raw: bytes, path: str, line: int) -> bool:
    """The parser reads the inserted line as a Retain fact or alias bullet (not inside a code
    fence, say): an alias is a note of the Retain section whose content reads as one."""
    return any(b.start == line and (b.fact or retain_alias(b.heading, b.content) is not None) for b in parse_markdown(raw, path).blocks)


def append_bullet(raw: bytes | None, bullet: str, day: date, path: str) -> tuple[bytes, int, bool, bool]:
    """New file content with `bullet` appended to the Retain section.

    Returns (content, bullet's 1-based line, created_file, created_section).
    """
    if raw is None or not raw.strip():
        content = f"# {day.isoformat()}\n\n## Retain\n{bullet}\n".encode()
        return content, 4, True, True
    first = raw.find(b"\n")
    eol = b"\r\n" if first > 0 and raw[first - 1 : first] == b"\r" else b"\n"
    data = bullet.encode("utf-8")
    anchor = _retain_anchor(raw, path)
    if anchor is not None:
        content = _insert_after(raw, anchor, data, eol)
        if _lands_as_bullet(content, path, anchor + 1):
            return content, anchor + 1, False, False
    content, line = _new_section(raw, data, eol)
    if _lands_as_bullet(content, path, line):
        return content, line, False, True
    raise GitmemError(
        f"cannot place a Retain bullet in {path}: the end of the file is not plain Markdown"
        " (an unclosed ``` code fence?)",
        f"fix {path} (close the code fence), then retain again",
    )


def _subject(bullet_line: str) -> str:
    text = " ".join(bullet_line[2:].split())
    subject = f"retain: {text}"
    return subject if len(subject) <= SUBJECT_LIMIT else subject[: SUBJECT_LIMIT - 1].rstrip() + "…"


def _git_retrying(ws: Workspace, args: list[str], input: bytes | None = None) -> None:
    """Run git, waiting out another process's index.lock (the user's git, an editor)."""
    deadline = time.monotonic() + INDEX_LOCK_WAIT
    while True:
        proc = git.run(ws.root, args, check=False, input=input)
        if proc.returncode == 0:
            return
        err = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
        if "index.lock" in err and time.monotonic() < deadline:
            time.sleep(0.05)
            continue
        raise GitError(
            f"git {args[0]} failed: {git.error_line(proc.stderr) or 'no message'}",
            "check `git status`; a commit hook or a missing user.name/user.email can stop the commit",
        )


def _commit(ws: Workspace, rel: str, bullet_line: str, tracked: bool) -> str:
    if not tracked:
        _git_retrying(ws, ["add", "--", rel])  # --only commits paths git already knows
    message = f"{_subject(bullet_line)}\n\n{bullet_line}\n\nAppended to {rel} by `gitmem retain`.\n"
    # The message goes through stdin: as an argument, a bullet over ~128 KB fails with E2BIG.
    _git_retrying(ws, ["commit", "--quiet", "--only", "-F", "-", "--", rel], input=message.encode("utf-8"))
    oid = git.head(ws.root)
    if oid is None:
        raise GitError(f"git commit of {rel} left no HEAD commit", "run `git status`, then retain again")
    return oid


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _committed_line(ws: Workspace, rel: str, lineno: int) -> bytes | None:
    """Line `lineno` of `rel` as committed at HEAD (no line ending), None when it has none."""
    proc = git.run(ws.root, ["cat-file", "blob", f"HEAD:{rel}"], check=False)
    if proc.returncode != 0:
        return None
    lines = proc.stdout.split(b"\n")
    return lines[lineno - 1].rstrip(b"\r") if 0 < lineno <= len(lines) else None


def _undo(ws: Workspace, path: Path, rel: str, before: bytes | None, written: bytes, tracked: bool) -> str | None:
    """Undo the append after a failed commit, so a retry does not write the bullet twice; but only
    bytes retain wrote: when the file changed since (the user's editor, say), it is left alone.
    Returns why it was left, or None when undone."""
    if _read(path) != written:
        return f"{rel} changed while retain was committing, so gitmem left it as it is; check it before retrying"
    if before is None:
        path.unlink(missing_ok=True)
    else:
        write_atomic(path, before)
    if not tracked:
        git.run(ws.root, ["rm", "--cached", "--quiet", "--ignore-unmatch", "--", rel], check=False)
    return None


def _write_bullet(path: Path, rel: str, line_text: str, the_day: date) -> tuple[bytes | None, bytes, int, bool, bool]:
    """Append the bullet atomically; returns (before, written, line, created_file, created_section).
    The file is read again right before the rename: an edit saved meanwhile is never overwritten
    with the older bytes (the bullet is placed again on the new content instead)."""
    for _ in range(20):
        before = _read(path)
        content, lineno, created_file, created_section = append_bullet(before, line_text, the_day, rel)
        if _read(path) == before:
            write_atomic(path, content)
            return before, content, lineno, created_file, created_section
        time.sleep(0.05)
    raise GitmemError(f"{rel} keeps changing while retain writes it", "retry when the other writer is done")


def retain(ws: Workspace, bullet: str, day: str | date | None = None, commit: bool = True) -> dict[str, Any]:
    """Append `bullet` to memory/<day>.md's Retain section and (by default) commit only that file.

    Returns what was written and where, with the citation of the new line
    (`memory/2025-11-27.md#L12@1a2b3c4`, or `@worktree` when not committed).
    """
    line_text, fact = validate(bullet)
    the_day = parse_day(day)
    rel = layout.log_path(the_day)
    path = ws.root / rel
    notes: list[str] = []
    with ws.writing():
        if commit:
            what = operation_in_progress(ws)
            if what is not None:
                raise GitmemError(
                    f"{what} is in progress in {ws.root}; retain will not commit in the middle of it",
                    "finish or abort it (git status says how), or retain with --no-commit",
                )
        refuse_symlink(path.parent, f"{layout.LOG_DIR}/")
        refuse_symlink(path, rel)
        if path.exists() and not path.is_file():
            raise GitmemError(f"{rel} exists and is not a file", f"move {rel} away, then retain again")
        # A log over the index's size limit is never indexed, so a bullet in it could never be
        # recalled; and finding its Retain section means reading all of it (a 50 MB log took two
        # minutes and 800 MB). Decided from the size alone, before reading a byte.
        limit = load_config(ws).index.max_file_bytes
        if path.exists() and path.stat().st_size > limit:
            raise GitmemError(
                f"{rel} is {path.stat().st_size} bytes, over index.max_file_bytes ({limit}): it is not indexed,"
                " so a bullet appended to it could never be recalled",
                "retain into another day with --date, split the file, or raise the limit with"
                " `gitmem config index.max_file_bytes N`",
            )
        tracked = git.ok(ws.root, "ls-files", "--error-unmatch", "--", rel)
        if commit and tracked and git.head(ws.root) and not git.ok(ws.root, "diff", "--quiet", "HEAD", "--", rel):
            notes.append(f"{rel} had uncommitted edits; they were committed together with the bullet")
        path.parent.mkdir(parents=True, exist_ok=True)
        before, written, lineno, created_file, created_section = _write_bullet(path, rel, line_text, the_day)
        oid: str | None = None
        if commit:
            try:
                oid = _commit(ws, rel, line_text, tracked)
            except BaseException as exc:
                # Another commit (the user's `git commit -am`) may already hold the bullet: then
                # there is nothing to undo, and undoing would make the next commit delete it.
                if _committed_line(ws, rel, lineno) == line_text.encode("utf-8") and _read(path) == written:
                    oid = git.head(ws.root)
                    notes.append(f"the bullet was already committed by another commit ({oid[:7] if oid else '?'})")
                else:
                    left = _undo(ws, path, rel, before, written, tracked)
                    if left is not None and isinstance(exc, GitmemError):
                        raise GitmemError(exc.message, left) from exc
                    raise

    if isinstance(fact, Alias):
        said: dict[str, Any] = {"kind": "alias", "letter": None, "confidence": None, "content": line_text[2:],
                                "entities": [fact.entity], "names": list(fact.names)}
    else:
        said = {"kind": fact.kind, "letter": fact.letter, "confidence": fact.confidence, "content": fact.body,
                "entities": list(fact.entities), "names": []}
    return {
        "bullet": line_text,
        **said,
        "day": the_day.isoformat(),
        "path": rel,
        "line": lineno,
        "created_file": created_file,
        "created_section": created_section,
        "committed": oid is not None,
        "commit": oid,
        "source": layout.citation(rel, lineno, lineno, oid),
        "notes": notes,
    }
