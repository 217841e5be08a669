"""Keep the derived index in step with the branch's first-parent history.

`update()` is the one entry point (CLI, hooks, recall's catch-up). It indexes the commits after the
indexed tip; when the tip is no longer on the branch's first-parent chain (amend, rebase,
reset --hard) it rolls the index back to the newest commit both histories share and goes on from
there. Work is committed in batches, each one transaction that also moves the recorded tip, so an
indexer killed at any point leaves a consistent prefix that the next run continues.
"""

from __future__ import annotations

import gc
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from gitmem.config import load_config
from gitmem.index import rules, store
from gitmem.layout import BANK_DIR, bank_folder_stem, in_bank
from gitmem.index.dating import last_day
from gitmem.index.readings import rows_of
from gitmem.index.db import get_meta, open_index, set_meta, target_commit, unshallowed, writer_lock
from gitmem.index.supersede import Statement, cited_source, has_cue, restates, same_fact, supersedes
from gitmem.parse import Block, ParsedFile, parse_markdown
from gitmem.parse.entities import page_entity
from gitmem.timeline import git
from gitmem.timeline.history import (
    CommitInfo,
    FileChange,
    links_after,
    shared_base,
    walk,
)
from gitmem.workspace import Workspace

try:  # the C module behind hashlib.blake2b: importing hashlib also loads OpenSSL, ~4 ms per hook run
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

BATCH_COMMITS = 2000
BATCH_SECONDS = 2.0
_PARSE_CACHE = 512
_PAIR_WORDS = 80  # words of each chunk compared when pairing edits
# Problems worth telling the user about; lint-style grammar diagnostics are `gitmem lint`'s job.
_INDEX_PROBLEMS = {"binary", "too-large", "decode-replaced"}


class UpdateResult:
    """What one `update()` did. A plain class: the hook imports this module (see parse/model.py)."""

    def __init__(self, rebuilt: bool = False) -> None:
        self.tip: str | None = None  # the indexed commit afterwards
        self.head: str | None = None  # the commit the index should reflect
        self.commits = 0  # commits indexed by this run
        self.added = 0  # chunk versions inserted
        self.closed = 0  # chunk versions ended
        self.rolled_back = 0  # commits dropped because history was rewritten
        self.rebuilt = rebuilt
        self.shallow = False
        self.deferred = 0  # commits left for a background run (update's max_commits), 0 = none
        # The derived links are older rules' (index/rules.py) and this run (the hook's, with
        # max_commits) left deriving them again to a background run.
        self.stale_rules = False
        self.notes: list[str] = []
        self.problems: list[dict[str, str]] = []


