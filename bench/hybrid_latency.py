"""Hybrid recall latency, side by side with lexical in the same run.

    .venv/bin/python bench/hybrid_latency.py [--size 100k] [--vectors 1000000] [--repeat 10] [--cli-runs 15] [--write]

- A real history (bench/recall_latency.py's, built and indexed by gitmem; reused under bench/out/lat/)
  gets one vector per chunk version through `gitmem.index.vectors.fill`. The vectors are random
  unit vectors (embedding 100k+ chunk versions takes hours of CPU; the search's cost does not depend
  on the values); the question is embedded by the real model each time. In-process: one Session,
  lexical and hybrid (`semantic=True`, in-process model as in `gitmem mcp`) interleaved, k=10, now
  and as of the middle of the history.
- The dense search alone over `--vectors` random chunk versions (one distinct text each: the worst
  case) in a synthetic index: what hybrid adds at that size (the sign-bit pass + int8 rescoring).
- The CLI as a user runs it: `gitmem recall --json Q` against `gitmem recall --json --semantic Q`
  with the warm embedder process already up, interleaved, plus the one call that starts it.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from recall_latency import QUESTIONS, build, middle_date, pct  # noqa: E402

from gitmem.index import migrations, vectors  # noqa: E402
from gitmem.index.db import open_index, writer_lock  # noqa: E402
from gitmem.recall import semantic, warm  # noqa: E402
from gitmem.recall.search import Options, Session  # noqa: E402


def random_vectors(n: int, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, 384), dtype=np.float32)
    out: np.ndarray = m / np.linalg.norm(m, axis=1, keepdims=True)
    return out


def fill_random(ws: object) -> float:
    conn, _ = open_index(ws)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    try:
        vectors.check_model(conn, semantic.MODEL)
        vectors.fill(conn, lambda texts: random_vectors(len(texts), len(texts)), lock=lambda: writer_lock(ws, 10.0),  # type: ignore[arg-type]
                     batch=20000)
    finally:
        conn.close()
    return time.perf_counter() - t0


def summary(xs: list[float]) -> str:
    return f"{pct(xs, 0.5):.1f} / {pct(xs, 0.95):.1f}"


def in_process(ws: object, repeat: int, emb: semantic.Embedder) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    with Session(ws, dense=semantic.InProcess(emb)) as s:  # type: ignore[arg-type]
        mid = middle_date(s)
        for when in (None, mid):
            for q in QUESTIONS:  # warm-up (and the first search loads the vectors)
                s.search(q, Options(k=10, as_of=when, semantic=True))
            for _ in range(repeat):
                for q in QUESTIONS:
                    for mode in (False, True):
                        t0, c0 = time.perf_counter(), time.process_time()
                        s.search(q, Options(k=10, as_of=when, semantic=mode))
                        key = f"{'hybrid' if mode else 'lexical'} {'now' if when is None else 'as-of'}"
                        times.setdefault(key, []).append((time.perf_counter() - t0) * 1000)
                        # CPU of all threads: what the answer costs, less sensitive to a shared machine's load.
                        times.setdefault(key + " cpu", []).append((time.process_time() - c0) * 1000)
    return times


def search_wave5(t: vectors.VectorIndex, qvec: np.ndarray, n: int, at: int | None = None) -> vectors.Hits:
    """VectorIndex.search as it was at 581ebc9 (wave 5), kept to measure the new one beside it:
    visibility worked out per query, a partition of all Hamming distances, and every candidate
    made float32 at once."""
    t.refresh()
    vis = t.visible(at)
    has = vis & (t.row_of >= 0)
    n_vis, n_has = int(vis.sum()), int(has.sum())
    idx = np.nonzero(has)[0]
    rows = t.row_of[idx]
    q = qvec.astype(np.float32)
    tmask = np.zeros(len(t.i8), dtype=bool)
    tmask[rows] = True
    qbits = np.packbits(q > 0).view(np.uint64)
    ham = np.zeros(len(t.i8), dtype=np.uint16)
    for col, qb in zip(t.bits, qbits):
        ham += np.bitwise_count(col ^ qb)
    ham[~tmask] = vectors.DIM + 1
    visible_texts = int(tmask.sum())
    k = min(max(vectors.RESCORE_MIN, int(vectors.RESCORE_SHARE * visible_texts)), visible_texts)
    cand = np.argpartition(ham, k - 1)[:k] if k < len(ham) else np.arange(len(ham))
    text_scores = np.full(len(t.i8), -2.0, dtype=np.float32)
    text_scores[cand] = (t.i8[cand].astype(np.float32) @ q) * t.scales[cand]
    scores = text_scores[rows]
    m = min(n, len(idx))
    top = np.argpartition(-scores, m - 1)[:m] if m < len(idx) else np.arange(len(idx))
    top = top[np.argsort(-scores[top], kind="stable")]
    top = top[scores[top] > -2.0]
    return vectors.Hits([int(i) for i in t.chunk_ids[idx[top]]], [float(s) for s in scores[top]], n_vis - n_has, n_vis)


def dense_only(n: int, repeat: int, emb: semantic.Embedder) -> dict[str, list[float]]:
    """Search over n synthetic chunk versions (half of them closed by position n // 2), the
    current search and wave 5's (search_wave5) interleaved on the same table and questions. CPU
    time is the process's (numpy's BLAS may run threads of its own)."""
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(Path(tmp) / "v.sqlite", isolation_level=None)
        migrations.apply(conn)
        rng = np.random.default_rng(1)
        vf = rng.integers(1, n // 25 + 1, n)
        vt = np.where(rng.random(n) < 0.5, 0, np.minimum(vf + rng.integers(1, 200, n), n // 25 + 1))
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO chunks (id, path, start_line, end_line, heading, kind, fact, entities, content, ident,"
                         " valid_from, valid_to) VALUES (?, 'm.md', 1, 1, '', 'note', 0, '', '', 0, ?, ?)",
                         ((i + 1, int(vf[i]), int(vt[i]) or None) for i in range(n)))
        step = 100_000
        for s in range(0, n, step):
            vecs = random_vectors(min(step, n - s), s)
            conn.executemany("INSERT INTO texts (id, digest, vec) VALUES (?, ?, ?)",
                             ((s + i + 1, str(s + i), vectors.pack(v)) for i, v in enumerate(vecs)))
        conn.executemany("INSERT INTO chunk_vectors VALUES (?, ?)", ((i + 1, i + 1) for i in range(n)))
        conn.execute("COMMIT")
        table = vectors.VectorIndex(conn)
        t0 = time.perf_counter()
        table.refresh()
        times["load s"] = [time.perf_counter() - t0]
        mid = n // 50
        for q in QUESTIONS[:3]:
            table.search(emb.embed([q])[0], 100)
        same = total = 0
        for _ in range(repeat):
            for q in QUESTIONS:
                t0, c0 = time.perf_counter(), time.process_time()
                qv = emb.embed([q])[0]
                times.setdefault("embed", []).append((time.perf_counter() - t0) * 1000)
                times.setdefault("embed cpu", []).append((time.process_time() - c0) * 1000)
                for when, at in (("now", None), ("as-of", mid)):
                    got: dict[str, vectors.Hits] = {}
                    runs = [("", table.search), ("wave5 ", lambda v, k, at: search_wave5(table, v, k, at))]
                    for name, fn in runs if len(times.get("embed", [])) % 2 else runs[::-1]:  # each goes first half the time
                        t0, c0 = time.perf_counter(), time.process_time()
                        got[name] = fn(qv, 100, at=at)
                        times.setdefault(f"{name}{when}", []).append((time.perf_counter() - t0) * 1000)
                        times.setdefault(f"{name}{when} cpu", []).append((time.process_time() - c0) * 1000)
                    same += len(set(got[""].ids) & set(got["wave5 "].ids))
                    total += len(got["wave5 "].ids)
        times["same top 100"] = [same / max(total, 1)]
        conn.close()
    return times


def prefilter_check(queries: int = 300) -> str:
    """How much the sign-bit pass loses, on real vectors: the texts bench/hybrid.py embedded
    (LoCoMo and haystack turns), a held-out few as questions. The exact float32 top 10 and top 100
    (recall fuses the top DENSE_DEPTH = 100) against the sign-bit pass + int8 rescoring of a share
    of the texts (at least as many as asked for)."""
    files = sorted((HERE / "out" / "vectors").glob("*/vecs.npy"))
    if not files:
        return "sign-bit pass: no cached vectors (run bench/hybrid.py first)."
    allv = np.concatenate([np.load(f) for f in files])
    rng = np.random.default_rng(7)
    pick = rng.permutation(len(allv))
    qs, corpus = allv[pick[:queries]], allv[pick[queries:]]
    i8, scales = vectors.unpack([vectors.pack(v) for v in corpus])
    bits = np.packbits(i8 > 0, axis=1)
    cells = []
    for top in (10, 100):
        for share in (0.01, 0.02, 0.05):
            k = max(top, int(share * len(corpus)))
            hit = 0.0
            for q in qs:
                exact = np.argsort(-(corpus @ q))[:top]
                ham = np.unpackbits(bits ^ np.packbits(q > 0), axis=1).sum(axis=1)
                cand = np.argpartition(ham, k - 1)[:k]
                got = cand[np.argsort(-((i8[cand].astype(np.float32) @ q) * scales[cand]))[:top]]
                hit += len(set(exact.tolist()) & set(got.tolist())) / top
            cells.append(f"top {top}, {share:.0%} rescored ({k:,}): {hit / len(qs):.3f}")
    return (f"Sign-bit pass on real vectors ({len(corpus):,} embedded benchmark turns, {queries} held-out turns as "
            "questions), overlap with the exact float32 ranking: " + "; ".join(cells) + ".")


def dense_text(n: int, d: dict[str, list[float]]) -> str:
    """The dense-only table: this search beside wave 5's, CPU and wall, with their ratios."""
    def ratio(key: str, q: float) -> str:
        return f"{pct(d['wave5 ' + key], q) / max(pct(d[key], q), 1e-9):.2f}x"

    rows = [f"Dense search alone over {n:,} chunk versions with {n:,} distinct random vectors (int8 vectors, sign-bit"
            f" pass, int8 rescoring of {vectors.RESCORE_SHARE:.0%}), top 100, interleaved on one table, loaded in"
            f" {d['load s'][0]:.1f} s. ms p50 / p95; CPU of the process.", "",
            "| search | now, CPU | as-of the middle, CPU | now, wall | as-of, wall |", "|---|---|---|---|---|"]
    for name, label in (("wave5 ", "wave 5 (581ebc9)"), ("", "this one")):
        rows.append(f"| {label} | {summary(d[name + 'now cpu'])} | {summary(d[name + 'as-of cpu'])} | "
                    f"{summary(d[name + 'now'])} | {summary(d[name + 'as-of'])} |")
    rows.append(f"| wave 5 / this one (p50, p95) | {ratio('now cpu', 0.5)}, {ratio('now cpu', 0.95)} | "
                f"{ratio('as-of cpu', 0.5)}, {ratio('as-of cpu', 0.95)} | {ratio('now', 0.5)}, {ratio('now', 0.95)} | "
                f"{ratio('as-of', 0.5)}, {ratio('as-of', 0.95)} |")
    rows += ["", f"Embedding the question: {summary(d['embed cpu'])} ms CPU ({summary(d['embed'])} wall). The two"
             f" searches' top 100 agree in {d['same top 100'][0]:.3f} of places (both rescore the texts nearest"
             " by sign bits; where many tie at the cut-off distance they keep different ones)."]
    return "\n".join(rows)


