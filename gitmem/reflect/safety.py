"""The ONE gate every file reflection writes passes through.

Memory text is untrusted input (an assistant may have copied anything into a log, and the model
reads it), so what reflection may write is decided here, by code, whatever the text or the model
said:

- only `bank/**/*.md`, the state file `bank/.reflect.json`, and daily logs `memory/YYYY-MM-DD.md`;
- a daily log may only change by appending one `## Retain` section of valid Retain bullets at its
  end: the new file must equal the old file (byte for byte) plus that section;
- a path must be relative, `/`-separated, without `..`, `.`, empty or hidden components (so no
  `.git`), NUL or control characters, backslashes, components over MAX_COMPONENT characters or
  paths over MAX_PATH; it may not go through or replace a symlink or a non-tree in the base commit;
- no written file may exceed MAX_FILE_BYTES; generated pages may not contain NUL.

`clean_inline` is the one way untrusted text (a fact, a summary) enters a generated page: one
line, control characters dropped, gitmem block markers and HTML comments defused, capped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gitmem.errors import GitmemError
from gitmem.layout import BANK_DIR, LOG_NAME, STATE_PATH, entity_page_path
from gitmem.parse import entity_slug, is_retain_heading, parse_retain_bullet, sections, split_lines
from gitmem.parse.model import RetainFact
from gitmem.lazyre import lazy

MAX_COMPONENT = 100
MAX_PATH = 240
MAX_FILE_BYTES = 1_000_000
_CONTROL = lazy(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]")
_WS = lazy(r"\s+")


class UnsafeWrite(GitmemError):
    """Reflection tried to write something outside its bounds; the write is refused."""

    def __init__(self, path: str, reason: str) -> None:
        shown = path if len(path) <= 80 else path[:77] + "..."
        super().__init__(f"refused to write {shown!r}: {reason}",
                         "this is a bug or hostile memory text; nothing was written for that path")
        self.path = shown
        self.reason = reason


@dataclass(frozen=True)
class BaseEntry:
    """What the base commit holds at a path: its git file mode, or None when absent."""

    mode: int | None


# A function answering "what is at this path in the base tree?" (branch.py provides it from git).
Lookup = Callable[[str], BaseEntry]

_LINK = 0o120000
_TREE = 0o040000
_BLOBS = (0o100644, 0o100755)


def check_path(path: str) -> str:
    """`path` if it is a place reflection may write to, else UnsafeWrite. Pure (no base tree)."""
    if not isinstance(path, str) or not path:
        raise UnsafeWrite(str(path), "empty path")
    if re.search(r"[\x00-\x1f\x7f\u2028\u2029]", path):
        raise UnsafeWrite(path.replace("\x00", "\\0"), "control character or NUL in the path")
    if "\\" in path:
        raise UnsafeWrite(path, "backslash in the path")
    if path.startswith("/") or re.match(r"[A-Za-z]:", path):
        raise UnsafeWrite(path, "absolute path")
    if len(path) > MAX_PATH:
        raise UnsafeWrite(path, f"path longer than {MAX_PATH} characters")
    parts = path.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise UnsafeWrite(path, "empty, '.' or '..' path component")
        if len(part) > MAX_COMPONENT:
            raise UnsafeWrite(path, f"a path component is longer than {MAX_COMPONENT} characters")
        if part.lower() == ".git" or part.lower().startswith(".git"):
            raise UnsafeWrite(path, "git metadata path")
    if path == STATE_PATH:
        return path
    if any(p.startswith(".") for p in parts):
        raise UnsafeWrite(path, "hidden path component")
    if parts[0] == BANK_DIR and len(parts) >= 2 and path.endswith(".md"):
        return path
    if LOG_NAME.fullmatch(path):
        return path
    raise UnsafeWrite(path, "reflection may only write bank/**/*.md and the Retain section of memory/YYYY-MM-DD.md")


def entity_page(name: str) -> str:
    """bank/entities/<Slug>.md for an entity name, via `entity_slug` (which rejects unsafe names)."""
    try:
        slug = entity_slug(name)
    except ValueError as exc:
        raise UnsafeWrite(entity_page_path(name), str(exc)) from None
    return check_path(entity_page_path(slug))


def clean_inline(text: str, limit: int = 400) -> str:
    """Untrusted text as one safe line of a generated page (see the module docstring)."""
    text = _CONTROL.sub(" ", text)
    text = _WS.sub(" ", text).strip()
    # An HTML comment could hide text from a reviewer's rendered view or fake a gitmem marker.
    text = text.replace("<!--", "<!\u200b--").replace("-->", "--\u200b>")
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def retain_appendix(old: str, new: str) -> list[str]:
    """The bullets of the Retain section `new` appends to `old`; UnsafeWrite unless `new` is exactly
    `old` plus one `## Retain` heading and valid single-line Retain bullets (blank lines allowed)."""
    if not new.startswith(old):
        raise UnsafeWrite("memory log", "the log's existing text would change (only appending a Retain section is allowed)")
    appended = new[len(old):]
    if old and not old.endswith("\n") and not appended.startswith("\n"):
        raise UnsafeWrite("memory log", "the log's last line would change")
    tail = split_lines(appended)
    lines = [ln for ln in tail if ln.strip()]
    if not lines:
        raise UnsafeWrite("memory log", "nothing appended")
    head = lines[0]
    if not (head.startswith("## ") and is_retain_heading(head[3:])):
        raise UnsafeWrite("memory log", "the appended text must start with a '## Retain' heading")
    if any(s.is_retain for s in sections(old)):
        raise UnsafeWrite("memory log", "the log already has a Retain section")
    # The parser must read the appended heading as one (not as text inside an unclosed fence).
    head_line = len(split_lines(old)) + tail.index(head)
    if not any(s.is_retain and s.start == head_line for s in sections(new)):
        raise UnsafeWrite("memory log", "the appended '## Retain' heading would not be a heading (unclosed code fence?)")
    bullets = lines[1:]
    if not bullets:
        raise UnsafeWrite("memory log", "empty Retain section")
    for ln in bullets:
        if not ln.startswith("- ") or "<!--" in ln or "-->" in ln:
            raise UnsafeWrite("memory log", "appended lines must be plain Retain bullets")
        if not isinstance(parse_retain_bullet(ln), RetainFact):
            raise UnsafeWrite("memory log", "an appended line is not a valid Retain bullet")
    return bullets


def check_write(path: str, old: bytes | None, new: bytes, base: Lookup) -> None:
    """The gate: raise UnsafeWrite unless writing `new` at `path` (over `old`, its content in the
    base commit) is within reflection's bounds."""
    check_path(path)
    if len(new) > MAX_FILE_BYTES:
        raise UnsafeWrite(path, f"file larger than {MAX_FILE_BYTES} bytes")
    if b"\x00" in new:
        raise UnsafeWrite(path, "NUL byte in the content")
    parts = path.split("/")
    for i in range(1, len(parts)):
        mode = base("/".join(parts[:i])).mode
        if mode is not None and mode != _TREE:
            raise UnsafeWrite(path, f"{'/'.join(parts[:i])} is not a folder in the base commit (symlink or file)")
    mode = base(path).mode
    if mode == _LINK:
        raise UnsafeWrite(path, "the path is a symlink in the base commit")
    if mode is not None and mode not in _BLOBS:
        raise UnsafeWrite(path, "the path is not a regular file in the base commit")
    if LOG_NAME.fullmatch(path):
        if old is None:
            raise UnsafeWrite(path, "reflection may not create daily logs")
        try:
            retain_appendix(old.decode("utf-8"), new.decode("utf-8"))
        except UnicodeDecodeError:
            raise UnsafeWrite(path, "the log is not UTF-8") from None
        except UnsafeWrite as exc:
            raise UnsafeWrite(path, exc.reason) from None
    else:
        try:
            new.decode("utf-8")
        except UnicodeDecodeError:
            raise UnsafeWrite(path, "content is not UTF-8") from None