def ident_of(block: Block) -> int:
    """Identity of a chunk version: the same text under the same headings is the same chunk,
    wherever it moves in the file. Stable across processes (unlike hash())."""
    digest = blake2b(
        ("\x1f".join(block.heading) + "\0" + block.text).encode("utf-8", "surrogatepass"), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big", signed=True)


def _surplus(old_ids: list[int], new_ids: list[int]) -> dict[int, int]:
    """Per identity: how many more times the old side has it (negative: the new side has more).
    Plain dicts, not Counter: this runs once per file version, and a typical commit compares one
    or two blocks a side, where Counter's set-up cost more than the counting."""
    surplus: dict[int, int] = {}
    for k in old_ids:
        surplus[k] = surplus.get(k, 0) + 1
    for k in new_ids:
        surplus[k] = surplus.get(k, 0) - 1
    return surplus


class _Row(NamedTuple):
    id: int
    ident: int
    content: str


class _Writer:
    """Accumulates one batch of row changes and flushes them in a single transaction."""

    def __init__(self, conn: sqlite3.Connection, max_bytes: int) -> None:
        self.conn = conn
        self.max_bytes = max_bytes
        self.next_id = (conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0) + 1
        last = conn.execute("SELECT pos, record_time FROM commits ORDER BY pos DESC LIMIT 1").fetchone()
        self.pos: int = last[0] if last else 0
        self.record_time: int = last[1] if last else 0
        self.current: dict[str, list[_Row]] = {}
        # The last parse of recently changed files (insertion-ordered: oldest evicted first), kept
        # so the next version of a file is re-chunked from its first changed line only.
        self.parsed: dict[str, tuple[ParsedFile, list[int]]] = {}
        self.commits: list[tuple] = []
        self.inserts: list[tuple] = []
        self.entity_rows: list[tuple[str, int]] = []
        self.closes: list[tuple[int, int]] = []
        self.successors: list[tuple[int, int]] = []
        self.problems: list[tuple[int, str, str, str]] = []
        self.reported: list[dict[str, str]] = []
        self.added = 0
        self.closed = 0

    def _rows(self, path: str) -> list[_Row]:
        rows = self.current.get(path)
        if rows is None:
            rows = [
                _Row(r[0], r[1], r[2])
                for r in self.conn.execute(
                    "SELECT id, ident, content FROM chunks WHERE path = ? AND valid_to IS NULL ORDER BY id",
                    (path,),
                )
            ]
            self.current[path] = rows
        return rows

    def commit(self, info: CommitInfo, changes: list[FileChange]) -> None:
        self.pos += 1
        self.record_time = max(self.record_time, info.commit_time)
        self.commits.append(
            (self.pos, info.oid, info.parent, info.author, info.email, info.author_time, info.author_tz,
             info.commit_time, info.commit_tz, self.record_time, info.message)
        )
        gone: list[_Row] = []
        born: list[tuple[int, str]] = []
        for change in changes:
            g, b = self._apply(change)
            gone += g
            born += b
        self._link_moves(gone, born)

    def _problem(self, path: str, code: str, message: str) -> None:
        self.problems.append((self.pos, path, code, message))
        self.reported.append({"path": path, "code": code, "message": message})

    def _apply(self, change: FileChange) -> tuple[list[_Row], list[tuple[int, str]]]:
        """Diff the file's chunk multiset against its current rows; returns (closed, inserted).

        Both sides are multisets of chunk identities. When the previous version of the file was
        parsed in this run, only the blocks between the unchanged prefix and the unchanged end can
        differ (the parser takes both over), so only those are compared: the result is the same as
        a full comparison (the same rows closed: the newest of a duplicated identity; the same
        blocks inserted: the later occurrences), at the cost of the change instead of the file."""
        path = change.path
        old = self._rows(path)
        prev = self.parsed.pop(path, None)
        blocks: list[Block] = []
        parsed = None
        if change.too_large:
            self._problem(path, "too-large",
                          f"{change.too_large} bytes is over the {self.max_bytes}-byte limit; not indexed")
        elif change.data is not None:
            if change.binary:
                self._problem(path, "binary", "binary file named .md: skipped")
            else:
                parsed = parse_markdown(change.data, path, max_bytes=self.max_bytes,
                                        previous=prev[0] if prev else None)
                blocks = parsed.blocks
                for d in parsed.diagnostics:
                    if d.code in _INDEX_PROBLEMS:
                        self._problem(path, d.code, d.message)
        reused = tail = 0
        if parsed is not None and prev is not None:
            reused, tail = parsed.reused, parsed.reused_tail
        prev_ids = prev[1] if prev is not None else []
        stop = len(blocks) - tail
        new_ids = [ident_of(b) for b in blocks[reused:stop]]
        # The taken-over blocks keep their text and headings, so their identities are the old ones.
        idents = prev_ids[:reused] + new_ids + prev_ids[len(prev_ids) - tail :]
        old_ids = prev_ids[reused : len(prev_ids) - tail] if prev is not None else [r.ident for r in old]
        closed: list[_Row] = []
        inserted: list[_Row] = []
        new_rows: list[tuple[int, str]] = []
        if old_ids != new_ids:
            surplus = _surplus(old_ids, new_ids)
            if tail and not {k for k, v in surplus.items() if v < 0}.isdisjoint(idents[stop:]):
                # An identity that grew also occurs in the unchanged end, where its later
                # occurrences (the ones counted as new) are: compare through the end of the file.
                stop, new_ids, old_ids = len(blocks), idents[reused:], prev_ids[reused:]
                surplus = _surplus(old_ids, new_ids)
            to_close = sum(v for v in surplus.values() if v > 0)
            extra = {k: -v for k, v in surplus.items() if v < 0}
            if to_close:
                for row in reversed(old):  # newest first: a duplicated identity loses its newest rows
                    n = surplus.get(row.ident, 0)
                    if n > 0:
                        surplus[row.ident] = n - 1
                        closed.append(row)
                        to_close -= 1
                        if not to_close:
                            break
                closed.reverse()
            if extra:
                # Blocks are new where the new version has more of an identity than the old one
                # had: the last `extra[i]` occurrences of identity i (in file order) are the new ones.
                seen: dict[int, int] = {}
                for k in new_ids:
                    if k in extra:
                        seen[k] = seen.get(k, 0) + 1
                for block, ident in zip(blocks[reused:stop], new_ids):
                    if ident in extra:
                        seen[ident] -= 1
                        if seen[ident] < extra[ident]:
                            row = self._insert(path, block, ident)
                            inserted.append(row)
                            new_rows.append((row.id, block.content))
        for row in closed:
            self.closes.append((self.pos, row.id))
        self.closed += len(closed)
        self._pair_edits(closed, inserted)
        if closed:
            gone = {r.id for r in closed}
            old = [r for r in old if r.id not in gone]
        self.current[path] = old + inserted  # ids only grow, so this stays sorted
        if parsed is not None and parsed.resume is not None:
            self.parsed[path] = (parsed, idents)
            if len(self.parsed) > _PARSE_CACHE:
                self.parsed.pop(next(iter(self.parsed)))
        return closed, new_rows

    def _insert(self, path: str, block: Block, ident: int) -> _Row:
        rid = self.next_id
        self.next_id += 1
        entities = " ".join(block.entities)
        self.inserts.append(
            (rid, path, block.start, block.end, " > ".join(block.heading), block.kind, int(block.fact),
             entities, block.confidence, block.event_start, block.event_end, block.content, ident, self.pos)
        )
        self.entity_rows += [(e, rid) for e in block.entities]
        self.added += 1
        return _Row(rid, ident, block.content)

    def _pair_edits(self, closed: list[_Row], inserted: list[_Row]) -> None:
        """An edited bullet is a supersession: link each closed chunk to the most similar chunk
        inserted in the same file by the same commit (greedy, in file order, similarity >= 0.5)."""
        if not closed or not inserted:
            return
        from difflib import SequenceMatcher  # only commits that edit need it

        # Similarity of the word sequences: an edit changes words, and comparing ~60 words instead
        # of ~400 characters made pairing ~10x cheaper (it led the profile of a 100k-commit rebuild).
        free = [(cand, cand.content.split()[:_PAIR_WORDS]) for cand in inserted[:200]]
        for row in closed[:200]:
            words = row.content.split()[:_PAIR_WORDS]
            best, best_score = -1, 0.5
            m = SequenceMatcher(None, autojunk=False)
            m.set_seq2(words)  # seq2 is the side difflib indexes: once per closed row
            for j, (_, cand_words) in enumerate(free):
                m.set_seq1(cand_words)
                if m.real_quick_ratio() < best_score or m.quick_ratio() < best_score:
                    continue
                score = m.ratio()
                if score >= best_score:
                    best, best_score = j, score
            if best >= 0:
                self.successors.append((free.pop(best)[0].id, row.id))

    def _link_moves(self, gone: list[_Row], born: list[tuple[int, str]]) -> None:
        """Text that left one file and arrived verbatim in another (a rename) is the same fact moved."""
        if not gone or not born:
            return
        linked = {old for _, old in self.successors}
        by_content: dict[str, list[int]] = {}
        for rid, content in born:
            by_content.setdefault(content, []).append(rid)
        for row in gone:
            if row.id in linked:
                continue
            targets = by_content.get(row.content)
            if targets:
                self.successors.append((targets.pop(0), row.id))

    def flush(self, tip: str) -> None:
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            c.executemany("INSERT INTO commits VALUES (?,?,?,?,?,?,?,?,?,?,?)", self.commits)
            c.executemany(
                "INSERT INTO chunks (id, path, start_line, end_line, heading, kind, fact, entities, confidence,"
                " event_start, event_end, content, ident, valid_from, last_day) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(*r, last_day(r) or "") for r in self.inserts],  # rows in store's column order
            )
            c.executemany(
                "INSERT INTO chunks_fts (rowid, content, heading, path, entities) VALUES (?,?,?,?,?)",
                [(r[0], r[11], r[4], r[1], r[7]) for r in self.inserts],
            )
            c.executemany(_READINGS, rows_of(self.inserts))  # what recall's recency reads of each (index/readings.py)
            c.executemany("INSERT OR IGNORE INTO chunk_entities VALUES (?, ?)", self.entity_rows)
            c.executemany("UPDATE chunks SET valid_to = ? WHERE id = ?", self.closes)
            c.executemany("UPDATE chunks SET successor = ? WHERE id = ?", self.successors)
            c.executemany("INSERT INTO problems VALUES (?,?,?,?)", self.problems)
            self._derive_links()
            set_meta(c, "tip", tip)
            c.execute("COMMIT")
        except BaseException:
            _rollback(c)
            raise
        for lst in (self.commits, self.inserts, self.entity_rows, self.closes, self.successors, self.problems):
            lst.clear()

    def _derive_links(self) -> None:
        """Supersession and copy links of this batch's new chunks (gitmem/index/supersede.py).
        Runs inside the batch's transaction, after its rows are in: an older statement recorded
        earlier in the same batch is a candidate like any other."""
        c = self.conn
        links: list[tuple[int, int, int, str]] = []
        copies: list[tuple[int, int]] = []
        for rid, path, _s, _e, _h, kind, fact, entities, _c, ev_start, _ee, content, _i, pos in self.inserts:
            if in_bank(path):
                src = cited_source(content) if ".md#L" in content else None
                if src is not None:
                    # The cited file's statements then; the cited line first, but a citation's line
                    # may be stale (the log grew since), so any statement of that file whose words match.
                    rows = c.execute(
                        "SELECT id, start_line, end_line, content FROM chunks WHERE path = ? AND id < ?"
                        " AND valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)", (src[0], rid, pos, pos)).fetchall()
                    rows.sort(key=lambda r: not (r[1] <= src[1] <= r[2]))
                    hit = next((r[0] for r in rows if same_fact(content, r[3])), None)
                    if hit is not None:
                        copies.append((rid, hit))
                elif entities:
                    # An uncited restatement (bank/opinions.md, an entity page's opinion list) is a
                    # copy of the newest statement outside bank/ it restates.
                    hit = next((o[0] for o in self._older(tuple(entities.split()), kind, rid, pos)
                                if not in_bank(o[1]) and restates(content, o[5])), None)
                    if hit is not None:
                        copies.append((rid, hit))
                continue
            if not (entities or fact) or not (kind == "opinion" or has_cue(content)):
                continue
            keys = tuple(entities.split())
            new = Statement(path, kind, bool(fact), keys, content, ev_start)
            seen: set[int] = set()
            for old in self._older(keys, kind, rid, pos):
                if old[0] in seen:
                    continue
                seen.add(old[0])
                reason = supersedes(new, Statement(old[1], old[2], bool(old[3]), tuple(old[4].split()), old[5], old[6]))
                if reason is not None:
                    links.append((old[0], rid, pos, reason))
        c.executemany("INSERT OR IGNORE INTO supersessions VALUES (?,?,?,?)", links)
        c.executemany("INSERT OR IGNORE INTO copies VALUES (?,?)", copies)


    def _older(self, keys: tuple[str, ...], kind: str, rid: int, pos: int) -> list[tuple]:
        """The statements a new chunk could replace: recorded before it and still in memory then,
        naming one of its entities (newest 64 per entity), or for a typed fact naming no one, the
        newest 64 such facts of its kind outside bank/."""
        live = "c.valid_from < ? AND (c.valid_to IS NULL OR c.valid_to > ?)"
        cols = "c.id, c.path, c.kind, c.fact, c.entities, c.content, c.event_start"
        if not keys:
            return self.conn.execute(
                f"SELECT {cols} FROM chunks c WHERE c.kind = ? AND c.fact = 1 AND c.entities = ''"
                f" AND c.path NOT LIKE '{BANK_DIR}/%' AND c.id < ? AND {live} ORDER BY c.id DESC LIMIT 64", (kind, rid, pos, pos)).fetchall()
        out: list[tuple] = []
        # Ordered by the entity index's own column: SQLite then walks (entity, chunk_id) backwards
        # and stops at the 64th live row. "ORDER BY c.id" (the same order) made it read and sort
        # every mention of the entity for each new chunk, which made a rebuild quadratic in the
        # history (a 10k-day history: 53 ms per common entity, 165 s CPU for the rebuild).
        for key in keys[:4]:
            out += self.conn.execute(
                f"SELECT {cols} FROM chunk_entities e JOIN chunks c ON c.id = e.chunk_id WHERE e.entity = ?"
                f" AND e.chunk_id < ? AND {live} ORDER BY e.chunk_id DESC LIMIT 64", (key, rid, pos, pos)).fetchall()
        return out


_REDERIVE_BATCH = 5000
_READINGS = "INSERT OR REPLACE INTO readings VALUES (?,?,?,?,?,?)"
_CHUNK_COLS = ("id, path, start_line, end_line, heading, kind, fact, entities, confidence, event_start, event_end,"
               " content, ident, valid_from")


def rederive(conn: sqlite3.Connection, result: UpdateResult) -> None:
    """Derive every supersession and copy link again from the stored chunks, by this code's rules
    (index/rules.py), in one transaction. The chunks are walked in id order (the timeline's) and
    each batch goes through the same `_Writer._derive_links` a build runs: what it reads of older
    chunks (`valid_from` / `valid_to` around the new chunk's position) is the same now as when the
    chunk was first indexed, so the links are those a rebuild would make, without re-reading git."""
    was = get_meta(conn, rules.DERIVED_RULES)
    writer = _Writer(conn, 0)
    conn.execute("BEGIN IMMEDIATE")
    try:
        _page_entities(conn)  # before the links: they read the chunks' entities
        conn.execute("DELETE FROM supersessions")
        conn.execute("DELETE FROM copies")
        last = 0
        while True:
            rows = conn.execute(f"SELECT {_CHUNK_COLS}, last_day FROM chunks WHERE id > ? ORDER BY id LIMIT ?",
                                (last, _REDERIVE_BATCH)).fetchall()
            if not rows:
                break
            writer.inserts = [tuple(r[:-1]) for r in rows]
            writer._derive_links()
            # The stored days by these rules too (index/dating.py); only the changed rows are written.
            days = [(d, r[0]) for r in rows if (d := last_day(r) or "") != r[-1]]
            conn.executemany("UPDATE chunks SET last_day = ? WHERE id = ?", days)
            conn.executemany(_READINGS, rows_of(rows))  # and the readings recall's recency reads (index/readings.py)
            last = rows[-1][0]
        set_meta(conn, rules.DERIVED_RULES, rules.RULES)
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise
    finally:
        writer.inserts = []
    result.notes.append(f"derived the supersession links again: they were made by older rules "
                        f"({'version ' + was if was else 'unversioned'}; now version {rules.RULES})")


def _page_entities(conn: sqlite3.Connection) -> None:
    """The stored chunks of a page in a folder of bank/ that name no one, given the entity the page's
    heading names by this code's rule (parse.entities `page_entity`, as parse/blocks.py gives it to a
    block it parses: wave 20, RULES "9"): the chunk row, its entity rows and its FTS row."""
    rows = conn.execute(f"SELECT id, path, heading, content FROM chunks WHERE path LIKE '{BANK_DIR}/%/%' AND entities = ''").fetchall()
    found = [(key, i, path, heading, content) for i, path, heading, content in rows
             if (stem := bank_folder_stem(path)) is not None and (key := page_entity(stem, heading.split(" > ")[0]))]
    if not found:
        return
    conn.executemany("INSERT INTO chunks_fts (chunks_fts, rowid, content, heading, path, entities) VALUES ('delete', ?, ?, ?, ?, '')",
                     [(i, content, heading, path) for _k, i, path, heading, content in found])
    conn.executemany("UPDATE chunks SET entities = ? WHERE id = ?", [(k, i) for k, i, *_ in found])
    conn.executemany("INSERT INTO chunks_fts (rowid, content, heading, path, entities) VALUES (?,?,?,?,?)",
                     [(i, content, heading, path, k) for k, i, path, heading, content in found])
    conn.executemany("INSERT OR IGNORE INTO chunk_entities VALUES (?, ?)", [(k, i) for k, i, *_ in found])


def _rollback(conn: sqlite3.Connection) -> None:
    """Undo the open transaction, if SQLite has not already: on SQLITE_FULL (and other I/O errors)
    it rolls back by itself, and a second ROLLBACK's "cannot rollback - no transaction is active"
    used to replace the real cause (a full disk) in the error the user saw."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # the original error is the one worth reporting


def _rollback_to(conn: sqlite3.Connection, pos: int) -> int:
    """Forget everything recorded after timeline position `pos`; returns commits dropped."""
    dropped = conn.execute("SELECT count(*) FROM commits WHERE pos > ?", (pos,)).fetchone()[0]
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            "INSERT INTO chunks_fts (chunks_fts, rowid, content, heading, path, entities)"
            " SELECT 'delete', id, content, heading, path, entities FROM chunks WHERE valid_from > ?",
            (pos,),
        )
        conn.execute(
            "DELETE FROM chunk_entities WHERE chunk_id IN (SELECT id FROM chunks WHERE valid_from > ?)", (pos,)
        )
        conn.execute("DELETE FROM supersessions WHERE pos > ?", (pos,))
        conn.execute("DELETE FROM copies WHERE copy IN (SELECT id FROM chunks WHERE valid_from > ?)", (pos,))
        conn.execute("DELETE FROM chunks WHERE valid_from > ?", (pos,))
        conn.execute("UPDATE chunks SET valid_to = NULL, successor = NULL WHERE valid_to > ?", (pos,))
        conn.execute("DELETE FROM problems WHERE pos > ?", (pos,))
        conn.execute("DELETE FROM commits WHERE pos > ?", (pos,))
        row = conn.execute("SELECT oid FROM commits WHERE pos = ?", (pos,)).fetchone()
        set_meta(conn, "tip", row[0] if row else None)
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise
    return dropped


def _wipe(ws: Workspace) -> None:
    for suffix in ("", "-wal", "-shm"):
        p = Path(str(ws.index_path) + suffix)
        if p.exists():
            p.unlink()


def update(
    ws: Workspace,
    *,
    rebuild: bool = False,
    wait: float = 5.0,
    progress: Callable[[int, int], None] | None = None,
    max_commits: int | None = None,
    rederive_limit: int | None = None,
) -> UpdateResult:
    """Bring the index up to date with the branch; see the module docstring. With `max_commits`,
    more commits than that to index are left alone: `result.deferred` says how many (the hook
    hands them to a background run rather than block the user's git command). Links made by older
    rules (index/rules.py) are derived again first, unless `max_commits` is set or the index holds
    more than `rederive_limit` chunk versions: then `result.stale_rules` says they were left."""
    result = UpdateResult(rebuilt=rebuild)
    with writer_lock(ws, wait):
        if rebuild:
            _wipe(ws)
        conn, note = open_index(ws)
        try:
            if note:
                result.notes.append(note)
                result.rebuilt = True
            _update_locked(ws, conn, result, progress, max_commits, rederive_limit)
        finally:
            conn.close()
    return result


def _size(conn: sqlite3.Connection) -> int:
    """How many chunk versions the index holds, about (ids follow the timeline: the largest is the count)."""
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0])


def _update_locked(
    ws: Workspace, conn: sqlite3.Connection, result: UpdateResult, progress: Callable[[int, int], None] | None,
    max_commits: int | None = None, rederive_limit: int | None = None,
) -> None:
    root = ws.root
    head = target_commit(ws)
    result.head = head
    tip = get_meta(conn, "tip")
    result.tip = tip
    if head is None:
        if tip is not None:
            result.rolled_back = _rollback_to(conn, 0)
            result.tip = None
        result.notes.append("the repository has no commits yet: nothing to index")
        return
    if rules.stale(conn):
        if tip is None:
            # Nothing indexed yet: the links are derived by these rules as the history is walked.
            set_meta(conn, rules.DERIVED_RULES, rules.RULES)
        elif max_commits is not None or rederive_limit is not None and _size(conn) > rederive_limit:
            # The hook's run, or a recall over a large index: deriving every link again (~0.1 ms of
            # CPU per chunk version: 68 s at 1M lines) is a background run's or `gitmem index`'s
            # work. New commits are still indexed, by these rules; the version stays stale.
            result.stale_rules = True
        else:
            rederive(conn, result)
    if tip is not None and unshallowed(ws, conn):
        # History before the old shallow boundary is there now; an incremental run would never
        # visit it (it only walks forward from the tip).
        result.rolled_back = _rollback_to(conn, 0)
        result.rebuilt = True
        result.notes.append("the repository is no longer shallow: re-indexing its full history")
        tip = None
    if tip == head:
        return
    base = tip
    # The commits after `base`, once listed: the rewrite check lists them, the progress bar counts them.
    pending: list[tuple[str, str | None]] | None = None
    if tip is not None:
        pending = links_after(root, head, tip)
        if pending is None:
            missing = git.resolve(root, tip) is None  # pruned away (amend + reflog expire + gc)
            # The indexed tip is gone from this branch's first-parent line: history was rewritten
            # (amend, rebase, reset) or the branch switched. Keep what both histories share.
            pos = shared_base(root, head, tip, lambda oid: store.position_of(conn, oid),
                              lambda: store.positions_newest_first(conn))
            result.rolled_back = _rollback_to(conn, pos)
            base = get_meta(conn, "tip")
            pending = None
            if missing:
                result.rebuilt = pos == 0
                result.notes.append(
                    f"the indexed commit {tip[:7]} no longer exists (history was rewritten and pruned): "
                    + ("rebuilding the index" if pos == 0 else
                       f"rolled the index back {result.rolled_back} commit(s) to the newest commit that still exists")
                )
            else:
                result.notes.append(
                    f"history was rewritten: rolled the index back {result.rolled_back} commit(s) to the shared base"
                )
    # Shallowness is looked up on a walk from the root; an incremental run inherits it (fetching
    # the missing history later does not put it in this index: only a rebuild does).
    result.shallow = git.is_shallow(root) if base is None else get_meta(conn, "shallow") == "1"
    if result.shallow:
        result.notes.append("shallow clone: history before the shallow boundary is not indexed")
    total = 0
    if max_commits is not None:
        total = len(pending) if pending is not None else git.count_first_parent(root, head, since=base)
        if total > max_commits:
            result.deferred = total
            return
    if progress and not total:
        total = len(pending if pending is not None else git.first_parent_links(root, head, since=base))
    max_bytes = load_config(ws).index.max_file_bytes
    writer = _Writer(conn, max_bytes)
    done = 0
    last_flush = time.monotonic()
    pending_tip: str | None = None
    # The walk allocates millions of short-lived tuples and makes no reference cycles (peak RSS
    # of a 100k-commit rebuild is the same with the cyclic collector off), so the collector's
    # passes over them are pure cost: ~9% of a rebuild's CPU. It is switched back on after.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for info, changes in walk(root, head, base, max_bytes):
            writer.commit(info, changes)
            pending_tip = info.oid
            done += 1
            if len(writer.commits) >= BATCH_COMMITS or time.monotonic() - last_flush > BATCH_SECONDS:
                writer.flush(pending_tip)
                last_flush = time.monotonic()
            if progress:
                progress(done, total)
        if pending_tip is not None:
            writer.flush(pending_tip)
    finally:
        if collecting:
            gc.enable()
    result.commits = done
    result.added = writer.added
    result.closed = writer.closed
    result.tip = get_meta(conn, "tip")
    result.problems = writer.reported
    set_meta(conn, "shallow", "1" if result.shallow else None)
