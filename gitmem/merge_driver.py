"""`gitmem merge-driver %O %A %B %P`: merge memory files the way memory means, for `git merge`,
`git pull` and `git rebase`.

git hands the driver three temporary files (the merge base %O, ours %A, theirs %B) and the path
%P; the driver writes the result into %A and exits 0 when it is clean, 1 when it left conflict
markers. Rules, per file kind:

- Markdown (daily logs, memory.md, bank pages) is cut into segments: the text before the first
  heading, one segment per heading (fenced code is not scanned for headings), and each generated
  block (`<!-- gitmem:begin NAME -->` ... `end`) as one segment. Segments are matched across the
  three versions by their heading (or block name). A segment changed on one side only takes that
  side. A segment changed on both sides where each side only *inserted* lines merges the
  insertions: in a Retain section the new bullets of both sides are kept once each (identical
  bullets de-duplicated) and, where both inserted at the same place, ordered by event time, then
  text, so the result does not depend on which machine merges; elsewhere both sides' new lines are
  kept, ours first. Any other edit on both sides (a line changed or deleted) goes to
  `git merge-file` for that segment only, so what cannot be decided is an ordinary conflict with
  markers and nothing is dropped.
- A generated block changed on both sides is rebuilt from the union of both sides' fact lines
  (deduplicated by text without the citation, ours first, theirs' new lines after, by date then
  text). Regenerating it from the index would need the model and an index of the merged history,
  which a merge driver has neither of; the next `gitmem reflect` regenerates it. The block is
  stamped (pages.stamp) so reflection still treats it as its own.
- `bank/.reflect.json` (reflection state) is merged as data by reflect/state_merge.py.
- Anything else, undecodable text, or a failure of the driver itself: plain `git merge-file`.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from gitmem.layout import CITATION_IN_TEXT
from gitmem.timeline import git
from gitmem.lazyre import lazy

_ITEM = lazy(r" {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|\r?$)")
_CITE = lazy(r"\s*\(" + CITATION_IN_TEXT.pattern + r"\)")
_CONF = lazy(r"\(c\s*=\s*[0-9.]+\)|c=[0-9.]+")
_ATTR = lazy(r" {0,3}[-*+][ \t]+([a-z_][a-z_ ]*):")
_DATE = lazy(r"\d{4}-\d{2}-\d{2}")
_NUMBERED = lazy(r"^\d+\.\s*")
PLACEHOLDER = "_(no current facts)_"


class Segment(NamedTuple):
    key: tuple[str, str, int]  # (kind, name, occurrence): kind "pre" | "sec" | "block"
    lines: list[str]
    retain: bool = False  # a section whose list items are Retain facts (parse.Section.in_retain)


class Merged(NamedTuple):
    text: str
    conflicts: int


# --------------------------------------------------------------------------- splitting


def _title(title: str) -> str:
    return " ".join(title.split()).lower()


def _headings(lines: list[str]) -> dict[int, tuple[str, bool]]:
    """0-based line of each heading -> (normalized title, in a Retain section), as the parser reads
    them (not inside code fences or front matter; setext headings too)."""
    from gitmem.parse import sections

    return {sec.start - 1: (_title(sec.title), sec.in_retain) for sec in sections("\n".join(lines) + "\n")}


def segments(lines: list[str]) -> list[Segment]:
    """Cut a file's lines into keyed segments (see the module docstring)."""
    from gitmem.reflect.pages import find_blocks

    spans, _ = find_blocks("\n".join(lines))
    starts = {s.begin: s.end for s in spans.values()}
    names = {s.begin: name for name, s in spans.items()}
    heads = _headings(lines)
    out: list[Segment] = []
    seen: dict[tuple[str, str], int] = {}

    def open_segment(kind: str, name: str, retain: bool = False) -> list[str]:
        n = seen.get((kind, name), 0)
        seen[(kind, name)] = n + 1
        out.append(Segment((kind, name, n), [], retain))
        return out[-1].lines

    current = open_segment("pre", "")
    i = 0
    while i < len(lines):
        if i in starts:
            open_segment("block", names[i]).extend(lines[i : starts[i] + 1])
            current = open_segment("pre", f"after {names[i]}")
            i = starts[i] + 1
            continue
        if i in heads:
            current = open_segment("sec", *heads[i])
        current.append(lines[i])
        i += 1
    return [s for s in out if s.lines or s.key == ("pre", "", 0)]


# --------------------------------------------------------------------------- line merging


def _insertions(base: list[str], side: list[str]) -> dict[int, list[str]] | None:
    """{base index: lines inserted before it} when `side` only inserted lines into `base`, else None."""
    from difflib import SequenceMatcher

    out: dict[int, list[str]] = {}
    for op, i1, _i2, j1, j2 in SequenceMatcher(None, base, side, autojunk=False).get_opcodes():
        if op == "insert":
            out[i1] = side[j1:j2]
        elif op != "equal":
            return None
    return out


