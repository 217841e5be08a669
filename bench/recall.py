"""Recall quality on LoCoMo and LongMemEval (oracle), with a plain-FTS5 floor baseline side by side.

    .venv/bin/python bench/recall.py [--lme-limit 500] [--cli-check 5] [--write]

LoCoMo (10 long two-person conversations, ~1,990 questions with evidence turn ids):
- each conversation becomes a workspace repo under bench/out/locomo/<sample_id>, built with one
  `git fast-import`: one commit per session, dated by the session's date_time (UTC), which appends
  the session to that day's log `memory/YYYY-MM-DD.md` (two sessions on one day share the file;
  each session starts with a `## <time>` heading). Each turn is one list item `- Speaker: text`;
  a turn that shared an image gets the upstream RAG baseline's suffix ` [shared <blip caption>]`.
- gitmem indexes it (the indexer's own code path), and each question is asked in-process through
  `Session.search` as of the last session; a few are re-asked through `gitmem recall --json` to
  check the CLI gives the same results.
- evidence recall = share of a question's evidence turns whose line lies inside a returned result's
  line range (same path), averaged per category (1 multi-hop, 2 temporal, 3 open-domain,
  4 single-hop, 5 adversarial) and over 1-4, at k = 5/10/25 and at token budgets 500/1000/2000
  (budgets are packed by gitmem's own `pack`, i.e. the rendered line with its citation).
- the floor: one plain SQLite FTS5 doc per turn (same text, porter tokenizer), the question's
  non-stopwords (the stopword list gitmem shipped with, frozen below) quoted and OR-ed, bm25, top k;
  budgets are costed with the same rendered-line estimate as gitmem's results.
  Evidence ids that name no turn (a handful of malformed annotations) are dropped; a question with
  no valid evidence is skipped.

LongMemEval oracle (500 questions, each with its own 1-6 evidence sessions): one small repo per
question under bench/out/lme/<question_id>, one commit per session dated by its haystack date
(sorted), turns as `- user: text` / `- assistant: text` (whitespace collapsed to one line), asked as
of the question date. In the oracle set every haystack session is an evidence session, so
session recall_any is near-trivial (any hit); recall_all (every evidence session hit) and
turn-level recall of the `has_answer` turns are the informative numbers and are printed too.

`--write` replaces the "## Recall quality" section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from gitmem.index.indexer import update  # noqa: E402
from gitmem.recall.result import pack  # noqa: E402
from gitmem.recall.search import Options, Session  # noqa: E402
from gitmem.workspace import Workspace  # noqa: E402

LOCOMO = Path("/work/shared/bench/locomo/locomo10.json")
LME = Path("/work/shared/bench/longmemeval/longmemeval_oracle.json")
OUT = HERE / "out"
KS = (5, 10, 25)
BUDGETS = (500, 1000, 2000)
CATS = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

# The stopword list gitmem's query builder shipped with (frozen so the floor never moves when
# gitmem's list is tuned).
FLOOR_STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
    during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here
    here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its
    itself let's me more most mustn't my myself no nor not of off on once only or other ought our ours
    ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll they're they've
    this those through to too under until up very was wasn't we we'd we'll we're we've were weren't what
    what's when when's where where's which while who who's whom why why's will with won't would wouldn't
    you you'd you'll you're you've your yours yourself yourselves tell know think thought did does
    anything something everything also just ever still really get got much many like
    """.split()
)
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)


# -- building repositories ---------------------------------------------------------------------

@dataclass
class Built:
    root: Path
    lines: dict[str, tuple[str, int]] = field(default_factory=dict)  # turn id -> (path, line)
    texts: dict[str, str] = field(default_factory=dict)  # turn id -> list item content
    dates: dict[str, str] = field(default_factory=dict)  # turn id -> YYYY-MM-DD
    last: str = ""  # ISO datetime of the last commit


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def fast_import(root: Path, commits: list[tuple[datetime, str, dict[str, str]]]) -> None:
    """A fresh repo at `root` whose main branch has one commit per (when, message, files) entry."""
    if root.exists():
        subprocess.run(["rm", "-rf", str(root)], check=True)
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    out: list[bytes] = []
    for i, (when, msg, files) in enumerate(commits, 1):
        ts = int(when.timestamp())
        m = msg.encode()
        out.append(b"commit refs/heads/main\nmark :%d\n" % i)
        out.append(b"author Bench <bench@example.com> %d +0000\n" % ts)
        out.append(b"committer Bench <bench@example.com> %d +0000\n" % ts)
        out.append(b"data %d\n%s\n" % (len(m), m))
        if i > 1:
            out.append(b"from :%d\n" % (i - 1))
        for path, content in files.items():
            data = content.encode()
            out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
    subprocess.run(["git", "-C", str(root), "fast-import", "--quiet"], input=b"".join(out), check=True)
    subprocess.run(["git", "-C", str(root), "reset", "-q", "--hard", "main"], check=True)


