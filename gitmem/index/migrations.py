"""Named, append-only schema migrations for the derived index.

Never edit or reorder a migration that has shipped: add a new one at the end. Each runs once, in
its own transaction, and is recorded in `_migrations`. The index is derived data, so a migration
may also drop and refill tables; `gitmem index --rebuild` always works.

Timeline model:
- `commits.pos` is a commit's position on the indexed branch's first-parent chain (1 = oldest).
  `record_time` is the running maximum of committer times along that chain, so it never goes
  backwards even when commit dates do; `--as-of DATE` picks the last position whose record_time
  is <= DATE, which guarantees nothing committed later (in chain order) can leak in.
- `chunks` holds every version of every chunk/fact that ever existed. A version is in memory at
  position p when valid_from <= p and (valid_to IS NULL or p < valid_to). Its row id is assigned
  in timeline order. `successor` links an edited chunk to the version that replaced it.
- `chunks_fts` is an external-content FTS5 table keyed by chunks.id (explicit integer key).
  Columns and their bm25 weights are documented in gitmem/index/store.py.
"""

from __future__ import annotations

import sqlite3

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_timeline",
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE commits (
            pos INTEGER PRIMARY KEY,
            oid TEXT NOT NULL UNIQUE,
            parent TEXT,
            author TEXT NOT NULL,
            email TEXT NOT NULL,
            author_time INTEGER NOT NULL,
            author_tz TEXT NOT NULL,
            commit_time INTEGER NOT NULL,
            commit_tz TEXT NOT NULL,
            record_time INTEGER NOT NULL,
            message TEXT NOT NULL
        );
        CREATE INDEX commits_record_time ON commits(record_time, pos);
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            heading TEXT NOT NULL,
            kind TEXT NOT NULL,
            fact INTEGER NOT NULL,
            entities TEXT NOT NULL,
            confidence REAL,
            event_start TEXT,
            event_end TEXT,
            content TEXT NOT NULL,
            ident INTEGER NOT NULL,
            valid_from INTEGER NOT NULL,
            valid_to INTEGER,
            successor INTEGER
        );
        CREATE INDEX chunks_current_path ON chunks(path) WHERE valid_to IS NULL;
        CREATE INDEX chunks_from ON chunks(valid_from);
        CREATE INDEX chunks_to ON chunks(valid_to);
        CREATE INDEX chunks_path ON chunks(path, valid_from);
        CREATE TABLE chunk_entities (
            entity TEXT NOT NULL,
            chunk_id INTEGER NOT NULL,
            PRIMARY KEY (entity, chunk_id)
        ) WITHOUT ROWID;
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            content, heading, path, entities,
            content='chunks', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TABLE problems (
            pos INTEGER NOT NULL,
            path TEXT NOT NULL,
            code TEXT NOT NULL,
            message TEXT NOT NULL
        );
        CREATE INDEX problems_pos ON problems(pos);
        """,
    ),
    (
        "0002_worktree_overlay",
        """
        CREATE TABLE wt_files (
            path TEXT PRIMARY KEY,
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            deleted INTEGER NOT NULL
        );
        CREATE TABLE wt_chunks (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            heading TEXT NOT NULL,
            kind TEXT NOT NULL,
            fact INTEGER NOT NULL,
            entities TEXT NOT NULL,
            confidence REAL,
            event_start TEXT,
            event_end TEXT,
            content TEXT NOT NULL
        );
        CREATE INDEX wt_chunks_path ON wt_chunks(path);
        CREATE VIRTUAL TABLE wt_fts USING fts5(
            content, heading, path, entities,
            content='wt_chunks', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        """,
    ),
    (
        # Derived supersession (gitmem/index/supersede.py): `old` stopped being the current
        # statement of its fact when `new` was recorded at timeline position `pos`; an as-of
        # answer at p uses only the rows with pos <= p. `copies`: a bank/ chunk that quotes the
        # memory chunk `original` (by its citation). Both are derived from the chunks, so an index
        # built before this migration is emptied here and re-indexed from git on its next update.
        "0003_supersession",
        """
        CREATE TABLE supersessions (
            old INTEGER NOT NULL,
            new INTEGER NOT NULL,
            pos INTEGER NOT NULL,
            reason TEXT NOT NULL,
            PRIMARY KEY (old, new)
        ) WITHOUT ROWID;
        CREATE INDEX supersessions_new ON supersessions(new);
        CREATE INDEX supersessions_pos ON supersessions(pos);
        CREATE TABLE copies (
            copy INTEGER PRIMARY KEY,
            original INTEGER NOT NULL
        );
        CREATE INDEX copies_original ON copies(original);
        CREATE INDEX chunks_unnamed_facts ON chunks(kind, id) WHERE fact = 1 AND entities = '';
        INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all');
        DELETE FROM chunk_entities;
        DELETE FROM chunks;
        DELETE FROM problems;
        DELETE FROM commits;
        DELETE FROM wt_chunks;
        INSERT INTO wt_fts (wt_fts) VALUES ('delete-all');
        DELETE FROM wt_files;
        DELETE FROM meta WHERE key IN ('tip', 'shallow')
        """,
    ),
    (
        # Sentence vectors for semantic recall (gitmem/index/vectors.py). A vector belongs to a text
        # (`texts`, by the digest of the embedded text and the model that embedded it), so chunk
        # versions that share their text share one vector and `--as-of` stays exact: a chunk version
        # is linked to its text in `chunk_vectors`, and is searched only while it is in memory.
        # Filled by `gitmem index --vectors`, never by the hook; the trigger drops a link when its
        # chunk version goes (a rollback deletes chunk rows, and their ids are then reused).
        "0004_vectors",
        """
        CREATE TABLE texts (
            id INTEGER PRIMARY KEY,
            digest TEXT NOT NULL UNIQUE,
            vec BLOB NOT NULL
        );
        CREATE TABLE chunk_vectors (
            chunk_id INTEGER PRIMARY KEY,
            text_id INTEGER NOT NULL
        );
        CREATE TRIGGER chunk_vectors_gone AFTER DELETE ON chunks BEGIN
            DELETE FROM chunk_vectors WHERE chunk_id = old.id;
        END
        """,
    ),
    (
        # The last day of a statement that holds for a while only (gitmem/index/dating.py), read
        # from the chunk version alone when it is indexed, so recall compares days instead of
        # reading every candidate's text: "" when it names no end, NULL when not read yet (rows
        # indexed before this migration, filled when index/rules.py's version makes `gitmem
        # index` derive the links again; recall reads the text of a NULL row).
        "0005_last_day",
        """
        ALTER TABLE chunks ADD COLUMN last_day TEXT
        """,
    ),
    (
        # What recall's recency rules read of a statement whatever is asked (gitmem/index/readings.py),
        # one row per chunk version, read for the ~30 head candidates of a question instead of
        # parsing their text. A side table, not columns of `chunks`: the pool query reads every
        # column of ~600 rows per question, and these are read for 30. Filled as chunks are
        # indexed, and for every chunk when index/rules.py's version makes `gitmem index` derive
        # the links again (rows indexed before this migration have none: recall reads their text).
        # The trigger drops a chunk version's row when it goes (a rollback deletes chunk rows).
        "0006_readings",
        """
        CREATE TABLE readings (
            chunk_id INTEGER PRIMARY KEY,
            subject TEXT,
            relation TEXT,
            attrs TEXT NOT NULL,
            words TEXT NOT NULL,
            flags INTEGER NOT NULL
        );
        CREATE TRIGGER readings_gone AFTER DELETE ON chunks BEGIN
            DELETE FROM readings WHERE chunk_id = old.id;
        END
        """,
    ),
]


def apply(conn: sqlite3.Connection) -> list[str]:
    """Run the migrations not yet applied; returns their names."""
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    applied: list[str] = []
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            # Re-check under the write lock: another process may have migrated meanwhile.
            if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                continue
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO _migrations VALUES (?, datetime('now'))", (name,))
        applied.append(name)
    return applied


def _statements(sql: str) -> list[str]:
    # executescript would COMMIT our transaction; split on ';' instead (no ';' inside our DDL strings),
    # joining the pieces SQLite says are not yet a whole statement (a trigger's body has its own ';').
    out: list[str] = []
    buf = ""
    for piece in sql.split(";"):
        buf = f"{buf};{piece}" if buf else piece
        if buf.strip() and sqlite3.complete_statement(buf + ";"):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