def _items(lines: list[str]) -> tuple[list[str], list[list[str]]]:
    """(lines before the first list item, the items: each a bullet and its continuation lines)."""
    prefix: list[str] = []
    items: list[list[str]] = []
    for line in lines:
        if _ITEM.match(line):
            items.append([line])
        elif items:
            items[-1].append(line)
        else:
            prefix.append(line)
    return prefix, items


def _norm(item: list[str]) -> str:
    return " ".join(" ".join(item).split())


def _strip_blank_tail(item: list[str]) -> tuple[list[str], bool]:
    end = len(item)
    while end > 1 and not item[end - 1].strip():
        end -= 1
    return item[:end], end < len(item)


class _Retain:
    """Orders new Retain bullets by event time (the parser's reading of the bullet, in the log's
    day by default), then text."""

    def __init__(self, path: str) -> None:
        self.path = path

    def time(self, item: list[str]) -> str:
        from gitmem.parse import parse_markdown

        text = "## Retain\n" + "\n".join(item) + "\n"
        blocks = parse_markdown(text.encode("utf-8"), self.path).blocks
        return next((b.event_start for b in blocks if b.fact and b.event_start), "") or ""


def _union_items(runs: Sequence[list[str]], retain: _Retain, seen: set[str]) -> list[str]:
    """The new bullets of several sides inserted at one place: each once, by (time, text)."""
    prefixes: list[list[str]] = []
    items: dict[str, list[str]] = {}
    blank_after = False
    for run in runs:
        prefix, its = _items(run)
        if prefix and prefix not in prefixes:
            prefixes.append(prefix)
        for item in its:
            item, blank = _strip_blank_tail(item)
            blank_after = blank_after or blank
            key = _norm(item)
            if key not in seen and key not in items:
                items[key] = item
    seen.update(items)
    ordered = sorted(items.items(), key=lambda kv: (retain.time(kv[1]), kv[0]))
    out = [ln for p in prefixes for ln in p] + [ln for _, item in ordered for ln in item]
    return out + ([""] if blank_after else [])


def _merge_inserts(base: list[str], ours: list[str], theirs: list[str], retain: _Retain | None) -> list[str] | None:
    """Both sides' insertions into `base`, or None when a side did more than insert."""
    ia, ib = _insertions(base, ours), _insertions(base, theirs)
    if ia is None or ib is None:
        return None
    seen: set[str] = set()
    out: list[str] = []
    for i in range(len(base) + 1):
        ra, rb = ia.get(i, []), ib.get(i, [])
        if retain is not None and (ra or rb):
            out += _union_items([r for r in (ra, rb) if r], retain, seen)
        elif ra == rb or not rb:
            out += ra
        elif not ra:
            out += rb
        else:
            out += ra + rb
        if i < len(base):
            out.append(base[i])
    return out


# --------------------------------------------------------------------------- generated blocks


def _gen_key(item: list[str]) -> str:
    m = _ATTR.match(item[0])
    if m:  # "- confidence: 0.8 (...)": one value per label, ours wins
        return "attr:" + m.group(1)
    text = _CONF.sub("", _CITE.sub("", " ".join(item)))
    return " ".join(text.split()).casefold()


def _subsections(inner: list[str]) -> list[tuple[str, list[str]]]:
    heads = _headings(inner)
    out: list[tuple[str, list[str]]] = [("", [])]
    for i, line in enumerate(inner):
        if i in heads:
            out.append((_NUMBERED.sub("", heads[i][0]), [line]))
        else:
            out[-1][1].append(line)
    return out


def merge_generated(ours: list[str], theirs: list[str]) -> list[str]:
    """Two sides' versions of one generated block (markers included) as one stamped block."""
    from gitmem.reflect.pages import stamp, unstamped

    a_inner, b_inner = unstamped(ours[1:-1]), unstamped(theirs[1:-1])
    b_subs = dict(_subsections(b_inner))
    result: list[str] = []
    names = [n for n, _ in _subsections(a_inner)]
    for name, lines in _subsections(a_inner) + [(n, ls) for n, ls in _subsections(b_inner) if n not in names]:
        head = lines[:1] if name else []
        body = lines[1:] if name else lines
        prefix, items = _items(body)
        _, b_items = _items(b_subs.get(name, [""])[1:] if name else b_subs.get("", []))
        keys = {_gen_key(it) for it in items}
        extra = [it for it in b_items if _gen_key(it) not in keys]
        extra.sort(key=lambda it: ((_DATE.findall(" ".join(it)) or [""])[0], _norm(it)))
        merged = [_strip_blank_tail(it)[0] for it in items + extra]
        if len(merged) > 1:
            merged = [it for it in merged if _norm(it) != PLACEHOLDER] or merged[:1]
        tail = [""] if body and not body[-1].strip() and name else []
        result += head + prefix + [ln for it in merged for ln in it] + tail
    while result and not result[-1].strip():
        result.pop()
    return [ours[0], stamp(result), *result, ours[-1]]


