"""Hybrid recall as shipped (issue 16): gitmem's lexical ranking fused with the bundled MiniLM's
dense ranking, against lexical alone and the plain FTS5 floor, in one run.

    .venv/bin/python bench/hybrid.py [--parts locomo,haystack] [--haystack-every K] [--write]

Each part saves its tallies under bench/out/hybrid-<part>.pickle; `--parts report` only reads them
and prints (the two parts can run as two processes).

- The product path, end to end: each benchmark workspace is indexed by gitmem, its vectors are
  filled by `gitmem.index.vectors.fill` (what `gitmem index --vectors` runs), and questions are
  asked through a recall Session with `semantic=True` and an in-process dense source (what
  `gitmem mcp` uses). Only the model call is cached: vectors by the text's sha1 under
  bench/out/vectors/<model>/ (not committed), so a text is embedded once across runs.
- w (semantic.WEIGHT) is chosen on the tune halves only (LoCoMo conversations 0-4; the haystack's
  tune half) by the mean of LoCoMo 1-4 and haystack "all" at 1000 and 2000 tokens, then reported
  on the other halves. Fusion stays on by default only if it helps on both LoCoMo halves and the
  haystack at 1000 and 2000 tokens.
- Storage check: the stored int8 vectors' dense top 10 against the float32 vectors' (overlap).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benchlib import LME, LOCOMO, OUT, Floor, Tally, covered, fmt, half, publish  # noqa: E402
from gm import Asker, index  # noqa: E402

from gitmem.index import vectors  # noqa: E402
from gitmem.index.db import open_index, writer_lock  # noqa: E402
from gitmem.recall import semantic  # noqa: E402
from gitmem.workspace import Workspace  # noqa: E402

WEIGHTS = (0.25, 0.5, 1.0)
BUDGETS = (1000, 2000)


class CachedEmbedder:
    """The product's Embedder behind a cache of vectors by text sha1 (float32, as the model gave them)."""

    def __init__(self, part: str) -> None:
        self.emb = semantic.load_embedder()
        # One cache per part: the parts may run as two processes at once.
        self.dir = OUT / "vectors" / f"{hashlib.sha1(semantic.MODEL.encode()).hexdigest()[:12]}-{part}"
        self.dir.mkdir(parents=True, exist_ok=True)
        keys = self.dir / "keys.json"
        self.keys: dict[str, int] = json.loads(keys.read_text()) if keys.exists() else {}
        self.vecs = np.load(self.dir / "vecs.npy") if self.keys else np.zeros((0, 384), dtype=np.float32)
        self.embedded = 0
        self.cpu = 0.0

    def embed(self, texts: list[str]) -> np.ndarray:
        hs = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = list(dict.fromkeys(h for h in hs if h not in self.keys))
        if missing:
            by = dict(zip(hs, texts))
            c0 = time.process_time()
            new = self.emb.embed([by[h] for h in missing])
            self.cpu += time.process_time() - c0
            self.embedded += len(missing)
            base = len(self.vecs)
            self.vecs = np.concatenate([self.vecs, new])
            self.keys.update({h: base + i for i, h in enumerate(missing)})
        out: np.ndarray = self.vecs[[self.keys[h] for h in hs]]
        return out

    def save(self) -> None:
        np.save(self.dir / "vecs.npy", self.vecs)
        (self.dir / "keys.json").write_text(json.dumps(self.keys))


def fill(root: Path, emb: CachedEmbedder) -> None:
    ws = Workspace(root)
    conn, _ = open_index(ws)
    try:
        vectors.check_model(conn, semantic.MODEL)
        vectors.fill(conn, emb.embed, lock=lambda: writer_lock(ws, 10.0), batch=512)
    finally:
        conn.close()


class Run:
    def __init__(self, emb: CachedEmbedder, dense: semantic.InProcess) -> None:
        self.emb = emb
        self.dense = dense
        self.t = Tally()
        self.overlap: list[float] = []

    def ask(self, asker: Asker, floor: Floor, question: str, as_of: str, where: list[tuple[str, int]],
            groups: list[Any]) -> None:
        def score(name: str, res: list[dict[str, Any]]) -> None:
            self.t.add(name, groups, sum(covered(res, w_) for w_ in where) / len(where))

        for b in BUDGETS:
            score(f"floor {b}", floor.ask(question, budget=b))
            score(f"lexical {b}", asker.ask(question, as_of=as_of, budget=b))
            for w in WEIGHTS:
                semantic.WEIGHT = w
                score(f"fused {w} {b}", asker.ask(question, as_of=as_of, budget=b, semantic=True))

    def storage_check(self, asker: Asker, question: str) -> None:
        """Top-10 overlap of the int8 search (as stored) with float32 over the same visible set."""
        conn = asker.session.conn
        table = self.dense.vector_index(conn)
        table.refresh()
        q = self.emb.embed([question])[0]
        got = table.search(q, 10)
        vis = table.visible(None) & (table.row_of >= 0)
        ids = table.chunk_ids[vis]
        rows = conn.execute(f"SELECT id, content FROM chunks WHERE id IN ({','.join(map(str, ids.tolist()))})").fetchall()
        text = dict((int(i), c) for i, c in rows)
        f32 = self.emb.embed([text[int(i)] for i in ids]) @ q
        best = ids[np.argsort(-f32, kind="stable")[:10]]
        self.overlap.append(len(set(best.tolist()) & set(got.ids)) / max(1, min(10, len(best))))


