"""Current-truth suite (issue 13): does recall's top entity fact state what is true *now*?

    .venv/bin/python bench/current_truth.py [--half tune|heldout|heldout2..heldout20|probe|all] [--write]
    .venv/bin/python bench/current_truth.py --semantic --half all   # lexical and hybrid side by side
    .venv/bin/python bench/current_truth.py --learned --half all    # lexical rules and the learned model side by side
    .venv/bin/python bench/current_truth.py --semantic --guarded --half all  # the guarded model (ships on) on beside off

With `--learned` (wave 10) every question is also asked with recall/learned.py's pair model in place of
newer_first's rules (lexical; the shipped weights, trained on every set in bench/ by
bench/truth_learn.py): a blind set run this way measures rules and model on one set neither saw.
Since wave 11 also "guarded": the rules first, then the model where none of their trap guards
refuses the newer line (recall/learned.py, MODE "after").

With `--semantic` (wave 9) each set's workspace is also embedded as a user would with `gitmem index
--vectors` (gitmem.recall.semantic.fill_vectors: the bundled MiniLM, every chunk version) and every
question is asked twice in one run: lexical recall (as without the flag) and hybrid recall
(`semantic=True`, an in-process dense source: what `gitmem mcp` runs), both beside the floor.

Five sets: the tune half (bench/current_truth.json, 19 questions: the rule's word lists were
written looking at it), the first held-out half (bench/current_truth_heldout.json, 26 questions
and 49 must-not-supersede facts: written before the rule was run on it, frozen in commit 9b14dd1;
its kinds keep-attribute / keep-similar / keep-event hold only the pairs; looked at since wave 3,
so tuning data now too), the blind held-out set (bench/current_truth_heldout2.json, written
by another engineer on branch w5/sets without seeing the rule, brought in after the rule was
final: issue 13 wave 5; run since, so tuning data too), the second blind set
(bench/current_truth_heldout3.json, written on branch w6/sets3 the same way and first run by the lead
on wave 6's merged rule), the third blind set (bench/current_truth_heldout4.json, written on branch
w7/sets4 the same way and first run by the lead on wave 7's merged rule), the fourth blind set
(bench/current_truth_heldout5.json, written on branch w8/sets5 the same way and first run by the lead
on wave 8's merged rule), the fifth blind set (bench/current_truth_heldout6.json, written on branch
w9/sets6 the same way and first run by the lead on wave 9's merged rule), the sixth blind set
(bench/current_truth_heldout7.json, written on branch w10/sets7 the same way and first run by the lead
on wave 10's merged code), the seventh blind set (bench/current_truth_heldout8.json, written on branch
w11/sets8 the same way and first run by the lead on wave 11's start and merged code), the eighth blind set
(bench/current_truth_heldout9.json, written on branch w12/sets9 the same way and first run by the lead
on wave 12's start and merged code), the ninth blind set (bench/current_truth_heldout10.json, written on
branch w13/sets10 the same way and first run by the lead on wave 13's start and merged code), the tenth blind set
(bench/current_truth_heldout11.json, written on branch w14/sets11 the same way and first run by the lead on
wave 14's start and merged code), the eleventh blind set (bench/current_truth_heldout12.json, written on branch
w15/sets12 the same way and first run by the lead on wave 15's start and merged code), the twelfth blind set
(bench/current_truth_heldout13.json, written on branch w16/sets13 the same way and first run by the lead on
wave 16's start and merged code), the thirteenth blind set
(bench/current_truth_heldout14.json, written on branch w17/sets14 the same way and first run by the lead on
wave 17's start and merged code), the fourteenth blind set
(bench/current_truth_heldout15.json, written on branch w18/sets15 the same way and first run by the lead on
wave 18's start and merged code), the fifteenth blind set
(bench/current_truth_heldout16.json, written on branch w19/sets16 the same way and first run by the lead on
wave 19's start and merged code), the sixteenth blind set
(bench/current_truth_heldout17.json, written on branch w20/sets17 the same way and first run by the lead on
wave 20's start and merged code), the seventeenth blind set
(bench/current_truth_heldout18.json, written on branch w21/sets18 the same way and first run by the lead on
wave 21's start and merged code), the eighteenth and nineteenth blind sets
(bench/current_truth_heldout19.json and bench/current_truth_heldout20.json, written on branches w22/sets19
and w22/sets20 the same way and first run by the lead on wave 22's start and merged code), and the probe set
(bench/current_truth_probe.json: changes in new wordings and traps where the older statement stays
the answer, written by wave 6's rule author before each batch's first run, and batch 4, `p4-` /
`p4t-`, by wave 7's: not blind). Each set is
its own workspace; all are reported side by side (a set whose file is missing is skipped).

Scenarios (bench/current_truth.json, loaded by `load()`; tests can build the same histories with
`build()`): moves (across logs, and an in-place memory.md edit as a control), job changes, a
renamed project, a reversed opinion (with another person's similar opinion that must survive),
expired "currently" facts (with and without an event window), facts copied into bank pages, a
count update, a postponed date, a new team lead, a diet change, a car change and a phone number
changed in a log while memory.md still holds the old one.

History: one commit per entry, in date order (09:00 UTC plus a minute per entry of that day):
`retain` bullets are appended under that day's log's `## Retain` (`note` lines above it, as the
demo writes logs); `path` + `text` writes that scenario's block of a shared file (memory.md,
bank/world.md: blocks in scenario order) or a whole page. All scenarios share one workspace (as
a real memory would); a scenario can also be built alone.

Metrics (gitmem in-process, as of each question's `as_of`, k=10):
- **top-1 current**: share of questions whose first result mentioning the question's entity (the
  first result at all when the question names none) contains the `current` substring;
- **stale above current**: share of questions where a result holding a `stale` substring ranks
  above the first result holding the current one;
- **copies in top 5**: share of questions whose top 5 hold the same fact twice (two results whose
  normalised texts — citation, list marker, kind and @ removed, lowercased words — are equal or
  one contains the other, 20+ characters);
- **false supersession**: share of `keep` facts (true at their `as_of`) that recall marks
  superseded (`status == "superseded"` or a `superseded_by` link on a current-truth answer) or
  does not return at all when asked by their own words. Before supersession exists this is 0
  by construction; the column is there so the supersession work is measured against it.
The floor is plain FTS5 per list item, as in the other benches (no entity filter, bm25 only).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benchlib import OUT, Built, Floor, fast_import, publish  # noqa: E402
from gm import Asker, Result, entity_key, index  # noqa: E402

DATA = HERE / "current_truth.json"
HELDOUT = HERE / "current_truth_heldout.json"
HELDOUT2 = HERE / "current_truth_heldout2.json"
HELDOUT3 = HERE / "current_truth_heldout3.json"
HELDOUT4 = HERE / "current_truth_heldout4.json"
HELDOUT5 = HERE / "current_truth_heldout5.json"
HELDOUT6 = HERE / "current_truth_heldout6.json"
HELDOUT7 = HERE / "current_truth_heldout7.json"
HELDOUT8 = HERE / "current_truth_heldout8.json"
HELDOUT9 = HERE / "current_truth_heldout9.json"
HELDOUT10 = HERE / "current_truth_heldout10.json"
HELDOUT11 = HERE / "current_truth_heldout11.json"
HELDOUT12 = HERE / "current_truth_heldout12.json"
HELDOUT13 = HERE / "current_truth_heldout13.json"
HELDOUT14 = HERE / "current_truth_heldout14.json"
HELDOUT15 = HERE / "current_truth_heldout15.json"
HELDOUT16 = HERE / "current_truth_heldout16.json"
HELDOUT17 = HERE / "current_truth_heldout17.json"
HELDOUT18 = HERE / "current_truth_heldout18.json"
HELDOUT19 = HERE / "current_truth_heldout19.json"
HELDOUT20 = HERE / "current_truth_heldout20.json"
PROBE = HERE / "current_truth_probe.json"
HALVES = {"tune": DATA, "heldout": HELDOUT, "heldout2": HELDOUT2, "heldout3": HELDOUT3, "heldout4": HELDOUT4,
          "heldout5": HELDOUT5, "heldout6": HELDOUT6, "heldout7": HELDOUT7, "heldout8": HELDOUT8, "heldout9": HELDOUT9,
          "heldout10": HELDOUT10, "heldout11": HELDOUT11, "heldout12": HELDOUT12, "heldout13": HELDOUT13,
          "heldout14": HELDOUT14, "heldout15": HELDOUT15, "heldout16": HELDOUT16, "heldout17": HELDOUT17,
          "heldout18": HELDOUT18, "heldout19": HELDOUT19, "heldout20": HELDOUT20, "probe": PROBE}
K = 10


@dataclass(frozen=True)
class Entry:
    day: str
    retain: tuple[str, ...] = ()
    note: str = ""
    path: str = ""  # with text: write this scenario's block of `path`
    text: str = ""


@dataclass(frozen=True)
class Question:
    q: str
    entity: str  # "" when the question names no entity
    as_of: str
    current: str  # a substring of the current fact
    stale: tuple[str, ...] = ()  # substrings of the outdated facts


@dataclass(frozen=True)
class Keep:
    text: str  # a substring of a fact that is still true at as_of
    as_of: str


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str
    entries: tuple[Entry, ...]
    questions: tuple[Question, ...]
    keep: tuple[Keep, ...] = ()


def load(path: Path = DATA) -> list[Scenario]:
    raw = json.loads(path.read_text())["scenarios"]
    return [Scenario(s["name"], s["kind"],
                     tuple(Entry(e["day"], tuple(e.get("retain", ())), e.get("note", ""), e.get("path", ""),
                                 e.get("text", "")) for e in s["entries"]),
                     tuple(Question(q["q"], q["entity"], q["as_of"], q["current"], tuple(q.get("stale", ())))
                           for q in s["questions"]),
                     tuple(Keep(k["text"], k["as_of"]) for k in s.get("keep", ())))
            for s in raw]


def history(scenarios: list[Scenario]) -> list[tuple[datetime, str, dict[str, str]]]:
    """The commits (when, message, files) that write the scenarios, in date order."""
    order = sorted(((e.day, si, ei) for si, s in enumerate(scenarios) for ei, e in enumerate(s.entries)))
    logs: dict[str, tuple[list[str], list[str]]] = {}  # day -> (note lines, retain bullets)
    blocks: dict[str, dict[int, str]] = {}  # shared file -> scenario index -> its block
    commits: list[tuple[datetime, str, dict[str, str]]] = []
    minute: dict[str, int] = {}
    for day, si, ei in order:
        e = scenarios[si].entries[ei]
        files: dict[str, str] = {}
        if e.retain or e.note:
            notes, bullets = logs.setdefault(day, ([], []))
            if e.note:
                notes.append(e.note)
            bullets += e.retain
            body = f"# {day}\n\n" + ("\n\n".join(notes) + "\n\n" if notes else "")
            files[f"memory/{day}.md"] = body + "## Retain\n" + "".join(f"- {b}\n" for b in bullets)
        if e.path:
            if e.path.startswith("bank/entities/"):
                files[e.path] = e.text.rstrip("\n") + "\n"
            else:
                own = blocks.setdefault(e.path, {})
                own[si] = e.text.rstrip("\n")
                title = "# Memory" if e.path == "memory.md" else f"# {Path(e.path).stem.title()}"
                files[e.path] = title + "\n\n" + "\n\n".join(own[i] for i in sorted(own)) + "\n"
        if not commits:
            files[".gitignore"] = ".memory/\n"
        minute[day] = minute.get(day, 0) + 1
        when = datetime.fromisoformat(day).replace(hour=9, tzinfo=timezone.utc) + timedelta(minutes=minute[day])
        commits.append((when, f"{scenarios[si].name}: {day}", files))
    return commits


def build(scenarios: list[Scenario], root: Path) -> Path:
    """A fresh workspace at `root` holding the scenarios' history, indexed."""
    fast_import(root, history(scenarios))
    index(root)
    return root


