"""Semantic recall with the real bundled model (all-MiniLM-L6-v2 int8 ONNX from the embed extra):
real git repositories, real SQLite indexes, real warm embedder processes.

What must hold: meaning finds what the words miss; a vector never lets a chunk version into an
answer as of a time it was not in memory; embedding is resumable and never done by the hook;
recall says when vectors (or the model) are missing instead of degrading silently.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("onnxruntime", reason="semantic recall needs the embed extra (bash .ci/setup installs it)")

from gitmem.errors import GitmemError  # noqa: E402
from gitmem.index import vectors  # noqa: E402
from gitmem.index.db import open_index, writer_lock  # noqa: E402
from gitmem.index.indexer import update  # noqa: E402
from gitmem.recall import semantic, warm  # noqa: E402
from gitmem.recall.rank import Candidate  # noqa: E402
from gitmem.recall.search import Options, Session  # noqa: E402
from gitmem.workspace import Workspace  # noqa: E402
from gitrepo import GitRepo  # noqa: E402

HOBBY = "I go rock climbing and kayaking on most weekends."
OTHERS = [
    "The quarterly tax report is due in March.",
    "Bought milk, eggs and flour at the corner shop.",
    "The dentist appointment moved to Thursday at 9.",
    "Renewed the car insurance with the same company.",
]
QUESTION = "which outdoor sports do I enjoy?"  # shares no word with HOBBY


@pytest.fixture(scope="module")
def embedder() -> semantic.Embedder:
    return semantic.load_embedder()


def log(lines: list[str]) -> str:
    return "# Log\n\n" + "\n\n".join(f"- {t}" for t in lines) + "\n"


def cli(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitmem", "-C", str(root), *args], capture_output=True, text=True,
                          env={**os.environ, "GITMEM_EMBED_IDLE": "60", **(env or {})}, timeout=300)


@pytest.fixture
def ws(repo: GitRepo) -> Iterator[GitRepo]:
    yield repo
    warm.stop(Workspace(repo.path))  # a warm embedder a test started never outlives it


def session(repo: GitRepo, embedder: semantic.Embedder) -> Session:
    return Session(Workspace(repo.path), dense=semantic.InProcess(embedder))


def contents(results: list[Any]) -> list[str]:
    return [r.content for r in results]


def test_meaning_finds_what_words_miss(ws: GitRepo, embedder: semantic.Embedder) -> None:
    ws.commit("log", "2025-11-01", {"memory/2025-11-01.md": log([*OTHERS[:2], HOBBY, *OTHERS[2:]])})
    w = Workspace(ws.path)
    update(w)
    filled = semantic.fill_vectors(w)
    assert filled.left == 0 and filled.embedded >= 5
    with session(ws, embedder) as s:
        lexical = s.search(QUESTION, Options(k=3))
        hybrid = s.search(QUESTION, Options(k=3, semantic=True))
    assert HOBBY not in contents(lexical.results)
    assert contents(hybrid.results)[0] == HOBBY
    assert hybrid.semantic == {"used": True, "weight": semantic.WEIGHT, "hits": hybrid.semantic["hits"], "missing": 0}
    assert lexical.semantic is None and not hybrid.notes


def test_as_of_never_returns_a_later_version(ws: GitRepo, embedder: semantic.Embedder) -> None:
    ws.commit("day 1", "2025-11-01", {"memory/2025-11-01.md": log(OTHERS)})
    ws.commit("day 2", "2025-11-10", {"memory/2025-11-10.md": log([HOBBY])})
    # An edit: the version of day 3 shares its file with day 1's text, and must not show as of day 1.
    edited = "I go rock climbing, kayaking and mountain biking on most weekends."
    ws.commit("day 3", "2025-11-20", {"memory/2025-11-10.md": log([edited])})
    w = Workspace(ws.path)
    update(w)
    semantic.fill_vectors(w)
    with session(ws, embedder) as s:
        early = s.search(QUESTION, Options(k=10, semantic=True, as_of="2025-11-05"))
        middle = s.search(QUESTION, Options(k=1, semantic=True, as_of="2025-11-12"))
        now = s.search(QUESTION, Options(k=1, semantic=True))
    assert early.semantic and early.semantic["used"]
    assert not {HOBBY, edited} & set(contents(early.results))
    assert set(contents(early.results)) <= set(OTHERS) | {"Log"}
    assert contents(middle.results) == [HOBBY]
    assert contents(now.results) == [edited]


def test_embedding_is_resumable_and_shares_texts(ws: GitRepo, embedder: semantic.Embedder) -> None:
    texts = [f"Note number {i}: {t}" for i, t in enumerate(OTHERS * 3)]
    ws.commit("a", "2025-11-01", {"memory/a.md": log(texts), "memory/b.md": log(texts[:4])})  # b repeats a's texts
    w = Workspace(ws.path)
    update(w)
    conn, _ = open_index(w)
    calls = {"n": 0}

    def interrupted(batch: list[str]) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # Ctrl-C while the model runs the second batch
        return embedder.embed(batch)

    total = vectors.missing_count(conn)
    vectors.check_model(conn, semantic.MODEL)
    with pytest.raises(KeyboardInterrupt):
        vectors.fill(conn, interrupted, lock=lambda: writer_lock(w, 5.0), batch=4)
    assert vectors.missing_count(conn) == total - 4  # the first batch was kept, the second lost
    done = vectors.fill(conn, embedder.embed, lock=lambda: writer_lock(w, 5.0), batch=4)
    assert done.left == 0 and done.linked == total - 4
    n_texts = conn.execute("SELECT count(*) FROM texts").fetchone()[0]
    n_distinct = conn.execute("SELECT count(DISTINCT content) FROM chunks").fetchone()[0]
    assert n_texts == n_distinct < total  # b.md's repeated texts were embedded once
    # Each link names the vector of its own text.
    for cid, content in conn.execute("SELECT id, content FROM chunks").fetchall():
        (blob,) = conn.execute("SELECT t.vec FROM chunk_vectors v JOIN texts t ON t.id = v.text_id WHERE v.chunk_id = ?",
                               (cid,)).fetchone()
        i8, scale = vectors.unpack([blob])
        assert float((i8[0] * scale[0]) @ embedder.embed([content])[0]) > 0.99
    conn.close()


def test_missing_vectors_are_reported_and_recall_stays_lexical(ws: GitRepo) -> None:
    ws.commit("log", "2025-11-01", {"memory/2025-11-01.md": log([*OTHERS, HOBBY])})
    assert cli(ws.path, "index").returncode == 0
    r = cli(ws.path, "recall", "tax report", "--semantic", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["semantic"]["used"] is False and data["semantic"]["missing"] == 5  # every item
    assert any("have no vector yet" in n and "gitmem index --vectors" in n for n in data["notes"])
    assert data["results"][0]["content"] == OTHERS[0]  # the words still answer
    assert not (ws.path / ".memory" / warm.SOCKET).exists()  # nothing to search: no process started
    text = cli(ws.path, "recall", "tax report", "--semantic")
    assert text.stdout.count("have no vector yet") == 1 and "Traceback" not in text.stderr + text.stdout

    r = cli(ws.path, "index", "--vectors", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["vectors"]["left"] == 0
    data = json.loads(cli(ws.path, "recall", QUESTION, "--semantic", "--json", "-k", "1").stdout)
    assert data["semantic"]["used"] and data["semantic"]["missing"] == 0 and not data["notes"]
    assert data["results"][0]["content"] == HOBBY  # answered through the warm embedder process
    assert (ws.path / ".memory" / warm.SOCKET).exists()
    again = json.loads(cli(ws.path, "recall", QUESTION, "--semantic", "--json", "-k", "1").stdout)
    assert again["results"][0]["content"] == HOBBY


def test_semantic_is_the_default_once_the_index_has_vectors(ws: GitRepo) -> None:
    ws.commit("log", "2025-11-01", {"memory/2025-11-01.md": log([*OTHERS, HOBBY])})
    assert cli(ws.path, "index").returncode == 0
    # recall.semantic = "auto" (the default) and no vectors yet: words only, and no warm process.
    data = json.loads(cli(ws.path, "recall", QUESTION, "--json", "-k", "1").stdout)
    assert data["semantic"] is None and HOBBY not in [r["content"] for r in data["results"]]  # no shared word
    # ... and recall says so, with the command that makes the vectors (issue 16: not silently)
    assert semantic.NO_VECTORS in data["notes"] and "gitmem index --vectors" in semantic.NO_VECTORS
    text = cli(ws.path, "recall", QUESTION, "-k", "1")
    assert semantic.NO_VECTORS in text.stdout + text.stderr
    assert not (ws.path / ".memory" / warm.SOCKET).exists()
    assert semantic.default_for(Workspace(ws.path), "auto").use is False
    assert semantic.default_for(Workspace(ws.path), "auto").note == semantic.NO_VECTORS
    assert semantic.default_for(Workspace(ws.path), "off") == semantic.Default(False, None)  # the user's choice: no note
    with Session(Workspace(ws.path)) as s:  # the CLI asks on its open session's connection
        assert semantic.default_for(s.ws, "auto", s.conn).use is False
    assert cli(ws.path, "index", "--vectors").returncode == 0
    with Session(Workspace(ws.path)) as s:
        assert semantic.default_for(s.ws, "auto", s.conn).use is True
    # Vectors made: the same call now ranks by meaning too, through the warm embedder.
    data = json.loads(cli(ws.path, "recall", QUESTION, "--json", "-k", "1").stdout)
    assert data["semantic"] == {"used": True, "weight": semantic.WEIGHT, "hits": 5, "missing": 0}
    assert semantic.NO_VECTORS not in data["notes"]
    assert data["results"][0]["content"] == HOBBY
    assert json.loads(cli(ws.path, "recall", QUESTION, "--json", "--no-semantic").stdout)["semantic"] is None
    r = cli(ws.path, "config", "recall.semantic", "maybe")
    assert r.returncode != 0 and '"auto", "on" or "off"' in r.stderr and "Traceback" not in r.stderr
    assert cli(ws.path, "config", "recall.semantic", "off").returncode == 0
    assert json.loads(cli(ws.path, "recall", QUESTION, "--json").stdout)["semantic"] is None
    assert semantic.default_for(Workspace(ws.path), "on").use is True


def test_auto_never_reads_a_symlinked_index(ws: GitRepo, tmp_path: Path) -> None:
    # An index elsewhere that holds vectors: "auto" must refuse the link, not look through it.
    ws.commit("log", "2025-11-01", {"memory/2025-11-01.md": log([HOBBY])})
    outside = tmp_path / "elsewhere.sqlite"
    with sqlite3.connect(outside) as conn:
        conn.execute("CREATE TABLE chunk_vectors (chunk_id INTEGER)")
        conn.execute("INSERT INTO chunk_vectors VALUES (1)")
    conn.close()
    (ws.path / ".memory").mkdir(exist_ok=True)
    (ws.path / ".memory" / "index.sqlite").symlink_to(outside)
    with pytest.raises(GitmemError, match="symlink"):
        semantic.default_for(Workspace(ws.path), "auto")
    r = cli(ws.path, "recall", QUESTION, "--json")
    assert r.returncode != 0 and "symlink" in r.stdout + r.stderr and "Traceback" not in r.stderr


def test_hook_does_not_embed(ws: GitRepo) -> None:
    ws.commit("init", "2025-11-01", {"memory.md": "# Memory\n", ".gitignore": ".memory/\n"})
    assert cli(ws.path, "hooks", "install").returncode == 0
    assert cli(ws.path, "index", "--vectors").returncode == 0
    ws.commit("log", "2025-11-02", {"memory/2025-11-02.md": log([HOBBY])})  # the post-commit hook indexes it
    conn = sqlite3.connect(ws.path / ".memory" / "index.sqlite")
    indexed = conn.execute("SELECT count(*) FROM chunks WHERE content = ?", (HOBBY,)).fetchone()[0]
    linked = conn.execute("SELECT count(*) FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id"
                          " WHERE c.content = ?", (HOBBY,)).fetchone()[0]
    unlinked = conn.execute("SELECT count(*) FROM chunks c WHERE c.valid_from = (SELECT max(pos) FROM commits)"
                            " AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id)").fetchone()[0]
    conn.close()
    assert indexed == 1 and linked == 0
    data = json.loads(cli(ws.path, "recall", QUESTION, "--semantic", "--json").stdout)
    assert data["semantic"]["missing"] == unlinked >= 1  # what the hook added, and only that


def test_missing_extra_is_one_note(ws: GitRepo) -> None:
    ws.commit("log", "2025-11-01", {"memory/2025-11-01.md": log([*OTHERS, HOBBY])})
    assert cli(ws.path, "index", "--vectors").returncode == 0
    # The extra uninstalled, as far as this process can tell (find_spec sees None in sys.modules).
    code = ("import sys; sys.modules['onnxruntime'] = None; from gitmem.cli import main; "
            f"main(['-C', {str(ws.path)!r}, 'recall', 'tax report', '--semantic', '--json'])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["semantic"]["used"] is False
    assert data["notes"] == ["semantic recall is not installed (onnxruntime is missing): " + semantic.EXTRA_HINT]
    assert data["results"][0]["content"] == OTHERS[0]
    code = code.replace("'recall', 'tax report', '--semantic', '--json'", "'index', '--vectors'")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "onnxruntime is missing" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_fuse_counts_a_chunk_once() -> None:
    a, b, c = (1, "a"), (2, "b"), (3, "c")
    lexical = [Candidate(a, 3.0), Candidate(b, 2.0)]
    dense = [Candidate(b, 0.9), Candidate(c, 0.8), Candidate(a, 0.1)]
    fused = semantic.fuse(lexical, dense, 1.0)
    assert [x.row for x in fused] == [b, a, c]  # b: 1/61 + 1/60 beats a: 1/60 + 1/62; c: 1/61
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 60)  # the fused score: what later stages order by
    assert [x.row for x in semantic.fuse(lexical, dense, 0.0)][:2] == [a, b]


def test_fuse_z_fuses_scores_not_ranks() -> None:
    a, b, c = (1, "a"), (2, "b"), (3, "c")
    lexical = [Candidate(a, 3.0), Candidate(b, 2.0), Candidate(c, 1.0)]
    dense = [Candidate(c, 0.9), Candidate(b, 0.8), Candidate(a, 0.1)]
    # z: scores, not ranks. Lexically a (z 1.22) leads b (0) and c (-1.22); by cosine c (0.9) and
    # b (0.8) lead a (0.1) (z 0.84, 0.56, -1.40). At w 0.5: a 0.52, b 0.28, c -0.80.
    fused = semantic.fuse(lexical, dense, 0.5, "z")
    za, zb, zc = 1.224744871391589, 0.0, -1.224744871391589
    sd = 0.35590260840104376  # pstdev of (0.9, 0.8, 0.1); mean 0.6
    da, db, dc = (0.1 - 0.6) / sd, (0.8 - 0.6) / sd, (0.9 - 0.6) / sd
    want = {a: za + 0.5 * da, b: zb + 0.5 * db, c: zc + 0.5 * dc}
    assert [x.row for x in fused] == sorted(want, key=lambda r: -want[r])
    assert [x.score for x in fused] == pytest.approx(sorted(want.values(), reverse=True))
    # A chunk only one side found gets the other side's lowest z-score.
    only = semantic.fuse([Candidate(a, 2.0), Candidate(b, 1.0)], [Candidate(c, 0.9), Candidate(a, 0.5)], 1.0, "z")
    assert {x.row: x.score for x in only} == pytest.approx({a: 1.0 - 1.0, b: -1.0 - 1.0, c: -1.0 + 1.0})


TRIP = "Caroline: Lisbon was sunny, and the trams up the hills were a blast."
CHAT = [
    "Melanie: Caroline, you are such a great friend, Caroline!",
    "Melanie: Hey Caroline, how are you doing, Caroline?",
    TRIP,
    "Melanie: Caroline! Caroline! Guess what happened?",
    "Melanie: The quarterly tax report is due in March.",
    "Caroline: Bought milk, eggs and flour at the corner shop.",
    "Caroline: The dentist appointment moved to Thursday at 9.",
    "Caroline: Renewed the car insurance with the same company.",
    "Caroline: My sister called about the birthday dinner.",
    "Caroline: The printer at work jammed again.",
    "Melanie: Oh Caroline, you always make me laugh, Caroline.",
]
TRAVEL = "Where did Caroline travel?"  # shares only her name with TRIP


def test_a_speakers_name_is_left_out_of_what_the_question_means(ws: GitRepo, embedder: semantic.Embedder,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Caroline's name opens every turn of hers and fills Melanie's greetings, so the question's
    vector, name and all, sits nearer "Caroline! Caroline! Guess what happened?" than her Lisbon
    turn. The dense side asks with the name neutralised (who spoke is credited after fusion)."""
    ws.commit("log", "2025-11-01", {"memory/2025-11-01.md": log(CHAT)})
    w = Workspace(ws.path)
    update(w)
    semantic.fill_vectors(w)
    with session(ws, embedder) as s:
        hybrid = s.search(TRAVEL, Options(k=1, semantic=True))
        monkeypatch.setattr(semantic, "NEUTRAL_SPEAKERS", False)
        as_asked = s.search(TRAVEL, Options(k=1, semantic=True))
    assert contents(hybrid.results) == [TRIP]
    assert contents(as_asked.results) != [TRIP]
    # The reason: by cosine the question as asked is nearer a greeting than the trip; neutralised, the trip.
    monkeypatch.setattr(semantic, "NEUTRAL_SPEAKERS", True)
    neutral = semantic.neutral(TRAVEL, {"caroline"})
    assert neutral == "Where did someone travel?"
    q, n, trip, greeting = embedder.embed([TRAVEL, neutral, TRIP, CHAT[3]])
    assert q @ trip < q @ greeting and n @ trip > n @ greeting


