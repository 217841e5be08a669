"""Embedding fusion, measured in the bench only (issue 16): does a small local embedding model,
fused with today's lexical ranking, find evidence the words alone miss — on data it was not tuned on?

    PY=/path/to/env/with/onnxruntime+tokenizers+numpy+gitmem's deps
    $PY bench/embed.py --model MODEL.onnx --tokenizer tokenizer.json [--haystack-limit N] [--write]

Not a project dependency: the model, its runtime and its tokenizer are given on the command line
(see "Embedding fusion" in bench/recall_notes.md for where they come from and the licences).

- Model: all-MiniLM-L6-v2 (384-d), mean pooling over the attention mask, L2-normalised, inputs
  cut at 256 word pieces (the model's max_seq_length), run by onnxruntime on one thread.
- Vectors are cached per model file under bench/out/vectors/<model digest>/ by the text's sha1,
  so a text is embedded once whatever workspace it appears in.
- Lexical: today's ranking (gitmem in-process, top LEX_DEPTH results, no budget); dense: cosine
  over every turn visible at the time asked (brute force in numpy). Fusion: weighted reciprocal
  rank, score = 1 / (60 + lexical rank) + w / (60 + dense rank); a dense hit inside a lexical
  result is the same item. The fused order is packed by gitmem's own `pack`, so budgets are costed
  exactly as recall's are. `lexical` in the tables is gitmem's own budgeted answer, unchanged.
- w is chosen on the tune halves only (LoCoMo conversations 0-4, the haystack's tune half) by
  the mean of categories 1-4 / all types at 1000 and 2000 tokens, then reported on the other half.
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

from benchlib import LME, LOCOMO, OUT, Built, Floor, Tally, covered, fmt, half, publish  # noqa: E402
from gm import Asker, Result, index, line_result, pack  # noqa: E402

MAX_TOKENS = 256
RRF_K = 60
LEX_DEPTH = 200
WEIGHTS = (0.25, 0.5, 0.75, 1.0, 1.5)


class Embedder:
    """all-MiniLM-L6-v2 through onnxruntime: mean-pooled, normalised sentence vectors."""

    def __init__(self, model: Path, tokenizer: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        t0 = time.perf_counter()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer.from_file(str(tokenizer))
        self.tok.enable_truncation(MAX_TOKENS)
        self.load_seconds = time.perf_counter() - t0
        self.digest = hashlib.sha1(model.read_bytes()).hexdigest()[:12]

    def embed(self, texts: list[str], batch: int = 32) -> np.ndarray:
        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad less
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            encs = self.tok.encode_batch([texts[i] for i in idx])
            n = max(len(e.ids) for e in encs)
            ids = np.zeros((len(idx), n), dtype=np.int64)
            mask = np.zeros((len(idx), n), dtype=np.int64)
            for r, e in enumerate(encs):
                # The encoding's own mask: a tokenizer.json may carry padding settings, and pad
                # tokens must not enter the mean.
                ids[r, :len(e.ids)] = e.ids
                mask[r, :len(e.ids)] = e.attention_mask
            hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                             "token_type_ids": np.zeros_like(ids)})[0]
            m = mask[:, :, None].astype(np.float32)
            vec = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            out[idx] = vec / np.linalg.norm(vec, axis=1, keepdims=True)
        return out


class VectorCache:
    """Vectors by text sha1, for one model, kept under bench/out/vectors/ between runs."""

    def __init__(self, emb: Embedder) -> None:
        self.emb = emb
        self.dir = OUT / "vectors" / emb.digest
        self.dir.mkdir(parents=True, exist_ok=True)
        keys = self.dir / "keys.json"
        self.keys: dict[str, int] = json.loads(keys.read_text()) if keys.exists() else {}
        self.vecs = np.load(self.dir / "vecs.npy") if self.keys else np.zeros((0, 384), dtype=np.float32)
        self.embedded = 0
        self.cpu = 0.0

    def get(self, texts: list[str]) -> np.ndarray:
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
        return self.vecs[[self.keys[h] for h in hs]]

    def save(self) -> None:
        np.save(self.dir / "vecs.npy", self.vecs)
        (self.dir / "keys.json").write_text(json.dumps(self.keys))


def turn_result(built: Built, tid: str) -> Result:
    """A turn as a result record, costed like the floor's (and gitmem's) rendered line."""
    path, line = built.lines[tid]
    return line_result(path, line, built.dates[tid], built.texts[tid])


def fuse(lex: list[Result], dense: list[str], built: Built, w: float, depth: int = 400) -> list[Result]:
    """Weighted RRF of the lexical results and the dense turn ranking, best first."""
    items: dict[tuple[str, int, int], tuple[float, Result]] = {}
    inside: dict[tuple[str, int], tuple[str, int, int]] = {}  # a line -> the lexical result holding it
    for i, r in enumerate(lex):
        key = (r.path, r.lines[0], r.lines[1])
        items[key] = (1.0 / (RRF_K + i), r)
        for line in range(key[1], key[2] + 1):
            inside.setdefault((key[0], line), key)
    for j, tid in enumerate(dense[:depth]):
        path, line = built.lines[tid]
        key = inside.get((path, line), (path, line, line))
        score, r = items.get(key, (0.0, turn_result(built, tid)))
        items[key] = (score + w / (RRF_K + j), r)
    return [r for _, r in sorted(items.values(), key=lambda x: -x[0])]


class Run:
    """One question at a time: lexical, dense, fused (every w), floor, at each budget."""

    def __init__(self, cache: VectorCache, budgets: tuple[int, ...]) -> None:
        self.cache = cache
        self.budgets = budgets
        self.t = Tally()
        self.query_ms: list[float] = []

    def ask(self, asker: Asker, floor: Floor, built: Built, visible: list[str], tvecs: np.ndarray,
            question: str, as_of: str, where: list[tuple[str, int]], groups: list[Any]) -> None:
        t0 = time.perf_counter()
        qv = self.cache.emb.embed([question])[0]
        order = np.argsort(-(tvecs @ qv))
        self.query_ms.append((time.perf_counter() - t0) * 1000)
        dense = [visible[i] for i in order[:400]]
        lex_full = asker.ask(question, as_of=as_of, k=LEX_DEPTH)

        def score(name: str, res: list[Result]) -> None:
            self.t.add(name, groups, sum(covered(res, w_) for w_ in where) / len(where))

        dense_res = [turn_result(built, t) for t in dense]
        fused = {w: fuse(lex_full, dense, built, w) for w in WEIGHTS}
        for b in self.budgets:
            score(f"lexical {b}", asker.ask(question, as_of=as_of, budget=b))
            score(f"floor {b}", floor.ask(question, budget=b))
            score(f"dense {b}", pack(dense_res, b))
            for w in WEIGHTS:
                score(f"fused {w} {b}", pack(fused[w], b))


def run_locomo(run: Run) -> None:
    from recall import HALVES, build_locomo, evidence_ids

    data = json.loads(LOCOMO.read_text())
    for ci, sample in enumerate(data):
        part = next(h for h, r in HALVES.items() if ci in r)
        # Its own copy: bench/recall.py rebuilds bench/out/locomo/ and may run at the same time.
        built = build_locomo(sample, OUT / "embed-locomo" / sample["sample_id"])
        index(built.root)
        visible = list(built.texts)
        tvecs = run.cache.get([built.texts[t] for t in visible])
        floor = Floor(built)
        with Asker(built.root) as asker:
            for qa in sample["qa"]:
                ids = evidence_ids(qa.get("evidence", []), built.lines)
                if not ids or qa["category"] not in (1, 2, 3, 4):
                    continue
                groups = [(part, qa["category"]), (part, "1-4")]
                run.ask(asker, floor, built, visible, tvecs, qa["question"], built.last,
                        [built.lines[t] for t in ids], groups)
        floor.close()
        run.cache.save()


def run_haystack(run: Run, limit: int) -> None:
    import haystack as hs

    data = hs.load(LME)
    pool = hs.session_pool(data)
    for q in data[:limit]:
        h = hs.build(q, pool)
        if not h.answer_turns:
            continue
        visible = [t for t in h.built.texts if h.visible(t)]
        tvecs = run.cache.get([h.built.texts[t] for t in visible])
        floor = Floor(h.built, h.visible)
        groups = [(half(h.qid), h.qtype), (half(h.qid), "all")]
        with Asker(h.built.root) as asker:
            run.ask(asker, floor, h.built, visible, tvecs, h.question, h.day,
                    [h.built.lines[t] for t in h.answer_turns], groups)
        floor.close()
    run.cache.save()


def best_weight(t: Tally, tune: str, budgets: tuple[int, ...], total: Any) -> float:
    return max(WEIGHTS, key=lambda w: statistics.mean(t.get(f"fused {w} {b}", (tune, total)) for b in budgets[:2]))


def table(t: Tally, part: str, groups: list[Any], budgets: tuple[int, ...], w: float, label: str) -> str:
    cols = [f"{b} tok floor / dense / lexical / fused" for b in budgets]
    rows = [f"| {label} | n | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 2)]
    for g in groups:
        key = (part, g)
        cells = [" / ".join(fmt(t.get(f"{m} {b}", key)) for m in ("floor", "dense", "lexical", f"fused {w}"))
                 for b in budgets]
        rows.append(f"| {g} | {t.n(f'lexical {budgets[0]}', key)} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def sweep(t: Tally, groups: list[tuple[str, Any]], budgets: tuple[int, ...]) -> str:
    rows = ["| w | " + " | ".join(f"{p} {b} tok" for p, _ in groups for b in budgets) + " |",
            "|" + "---|" * (len(groups) * len(budgets) + 1)]
    for w in WEIGHTS:
        rows.append(f"| {w} | " + " | ".join(fmt(t.get(f"fused {w} {b}", g)) for g in groups for b in budgets) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, required=True, help="all-MiniLM-L6-v2 ONNX file")
    ap.add_argument("--tokenizer", type=Path, required=True, help="its tokenizer.json")
    ap.add_argument("--haystack-limit", type=int, default=0, help="first N haystack questions (0: skip)")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    emb = Embedder(args.model, args.tokenizer)
    cache = VectorCache(emb)
    out = [f"Model load {emb.load_seconds:.2f} s (onnxruntime, 1 thread)."]
    lo = Run(cache, (500, 1000, 2000))
    run_locomo(lo)
    w = best_weight(lo.t, "tune", lo.budgets, "1-4")
    cats: list[Any] = [1, 2, 3, 4, "1-4"]
    out += ["", f"### LoCoMo, validation half (conversations 5-9), w = {w} chosen on the tune half\n",
            table(lo.t, "validate", cats, lo.budgets, w, "category"), "",
            "### LoCoMo, tune half (conversations 0-4)\n", table(lo.t, "tune", cats, lo.budgets, w, "category"), "",
            "Fusion weight sweep, categories 1-4 (tune / validate):\n",
            sweep(lo.t, [("tune", "1-4"), ("validate", "1-4")], lo.budgets), ""]
    qms = list(lo.query_ms)
    if args.haystack_limit:
        hy = Run(cache, (1000, 2000, 4000))
        run_haystack(hy, args.haystack_limit)
        wh = best_weight(hy.t, "tune", hy.budgets, "all")
        types = sorted({g for (_, (p, g)) in hy.t.counts if p == "report" and g != "all"}) + ["all"]
        out += [f"### Haystack, report half, w = {wh} chosen on the tune half\n",
                table(hy.t, "report", types, hy.budgets, wh, "question type"), "",
                "Fusion weight sweep, all types (tune / report):\n",
                sweep(hy.t, [("tune", "all"), ("report", "all")], hy.budgets), ""]
        qms += hy.query_ms
    rate = cache.embedded / cache.cpu if cache.cpu else float("nan")
    out.append(f"Embedded {cache.embedded} new texts in {cache.cpu:.1f} CPU-s ({rate:.0f} texts per CPU-second; "
               "0 when all were cached); query: embed + brute-force cosine over the visible turns, median "
               f"{statistics.median(qms):.1f} ms, p95 {sorted(qms)[int(0.95 * (len(qms) - 1))]:.1f} ms.")
    cmd = ("PY bench/embed.py --model MODEL.onnx --tokenizer tokenizer.json"
           + (f" --haystack-limit {args.haystack_limit}" if args.haystack_limit else "") + " --write")
    publish(out, "Recall: embedding fusion (bench only)", cmd, args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