# -- scoring -------------------------------------------------------------------------------------

_CITE = re.compile(r"\s*\([^()]*#L\d+[^()]*\)\s*$")
# A list marker, a timeline date ("2025-03-01:", "2025-03-01 – 2025-03-05:") and a kind letter
# ("W", "O(c=0.8)") before an @mention or a colon.
_PREFIX = re.compile(r"^\s*(?:-\s*)?(?:\d{4}-\d{2}-\d{2}(?:\s*–\s*\d{4}-\d{2}-\d{2})?:\s*)?"
                     r"(?:[WBSO](?:\(c=[\d.]+\))?\s*(?=[@:]))?:?")


def normalised(text: str) -> str:
    """A fact's words without its citation, list marker, timeline date, kind letter and @ signs,
    lowercased: a log bullet and its copies in bank pages come out alike."""
    t = _PREFIX.sub("", _CITE.sub("", text))
    return " ".join(re.findall(r"\w+", t.replace("@", "").lower()))


def has_copies(results: list[Result]) -> bool:
    texts = [normalised(r.content) for r in results]
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            short, long_ = sorted((a, b), key=len)
            if len(short) >= 20 and short in long_:
                return True
    return False


def first_with(results: list[Result], needle: str) -> int | None:
    n = needle.lower()
    return next((i for i, r in enumerate(results) if n in r.content.lower()), None)


