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
- split (issue 16): conversations 0-4 are the tune half, 5-9 the validation half; both halves are
  reported, and all ten together for continuity with earlier figures. A ranking change is judged on
  the validation half (and the haystack bench, bench/haystack.py), never on the half it was tuned on.
- the floor: one plain SQLite FTS5 doc per turn (same text, porter tokenizer), the question's
  non-stopwords (the stopword list gitmem shipped with, frozen in bench/benchlib.py) quoted and OR-ed, bm25, top k;
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
import subprocess
import sys
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benchlib import (  # noqa: E402
    LME,
    LOCOMO,
    OUT,
    Built,
    Floor,
    LogSession,
    Tally,
    build_log_repo,
    covered,
    fmt,
    lme_time,
    one_line,
    write_section,
)
from gm import Asker, index  # noqa: E402

KS = (5, 10, 25)
BUDGETS = (500, 1000, 2000)
CATS = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
# LoCoMo's split (issue 16): ranking changes are tuned on conversations 0-4 and judged on 5-9.
HALVES = {"tune": range(5), "validate": range(5, 10)}


def locomo_time(text: str) -> datetime:
    # "1:56 pm on 8 May, 2023"
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def build_locomo(sample: dict[str, Any], root: Path) -> Built:
    return build_log_repo(root, locomo_sessions(sample))


def locomo_sessions(sample: dict[str, Any]) -> list[LogSession]:
    """A LoCoMo conversation as log sessions: (when, heading, [(dia_id, "Speaker: text")])."""
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
    return sessions


def evidence_ids(ev: list[str], known: dict[str, tuple[str, int]]) -> list[str]:
    ids: list[str] = []
    for e in ev:
        for m in re.finditer(r"D:?(\d+):(\d+)", e):
            tid = f"D{m.group(1)}:{m.group(2)}"
            if tid in known and tid not in ids:
                ids.append(tid)
    return ids


# -- LoCoMo --------------------------------------------------------------------------------------

Setting = tuple[str, int, int]  # (column name, k, budget)


def settings() -> list[Setting]:
    return [(f"R@{k}", k, 0) for k in KS] + [(f"{b} tok", 10, b) for b in BUDGETS]


def run_locomo(path: Path, cli_check: int) -> dict[str, Any]:
    """Evidence recall per (half, category) and over all ten conversations, gitmem and floor."""
    data = json.loads(path.read_text())
    gm, fl = Tally(), Tally()
    dropped = skipped = 0
    cli_checked = cli_same = 0
    t_build = t_index = t_ask = 0.0
    sets = settings()
    for ci, sample in enumerate(data):
        part = next(h for h, r in HALVES.items() if ci in r)
        t0 = time.perf_counter()
        built = build_locomo(sample, OUT / "locomo" / sample["sample_id"])
        t1 = time.perf_counter()
        index(built.root)
        t2 = time.perf_counter()
        floor = Floor(built)
        with Asker(built.root) as asker:
            for qi, qa in enumerate(sample["qa"]):
                ids = evidence_ids(qa.get("evidence", []), built.lines)
                dropped += max(0, len(qa.get("evidence", [])) - len(ids))
                if not ids:
                    skipped += 1
                    continue
                cat = qa["category"]
                groups = [(h, c) for h in (part, "all") for c in ((cat, "1-4") if cat in (1, 2, 3, 4) else (cat,))]
                where = [built.lines[t] for t in ids]
                for name, k, budget in sets:
                    res = asker.ask(qa["question"], as_of=built.last, k=k, budget=budget)
                    gm.add(name, groups, sum(covered(res, w) for w in where) / len(where))
                    fres = floor.ask(qa["question"], k=k, budget=budget)
                    fl.add(name, groups, sum(covered(fres, w) for w in where) / len(where))
                if cli_checked < cli_check and qi % 97 == 0:
                    cli_checked += 1
                    cli_same += same_via_cli(asker, built, qa["question"])
        floor.close()
        t_ask += time.perf_counter() - t2
        t_build += t1 - t0
        t_index += t2 - t1
    return {"gitmem": gm, "floor": fl, "skipped": skipped, "dropped": dropped,
            "cli": (cli_same, cli_checked), "times": (t_build, t_index, t_ask)}