def run_locomo(run: Run, save: Any, every: int = 1, only: str | None = None) -> None:
    from recall import HALVES, build_locomo, evidence_ids

    data = json.loads(LOCOMO.read_text())
    for ci, sample in enumerate(data):
        part = next(h for h, r in HALVES.items() if ci in r)
        if only and part != only:
            continue
        built = build_locomo(sample, OUT / "hybrid-locomo" / sample["sample_id"])
        index(built.root)
        fill(built.root, run.emb)
        floor = Floor(built)
        with Asker(built.root, dense=run.dense) as asker:
            for n, qa in enumerate(sample["qa"]):
                ids = evidence_ids(qa.get("evidence", []), built.lines)
                if not ids or qa["category"] not in (1, 2, 3, 4) or n % every:
                    continue
                groups = [(part, qa["category"]), (part, "1-4")]
                run.ask(asker, floor, qa["question"], built.last, [built.lines[t] for t in ids], groups)
                if n % 10 == 0:
                    run.storage_check(asker, qa["question"])
        floor.close()
        run.emb.save()
        save()
        print(f"locomo {ci} done", file=sys.stderr, flush=True)


def run_haystack(run: Run, limit: int, save: Any, distractors: int, part: int, parts: int) -> None:
    import haystack as hs

    data = hs.load(LME)
    pool = hs.session_pool(data)
    # In a fixed pseudo-random order (the oracle file is sorted by question type, so a prefix would
    # hold two types): a run cut short by --haystack-limit, or stopped, is a sample of all types.
    order = sorted(data, key=lambda q: hashlib.sha1(q["question_id"].encode()).hexdigest())
    for n, q in enumerate(order[:limit][part::parts]):
        h = hs.build(q, pool, n=distractors, root=OUT / "hybrid-haystack" / f"{q['question_id']}-{distractors}")
        if not h.answer_turns:
            continue
        fill(h.built.root, run.emb)
        floor = Floor(h.built, h.visible)
        groups = [(half(h.qid), h.qtype), (half(h.qid), "all")]
        with Asker(h.built.root, dense=run.dense) as asker:
            run.ask(asker, floor, h.question, h.day, [h.built.lines[t] for t in h.answer_turns], groups)
        floor.close()
        if n % 5 == 4:
            run.emb.save()
            save()
            print(f"haystack {n + 1} done", file=sys.stderr, flush=True)
    run.emb.save()


