"""Chunking: a Markdown file -> heading-scoped blocks with exact line ranges, in one linear pass.

The rules (a practical subset of CommonMark, chosen so line ranges stay exact and parsing stays
linear on any input):
- ATX headings (`#`..`######`) and setext headings (a paragraph underlined by `===` / `---`) set
  the heading path and are not blocks; a heading pops every open heading of the same or deeper level.
- Each list item, at any depth, is a block: its marker line plus its lazy continuation lines, up
  to a blank line, the next list item, a heading or a fence. Nested items are separate blocks.
- Paragraphs are runs of non-blank lines. Thematic breaks (`---`, `***`) end a block and are skipped.
- Fenced code (``` or ~~~, any indent) is one block up to its closing fence or the end of the file;
  nothing inside it is a heading, list or mention.
- YAML front matter (`---` on line 1 up to a closing `---` or `...`) is one block.
- Top-level list items under a heading "Retain" (any level, until a heading of the same or a
  higher level) are Retain facts; a malformed one stays a "note" block and yields a Diagnostic.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from datetime import date
from functools import lru_cache
from typing import NamedTuple

from gitmem.layout import bank_folder_stem, log_date
from gitmem.parse.dates import parse_event_time
from gitmem.parse.entities import mention_keys, page_entity
from gitmem.parse.model import KIND_LETTERS, NOTE, Block, Diagnostic, ParsedFile
from gitmem.parse.retain import LIST_MARKER, Alias, Problem, classify, is_retain_heading
from gitmem.parse.text import decode, is_binary, split_lines, strip_comments
from gitmem.lazyre import lazy

_ATX = lazy(r" {0,3}(#{1,6})(?=[ \t]|$)")
_HR = lazy(r" {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})")
_SETEXT = lazy(r" {0,3}(?:=+|-+)[ \t]*")
_FENCE = lazy(r"[ \t]*(`{3,}|~{3,})")

_PARA, _ITEM, _CODE, _FRONT = 0, 1, 2, 3


def _indent(line: str) -> int:
    """Leading whitespace width with tabs to the next multiple of 4 (CommonMark's tab stop)."""
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def _atx_text(line: str, m: re.Match[str]) -> str:
    text = line[m.end() :].strip()
    if text.endswith("#"):
        # A closing "###" sequence is decoration, but "C#" is content: strip only after a space.
        bare = text.rstrip("#")
        if not bare or bare[-1] in " \t":
            text = bare.rstrip()
    return text


def _closes_fence(line: str, ch: str, n: int) -> bool:
    s = line.strip()
    return len(s) >= n and s[0] == ch and s.count(ch) == len(s)


def _front_matter_end(lines: list[str]) -> int:
    """Index of the closing line of YAML front matter, or -1 when the file has none."""
    if not lines or lines[0].lstrip("\ufeff").rstrip() != "---":
        return -1
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return i
    return -1


class _Chunker:
    """One pass over the lines; `pending` is the block being accumulated (not yet emitted)."""

    def __init__(self, lines: list[str], path: str, default: date | None) -> None:
        self.lines = lines
        self.path = path
        self.default = default
        # A page in a folder of bank/ whose heading names it: its lines that name no one are its entity's.
        self.page = bank_folder_stem(path)
        self.blocks: list[Block] = []
        self.diagnostics: list[Diagnostic] = []
        self.headings: list[tuple[int, str]] = []
        self.heading: tuple[str, ...] = ()
        self.in_retain = False
        # Content indents of the open list items, to tell a nested item from a sibling.
        self.list_stack: list[int] = []
        self.start = 0  # 0 = nothing pending; else the 1-based first line of the pending block
        self.pending = _PARA
        self.marker_end = 0  # for items: where the text after the marker starts in the first line
        self.top_item = False
        self.fence_closed = False
        # (first line, last line, level, text) of every heading, when asked for (see `outline`).
        self.outline: list[tuple[int, int, int, str]] | None = None
        # Resume points: (line index, blocks so far, diagnostics so far, state). At the top of the
        # main loop the state depends only on the lines before the index, so the next version of
        # the file can restart there when those lines are unchanged. The state holds no absolute
        # line number (a pending block's start is kept relative to the index), so it also holds
        # where the same lines moved up or down: see `_splice`.
        self.checkpoints: list[tuple[int, int, int, tuple]] = []
        self.resumable = True
        self.resume_at = 0
        # Set by `_resumed`: the earlier version's lines from `sync_from` on are this version's
        # last lines, `shift` lines further up (or down); `tail` counts the blocks taken from it.
        self.sync_from = 1 << 62
        self.shift = 0
        self.previous: ParsedFile | None = None
        self.tail = 0

    def _snapshot(self, i: int) -> tuple:
        return (tuple(self.headings), self.heading, self.in_retain, tuple(self.list_stack),
                i + 1 - self.start if self.start else 0, self.pending, self.marker_end, self.top_item,
                self.fence_closed)

    def restore(self, i: int, blocks: list[Block], diagnostics: list[Diagnostic], state: tuple) -> None:
        (headings, self.heading, self.in_retain, stack, back, self.pending, self.marker_end,
         self.top_item, self.fence_closed) = state
        self.start = i + 1 - back if back else 0
        self.headings, self.list_stack = list(headings), list(stack)
        self.blocks, self.diagnostics = blocks, diagnostics
        self.resume_at = i

    def _splice(self, i: int, state: tuple) -> bool:
        """At index i, inside the lines this version shares with the end of the previous one: when
        the previous parse was in the same state at the same line, everything it found from there
        on is found again, `shift` lines away. Take it instead of re-chunking the rest of the file."""
        back = state[4]
        if back and i - back < self.sync_from:
            return False  # the pending block began in the changed lines: its text is not the old one
        prev = self.previous
        resume: _Resume = prev.resume  # type: ignore[assignment,union-attr]
        cps = resume.checkpoints
        at = i - self.shift
        k = bisect_left(cps, at, key=_cp_line)
        if k == len(cps) or cps[k][0] != at or cps[k][3] != state:
            return False
        _, nb, nd, _ = cps[k]
        d = self.shift
        old_blocks = prev.blocks[nb:]  # type: ignore[union-attr]
        old_diags = resume.chunk_diagnostics[nd:]
        db, dd = len(self.blocks) - nb, len(self.diagnostics) - nd
        if d:
            self.blocks += [Block(b[0] + d, b[1] + d, *b[2:]) for b in old_blocks]
            self.diagnostics += [Diagnostic(x[0], x[1] + d, x[2], x[3]) for x in old_diags]
        else:
            self.blocks += old_blocks
            self.diagnostics += old_diags
        self.checkpoints.pop()  # the one just recorded for i: cps[k], moved
        self.checkpoints += [(c[0] + d, c[1] + db, c[2] + dd, c[3]) for c in cps[k:]]
        self.tail = len(old_blocks)
        return True

    def run(self) -> None:
        lines = self.lines
        n = len(lines)
        i = self.resume_at
        record = self.checkpoints.append
        sync_from = self.sync_from
        if i == 0 and lines and lines[0].lstrip("\ufeff").rstrip() == "---":
            # Whether line 1 opens front matter depends on a later line (its closing "---" may come
            # in the next version): never resume such a file.
            self.resumable = False
            fm_end = _front_matter_end(lines)
            if fm_end > 0:
                self.start, self.pending = 1, _FRONT
                self.flush(fm_end + 1)
                i = fm_end + 1
        while i < n:
            if self.resumable:
                state = self._snapshot(i)
                record((i, len(self.blocks), len(self.diagnostics), state))
                if i >= sync_from and self._splice(i, state):
                    return
            line = lines[i]
            lineno = i + 1
            stripped = line.lstrip(" \t")
            if not stripped or stripped.isspace():  # also "\r", "\f", NBSP: nothing to index
                self.flush(i)
                i += 1
                continue
            c = stripped[0]
            indent = len(line) - len(stripped)
            if c == "#" and indent <= 3:
                m = _ATX.match(line)
                if m:
                    self.flush(i)
                    self.set_heading(len(m.group(1)), _atx_text(line, m), lineno, lineno)
                    self.list_stack.clear()
                    i += 1
                    continue
            if c in "`~":
                m = _FENCE.match(line)
                if m and not (c == "`" and "`" in line[m.end() :]):
                    self.flush(i)
                    i = self.fence(i, m.group(1))
                    continue
            if c in "=-" and self.start and self.pending == _PARA and indent <= 3 and _SETEXT.fullmatch(line):
                # Setext heading: the pending paragraph was the heading text, not a block.
                text = " ".join(" ".join(lines[self.start - 1 : i]).split())
                first, self.start = self.start, 0
                self.set_heading(1 if c == "=" else 2, text, first, lineno)
                self.list_stack.clear()
                i += 1
                continue
            if c in "-*_" and _HR.fullmatch(line):
                self.flush(i)
                i += 1
                continue
            if c in "-*+" or c.isdigit():
                m = LIST_MARKER.match(line)
                if m:
                    self.flush(i)
                    width = _indent(line)
                    stack = self.list_stack
                    while stack and width < stack[-1]:
                        stack.pop()
                    self.top_item = not stack
                    stack.append(width + (m.end() - indent) + 1)
                    self.start, self.pending, self.marker_end = lineno, _ITEM, m.end()
                    i += 1
                    continue
            if not self.start:
                # A paragraph line; one indented less than an open item's content ends that list.
                width = _indent(line)
                stack = self.list_stack
                while stack and width < stack[-1]:
                    stack.pop()
                self.start, self.pending = lineno, _PARA
            i += 1
        self.flush(n)

    def fence(self, i: int, opener: str) -> int:
        """Emit the fenced block starting at line index i; return the index after it."""
        ch, n = opener[0], len(opener)
        lines = self.lines
        j = i + 1
        while j < len(lines) and not _closes_fence(lines[j], ch, n):
            j += 1
        self.fence_closed = j < len(lines)
        if not self.fence_closed:
            self.resumable = False  # an unclosed fence swallows whatever a later version appends
        end = min(j + 1, len(lines))  # an unclosed fence runs to the end of the file
        self.start, self.pending = i + 1, _CODE
        self.flush(end)
        return end

    def set_heading(self, level: int, text: str, first: int, last: int) -> None:
        if self.outline is not None:
            self.outline.append((first, last, level, text))
        hs = self.headings
        while hs and hs[-1][0] >= level:
            hs.pop()
        hs.append((level, text))
        self.heading = tuple(t for _, t in hs)
        self.in_retain = any(is_retain_heading(t) for _, t in hs)

    def flush(self, end: int) -> None:
        """Emit the pending block as lines start..end (1-based inclusive), if any."""
        start = self.start
        if not start:
            return
        self.start = 0
        pending = self.pending
        text = "\n".join(self.lines[start - 1 : end])
        kind, fact, confidence, content, entities, ev_start, ev_end, problem = _derive(
            text,
            pending,
            self.marker_end if pending == _ITEM else 0,
            pending == _ITEM and self.in_retain and self.top_item,
            pending == _CODE and self.fence_closed,
            self.default,
        )
        if problem is not None:
            self.diagnostics.append(Diagnostic(self.path, start, problem.code, problem.message))
        if not entities and self.page is not None and self.heading and (key := page_entity(self.page, self.heading[0])):
            entities = (key,)
        self.blocks.append(
            Block(start, end, self.heading, text, content, kind, fact, entities, confidence, ev_start, ev_end)
        )


# The indexer parses every version of every changed file, and consecutive versions of a file
# share almost all of their blocks: memoising the per-block work on the block's own text makes a
# re-parse cost little more than the line scan. Everything below depends only on the arguments.
@lru_cache(maxsize=16384)
def _derive(
    text: str, pending: int, marker_end: int, candidate: bool, fence_closed: bool, default: date | None
) -> tuple[str, bool, float | None, str, tuple[str, ...], str | None, str | None, Problem | None]:
    kind, fact, confidence, problem = NOTE, False, None, None
    if pending == _ITEM:
        body = text[marker_end:]
        if candidate:
            nl = body.find("\n")
            first, rest = (body, "") if nl < 0 else (body[:nl], body[nl:])
            result = classify(first)
            if isinstance(result, Problem):
                problem = result
            elif isinstance(result, Alias):
                pass  # a valid alias bullet: a note whose content keeps "alias: @X = Y" (recall reads it)
            else:
                kind, fact, confidence = KIND_LETTERS[result.letter], True, result.confidence
                body = result.body + rest
    elif pending == _CODE:
        # The fence lines (and the info string) are markup, not content.
        lines = text.split("\n")
        body = "\n".join(lines[1:-1] if fence_closed else lines[1:])
    else:
        body = text
    if pending != _CODE:
        body = strip_comments(body)  # template guidance and generated-block markers are not memory
    content = " ".join(body.split())
    if pending == _CODE:
        # Code is quoted material: "@decorator" is not a person and a version date is not an event.
        entities: tuple[str, ...] = ()
        ev_start = ev_end = default.isoformat() if default else None
    else:
        entities = mention_keys(content)
        ev_start, ev_end = parse_event_time(content, default)
    return kind, fact, confidence, content, entities, ev_start, ev_end, problem


def _cp_line(checkpoint: tuple[int, int, int, tuple]) -> int:
    return checkpoint[0]


def _shared_suffix(old: list[str], new: list[str], limit: int) -> int:
    """How many trailing lines (at most `limit`) two versions share: the shared prefix of their
    last `limit` lines, reversed (two short C copies)."""
    return _shared_prefix(old[len(old) - limit :][::-1], new[len(new) - limit :][::-1])


def _shared_prefix(old: list[str], new: list[str]) -> int:
    """How many leading lines two versions share. Bisects with slice comparisons (C loops) instead
    of stepping line by line in Python: the index pays this once per file version it parses."""
    n = min(len(old), len(new))
    if old[:n] == new[:n]:  # the usual case: a daily log that only grew
        return n
    lo, hi = 0, n  # invariant: the first lo lines are shared, the first hi are not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if old[lo:mid] == new[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


class _Resume(NamedTuple):
    lines: list[str]
    checkpoints: list[tuple[int, int, int, tuple]]
    chunk_diagnostics: list[Diagnostic]


def _resumed(lines: list[str], path: str, previous: ParsedFile | None) -> _Chunker:
    """A chunker positioned after the longest prefix `previous` shares with `lines`, and told the
    longest suffix they share.

    Consecutive versions of a file in history mostly differ near the end (a daily log grows), so
    re-chunking only from the last resume point before the first changed line makes indexing a
    commit cost the size of the change, not of the file. The result is identical to a full parse
    (a property test checks this)."""
    chunker = _Chunker(lines, path, log_date(path))
    prev = previous.resume if previous is not None else None
    if not isinstance(prev, _Resume) or not prev.checkpoints:
        return chunker
    old = prev.lines
    first = _shared_prefix(old, lines)
    # The lines both versions end with: once the chunker reaches them in a state the previous
    # parse also had there, the rest is the previous parse moved (`_Chunker._splice`). A change in
    # the middle (a line added to a log's narrative, above its Retain section) then costs the
    # change, not the rest of the file.
    tail = _shared_suffix(old, lines, min(len(old), len(lines)) - first)
    if tail:
        chunker.previous = previous
        chunker.shift = len(lines) - len(old)
        chunker.sync_from = len(lines) - tail
    cps = prev.checkpoints
    best = bisect_right(cps, first, key=_cp_line) - 1  # the last checkpoint at or before `first`
    if best <= 0:
        return chunker
    i, nb, nd, state = cps[best]
    chunker.checkpoints = cps[: best]
    chunker.restore(i, previous.blocks[:nb], prev.chunk_diagnostics[:nd], state)  # type: ignore[union-attr]
    return chunker


def parse_markdown(
    data: str | bytes, path: str, *, max_bytes: int | None = None, previous: ParsedFile | None = None
) -> ParsedFile:
    """Parse one Markdown file into blocks and diagnostics. Never raises.

    `path` is workspace-relative (it names the file in diagnostics and gives a daily log its date).
    Bytes are decoded as UTF-8 with replacement ("decode-replaced"); NUL in the first 8 KiB means
    binary (no blocks, "binary"); more than `max_bytes` bytes means no blocks and "too-large".
    `previous` is the parse of an earlier version of the same file: unchanged leading blocks are
    reused instead of re-chunked (`reused` says how many), and so are the trailing blocks of an
    unchanged end of the file, moved to their new lines (`reused_tail`).
    """
    diagnostics: list[Diagnostic] = []
    try:
        if isinstance(data, bytes):
            if max_bytes is not None and len(data) > max_bytes:
                return _skipped(path, "too-large", f"{len(data)} bytes is over the {max_bytes}-byte limit; not indexed")
            if is_binary(data):
                return _skipped(path, "binary", "contains NUL bytes: treated as binary and not indexed")
            text, replaced = decode(data)
            if replaced:
                line = text.count("\n", 0, text.find("\ufffd")) + 1
                diagnostics.append(
                    Diagnostic(path, line, "decode-replaced", "not valid UTF-8: invalid bytes were replaced with U+FFFD")
                )
        else:
            text = data
            if max_bytes is not None and len(text) * 4 > max_bytes and len(text.encode("utf-8", "surrogatepass")) > max_bytes:
                return _skipped(path, "too-large", f"over the {max_bytes}-byte limit; not indexed")
            if "\x00" in text[:8192]:
                return _skipped(path, "binary", "contains NUL characters: treated as binary and not indexed")
        lines = split_lines(text)
        chunker = _resumed(lines, path, previous)
        reused = len(chunker.blocks)
        chunker.run()
        diagnostics.extend(chunker.diagnostics)
        resume = _Resume(lines, chunker.checkpoints, chunker.diagnostics) if chunker.resumable else None
        return ParsedFile(path, chunker.blocks, diagnostics, resume, reused, chunker.tail)
    except Exception as exc:  # noqa: BLE001 - the indexer must survive any file; report instead
        # Reaching this is a gitmem bug (the property tests assert it never happens), but one odd
        # file must not stop the index of years of history: skip it and say so.
        return _skipped(path, "internal-error", f"could not parse ({type(exc).__name__}: {exc}); please report this file")


class Section(NamedTuple):
    """A heading and the lines it governs, as the chunker reads them: a `# Retain` inside a code
    fence or front matter is not a heading. The one answer to "is this a Retain section?"."""

    start: int  # 1-based first line of the heading (a setext heading's first text line)
    heading_end: int  # its last line (a setext heading's underline)
    end: int  # the section's last line: before the next heading of the same or a higher level
    level: int
    title: str
    path: tuple[str, ...]  # the titles of this heading and its open ancestors, outermost first

    @property
    def is_retain(self) -> bool:
        """This heading is a Retain heading."""
        return is_retain_heading(self.title)

    @property
    def in_retain(self) -> bool:
        """Top-level list items here are Retain facts (this heading or an ancestor is Retain)."""
        return any(is_retain_heading(t) for t in self.path)


class Outline(NamedTuple):
    blocks: list[Block]
    sections: list[Section]


def outline(data: str | bytes, path: str = "") -> Outline:
    """The blocks and the sections of one file, from one full parse (no size limit, no reuse)."""
    text = decode(data)[0] if isinstance(data, bytes) else data
    lines = split_lines(text)
    chunker = _Chunker(lines, path, log_date(path))
    chunker.resumable = False  # no checkpoints: nothing will resume from this parse
    found: list[tuple[int, int, int, str]] = []
    chunker.outline = found
    chunker.run()
    last_line = len(lines) - 1 if len(lines) > 1 and not lines[-1] else len(lines)  # "a\n" is one line
    sections: list[Section] = []
    open_: list[tuple[int, str]] = []  # (level, title) of the enclosing headings
    for n, (first, last, level, title) in enumerate(found):
        while open_ and open_[-1][0] >= level:
            open_.pop()
        open_.append((level, title))
        end = next((f - 1 for f, _, lv, _ in found[n + 1 :] if lv <= level), last_line)
        sections.append(Section(first, last, end, level, title, tuple(t for _, t in open_)))
    return Outline(chunker.blocks, sections)


def sections(data: str | bytes, path: str = "") -> list[Section]:
    """Every heading's section, in file order (see `Section`)."""
    return outline(data, path).sections


def _skipped(path: str, code: str, message: str) -> ParsedFile:
    return ParsedFile(path, [], [Diagnostic(path, 1, code, message)])