def build_log_repo(root: Path, sessions: list[tuple[datetime, str, list[tuple[str, str]]]]) -> Built:
    """sessions: (when, heading, [(turn id, list item text)]) in commit order."""
    built = Built(root)
    logs: dict[str, list[str]] = {}
    commits: list[tuple[datetime, str, dict[str, str]]] = []
    for n, (when, heading, turns) in enumerate(sessions, 1):
        day = when.date().isoformat()
        path = f"memory/{day}.md"
        lines = logs.setdefault(path, [f"# {day}", ""])
        if len(lines) > 2:
            lines.append("")
        lines += [f"## {heading}", ""]
        for tid, text in turns:
            lines.append(f"- {text}")
            built.lines[tid] = (path, len(lines))
            built.texts[tid] = text
            built.dates[tid] = day
        files = {path: "\n".join(lines) + "\n"}
        if n == 1:
            files[".gitignore"] = ".memory/\n"
        commits.append((when, f"session {n}", files))
        built.last = when.isoformat()
    fast_import(root, commits)
    return built


def locomo_time(text: str) -> datetime:
    # "1:56 pm on 8 May, 2023"
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def build_locomo(sample: dict[str, Any], root: Path) -> Built:
    conv = sample["conversation"]
    nums = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    sessions = []
    for n in nums:
        when = locomo_time(conv[f"session_{n}_date_time"])
        turns = []
        for t in conv[f"session_{n}"]:
            text = f"{t['speaker']}: {one_line(t['text'])}"
            if t.get("blip_caption"):
                text += f" [shared {one_line(t['blip_caption'])}]"
            turns.append((t["dia_id"], text))
        sessions.append((when, when.strftime("%-I:%M %p").lower(), turns))
    return build_log_repo(root, sessions)


def evidence_ids(ev: list[str], known: dict[str, tuple[str, int]]) -> list[str]:
    ids: list[str] = []
    for e in ev:
        for m in re.finditer(r"D:?(\d+):(\d+)", e):
            tid = f"D{m.group(1)}:{m.group(2)}"
            if tid in known and tid not in ids:
                ids.append(tid)
    return ids


# -- scoring -------------------------------------------------------------------------------------

def covered(results: list[dict[str, Any]], where: tuple[str, int]) -> bool:
    path, line = where
    return any(r["path"] == path and r["lines"][0] <= line <= r["lines"][1] for r in results)


class Tally:
    """Mean recall per (setting, category)."""

    def __init__(self) -> None:
        self.sums: dict[tuple[str, Any], float] = defaultdict(float)
        self.counts: dict[tuple[str, Any], int] = defaultdict(int)

    def add(self, setting: str, cat: Any, value: float) -> None:
        for c in (cat, "1-4") if cat in (1, 2, 3, 4) else (cat,):
            self.sums[setting, c] += value
            self.counts[setting, c] += 1

    def get(self, setting: str, cat: Any) -> float:
        n = self.counts.get((setting, cat), 0)
        return self.sums[setting, cat] / n if n else float("nan")


def settings() -> list[tuple[str, Options]]:
    out = [(f"R@{k}", Options(k=k)) for k in KS]
    out += [(f"{b} tok", Options(k=10, budget=b)) for b in BUDGETS]
    return out


# -- the floor -----------------------------------------------------------------------------------