def warm_cpu(root: Path) -> float:
    """CPU seconds the workspace's warm embedder process has used so far (0: none running): it
    does the question's embedding and the dense search, outside the CLI's own process."""
    tick = os.sysconf("SC_CLK_TCK")
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if b"gitmem.recall.warm" in argv and str(root).encode() in argv:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError):
            continue
    return 0.0


def cli(root: Path, runs: int) -> dict[str, list[float]]:
    """The CLI as a user runs it, interleaved: words only (--no-semantic), --semantic, and no flag
    (recall.semantic "auto": semantic, since the index has vectors). Wall time, the CLI process's
    CPU, and that plus the warm embedder's CPU for the call."""
    import resource

    exe = Path(sys.executable).with_name("gitmem")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "gitmem"]
    out: dict[str, list[float]] = {}
    warm.stop(__import__("gitmem.workspace", fromlist=["Workspace"]).Workspace(root))
    t0 = time.perf_counter()
    subprocess.run([*cmd, "-C", str(root), "recall", "--json", "--semantic", QUESTIONS[0]], check=True, capture_output=True)
    out["start"] = [(time.perf_counter() - t0) * 1000]
    for i in range(runs + 1):
        q = QUESTIONS[i % len(QUESTIONS)]
        for mode, extra in (("lexical", ["--no-semantic"]), ("hybrid", ["--semantic"]), ("auto", [])):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            w0, t0 = warm_cpu(root), time.perf_counter()
            subprocess.run([*cmd, "-C", str(root), "recall", "--json", *extra, q], check=True, capture_output=True)
            wall = (time.perf_counter() - t0) * 1000
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            own = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000
            if i:
                out.setdefault(mode, []).append(wall)
                out.setdefault(mode + " cpu", []).append(own)
                out.setdefault(mode + " cpu+warm", []).append(own + (warm_cpu(root) - w0) * 1000)
    return out


