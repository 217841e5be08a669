"""Answers built on the search session: about, opinions, why, changes, core, show."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gitmem import layout
from gitmem.errors import GitmemError
from gitmem.index import store
from gitmem.parse import decode, entity_key, opinion_key, split_lines, strip_comments
from gitmem.recall.currency import curated_opinion
from gitmem.recall.result import Result, estimate_tokens, pack
from gitmem.recall.search import Options, Session
from gitmem.safefile import NotRegular, read_capped, safe_rel
from gitmem.timeline import git
from gitmem.layout import is_memory_markdown
from gitmem.workspace import Workspace
from gitmem.lazyre import lazy



def _as_of(s: Session, as_of: str | None) -> dict[str, Any] | None:
    """The as-of record for 'in memory at WHEN' (None: in memory now)."""
    return None if as_of is None else s.as_of_info(as_of)


def _max_bytes(ws: Workspace) -> int:
    from gitmem.config import load_config

    return load_config(ws).index.max_file_bytes


def _file_at(ws: Workspace, oid: str, path: str) -> str | None:
    """A memory file's text at a commit; None when it is not there, is a symlink (mode 120000:
    its "text" is the link target, never memory) or is over `index.max_file_bytes` (not read)."""
    if not safe_rel(path):
        return None
    entry = git.run(ws.root, ["ls-tree", "--long", "--end-of-options", oid, "--", path], check=False).stdout
    fields = entry.split(None, 4)
    if len(fields) < 5 or fields[0] != b"100644" and fields[0] != b"100755" or fields[1] != b"blob":
        return None
    if not fields[3].isdigit() or int(fields[3]) > _max_bytes(ws):
        return None
    proc = git.run(ws.root, ["cat-file", "blob", fields[2].decode("ascii")], check=False)
    return decode(proc.stdout)[0] if proc.returncode == 0 else None


def _worktree_file(ws: Workspace, path: str) -> str:
    """A memory file's text in the working tree: a regular file covered by the memory rules, not
    reached through a symlink, at most `index.max_file_bytes` (GitmemError otherwise)."""
    if not safe_rel(path) or not is_memory_markdown(path):
        raise GitmemError(f"{path!r} is not a memory file of this workspace",
                          "citations name a workspace-relative *.md path, e.g. memory/2025-11-27.md")
    limit = _max_bytes(ws)
    try:
        data = read_capped(ws.root, path, limit)
    except NotRegular:
        raise GitmemError(f"{path} is a symlink or not a regular file: not read",
                          "memory files must be plain files inside the workspace") from None
    except OSError:
        raise GitmemError(f"{path} does not exist in the working tree", "check the path") from None
    if len(data) > limit:
        raise GitmemError(f"{path} is over index.max_file_bytes ({limit} bytes): not read",
                          "split the file, or raise the limit with `gitmem config index.max_file_bytes N`")
    return decode(data)[0]


@dataclass
class About:
    """What memory says about an entity: its page and the facts that mention it, newest first."""

    entity: str
    page: dict[str, Any] | None
    as_of: dict[str, Any] | None
    index: dict[str, Any]
    notes: list[str]
    results: list[Result]

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the `about` schema."""
        return {"entity": self.entity, "page": self.page, "as_of": self.as_of, "index": self.index,
                "notes": self.notes, "results": [r.to_json() for r in self.results]}