def top_entity_fact(results: list[Result], entity: str) -> Result | None:
    if entity:
        key = entity_key(entity)
        for r in results:
            if key in r.entities:
                return r
    return results[0] if results else None


def marked_superseded(r: Result) -> bool:
    return r.status == "superseded" or r.superseded_by is not None


@dataclass
class Outcome:
    question: Question
    scenario: str
    kind: str
    top: str  # the top entity fact's text ("" if none)
    top1_current: bool
    stale_above: bool
    copies: bool


@dataclass
class Report:
    gitmem: list[Outcome] = field(default_factory=list)
    floor: list[Outcome] = field(default_factory=list)
    keep_total: int = 0
    keep_false: list[str] = field(default_factory=list)
    keep_kinds: dict[str, list[bool]] = field(default_factory=dict)  # kind -> falsely superseded?
    mode: str = "lexical"  # how gitmem was asked: "lexical", "hybrid" (--semantic), "learned" or "guarded" (--learned)


def judge(q: Question, scenario: Scenario, results: list[Result]) -> Outcome:
    top = top_entity_fact(results, q.entity)
    cur = first_with(results, q.current)
    stale = [i for s in q.stale if (i := first_with(results, s)) is not None]
    text = top.content if top else ""
    return Outcome(q, scenario.name, scenario.kind, text, bool(text) and q.current.lower() in text.lower(),
                   bool(stale) and (cur is None or min(stale) < cur), has_copies(results[:5]))