def cli_text(runs: int, size: str, c: dict[str, list[float]]) -> str:
    rows = [f"CLI on the {size} history, {runs} runs of each, interleaved (the warm embedder up; the call that started it:"
            f" {c['start'][0]:.0f} ms). Medians (p95), ms:", "",
            "| `gitmem recall --json Q` | wall | CPU of the CLI process | CPU of the CLI + the warm embedder |",
            "|---|---|---|---|"]
    for mode, label in (("lexical", "--no-semantic"), ("hybrid", "--semantic"), ("auto", "no flag (auto: semantic)")):
        rows.append(f"| {label} | " + " | ".join(f"{statistics.median(c[k]):.0f} ({pct(c[k], 0.95):.0f})"
                                                 for k in (mode, mode + " cpu", mode + " cpu+warm")) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="100k")
    ap.add_argument("--vectors", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--cli-runs", type=int, default=15)
    ap.add_argument("--dense-only", action="store_true", help="only the dense search over --vectors (prints, never writes)")
    ap.add_argument("--skip-dense", action="store_true", help="leave out the dense search alone over --vectors")
    ap.add_argument("--cli-only", action="store_true", help="only the CLI on the --size history (prints, never writes)")
    ap.add_argument("--section", default="Recall: hybrid latency", help="the RESULTS.md section --write replaces")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    emb = semantic.load_embedder()
    if args.dense_only:
        print(dense_text(args.vectors, dense_only(args.vectors, args.repeat, emb)))
        return 0
    ws, info = build(args.size)
    if args.cli_only:
        conn = sqlite3.connect(ws.index_path)
        filled = conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0]
        conn.close()
        if not filled:
            fill_random(ws)
        c = cli(ws.root, args.cli_runs)
        warm.stop(ws)
        print(cli_text(args.cli_runs, args.size, c))
        return 0
    fill_s = fill_random(ws)
    conn = sqlite3.connect(ws.index_path)
    n_versions, n_texts = conn.execute("SELECT (SELECT count(*) FROM chunk_vectors), (SELECT count(*) FROM texts)").fetchone()
    conn.close()
    ip = in_process(ws, args.repeat, emb)
    c = cli(ws.root, args.cli_runs) if args.cli_runs else {}
    warm.stop(ws)
    dense = "" if args.skip_dense else dense_text(args.vectors, dense_only(args.vectors, args.repeat, emb))
    pre = prefilter_check()
    lines = [
        f"History {args.size}: {info['indexed_lines']:,} indexed lines, {n_versions:,} chunk versions with a vector "
        f"({n_texts:,} distinct texts; random vectors, filled in {fill_s:.0f} s). {len(QUESTIONS)} questions x "
        f"{args.repeat} repeats, k=10, lexical and hybrid interleaved in one session. Times in ms, p50 / p95.", "",
        "| in-process | now, wall | as-of the middle, wall | now, CPU | as-of, CPU |", "|---|---|---|---|---|",
        f"| lexical | {summary(ip['lexical now'])} | {summary(ip['lexical as-of'])} | {summary(ip['lexical now cpu'])} | "
        f"{summary(ip['lexical as-of cpu'])} |",
        f"| hybrid (embed the question + dense search + fusion) | {summary(ip['hybrid now'])} | {summary(ip['hybrid as-of'])} | "
        f"{summary(ip['hybrid now cpu'])} | {summary(ip['hybrid as-of cpu'])} |",
        "",
        dense, "",
        cli_text(args.cli_runs, args.size, c) if c else "(CLI not run: --cli-runs 0)",
        "", pre,
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        from benchlib import write_section

        skip = " --skip-dense" if args.skip_dense else ""
        write_section(args.section, f"Command: `.venv/bin/python bench/hybrid_latency.py --size {args.size} --vectors"
                      f" {args.vectors} --repeat {args.repeat} --cli-runs {args.cli_runs}{skip} --write`\n\n{text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