def test_only_names_that_speak_in_memory_are_neutralised(ws: GitRepo) -> None:
    ws.commit("log", "2025-11-01", {"memory/2025-11-01.md": log(
        ["Caroline: Lisbon was sunny.", "Paris is lovely in spring.", "Melanie met Caroline at the museum."])})
    update(Workspace(ws.path))
    question = "Did Caroline's trip to Paris go well, Melanie?"
    with Session(Workspace(ws.path)) as s:
        # Caroline speaks; Melanie only opens a note about her ("Melanie met ..."); Paris is a place.
        speakers = s._speakers(question, None)
    assert speakers == {"caroline"}
    assert semantic.neutral(question, speakers) == "Did someone's trip to Paris go well, Melanie?"
    assert semantic.neutral(question, frozenset()) == question


def test_credit_lifts_turns_that_place_an_event_in_time_and_the_named_speakers_turns() -> None:
    def turn(i: int, text: str) -> tuple[Any, ...]:
        row: list[Any] = [None] * 12
        row[0], row[11] = i, text
        return tuple(row)

    said = turn(1, "Melanie: The support group sounds great, Caroline!")
    went = turn(2, "Caroline: I went to the support group yesterday.")
    likes = turn(3, "Caroline: The support group means a lot to me.")
    fused = [Candidate(said, 2.0), Candidate(likes, 1.9), Candidate(went, 1.2)]
    out = semantic.credit(fused, frozenset({"caroline"}))
    # went: 1.2 + time anchor 0.5 + her turn 0.5; likes: 1.9 + 0.5; said (Melanie's, no time): 2.0.
    assert [c.row for c in out] == [likes, went, said]
    assert [c.score for c in out] == pytest.approx([2.4, 2.2, 2.0])
    # Without a named speaker only the time anchor counts.
    fused = [Candidate(said, 2.0), Candidate(likes, 1.9), Candidate(went, 1.2)]
    assert [c.score for c in semantic.credit(fused, frozenset())] == pytest.approx([2.0, 1.9, 1.7])