def same_via_cli(asker: Asker, built: Built, question: str) -> bool:
    lib = [r.source for r in asker.ask(question, as_of=built.last, k=10)]
    proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(built.root), "recall", "--json", "-k", "10",
                           "--as-of", built.last, question], capture_output=True, text=True, check=True)
    cli = [r["source"] for r in json.loads(proc.stdout)["results"]]
    if cli != lib:
        print(f"CLI differs for {question!r}:\n  lib {lib}\n  cli {cli}", file=sys.stderr)
    return cli == lib


# -- LongMemEval oracle --------------------------------------------------------------------------

def run_lme(path: Path, limit: int) -> dict[str, Any]:
    data = json.loads(path.read_text())[:limit]
    sums: dict[tuple[str, str], float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    turn_counts: dict[str, int] = defaultdict(int)
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
        index(built.root)
        evidence = set(q["answer_session_ids"])
        session_of = {tid: tid.rsplit(":", 1)[0] for tid in built.lines}
        asked = lme_time(q["question_date"]).isoformat()
        qtype = q["question_type"] + ("-abs" if q["question_id"].endswith("_abs") else "")
        with Asker(built.root) as asker:
            for k in (5, 10):
                res = asker.ask(q["question"], as_of=asked, k=k)
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
                        turn_counts[group] += bool(answer_turns)
    means: dict[str, dict[str, float]] = defaultdict(dict)
    for (group, name), v in sums.items():
        means[group][name] = v / (turn_counts[group] if name.startswith("turn") else counts[group])
    return {"means": means, "counts": dict(counts), "seconds": time.perf_counter() - t0, "questions": len(data)}


# -- report --------------------------------------------------------------------------------------

def locomo_table(r: dict[str, Any], part: str) -> str:
    names = [n for n, _, _ in settings()]
    head = "| category | n | " + " | ".join(f"{n} floor / gitmem" for n in names) + " |"
    rows = [head, "|" + "---|" * (len(names) + 2)]
    for cat in (1, 2, 3, 4, 5, "1-4"):
        label = f"{cat} {CATS[cat]}" if cat in CATS else "**1-4**"
        g = (part, cat)
        cells = [f"{fmt(r['floor'].get(nm, g))} / {fmt(r['gitmem'].get(nm, g))}" for nm in names]
        rows.append(f"| {label} | {r['gitmem'].n(names[0], g)} | " + " | ".join(cells) + " |")
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
    out = []
    for part, title in (("tune", "tune half: conversations 0-4"), ("validate", "validation half: conversations 5-9"),
                        ("all", "all ten conversations")):
        out += [f"### LoCoMo evidence recall, {title} (floor = plain FTS5 per turn / gitmem)\n",
                locomo_table(lo, part), ""]
    n = lo["gitmem"].n("R@5", ("all", "1-4")) + lo["gitmem"].n("R@5", ("all", 5))
    out.append(
        f"{n} questions; {lo['skipped']} skipped (no valid evidence id), "
        f"{lo['dropped']} malformed evidence ids dropped. CLI check: {lo['cli'][0]}/{lo['cli'][1]} questions gave "
        f"identical results through `gitmem recall --json`. Build {tb:.1f}s, index {ti:.1f}s, "
        f"ask {ta:.1f}s (all settings, gitmem + floor).")
    print("\n".join(out))
    if not args.skip_lme:
        lm = run_lme(args.longmemeval, args.lme_limit)
        part_ = [
            "",
            (f"### LongMemEval oracle ({lm['questions']} questions; session recall_any / recall_all, "
             "has_answer turn recall)\n"),
            lme_table(lm),
            "",
            f"{lm['seconds']:.1f}s for build + index + ask.",
        ]
        print("\n".join(part_))
        out += part_
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