def about(s: Session, entity: str, *, as_of: str | None = None, k: int = 25) -> About:
    key = entity_key(entity)
    if not key:
        raise GitmemError(f"{entity!r} is not an entity name", "try a name like Peter or The-Castle")
    as_of_info = _as_of(s, as_of)
    page: dict[str, Any] | None = None
    rows = store.entity_pages(s.conn, as_of_info["position"] if as_of_info else None, layout.ENTITIES_DIR + "/")
    for row in rows:
        stem = layout.entity_page_stem(row["path"])
        if stem is not None and entity_key(stem) == key:
            commit: str | None = as_of_info["commit"] if as_of_info else s.tip
            text = _file_at(s.ws, commit, row["path"]) if commit else None
            if text is not None and commit:
                page = {"path": row["path"], "text": text.strip(), "commit": commit,
                        "source": layout.citation(row["path"], 1, max(len(split_lines(text.rstrip())), 1), commit)}
            break
    answer = s.search("", Options(k=max(k * 4, 100), as_of=as_of, entity=key))
    facts = [r for r in answer.results if layout.entity_page_stem(r.path) is None]
    if page is None and not facts:
        when = f" as of {as_of}" if as_of else ""
        raise GitmemError(f"nothing in memory mentions {entity}{when}",
                          f"check the spelling, or search the text with `gitmem recall {entity!r}`")
    facts.sort(key=lambda r: (r.timestamp or "", r.id or 1 << 62), reverse=True)
    return About(entity=key, page=page, as_of=as_of_info, index=s.index_info(), notes=answer.notes,
                 results=facts[:k])


def _chain(s: Session, chunk_id: int) -> list[int]:
    """All versions of a chunk, oldest first, following supersession links both ways."""
    seen = {chunk_id}
    back = _follow(lambda cur: store.predecessor_of(s.conn, cur), chunk_id, seen)
    return list(reversed(back)) + [chunk_id] + _follow(lambda cur: store.successor_of(s.conn, cur), chunk_id, seen)


def _follow(step: Callable[[int], int | None], start: int, seen: set[int]) -> list[int]:
    """The ids `step` leads to from `start`, in order, stopping at the end or at an id already in
    `seen` (which it extends): a broken index with a cycle in its links must not loop forever."""
    out: list[int] = []
    cur = step(start)
    while cur is not None and cur not in seen:
        seen.add(cur)
        out.append(cur)
        cur = step(cur)
    return out


# Reflection's record of confidence steps (reflect.state.opinion_history): handed in by the caller,
# because recall sits below reflect and must not import it.
ReflectedHistory = Callable[[Workspace, str], dict[str, Any]]


def opinions(s: Session, *, entity: str | None = None, min_confidence: float = 0.0,
             as_of: str | None = None, history: ReflectedHistory | None = None) -> dict[str, Any]:
    """Opinions in memory. An opinion is its statement (`gitmem.parse.opinion_key`): stated in a
    log and curated in bank/opinions.md it is one opinion, whose newest version (the user's edit
    after a curation, or the curation after it) gives its confidence; the others are its evidence.
    With `history`, each opinion carries its trajectory: every version of every place it was
    written (the log line's edits, the bank line's), in time order, and the confidence steps
    reflection recorded in bank/.reflect.json (read by `history`)."""
    answer = s.search("", Options(k=1000, as_of=as_of, entity=entity, kinds=("opinion",), collapse=False))
    # An opinion a newer statement replaced is left out (recall leaves it out too), also when
    # reflection curated it before: its bank/ line is the replaced statement again.
    at = (answer.as_of or {}).get("position")
    quoted = store.originals_of(s.conn, [r.id for r in answer.results if r.id is not None])
    replaced = store.superseded_by(s.conn, sorted(set(quoted.values())), at)
    kept = [r for r in answer.results if quoted.get(r.id or 0) not in replaced]
    merged: dict[str, dict[str, Any]] = {}
    places: dict[str, list[int]] = {}
    for r in sorted(kept, key=lambda r: r.id or 0):
        key = opinion_key(r.content)
        evidence = {"relation": "stated", "content": r.content, "source": r.source,
                    "confidence": r.confidence}
        prior = merged.get(key)
        item: dict[str, Any] = {
            "id": r.id, "statement": r.content, "confidence": r.confidence, "entities": list(r.entities),
            "last_updated": r.record_time, "timestamp": r.timestamp, "source": r.source,
            "status": r.status, "evidence": (prior["evidence"] if prior else []) + [evidence],
        }
        merged[key] = item  # newer versions (ids grow with history) replace older ones, keeping their evidence
        if r.id is not None:
            places.setdefault(key, []).append(r.id)
    out = [o for o in merged.values()
           if (o["confidence"] if o["confidence"] is not None else 0.5) >= min_confidence]
    if history is not None:
        reflected: dict[str, list[dict[str, Any]]] = {}
        try:
            rev = (answer.as_of or {}).get("commit") or s.tip or "HEAD"
            for op in history(s.ws, rev)["opinions"]:
                reflected[opinion_key(str(op["statement"]))] = op.get("history", [])
        except GitmemError as exc:
            answer.notes.append(f"reflection history unavailable: {exc.message}")
        for o in out:
            key = opinion_key(o["statement"])
            ids = sorted({i for place in places.get(key, []) for i in _chain(s, place)})
            # In timeline order (ids grow along the indexed first-parent chain), not by commit dates:
            # a merged reflection carries the merge day, a later log edit may carry an older date.
            versions = sorted(s.results_by_id(ids), key=lambda v: v.id or 0)
            o["history"] = [{"confidence": v.confidence, "record_time": v.record_time,
                             "content": v.content, "source": v.source} for v in versions]
            o["reflections"] = reflected.get(key, [])
    out.sort(key=lambda o: -(o["confidence"] or 0))
    return {"opinions": out, "as_of": answer.as_of, "index": s.index_info(), "notes": answer.notes}