def test_rebuild_drops_vectors_and_the_warm_process_follows(ws: GitRepo) -> None:
    ws.commit("log", "2025-11-01", {"memory/2025-11-01.md": log([*OTHERS, HOBBY])})
    assert cli(ws.path, "index", "--vectors").returncode == 0
    first = json.loads(cli(ws.path, "recall", QUESTION, "--semantic", "--json", "-k", "1").stdout)
    assert first["results"][0]["content"] == HOBBY and first["semantic"]["used"]
    # A rebuild replaces the index file (new chunk ids, no vectors) while the warm process holds the old one.
    assert cli(ws.path, "index", "--rebuild").returncode == 0
    data = json.loads(cli(ws.path, "recall", QUESTION, "--semantic", "--json").stdout)
    assert data["semantic"] == {"used": False, "weight": semantic.WEIGHT, "hits": 0, "missing": 5}
    assert cli(ws.path, "index", "--vectors").returncode == 0
    again = json.loads(cli(ws.path, "recall", QUESTION, "--semantic", "--json", "-k", "1").stdout)
    assert again["results"][0]["content"] == HOBBY and again["semantic"]["missing"] == 0


def test_mcp_keeps_the_model_and_answers_by_meaning(ws: GitRepo) -> None:
    pytest.importorskip("mcp")
    from test_mcp import _data, _run

    ws.commit("log", "2025-11-01", {"memory/2025-11-01.md": log([*OTHERS, HOBBY])})
    assert cli(ws.path, "index", "--vectors").returncode == 0
    ask = {"query": QUESTION, "k": 1, "semantic": True}
    _, results = _run(ws.path, [("recall", ask), ("recall", {**ask, "as_of": "2025-10-01"}), ("recall", ask)])
    first, before, again = (_data(r) for r in results)
    assert first["results"][0]["content"] == HOBBY == again["results"][0]["content"]
    assert first["semantic"]["used"] and not before["results"]  # nothing was in memory yet
    assert not (ws.path / ".memory" / warm.SOCKET).exists()  # in-process: no warm embedder started