def floor_built(root: Path, as_of: str) -> Built:
    """The list items visible at `as_of` (files as they stood at that commit), for the floor."""
    import subprocess

    rev = subprocess.run(["git", "-C", str(root), "rev-list", "-1", f"--before={as_of}T23:59:59Z", "main"],
                         capture_output=True, text=True, check=True).stdout.strip()
    built = Built(root)
    names = subprocess.run(["git", "-C", str(root), "ls-tree", "-r", "--name-only", rev],
                           capture_output=True, text=True, check=True).stdout.split()
    for path in names:
        if not path.endswith(".md"):
            continue
        text = subprocess.run(["git", "-C", str(root), "show", f"{rev}:{path}"],
                              capture_output=True, text=True, check=True).stdout
        for n, line in enumerate(text.split("\n"), 1):
            if line.startswith("- "):
                tid = f"{path}:{n}"
                built.lines[tid] = (path, n)
                built.texts[tid] = line[2:]
                built.dates[tid] = path[7:17] if path.startswith("memory/") else as_of
    return built


def evaluate(scenarios: list[Scenario], root: Path, dense: Any = None) -> Report:
    """Every question asked of gitmem and of the floor. With `dense` (semantic.InProcess), gitmem
    is asked with hybrid recall over the workspace's vectors (see `embed`)."""
    rep = Report(mode="lexical" if dense is None else "hybrid")
    hybrid = dense is not None
    with Asker(root, dense=dense) as asker:
        for s in scenarios:
            for q in s.questions:
                rep.gitmem.append(judge(q, s, asker.ask(q.q, as_of=q.as_of, k=K, semantic=hybrid)))
                floor = Floor(floor_built(root, q.as_of))
                rep.floor.append(judge(q, s, floor.ask(q.q, k=K)))
                floor.close()
            for kp in s.keep:
                rep.keep_total += 1
                res = asker.ask(kp.text, as_of=kp.as_of, k=K, semantic=hybrid)
                hit = next((r for r in res if kp.text.lower() in r.content.lower()), None)
                wrong = hit is None or marked_superseded(hit)
                rep.keep_kinds.setdefault(s.kind, []).append(wrong)
                if wrong:
                    rep.keep_false.append(f"{s.name}: {kp.text}")
    return rep