class Floor:
    """One FTS5 doc per turn, non-stopwords OR-ed, bm25: the baseline gitmem has to beat."""

    def __init__(self, built: Built) -> None:
        self.built = built
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')")
        self.ids = list(built.texts)
        self.conn.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)",
                              [(i, built.texts[tid]) for i, tid in enumerate(self.ids)])

    def search(self, question: str, limit: int) -> list[dict[str, Any]]:
        terms = [w.lower() for w in _WORD.findall(question) if w.lower() not in FLOOR_STOPWORDS]
        parts = list(dict.fromkeys(p for t in terms for p in re.split(r"['’-]", t) if p))
        if not parts:
            return []
        fts = " OR ".join('"' + p.replace('"', '""') + '"' for p in parts)
        rows = self.conn.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (fts, limit))
        out = []
        for (rowid,) in rows:
            tid = self.ids[rowid]
            path, line = self.built.lines[tid]
            # Costed like a gitmem result (kind, date, citation) so budgets compare like with like.
            out.append({"path": path, "lines": [line, line], "kind": "note", "confidence": None,
                        "timestamp": self.built.dates[tid], "content": self.built.texts[tid],
                        "source": f"{path}#L{line}@0000000"})
        return out

    def ask(self, question: str, opts: Options) -> list[dict[str, Any]]:
        if opts.budget:
            return pack(self.search(question, max(opts.k * 4, 40, opts.budget // 8)), opts.budget)
        return self.search(question, opts.k)


# -- LoCoMo --------------------------------------------------------------------------------------

def run_locomo(path: Path, cli_check: int) -> dict[str, Any]:
    data = json.loads(path.read_text())
    gm, fl = Tally(), Tally()
    counts: dict[Any, int] = defaultdict(int)
    dropped = skipped = 0
    cli_checked = cli_same = 0
    t_build = t_index = t_ask = 0.0
    sets = settings()
    for sample in data:
        t0 = time.perf_counter()
        built = build_locomo(sample, OUT / "locomo" / sample["sample_id"])
        t1 = time.perf_counter()
        ws = Workspace(built.root)
        update(ws)
        t2 = time.perf_counter()
        floor = Floor(built)
        with Session(ws, catch_up=False) as s:
            for qi, qa in enumerate(sample["qa"]):
                ids = evidence_ids(qa.get("evidence", []), built.lines)
                dropped += max(0, len(qa.get("evidence", [])) - len(ids))
                if not ids:
                    skipped += 1
                    continue
                cat = qa["category"]
                counts[cat] += 1
                where = [built.lines[t] for t in ids]
                for name, opts in sets:
                    opts.as_of = built.last
                    res = s.search(qa["question"], opts).results
                    gm.add(name, cat, sum(covered(res, w) for w in where) / len(where))
                    fres = floor.ask(qa["question"], opts)
                    fl.add(name, cat, sum(covered(fres, w) for w in where) / len(where))
                if cli_checked < cli_check and qi % 97 == 0:
                    cli_checked += 1
                    cli_same += same_via_cli(s, built, qa["question"])
        t_ask += time.perf_counter() - t2
        t_build += t1 - t0
        t_index += t2 - t1
    return {"gitmem": gm, "floor": fl, "counts": dict(counts), "skipped": skipped, "dropped": dropped,
            "cli": (cli_same, cli_checked), "times": (t_build, t_index, t_ask)}


def same_via_cli(s: Session, built: Built, question: str) -> bool:
    opts = Options(k=10, as_of=built.last)
    lib = [r["source"] for r in s.search(question, opts).results]
    proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(built.root), "recall", "--json", "-k", "10",
                           "--as-of", built.last, question], capture_output=True, text=True, check=True)
    cli = [r["source"] for r in json.loads(proc.stdout)["results"]]
    if cli != lib:
        print(f"CLI differs for {question!r}:\n  lib {lib}\n  cli {cli}", file=sys.stderr)
    return cli == lib


# -- LongMemEval ---------------------------------------------------------------------------------

def lme_time(text: str) -> datetime:
    # "2023/05/21 (Sun) 11:54"
    return datetime.strptime(re.sub(r"\s*\(\w+\)\s*", " ", text.strip()), "%Y/%m/%d %H:%M").replace(
        tzinfo=timezone.utc)


def run_lme(path: Path, limit: int) -> dict[str, Any]:
    data = json.loads(path.read_text())[:limit]
    sums: dict[tuple[str, str], float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    t0 = time.perf_counter()
    for q in data:
        order = sorted(range(len(q["haystack_sessions"])), key=lambda i: lme_time(q["haystack_dates"][i]))
        sessions = []
        answer_turns: list[str] = []
        for i in order:
            sid = q["haystack_session_ids"][i]
            turns = []
            for j, t in enumerate(q["haystack_sessions"][i]):
                tid = f"{sid}:{j}"
                turns.append((tid, f"{t['role']}: {one_line(t['content'])}"))
                if t.get("has_answer"):
                    answer_turns.append(tid)
            when = lme_time(q["haystack_dates"][i])
            sessions.append((when, when.strftime("%H:%M"), turns))
        built = build_log_repo(OUT / "lme" / q["question_id"], sessions)
        ws = Workspace(built.root)
        update(ws)
        evidence = set(q["answer_session_ids"])
        session_of = {tid: tid.rsplit(":", 1)[0] for tid in built.lines}
        asked = lme_time(q["question_date"]).isoformat()
        qtype = q["question_type"] + ("-abs" if q["question_id"].endswith("_abs") else "")
        with Session(ws, catch_up=False) as s:
            for k in (5, 10):
                res = s.search(q["question"], Options(k=k, as_of=asked)).results
                hit_sessions = {session_of[tid] for tid, w in built.lines.items() if covered(res, w)}
                vals = {
                    f"any@{k}": float(bool(hit_sessions & evidence)),
                    f"all@{k}": float(evidence <= hit_sessions),
                }
                if answer_turns:
                    vals[f"turn@{k}"] = sum(covered(res, built.lines[t]) for t in answer_turns) / len(answer_turns)
                for group in (qtype, "all"):
                    for name, v in vals.items():
                        sums[group, name] += v
                    if k == 5:
                        counts[group] += 1
                        if answer_turns:
                            counts[group, "turn"] = counts.get((group, "turn"), 0) + 1  # type: ignore[index]
    means: dict[str, dict[str, float]] = defaultdict(dict)
    for (group, name), v in sums.items():
        n = counts[(group, "turn")] if name.startswith("turn") else counts[group]  # type: ignore[index]
        means[group][name] = v / n
    return {"means": means, "counts": {g: n for g, n in counts.items() if isinstance(g, str)},
            "seconds": time.perf_counter() - t0, "questions": len(data)}


# -- report --------------------------------------------------------------------------------------

def locomo_table(r: dict[str, Any]) -> str:
    names = [n for n, _ in settings()]
    head = "| category | n | " + " | ".join(f"{n} floor / gitmem" for n in names) + " |"
    rows = [head, "|" + "---|" * (len(names) + 2)]
    n14 = sum(v for c, v in r["counts"].items() if c in (1, 2, 3, 4))
    for cat in (1, 2, 3, 4, 5, "1-4"):
        label = f"{cat} {CATS[cat]}" if cat in CATS else "**1-4**"
        n = r["counts"].get(cat, n14)
        cells = [f"{r['floor'].get(nm, cat):.3f} / {r['gitmem'].get(nm, cat):.3f}" for nm in names]
        rows.append(f"| {label} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def lme_table(r: dict[str, Any]) -> str:
    cols = ("any@5", "any@10", "all@5", "all@10", "turn@5", "turn@10")
    rows = ["| question type | n | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 2)]
    groups = sorted(g for g in r["means"] if g != "all") + ["all"]
    for g in groups:
        m = r["means"][g]
        cells = [f"{m[c]:.3f}" if c in m else "-" for c in cols]
        rows.append(f"| {g} | {r['counts'][g]} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def write_section(title: str, body: str) -> None:
    """Replace (or append) the `## title` section of bench/RESULTS.md, leaving other sections alone."""
    path = HERE / "RESULTS.md"
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    block = f"## {title}\n\n{body.strip()}\n"
    pat = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pat.search(text):
        text = pat.sub(lambda _: block + "\n", text, count=1).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + block
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--locomo", type=Path, default=LOCOMO)
    ap.add_argument("--longmemeval", type=Path, default=LME)
    ap.add_argument("--lme-limit", type=int, default=500, help="first N LongMemEval questions (default all 500)")
    ap.add_argument("--skip-lme", action="store_true")
    ap.add_argument("--cli-check", type=int, default=5, help="questions re-asked through `gitmem recall --json`")
    ap.add_argument("--write", action="store_true", help="update the Recall quality section of bench/RESULTS.md")
    ap.add_argument("--notes", type=Path, default=Path(__file__).with_name("recall_notes.md"),
                    help="Markdown file appended under the tables when writing (default: bench/recall_notes.md)")
    args = ap.parse_args(argv)

    lo = run_locomo(args.locomo, args.cli_check)
    tb, ti, ta = lo["times"]
    out = [
        "### LoCoMo evidence recall (floor = plain FTS5 per turn / gitmem)\n",
        locomo_table(lo),
        "",
        f"{sum(lo['counts'].values())} questions; {lo['skipped']} skipped (no valid evidence id), "
        f"{lo['dropped']} malformed evidence ids dropped. CLI check: {lo['cli'][0]}/{lo['cli'][1]} questions gave "
        f"identical results through `gitmem recall --json`. Build {tb:.1f}s, index {ti:.1f}s, "
        f"ask {ta:.1f}s (all settings, gitmem + floor).",
    ]
    print("\n".join(out))
    if not args.skip_lme:
        lm = run_lme(args.longmemeval, args.lme_limit)
        part = [
            "",
            f"### LongMemEval oracle ({lm['questions']} questions; session recall_any / recall_all, "
            "has_answer turn recall)\n",
            lme_table(lm),
            "",
            f"{lm['seconds']:.1f}s for build + index + ask.",
        ]
        print("\n".join(part))
        out += part
    if args.write:
        cmd = "`.venv/bin/python bench/recall.py" + (f" --lme-limit {args.lme_limit}" if args.lme_limit != 500 else "") + (
            " --skip-lme" if args.skip_lme else "") + " --write`"
        body = f"Command: {cmd}\n\n" + "\n".join(out)
        if args.notes:
            body += "\n\n" + args.notes.read_text()
        write_section("Recall quality", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
