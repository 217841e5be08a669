"""Hybrid recall (issue 16): gitmem's lexical ranking fused with the bundled MiniLM's dense
ranking, against lexical alone and the plain FTS5 floor, in one run, full size.

    .venv/bin/python bench/hybrid.py --parts embed                      # once: build, index, embed, fill
    .venv/bin/python bench/hybrid.py --parts locomo --locomo-half tune  # (one process per half / slice)
    .venv/bin/python bench/hybrid.py --parts haystack --slice 0/2
    .venv/bin/python bench/hybrid.py --parts report --write

- The product path, end to end: each benchmark workspace is indexed by gitmem, its vectors are
  filled by `gitmem.index.vectors.fill` (what `gitmem index --vectors` runs) and questions are
  asked through a recall Session with `semantic=True` and an in-process dense source (what
  `gitmem mcp` uses).
- Only the model call is cached: vectors by the text's sha1 under bench/out/vectors/<model>/ (not
  committed), written only by the `embed` part, so a distinct text (and each question) is embedded
  once across all workspaces and runs; the asking parts only read it.
- Workspaces: LoCoMo under bench/out/hybrid-locomo/ (as bench/recall.py builds them), the
  LongMemEval haystack under bench/out/hybrid-haystack/<qid>-<distractors> (as bench/haystack.py
  builds them: 45 distractor sessions, seed 16; all 500 questions, 479 with answer turns).
- Variants (`--variants`): `lexical` (today's ranking), and fusions of it with the dense ranking
  (VARIANTS below); each at 1000 and 2000 tokens, beside the floor. A variant is chosen on the tune
  halves (LoCoMo conversations 0-4, the haystack's tune half) and judged on the other halves.
- Each asking part saves its tallies as it goes (bench/out/hybrid-runs/<tag>/<part>.pickle);
  `report` merges one tag's parts and prints per category / question type.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import pickle
import sys
import time
from collections.abc import Callable, Iterator
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

BUDGETS = (1000, 2000)
DISTRACTORS = 45
CACHE = OUT / "vectors" / hashlib.sha1(semantic.MODEL.encode()).hexdigest()[:12]


class CachedEmbedder:
    """The product's Embedder behind a cache of vectors by text sha1 (float32, as the model gave
    them). Only a writer saves; readers embed what is missing in memory (questions, a few)."""

    def __init__(self, writer: bool) -> None:
        self.writer = writer
        self.emb: semantic.Embedder | None = None
        CACHE.mkdir(parents=True, exist_ok=True)
        keys = CACHE / "keys.json"
        self.keys: dict[str, int] = json.loads(keys.read_text()) if keys.exists() else {}
        self.vecs = np.load(CACHE / "vecs.npy") if self.keys else np.zeros((0, 384), dtype=np.float32)
        self.vecs = self.vecs[: len(self.keys)]
        self.embedded = 0
        self.cpu = 0.0
        self.load = 0.0

    def embed(self, texts: list[str]) -> np.ndarray:
        hs = [hashlib.sha1(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
        missing = list(dict.fromkeys(h for h in hs if h not in self.keys))
        if missing:
            if self.emb is None:
                self.emb = semantic.load_embedder()
                self.load = self.emb.load_seconds
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
        if self.writer and self.embedded:
            np.save(CACHE / "vecs.tmp.npy", self.vecs)
            (CACHE / "vecs.tmp.npy").replace(CACHE / "vecs.npy")
            (CACHE / "keys.tmp").write_text(json.dumps(self.keys))
            (CACHE / "keys.tmp").replace(CACHE / "keys.json")


def fill(root: Path, emb: CachedEmbedder) -> None:
    ws = Workspace(root)
    conn, _ = open_index(ws)
    try:
        vectors.check_model(conn, semantic.MODEL)
        vectors.fill(conn, emb.embed, lock=lambda: writer_lock(ws, 10.0), batch=512)
    finally:
        conn.close()


# -- the workspaces -------------------------------------------------------------------------------

class Q:
    """One scored question: its workspace, when it is asked, where its evidence lies, its groups."""

    def __init__(self, root: Path, question: str, as_of: str, where: list[tuple[str, int]], groups: list[Any],
                 floor: Callable[[], Floor]) -> None:
        self.root, self.question, self.as_of, self.where, self.groups, self.floor = \
            root, question, as_of, where, groups, floor


def locomo_questions(only: str | None, every: int) -> Iterator[tuple[Path, list[Q]]]:
    from recall import HALVES, evidence_ids, locomo_sessions

    from benchlib import cached_log_repo

    data = json.loads(LOCOMO.read_text())
    for ci, sample in enumerate(data):
        part = next(h for h, r in HALVES.items() if ci in r)
        if only and part != only:
            continue
        sessions = locomo_sessions(sample)
        key = hashlib.sha1(json.dumps([(w.isoformat(), h, t) for w, h, t in sessions]).encode()).hexdigest()
        # Rebuilt only when the conversation's sessions change: the index keeps its vectors.
        built = cached_log_repo(OUT / "hybrid-locomo" / sample["sample_id"], sessions, key)
        index(built.root)
        qs = []
        for n, qa in enumerate(sample["qa"]):
            ids = evidence_ids(qa.get("evidence", []), built.lines)
            if not ids or qa["category"] not in (1, 2, 3, 4) or n % every:
                continue
            qs.append(Q(built.root, qa["question"], built.last, [built.lines[t] for t in ids],
                        [(part, qa["category"]), (part, "1-4")], lambda built=built: Floor(built)))
        yield built.root, qs


def haystack_questions(limit: int, part: int, parts: int, every: int = 1) -> Iterator[tuple[Path, list[Q]]]:
    import haystack as hs

    data = hs.load(LME)
    pool = hs.session_pool(data)
    # In a fixed pseudo-random order (the oracle file is sorted by question type): a run stopped
    # early, or cut by --haystack-limit, is a sample of every type.
    order = sorted(data, key=lambda q: hashlib.sha1(q["question_id"].encode()).hexdigest())
    for n, q in enumerate(order[:limit]):
        if n % parts != part or (n // parts) % every:
            continue
        h = hs.build(q, pool, n=DISTRACTORS, root=OUT / "hybrid-haystack" / f"{q['question_id']}-{DISTRACTORS}")
        if not h.answer_turns:
            continue
        groups = [(half(h.qid), h.qtype), (half(h.qid), "all")]
        yield h.built.root, [Q(h.built.root, h.question, h.day, [h.built.lines[t] for t in h.answer_turns], groups,
                               lambda h=h: Floor(h.built, h.visible))]


# -- fusion variants ------------------------------------------------------------------------------

def variant(name: str) -> contextlib.AbstractContextManager[Any]:
    """Settings of one variant, switched on for the asks inside the `with`."""
    spec = VARIANTS[name]

    @contextlib.contextmanager
    def on() -> Iterator[None]:
        saved = {k: getattr(semantic, k) for k in spec}
        for k, v in spec.items():
            setattr(semantic, k, v)
        try:
            yield
        finally:
            for k, v in saved.items():
                setattr(semantic, k, v)

    return on()


# name -> semantic module attributes for the run (FUSION: "rrf", "z"; WEIGHT; wave 7's credits and
# the neutralised speaker names, all off in the plain fusions).
_W7_OFF = {"SPEAKER_CREDIT": 0.0, "ANCHOR_CREDIT": 0.0, "NEUTRAL_SPEAKERS": False, "ASKER": None}
VARIANTS: dict[str, dict[str, Any]] = {
    f"{f}{w}": {"FUSION": f, "WEIGHT": w, **_W7_OFF} for f in ("rrf", "z") for w in (0.25, 0.5, 0.7, 1.0, 1.5)
}
# Wave 7 (bench/RESULTS.md "Recall: hybrid, wave 7"), each on top of z0.7 (wave 6's shipped fusion):
# `nn` the dense side asked with speaker names neutralised, `spk` the fused speaker credit, `anc`
# the time-anchor credit; `w7` all three (what ships).
VARIANTS.update({
    "nn": {"FUSION": "z", "WEIGHT": 0.7, **_W7_OFF, "NEUTRAL_SPEAKERS": True},
    "nn+spk": {"FUSION": "z", "WEIGHT": 0.7, **_W7_OFF, "NEUTRAL_SPEAKERS": True, "SPEAKER_CREDIT": 0.5},
    "anc": {"FUSION": "z", "WEIGHT": 0.7, **_W7_OFF, "ANCHOR_CREDIT": 0.5},
    "w7": {"FUSION": "z", "WEIGHT": 0.7, "SPEAKER_CREDIT": 0.5, "ANCHOR_CREDIT": 0.5, "NEUTRAL_SPEAKERS": True,
           "ASKER": None},
})
# Wave 8 (bench/RESULTS.md "Recall: hybrid, wave 8"): `w8` is w7 with a first-person question's
# asker ("user: ..." turns) credited as a named speaker (semantic.ASKER; what ships).
VARIANTS["w8"] = {**VARIANTS["w7"], "ASKER": "user"}


def semantic_of(name: str) -> bool:
    return name != "lexical"


# -- the run ----------------------------------------------------------------------------------------

class Run:
    def __init__(self, names: list[str], emb: CachedEmbedder) -> None:
        self.names = names
        self.emb = emb
        self.dense = semantic.InProcess(emb)
        self.t = Tally()
        self.seconds: dict[str, float] = {}

    def workspace(self, root: Path, qs: list[Q]) -> None:
        with Asker(root, dense=self.dense) as asker:
            for q in qs:
                floor = q.floor()
                for b in BUDGETS:
                    self.score("floor", b, q, floor.ask(q.question, budget=b))
                floor.close()
                for name in self.names:
                    c0 = time.process_time()
                    with variant(name) if name in VARIANTS else contextlib.nullcontext():
                        for b in BUDGETS:
                            res = asker.ask(q.question, as_of=q.as_of, budget=b, semantic=semantic_of(name))
                            self.score(name, b, q, res)
                    self.seconds[name] = self.seconds.get(name, 0.0) + time.process_time() - c0

    def score(self, name: str, b: int, q: Q, res: list[Any]) -> None:
        self.t.add(f"{name} {b}", q.groups, sum(covered(res, w) for w in q.where) / len(q.where))


def embed_all(args: argparse.Namespace) -> None:
    """Build and index every workspace, embed each distinct text once (saved as it goes) and fill
    every index's vectors; the questions are embedded too, so asking never loads the model."""
    emb = CachedEmbedder(writer=True)
    t0 = time.perf_counter()
    sources: list[Iterator[tuple[Path, list[Q]]]] = [locomo_questions(None, 1),
                                                     haystack_questions(args.haystack_limit, 0, 1)]
    done = 0
    for src in sources:
        for root, qs in src:
            fill(root, emb)
            emb.embed([q.question for q in qs])
            done += 1
            if done % 20 == 0:
                emb.save()
                print(f"embed: {done} workspaces, {emb.embedded} texts in {emb.cpu:.0f} CPU-s,"
                      f" {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    emb.save()
    print(f"embed: done, {done} workspaces, {emb.embedded} new texts in {emb.cpu:.0f} CPU-s", file=sys.stderr)


def ask_part(args: argparse.Namespace, part: str) -> None:
    emb = CachedEmbedder(writer=args.write_cache)
    names = args.variants.split(",")
    run = Run(names, emb)
    t0 = time.perf_counter()
    i, n_slices = (int(x) for x in args.slice.split("/"))
    label = part
    if part == "locomo":
        src = locomo_questions(args.locomo_half, args.every)
        label += f"-{args.locomo_half or 'all'}"
    else:
        src = haystack_questions(args.haystack_limit, i, n_slices, args.every)
        label += f"-{i}of{n_slices}"
    out = OUT / "hybrid-runs" / (args.tag or "final") / f"{label}.pickle"
    out.parent.mkdir(parents=True, exist_ok=True)

    def save(n: int) -> None:
        if n % 5 == 4:
            emb.save()
        out.write_bytes(pickle.dumps({"t": run.t, "seconds": time.perf_counter() - t0, "cpu": run.seconds,
                                      "names": names, "every": args.every, "embedded": emb.embedded}))

    for n, (root, qs) in enumerate(src):
        fill(root, emb)  # a no-op when the embed part filled it; else from the cache
        run.workspace(root, qs)
        save(n)  # as it goes: a run stopped early still reports what it measured (with its n)
        print(f"{label}: {n + 1} workspaces, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    emb.save()
    save(0)


# -- the report ----------------------------------------------------------------------------------

def merged(pattern: str) -> tuple[Tally, list[str], dict[str, float], float]:
    t, names, cpu, secs = Tally(), [], {}, 0.0
    for f in sorted(OUT.glob(pattern)):
        got = pickle.loads(f.read_bytes())
        for key, v in got["t"].sums.items():
            t.sums[key] += v
            t.counts[key] += got["t"].counts[key]
        names += [n for n in got["names"] if n not in names]
        for k, v in got["cpu"].items():
            cpu[k] = cpu.get(k, 0.0) + v
        secs = max(secs, got["seconds"])
    return t, names, cpu, secs


def table(t: Tally, part: str, groups: list[Any], names: list[str], label: str) -> str:
    cols = [f"{b} tok floor / " + " / ".join(names) for b in BUDGETS]
    rows = [f"| {label} | n | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 2)]
    for g in groups:
        key = (part, g)
        cells = [" / ".join(fmt(t.get(f"{m} {b}", key)) for m in ["floor", *names]) for b in BUDGETS]
        lab = f"**{g}**" if g in ("1-4", "all") else str(g)
        rows.append(f"| {lab} | {t.n(f'floor {BUDGETS[0]}', key)} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def summary(lo: Tally, hy: Tally, names: list[str]) -> str:
    cols = [(f"LoCoMo {p} {b}", lo, (p, "1-4"), b) for p in ("tune", "validate") for b in BUDGETS]
    cols += [(f"haystack {p} {b}", hy, (p, "all"), b) for p in ("tune", "report") for b in BUDGETS]
    rows = ["| variant | " + " | ".join(c[0] for c in cols) + " |", "|" + "---|" * (len(cols) + 1)]
    for m in ["floor", *names]:
        rows.append(f"| {m} | " + " | ".join(fmt(t.get(f"{m} {b}", key)) for _, t, key, b in cols) + " |")
    return "\n".join(rows)


def below_floor(lo: Tally, hy: Tally, names: list[str]) -> list[str]:
    out = []
    for m in names:
        bad = []
        for t in (lo, hy):
            for (setting, key), n in sorted(t.counts.items(), key=str):
                if not setting.startswith(f"{m} ") or not n:
                    continue
                b = setting.rsplit(" ", 1)[1]
                if t.get(setting, key) < t.get(f"floor {b}", key) - 1e-9:
                    bad.append(f"{key[0]} {key[1]} @{b} ({fmt(t.get(setting, key))} < {fmt(t.get(f'floor {b}', key))})")
        out.append(f"- {m}: " + ("; ".join(bad) if bad else "none"))
    return out


def report(args: argparse.Namespace) -> None:
    run = f"hybrid-runs/{args.tag or 'final'}"
    lo, lnames, lcpu, lsecs = merged(f"{run}/locomo-*.pickle")
    hy, hnames, hcpu, hsecs = merged(f"{run}/haystack-*.pickle")
    names = lnames + [n for n in hnames if n not in lnames]  # a variant a part did not run shows "-"
    cats: list[Any] = [1, 2, 3, 4, "1-4"]
    types = sorted({g for (_, (p, g)) in hy.counts if g != "all"}) + ["all"]
    out = ["Evidence recall (the share of a question's evidence turns inside the returned results), categories 1-4"
           " of LoCoMo and the haystack's scored questions, at 1000 and 2000 tokens costed by gitmem's `pack`.", "",
           summary(lo, hy, names), ""]
    for part, title in (("validate", "LoCoMo, validation half (conversations 5-9)"),
                        ("tune", "LoCoMo, tune half (conversations 0-4)")):
        out += [f"### {title}\n", table(lo, part, cats, names, "category"), ""]
    for part in ("report", "tune"):
        out += [f"### Haystack, {part} half ({DISTRACTORS} distractor sessions per question, seed 16)\n",
                table(hy, part, types, names, "question type"), ""]
    out += ["Categories or question types below their floor (per half):", "", *below_floor(lo, hy, names), ""]
    cpu = ", ".join(f"{n} {lcpu.get(n, 0) + hcpu.get(n, 0):.0f}" for n in names)
    out.append(f"CPU seconds of asking per variant (both budgets, all parts): {cpu}. Wall: LoCoMo {lsecs:.0f} s, "
               f"haystack {hsecs:.0f} s (longest process).")
    cmd = (".venv/bin/python bench/hybrid.py --parts embed; for h in tune validate; do .venv/bin/python bench/hybrid.py"
           f" --parts locomo --locomo-half $h --variants {','.join(names)} & done; for i in 0 1; do .venv/bin/python"
           f" bench/hybrid.py --parts haystack --slice $i/2 --variants {','.join(names)} & done; wait;"
           " .venv/bin/python bench/hybrid.py --parts report --write")
    publish(out, args.section, cmd, args.write)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="report", help="embed, locomo, haystack, report (comma-separated)")
    ap.add_argument("--variants", default="lexical,z0.7", help=f"lexical and any of {', '.join(VARIANTS)}")
    ap.add_argument("--haystack-limit", type=int, default=500, help="the first N oracle questions")
    ap.add_argument("--every", type=int, default=1, help="every K-th question (exploration)")
    ap.add_argument("--locomo-half", choices=("tune", "validate"), help="only this LoCoMo half")
    ap.add_argument("--slice", default="0/1", metavar="I/N", help="haystack: every N-th question from the I-th")
    ap.add_argument("--write-cache", action="store_true", help="an asking part that also saves the texts it"
                    " embedded to the shared cache (one such process at a time; `embed` does it for all)")
    ap.add_argument("--tag", default="", help="this run's name: tallies under bench/out/hybrid-runs/<tag>/ (default"
                    " final); report merges one tag's")
    ap.add_argument("--section", default="Recall: hybrid", help="the RESULTS.md section --write replaces")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    for part in args.parts.split(","):
        if part == "embed":
            embed_all(args)
        elif part in ("locomo", "haystack"):
            ask_part(args, part)
        elif part == "report":
            report(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