# --------------------------------------------------------------------------- files


def merge_file(repo: Path, base: str, ours: str, theirs: str, labels: tuple[str, str, str]) -> Merged:
    """`git merge-file -p` on three texts: the ordinary textual merge with conflict markers."""
    with tempfile.TemporaryDirectory(prefix=".gitmem-merge-", dir=repo) as tmp:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            p = Path(tmp) / name
            p.write_bytes(text.encode("utf-8", "surrogateescape"))
            paths.append(str(p))
        proc = git.run(repo, ["merge-file", "-p", "-L", labels[0], "-L", labels[1], "-L", labels[2], *paths],
                       check=False)
    if proc.returncode < 0 or proc.returncode > 127:
        raise RuntimeError(f"git merge-file failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return Merged(proc.stdout.decode("utf-8", "surrogateescape"), proc.returncode)


def _join(lines: list[str]) -> str:
    return "".join(ln + "\n" for ln in lines)


def merge_markdown(repo: Path, path: str, base: str, ours: str, theirs: str) -> Merged:
    trailing = ours.endswith("\n") or theirs.endswith("\n") or not (ours or theirs)
    split = [t[:-1].split("\n") if t.endswith("\n") else (t.split("\n") if t else []) for t in (base, ours, theirs)]
    segs = [segments(lines) for lines in split]
    o, a, b = ({s.key: s.lines for s in ss} for ss in segs)
    retain_keys = {s.key for ss in segs for s in ss if s.retain}
    order = [s.key for s in segs[1]]
    # Theirs-only segments go after the segment they follow on their side.
    for idx, seg in enumerate(segs[2]):
        if seg.key in a or seg.key in order:
            continue
        prev = next((segs[2][j].key for j in range(idx - 1, -1, -1) if segs[2][j].key in order), None)
        order.insert(order.index(prev) + 1 if prev is not None else len(order), seg.key)
    out: list[str] = []
    conflicts = 0
    retain = _Retain(path)
    labels = (f"ours:{path}", f"base:{path}", f"theirs:{path}")
    for key in order:
        so, sa, sb = o.get(key), a.get(key), b.get(key)
        if sa == sb or so == sb:
            out += sa or []
            continue
        if so == sa:
            out += sb or []
            continue
        if sa is not None and sb is not None:
            if key[0] == "block":
                out += merge_generated(sa, sb)
                continue
            head = 1 if key[0] == "sec" and sa[:1] == sb[:1] and (so is None or so[:1] == sa[:1]) else 0
            is_retain = key in retain_keys
            body = _merge_inserts((so or [])[head:] if so else [], sa[head:], sb[head:], retain if is_retain else None)
            if body is not None:
                out += sa[:head] + body
                continue
        got = merge_file(repo, _join(so or []), _join(sa or []), _join(sb or []), labels)
        conflicts += got.conflicts
        out += got.text[:-1].split("\n") if got.text.endswith("\n") else got.text.split("\n") if got.text else []
    text = "\n".join(out) + ("\n" if trailing and out else "")
    return Merged(text, conflicts)


def merge_paths(repo: Path, base_file: Path, ours_file: Path, theirs_file: Path, path: str) -> int:
    """The driver: merge into `ours_file`; 0 when clean, 1 when conflict markers were left."""
    from gitmem.layout import STATE_PATH

    raw = [p.read_bytes() for p in (base_file, ours_file, theirs_file)]
    labels = (f"ours:{path}", f"base:{path}", f"theirs:{path}")
    try:
        texts = [r.decode("utf-8") for r in raw]
    except UnicodeDecodeError:
        texts = []
    result: Merged | None = None
    if texts:
        try:
            if path == STATE_PATH:
                from gitmem.reflect.state_merge import merge_state_bytes

                merged = merge_state_bytes(raw[0], raw[1], raw[2])
                result = Merged(merged.decode("utf-8"), 0) if merged is not None else None
            elif path.lower().endswith(".md"):
                result = merge_markdown(repo, path, *texts)
        except Exception as exc:  # never lose a side: fall back to git's own text merge
            print(f"gitmem merge-driver: {path}: {type(exc).__name__}: {exc}; falling back to a text merge",
                  file=sys.stderr)
            result = None
    if result is None:
        base, ours, theirs = (r.decode("utf-8", "surrogateescape") for r in raw)
        result = merge_file(repo, base, ours, theirs, labels)
    from gitmem.safefile import write_atomic

    write_atomic(ours_file, result.text.encode("utf-8", "surrogateescape"))
    return 1 if result.conflicts else 0