def table(t: Tally, part: str, groups: list[Any], w: float, label: str) -> str:
    cols = [f"{b} tok floor / lexical / hybrid" for b in BUDGETS]
    rows = [f"| {label} | n | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 2)]
    for g in groups:
        key = (part, g)
        cells = [" / ".join(fmt(t.get(f"{m} {b}", key)) for m in ("floor", "lexical", f"fused {w}")) for b in BUDGETS]
        rows.append(f"| {g} | {t.n(f'lexical {BUDGETS[0]}', key)} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def sweep(rows_of: list[tuple[str, Tally, tuple[str, Any]]]) -> str:
    head = "| w | " + " | ".join(f"{name} {b} tok" for name, _, _ in rows_of for b in BUDGETS) + " |"
    rows = [head, "|" + "---|" * (len(rows_of) * len(BUDGETS) + 1)]
    rows.append("| lexical | " + " | ".join(fmt(t.get(f"lexical {b}", g)) for _, t, g in rows_of for b in BUDGETS) + " |")
    for w in WEIGHTS:
        rows.append(f"| {w} | " + " | ".join(fmt(t.get(f"fused {w} {b}", g)) for _, t, g in rows_of for b in BUDGETS) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--haystack-limit", type=int, default=500, help="at most N haystack questions (a fixed sample of all types)")
    ap.add_argument("--locomo-every", type=int, default=1, help="every K-th LoCoMo question")
    ap.add_argument("--locomo-half", choices=("tune", "validate"), help="only this LoCoMo half (two processes)")
    ap.add_argument("--distractors", type=int, default=45, help="distractor sessions per haystack question")
    ap.add_argument("--slice", default="0/1", metavar="I/N", help="haystack: only every N-th question from the I-th"
                    " (N processes share the run; report merges their tallies)")
    ap.add_argument("--parts", default="locomo,haystack", help="locomo, haystack, report (report: print saved tallies)")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    import pickle

    t0 = time.perf_counter()
    parts = args.parts.split(",")
    i, n_slices = (int(x) for x in args.slice.split("/"))
    for part in ("locomo", "haystack"):
        if part in parts:
            if part == "haystack" and n_slices > 1:
                part = f"haystack-{i}"
            if part == "locomo" and args.locomo_half:
                part = f"locomo-{args.locomo_half}"
            emb = CachedEmbedder(part)
            run = Run(emb, semantic.InProcess(emb))

            def save(part: str = part, run: Run = run, emb: CachedEmbedder = emb) -> None:
                # Saved as it goes: a run stopped early still reports what it measured (with its n).
                (OUT / f"hybrid-{part}.pickle").write_bytes(pickle.dumps(
                    {"t": run.t, "overlap": run.overlap, "load": emb.emb.load_seconds, "embedded": emb.embedded,
                     "cpu": emb.cpu, "seconds": time.perf_counter() - t0}))

            if part.startswith("locomo"):
                run_locomo(run, save, args.locomo_every, args.locomo_half)
            else:
                run_haystack(run, args.haystack_limit, save, args.distractors, i, n_slices)
            save()
    if "report" not in parts:
        return 0
    def merged(pattern: str) -> argparse.Namespace:
        out = argparse.Namespace(t=Tally(), overlap=[], embedded=0, cpu=0.0, seconds=0.0, load=0.0)
        for f in sorted(OUT.glob(pattern)):  # one per process of a split run
            got = pickle.loads(f.read_bytes())
            for key, v in got["t"].sums.items():
                out.t.sums[key] += v
                out.t.counts[key] += got["t"].counts[key]
            out.overlap += got["overlap"]
            out.embedded += got["embedded"]
            out.cpu += got["cpu"]
            out.seconds = max(out.seconds, got["seconds"])
            out.load = got["load"]
        return out

    lo, hy = merged("hybrid-locomo*.pickle"), merged("hybrid-haystack*.pickle")

    def tune_score(w: float) -> float:
        return statistics.mean([lo.t.get(f"fused {w} {b}", ("tune", "1-4")) for b in BUDGETS]
                               + [hy.t.get(f"fused {w} {b}", ("tune", "all")) for b in BUDGETS])

    w = max(WEIGHTS, key=tune_score)
    cats: list[Any] = [1, 2, 3, 4, "1-4"]
    types = sorted({g for (_, (p, g)) in hy.t.counts if p == "report" and g != "all"}) + ["all"]
    n_hay = sum(hy.t.n(f"lexical {BUDGETS[0]}", (p, "all")) for p in ("tune", "report"))
    checks = [(name, t, (part, g), b) for name, t, part, g in
              (("LoCoMo validate", lo.t, "validate", "1-4"), ("LoCoMo tune", lo.t, "tune", "1-4"),
               ("haystack report", hy.t, "report", "all"), ("haystack tune", hy.t, "tune", "all")) for b in BUDGETS]
    helps = all(t.get(f"fused {w} {b}", key) > t.get(f"lexical {b}", key) for _, t, key, b in checks)
    out = [f"w = {w}, chosen on the tune halves (mean of LoCoMo 1-4 and haystack all, 1000 and 2000 tokens). "
           f"Hybrid beats lexical on both LoCoMo halves and both haystack halves at 1000 and 2000 tokens: "
           f"**{'yes' if helps else 'no'}**.", "",
           "### LoCoMo, validation half (conversations 5-9)\n", table(lo.t, "validate", cats, w, "category"), "",
           "### LoCoMo, tune half (conversations 0-4)\n", table(lo.t, "tune", cats, w, "category"), "",
           f"### Haystack, report half ({n_hay} questions in both halves: a fixed pseudo-random sample of the oracle's 500;"
           f" {args.distractors} distractor sessions per question)\n",
           table(hy.t, "report", types, w, "question type"), "",
           "### Haystack, tune half\n", table(hy.t, "tune", types, w, "question type"), "",
           "### Weight sweep\n",
           sweep([("LoCoMo tune", lo.t, ("tune", "1-4")), ("LoCoMo validate", lo.t, ("validate", "1-4")),
                  ("haystack tune", hy.t, ("tune", "all")), ("haystack report", hy.t, ("report", "all"))]), ""]
    ov = lo.overlap + hy.overlap
    embedded, cpu = lo.embedded + hy.embedded, lo.cpu + hy.cpu
    rate = embedded / cpu if cpu else float("nan")
    out.append(f"int8 storage: the stored int8 vectors' dense top 10 matched float32's top 10 in "
               f"{statistics.mean(ov):.3f} of places ({len(ov)} questions). Model load {lo.load:.2f} s; "
               f"embedded {embedded} new texts in {cpu:.0f} CPU-s ({rate:.0f} per CPU-second; 0 when all were cached); "
               f"runs {lo.seconds:.0f} s (LoCoMo) and {hy.seconds:.0f} s (haystack), as two processes on a shared machine.")
    cmd = (f"for h in tune validate; do .venv/bin/python bench/hybrid.py --parts locomo --locomo-half $h"
           f" --locomo-every {args.locomo_every} & done; for i in 0 1 2; do .venv/bin/python bench/hybrid.py --parts haystack"
           f" --haystack-limit {args.haystack_limit} --distractors {args.distractors} --slice $i/3 & done; wait;"
           f" .venv/bin/python bench/hybrid.py --parts report --distractors {args.distractors} --write")
    publish(out, "Recall: hybrid", cmd, args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