def test_a_warm_embedder_that_cannot_start_is_one_note(ws: GitRepo) -> None:
    ws.commit("log", "2025-11-01", {"memory/2025-11-01.md": log([*OTHERS, HOBBY])})
    assert cli(ws.path, "index", "--vectors").returncode == 0
    # The warm process inherits this and fails while loading the model (an unreadable thread count).
    r = cli(ws.path, "recall", "tax report", "--semantic", "--json", env={"GITMEM_EMBED_THREADS": "many"})
    assert r.returncode == 0 and "Traceback" not in r.stderr
    data = json.loads(r.stdout)
    assert data["semantic"]["used"] is False and data["results"][0]["content"] == OTHERS[0]
    (note,) = data["notes"]
    assert note.startswith("the warm embedder did not start (") and "many" in note


def test_status_counts_vectors_by_distinct_current_text(ws: GitRepo) -> None:
    texts = [f"Note number {i}: {t}" for i, t in enumerate(OTHERS * 3)]  # 12 notes
    ws.commit("a", "2025-11-01", {"memory/a.md": log(texts), "memory/b.md": log(texts[:4])})  # b repeats 4 of them
    edited = [*texts[:7], "Note number 7: renewed the boat insurance instead.", *texts[8:]]
    ws.commit("edit", "2025-11-02", {"memory/a.md": log(edited)})  # the old note 7 leaves memory

    def status() -> dict[str, Any]:
        r = cli(ws.path, "status", "--json")
        assert r.returncode == 0, r.stderr
        return dict(json.loads(r.stdout)["vectors"])

    # Current: a.md's 12 notes and b.md's 4 (16 versions); distinct texts: the 12 notes (the old
    # note 7 is history, not counted).
    assert cli(ws.path, "index").returncode == 0
    assert status() == {"texts_embedded": 0, "texts_total": 12, "chunks_missing": 16, "model": None,
                        "extra_installed": True, "extra_missing": None}
    text = cli(ws.path, "status").stdout
    assert "vectors:   0 of 12 distinct current texts embedded (embed extra installed; run `gitmem index --vectors`)" in text

    # Five current versions, newest first: the edited note 7 and b.md's four notes (texts a.md shares).
    assert cli(ws.path, "index", "--vectors", "--vectors-limit", "5").returncode == 0
    part = status()
    assert (part["texts_embedded"], part["texts_total"], part["chunks_missing"]) == (5, 12, 11)
    assert part["model"] == semantic.MODEL

    assert cli(ws.path, "index", "--vectors").returncode == 0
    done = status()
    assert (done["texts_embedded"], done["texts_total"], done["chunks_missing"]) == (12, 12, 0)
    assert "vectors:   12 of 12 distinct current texts embedded (embed extra installed)" in cli(ws.path, "status").stdout

    # The extra uninstalled, as far as this process can tell: status says so, and how to install it.
    code = ("import sys; sys.modules['onnxruntime'] = None; from gitmem.cli import main; "
            f"main(['-C', {str(ws.path)!r}, 'status', '--json'])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    off = json.loads(r.stdout)["vectors"]
    assert off["extra_installed"] is False and off["texts_embedded"] == 12
    assert off["extra_missing"] == "semantic recall is not installed (onnxruntime is missing): " + semantic.EXTRA_HINT


BIKE_CHAT = [
    "user: Can you suggest a good weekend ride near the coast?",
    "assistant: A good weekend ride near the coast: the cliff road loop, 40 km with one long climb.",
    "user: I finally got myself a new gravel bike last Saturday, a green Canyon Grizl.",
    "assistant: Before you buy one, test ride a few at a shop.",
    "assistant: For a new bike, buy lights, a lock, a pump and a helmet first.",
    "user: What should I pack for a day ride?",
]
MY_BIKE = "Which bike did I buy?"


def test_a_first_person_question_is_about_the_asker() -> None:
    assert semantic.first_person(MY_BIKE) and semantic.first_person("Is the green one mine?")
    assert semantic.first_person("Where’s my helmet?") and semantic.first_person("remind me of the ride")
    assert not semantic.first_person("Which bike did Caroline buy?")
    assert not semantic.first_person("Is the iPhone on iOS 17?")  # a word starting with i is not "I"


def test_the_askers_turns_count_as_a_named_speakers(ws: GitRepo, embedder: semantic.Embedder,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """'Which bike did I buy?' asks about the person asking, whose turns are "user: ...": the
    assistant's advice on buying for a new bike holds the question's words, the user's own report
    of the purchase is the answer. With the asker credited it comes first."""
    ws.commit("advice", "2025-11-01", {"memory/2025-11-01.md": log([t for t in BIKE_CHAT if t.startswith("assistant")])})
    ws.commit("chat", "2025-11-02", {"memory/2025-11-02.md": log([t for t in BIKE_CHAT if t.startswith("user")])})
    w = Workspace(ws.path)
    update(w)
    semantic.fill_vectors(w)
    with session(ws, embedder) as s:
        from gitmem.index import store

        before = store.id_bound(s.conn, s.position("2025-11-01")[0])
        assert s._asker(MY_BIKE, None) == {"user"}
        assert s._asker(MY_BIKE, before) == frozenset()  # no turn of the user's was in memory yet
        assert s._asker("Which bike did Caroline buy?", None) == frozenset()
        assert s._speakers(MY_BIKE, None) == frozenset()  # "I" is not a name: the dense side asks as is
        credited = s.search(MY_BIKE, Options(k=6, semantic=True))
        monkeypatch.setattr(semantic, "ASKER", None)
        assert s._asker(MY_BIKE, None) == frozenset()
        plain = s.search(MY_BIKE, Options(k=6, semantic=True))
    assert contents(credited.results)[0] == BIKE_CHAT[2]
    # Without it the assistant's advice on what to buy for a new bike comes first.
    assert contents(plain.results)[0] == BIKE_CHAT[4]