def embed(root: Path) -> int:
    """Give every chunk version of the workspace's index a vector, as `gitmem index --vectors`
    does (the bundled model); returns how many distinct texts were embedded."""
    from gitmem.recall.semantic import fill_vectors
    from gitmem.workspace import Workspace

    return fill_vectors(Workspace(root)).embedded


def share(xs: list[bool]) -> str:
    return f"{sum(xs)}/{len(xs)} = {sum(xs) / len(xs):.3f}" if xs else "-"


def table(rep: Report) -> str:
    kinds = sorted({o.kind for o in rep.gitmem})
    rows = [("| kind | questions | top-1 current floor / gitmem | stale above current floor / gitmem "
             "| copies in top 5 floor / gitmem |"), "|---|---|---|---|---|"]
    for kind in [*kinds, "all"]:
        g = [o for o in rep.gitmem if kind in (o.kind, "all")]
        f = [o for o in rep.floor if kind in (o.kind, "all")]
        label = "**all**" if kind == "all" else kind
        rows.append(f"| {label} | {len(g)} | {share([o.top1_current for o in f])} / {share([o.top1_current for o in g])} "
                    f"| {share([o.stale_above for o in f])} / {share([o.stale_above for o in g])} "
                    f"| {share([o.copies for o in f])} / {share([o.copies for o in g])} |")
    return "\n".join(rows)


def report(half: str, scenarios: list[Scenario], rep: Report) -> list[str]:
    keep = ", ".join(f"{k} {share(v)}" for k, v in sorted(rep.keep_kinds.items()))
    mode = "" if rep.mode == "lexical" else f", {rep.mode} recall"
    out = [f"### {half} half ({HALVES[half].name}: {len(scenarios)} scenarios, {len(rep.gitmem)} questions{mode})",
           "", table(rep), "",
           (f"False supersession (gitmem): {len(rep.keep_false)}/{rep.keep_total} kept facts marked superseded or "
            f"not returned{': ' + '; '.join(rep.keep_false) if rep.keep_false else ''}. By kind: {keep}. "
            f"As of each question's date, k={K}.")]
    misses = [o for o in rep.gitmem if not o.top1_current]
    if misses:
        out += ["", "gitmem's top entity fact where it is not the current one:", ""]
        out += [f"- {o.scenario}: {o.question.q!r} (as of {o.question.as_of}) -> {o.top!r}" for o in misses]
    return out + [""]