def why(s: Session, target: str) -> dict[str, Any]:
    notes = list(s.notes)
    if target.isascii() and target.isdigit():  # not str.isdigit alone: "²" is a digit int() refuses
        chunk_id = int(target)
        # Ids are SQLite integers: a longer number names no chunk (and cannot be bound).
        if chunk_id >= 1 << 63 or not store.chunk_exists(s.conn, chunk_id):
            raise GitmemError(f"no chunk with id {chunk_id}", "take an id from `gitmem recall --json` results")
    else:
        hits = [h for h in s.search(target, Options(k=WHY_HITS, include_history=True)).results if h.id]
        if not hits:
            raise GitmemError(f"nothing in memory's history matches {target!r}", "try fewer or other words")
        # The statement that says the words asked about, before one that only ranks higher:
        # `why "Moved to Porto"` is about the Porto line, not the Madrid line that replaced it.
        said = _words(target)
        chunk_id = next((h.id for h in hits if h.id and said in _words(h.content)), hits[0].id or 0)
    # A bank/ line quoting a statement (a curated opinion, an entity page's fact) is that statement:
    # its history is the original's versions, then the copy's (reflection's curation of it).
    original = store.originals_of(s.conn, [chunk_id]).get(chunk_id)
    quoted = _chain(s, original) if original is not None else []
    own = _chain(s, chunk_id)
    # And a statement's curation into bank/opinions.md is its history too (recall answers with the
    # statement, carrying the curated confidence): reflection's moves, after the log's versions.
    curations = [] if quoted else [i for c in _curations(s, own) for i in _chain(s, c)]
    ids = sorted(set(own) | set(quoted) | set(curations))
    records = s.results_by_id(ids)
    # Each version's result already names its commit; add who made it and why.
    by_oid = store.commits_by_oid(s.conn, [r.commit for r in records if r.commit])
    versions: list[dict[str, Any]] = []
    for r in records:
        c = by_oid.get(r.commit) if r.commit else None
        versions.append({**r.to_json(), "author": c["author"] if c else None,
                         "message": c["message"].splitlines()[0] if c and c["message"] else None})
    # Replaced is what the statement is, not its bank/ copy: the original's newest version says.
    last = max(quoted) if quoted else max(own)
    return {"target": target, "match": chunk_id, "versions": versions, "superseded_by": _replaced_by(s, last),
            "supersedes": _replaced(s, ids), "index": s.index_info(), "notes": notes}


WHY_HITS = 20  # the statements `why TEXT` looks through for the one that says TEXT


def _curations(s: Session, versions: list[int]) -> list[int]:
    """The lines of bank/opinions.md curating any of a statement's `versions` (copies of them)."""
    found = store.copies_in_memory(s.conn, versions, store.Where((), ()))
    copies = sorted({i for more in found.values() for i in more})
    return [r.id for r in s.results_by_id(copies) if r.id is not None and curated_opinion(r.path, r.content)]


def _words(text: str | None) -> str:
    return " ".join((text or "").casefold().split())