def side_by_side(rows: list[tuple[str, list[Report]]]) -> list[str]:
    """One line per set: top-1 current and false supersession of the floor and of each way gitmem
    was asked (lexical first; hybrid with --semantic, the learned pair model with --learned: asked
    in one run), and the questions on which another way disagrees with lexical."""
    modes = [r.mode for r in rows[0][1]]
    out = ["| set | questions | plain FTS5 | " + " | ".join(modes) + " | false supersession "
           + " / ".join(modes) + " |", "|---|---:|---:|" + "---:|" * len(modes) + "---:|"]
    diff: list[str] = []
    for half, reps in rows:
        def top1(outs: list[Outcome]) -> str:
            return f"{sum(o.top1_current for o in outs)}/{len(outs)}"

        lex = reps[0]
        out.append(f"| {half} | {len(lex.gitmem)} | {top1(lex.floor)} | "
                   + " | ".join(top1(r.gitmem) for r in reps) + " | "
                   + " / ".join(f"{len(r.keep_false)}/{r.keep_total}" for r in reps) + " |")
        for other in reps[1:]:
            for a, b in zip(lex.gitmem, other.gitmem):
                if a.top1_current != b.top1_current:
                    sign = "+" if b.top1_current else "-"
                    diff.append(f"- {sign} {other.mode} {half} {a.scenario}: {a.question.q!r} lexical {a.top!r} / "
                                f"{other.mode} {b.top!r}")
    return out + ([""] + diff if diff else []) + [""]


def learned_mode(scenarios: list[Scenario], root: Path, mode: str = "replace", dense: Any = None) -> Report:
    """Every question asked with recall/learned.py's pair model in place of newer_first's rules
    (`mode` "replace", reported as "learned") or after them, past their trap guards ("after",
    reported as "guarded"); with `dense`, hybrid recall ("guarded-hybrid")."""
    from gitmem.recall import learned

    saved = learned.MODE
    learned.MODE = mode
    try:
        rep = evaluate(scenarios, root, dense)
    finally:
        learned.MODE = saved
    rep.mode = ("learned" if mode == "replace" else "guarded") + ("-hybrid" if dense is not None else "")
    return rep


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="update the Current truth section of bench/RESULTS.md")
    ap.add_argument("--half", choices=[*HALVES, "all", "both"], default="all",
                    help="which set to run (default all; both = tune and heldout)")
    ap.add_argument("--semantic", action="store_true",
                    help="also embed each workspace and ask with hybrid recall; both modes side by side")
    ap.add_argument("--guarded", action="store_true",
                    help="also ask with the learned pair model after the rules past their trap guards (MODE "
                         "\"after\"), lexical and, with --semantic, hybrid: the model on beside off in one run")
    ap.add_argument("--learned", action="store_true",
                    help="also ask with the learned pair model (recall/learned.py) in place of the rules and "
                         "after them past their trap guards, side by side")
    args = ap.parse_args(argv)
    out: list[str] = []
    rows: list[tuple[str, list[Report]]] = []
    embedder = None
    if args.semantic:
        from gitmem.recall.semantic import InProcess, load_embedder

        embedder = load_embedder()  # one model for every set
    if args.guarded:  # the plain columns are the model off, whatever recall ships
        from gitmem.recall import learned

        learned.MODE = "off"
    halves = {"all": list(HALVES), "both": ["tune", "heldout"]}.get(args.half, [args.half])
    for half in halves:
        if not HALVES[half].exists():
            print(f"{HALVES[half].name}: not in this checkout, skipped", file=sys.stderr)
            continue
        scenarios = load(HALVES[half])
        root = build(scenarios, OUT / ("current-truth" if half == "tune" else f"current-truth-{half}"))
        lexical = evaluate(scenarios, root)
        out += report(half, scenarios, lexical)
        modes = [lexical]
        if embedder is not None:
            embed(root)
            # A fresh in-process source per workspace: its vectors are those of this index.
            hybrid = evaluate(scenarios, root, InProcess(embedder))
            out += report(half, scenarios, hybrid)
            modes.append(hybrid)
        if args.guarded:
            modes.append(learned_mode(scenarios, root, "after"))
            out += report(half, scenarios, modes[-1])
            if embedder is not None:
                modes.append(learned_mode(scenarios, root, "after", InProcess(embedder)))
                out += report(half, scenarios, modes[-1])
        if args.learned:
            for mode in ("replace", "after"):
                learned = learned_mode(scenarios, root, mode)
                out += report(half, scenarios, learned)
                modes.append(learned)
        if len(modes) > 1:
            rows.append((half, modes))
    if rows:
        out = ["Top-1 current, side by side (one run):", "", *side_by_side(rows), *out]
    publish(out, "Recall: current truth", ".venv/bin/python bench/current_truth.py --write", args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