def _replaced_by(s: Session, chunk_id: int) -> list[dict[str, Any]]:
    """The statements that replaced chunk `chunk_id` in other places (derived supersession, see
    gitmem/index/supersede.py), oldest first, each with the rule's reason: Porto -> Madrid."""
    reasons: dict[int, str] = {}

    def step(cur: int) -> int | None:
        link = store.superseded_by(s.conn, [cur]).get(cur)
        if link is None:
            return None
        reasons.setdefault(link.new, link.reason)  # the link that first reached it (a cycle stops the walk)
        return link.new

    chain = _follow(step, chunk_id, {chunk_id})
    records = s.results_by_id(chain)
    return [{"reason": reasons[i], "result": r.to_json()} for r, i in zip(records, chain)]


def _replaced(s: Session, ids: list[int]) -> list[dict[str, Any]]:
    """The statements the versions `ids` replaced in other places, and those they replaced in turn,
    newest first, each with the rule's reason: `why "Moved to Madrid"` names the Porto line."""
    found: list[tuple[int, str]] = []
    seen = set(ids)
    todo = list(ids)
    while todo:
        for link in store.supersedes_what(s.conn, todo.pop(0)):
            if link.old not in seen:
                seen.add(link.old)
                found.append((link.old, link.reason))
                todo.append(link.old)
    found.sort(key=lambda x: -x[0])
    records = s.results_by_id([i for i, _ in found])
    return [{"reason": reason, "result": r.to_json()} for r, (_, reason) in zip(records, found)]


def changes(s: Session, *, since: str = "7d", until: str | None = None, by_entity: bool = False) -> dict[str, Any]:
    if until and s.point(since, end_of_day=False).timestamp > s.point(until).timestamp:
        from gitmem.errors import BadUsage

        raise BadUsage(f"--since {since} is after --until {until}", "swap them")
    p0 = s.position_before(since)
    p1 = s.position(until)[0] if until else store.last_position(s.conn)
    added_ids = store.ids_added(s.conn, p0, p1)
    gone_ids = store.ids_ended(s.conn, p0, p1)
    # One line per fact, as recall gives it: a bank/ line quoting a fact (a merged reflection's
    # entity pages and world.md) is the fact again, not a change, unless it says another
    # confidence than the statement it quotes (reflection moved a curated opinion).
    originals = store.originals_of(s.conn, sorted(set(added_ids) | set(gone_ids)))
    rows = {r.id: r for r in s.results_by_id(sorted(set(added_ids) | set(gone_ids) | set(originals.values())))}
    predecessor = store.predecessors(s.conn, added_ids)
    out: list[dict[str, Any]] = []
    replaced: set[int] = set()
    left_out = 0

    def said(i: int) -> bool:
        return layout.says_something(rows[i].path, rows[i].content)

    def repeats(i: int, prev: int | None) -> bool:  # prev: the version it replaced, if any
        o = originals.get(i)
        same = rows[i].confidence
        return o is not None and same in (None, rows[o].confidence) and (prev not in rows or rows[prev].confidence == same)

    for i in added_ids:
        prev = predecessor.get(i)
        if not said(i) or repeats(i, prev):
            left_out += int(said(i))
            continue
        r = rows[i].to_json()
        if prev is not None and prev in rows:
            r["change"] = "changed"
            r["previous"] = {"content": rows[prev].content, "source": rows[prev].source,
                             "confidence": rows[prev].confidence}
            replaced.add(prev)
        else:
            r["change"] = "added"
        out.append(r)
    for i in gone_ids:
        if i in replaced or rows[i].status == "superseded" and rows[i].successor in rows:
            continue
        if not said(i) or i in originals:
            left_out += int(said(i))
            continue
        r = rows[i].to_json()
        r["change"] = "removed"
        out.append(r)
    notes = list(s.notes)
    if left_out:
        notes.append(f"{left_out} line(s) of bank/ pages that only repeat a fact left out "
                     "(`gitmem recall` lists them under `also in`)")
    data: dict[str, Any] = {"since": since, "until": until, "from_position": p0, "to_position": p1,
                            "changes": out, "index": s.index_info(), "notes": notes}
    if by_entity:
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in out:
            for e in r["entities"] or ["(none)"]:
                groups.setdefault(e, []).append(r)
        data["by_entity"] = dict(sorted(groups.items()))
    return data


def core(s: Session, *, budget: int = 1500, as_of: str | None = None) -> dict[str, Any]:
    """memory.md (always first: it is the user's curated core) plus the newest facts that fit."""
    as_of_info = _as_of(s, as_of)
    commit = as_of_info["commit"] if as_of_info else s.tip
    answer_notes: list[str] = []
    memory_md = ""
    if as_of is None and os.path.lexists(s.ws.root / layout.CORE_FILE):
        try:
            memory_md = _worktree_file(s.ws, layout.CORE_FILE)
        except GitmemError as exc:
            answer_notes.append(f"{layout.CORE_FILE} left out: {exc.message}")
    elif commit:
        memory_md = _file_at(s.ws, commit, layout.CORE_FILE) or ""
    memory_md = "\n".join(ln.rstrip() for ln in strip_comments(memory_md).strip().splitlines())
    memory_md = re.sub(r"\n{3,}", "\n\n", memory_md)
    used = estimate_tokens(memory_md)
    if used > budget:
        memory_md, used = _trim_core(memory_md, budget)
    answer = s.search("", Options(k=200, as_of=as_of, kinds=("world", "experience", "opinion", "observation")))
    facts = sorted(answer.results, key=lambda r: (r.timestamp or "", r.id or 1 << 62), reverse=True)
    facts = pack(facts, max(budget - used, 0))
    md = "# Core memory (memory.md)\n\n" + (memory_md or "(empty)")
    if facts:
        md += "\n\n# Recent facts\n\n" + "\n".join(f"- {r.line()}" for r in facts)
    return {"memory_md": memory_md, "facts": [r.to_json() for r in facts], "markdown": md, "budget": budget,
            "tokens": estimate_tokens(md), "as_of": as_of_info, "index": s.index_info(),
            "notes": answer.notes + answer_notes}


_ITEM_LINE = lazy(r"^\s*(?:[-*+]|\d+[.)])\s")


def _trim_core(text: str, budget: int) -> tuple[str, int]:
    """Whole lines of memory.md that fit `budget`, facts first: list items, then the headings
    (the items' context), then prose, each in file order; the kept lines stay in file order."""
    lines = text.splitlines()
    level = [0 if _ITEM_LINE.match(ln) else 1 if ln.startswith("#") else 2 for ln in lines]
    keep: set[int] = set()
    used = 0
    for want in (0, 1, 2):
        for i, ln in enumerate(lines):
            cost = estimate_tokens(ln)
            if level[i] == want and ln.strip() and used + cost <= budget:
                keep.add(i)
                used += cost
    return "\n".join(lines[i] for i in sorted(keep)), used


def show(ws: Workspace, citation: str) -> dict[str, Any]:
    cited = layout.parse_citation(citation)
    if cited is None:
        raise GitmemError(f"{citation!r} is not a citation", f"citations look like {layout.CITATION_EXAMPLE}")
    path, start, end, rev = cited
    if rev == layout.WORKTREE_REV:
        text = _worktree_file(ws, path)
        oid = None
    else:
        if not safe_rel(path) or not is_memory_markdown(path):
            raise GitmemError(f"{path!r} is not a memory file of this workspace",
                              "citations name a workspace-relative *.md path, e.g. memory/2025-11-27.md")
        oid = git.resolve(ws.root, rev)
        if oid is None:
            raise GitmemError(f"commit {rev} is not in this repository", "fetch it, or check the citation")
        got = _file_at(ws, oid, path)
        if got is None:
            raise GitmemError(f"{path} does not exist at commit {rev}", "check the path in the citation")
        text = got
    lines = split_lines(text)
    if start < 1 or end < start or end > len(lines):
        raise GitmemError(f"lines {start}-{end} are outside {path} at {rev} ({len(lines)} lines)",
                          "check the line range in the citation")
    return {"citation": citation, "path": path, "commit": oid, "start": start, "end": end,
            "lines": lines[start - 1 : end]}
