"""What the recall benchmarks share: workspace histories written with `git fast-import`, the plain
FTS5 floor, evidence scoring, tune/report splits and the RESULTS.md section writer.

A benchmark workspace is a real gitmem workspace: daily logs `memory/YYYY-MM-DD.md` committed in
date order (one commit per session, appended to that day's log under a `## <heading>`), one list
item per turn, indexed by gitmem's own indexer.
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
import subprocess
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gm import Result, line_result, pack

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
LOCOMO = Path("/work/shared/bench/locomo/locomo10.json")
LME = Path("/work/shared/bench/longmemeval/longmemeval_oracle.json")

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


# -- splits --------------------------------------------------------------------------------------

@contextmanager
def patched(modules: dict[str, Any], settings: dict[str, Any]) -> Iterator[None]:
    """Module constants set for the block and restored after it: `settings` maps "module.NAME" to a
    value, `modules` the module names to modules (a variant of the ranking, measured in-process)."""
    saved = [(modules[key.split(".")[0]], key.split(".")[1], value) for key, value in settings.items()]
    old = [(mod, name, getattr(mod, name)) for mod, name, _ in saved]
    try:
        for mod, name, value in saved:
            setattr(mod, name, value)
        yield
    finally:
        for mod, name, value in old:
            setattr(mod, name, value)


def half(key: str) -> str:
    """"tune" or "report" for a question id: a stable hash, so every run splits the same way."""
    return "tune" if hashlib.sha1(key.encode()).digest()[0] % 2 == 0 else "report"


# -- building repositories ---------------------------------------------------------------------

@dataclass
class Built:
    root: Path
    lines: dict[str, tuple[str, int]] = field(default_factory=dict)  # turn id -> (path, line)
    texts: dict[str, str] = field(default_factory=dict)  # turn id -> list item content
    dates: dict[str, str] = field(default_factory=dict)  # turn id -> YYYY-MM-DD
    times: dict[str, str] = field(default_factory=dict)  # turn id -> ISO datetime of its commit
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


LogSession = tuple[datetime, str, list[tuple[str, str]]]  # (when, heading, [(turn id, list item text)])


def log_layout(sessions: list[LogSession], root: Path, joins: Callable[[int], bool] | None = None
               ) -> tuple[Built, list[tuple[datetime, str, dict[str, str]]]]:
    """Where every turn lands and the commits that write it, without touching the disk.
    `joins(i)`: session i goes into the commit of session i - 1 when both write the same day's log
    (bench/scale.py's filler: a day of it is one commit, so a 1M-line history is not a million
    rewrites of growing files)."""
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
            built.times[tid] = when.isoformat()
        files = {path: "\n".join(lines) + "\n"}
        if n == 1:
            files[".gitignore"] = ".memory/\n"
        if joins is not None and n > 1 and joins(n - 1) and path in commits[-1][2]:
            commits[-1] = (when, commits[-1][1], commits[-1][2] | files)
        else:
            commits.append((when, f"session {n}", files))
        built.last = when.isoformat()
    return built, commits


def build_log_repo(root: Path, sessions: list[LogSession]) -> Built:
    """sessions in commit order; a fresh repo at `root`."""
    built, commits = log_layout(sessions, root)
    fast_import(root, commits)
    return built


def cached_log_repo(root: Path, sessions: list[LogSession], key: str, joins: Callable[[int], bool] | None = None) -> Built:
    """build_log_repo, skipped when `root` already holds the history for `key` (a digest of what
    generated it): the layout is recomputed (cheap), git is only run for new or changed inputs."""
    built, commits = log_layout(sessions, root, joins)
    stamp = root / ".git" / "bench-key"
    if not (stamp.exists() and stamp.read_text() == key):
        fast_import(root, commits)
        stamp.write_text(key)
    return built


def lme_time(text: str) -> datetime:
    # "2023/05/21 (Sun) 11:54"
    return datetime.strptime(re.sub(r"\s*\(\w+\)\s*", " ", text.strip()), "%Y/%m/%d %H:%M").replace(
        tzinfo=timezone.utc)


# -- scoring -------------------------------------------------------------------------------------

def covered(results: list[Result], where: tuple[str, int]) -> bool:
    path, line = where
    return any(r.path == path and r.lines[0] <= line <= r.lines[1] for r in results)


def rank_of(results: list[Result], where: tuple[str, int]) -> int | None:
    """0-based rank of the first result whose lines hold `where`, None if none does."""
    path, line = where
    for i, r in enumerate(results):
        if r.path == path and r.lines[0] <= line <= r.lines[1]:
            return i
    return None


class Tally:
    """Mean of values per (setting, group); a group of several labels counts in each."""

    def __init__(self) -> None:
        self.sums: dict[tuple[str, Any], float] = defaultdict(float)
        self.counts: dict[tuple[str, Any], int] = defaultdict(int)

    def add(self, setting: str, groups: Iterable[Any], value: float) -> None:
        for g in groups:
            self.sums[setting, g] += value
            self.counts[setting, g] += 1

    def get(self, setting: str, group: Any) -> float:
        n = self.counts.get((setting, group), 0)
        return self.sums[setting, group] / n if n else float("nan")

    def n(self, setting: str, group: Any) -> int:
        return self.counts.get((setting, group), 0)


def fmt(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.3f}"


def question_stems(question: str) -> list[str]:
    """The question's content words as crude prefix stems ("painting" -> "paint"), as gitmem's
    term coverage tests them: to tell a result that matches none of them (it rode in on a
    neighbour's score) from one that matches."""
    terms = [w.lower() for w in _WORD.findall(question) if w.lower() not in FLOOR_STOPWORDS]
    return [t[: max(4, len(t) - 3)] if len(t) > 4 else t for t in dict.fromkeys(terms) if len(t) > 1]


def matches_none(text: str, stems: list[str]) -> bool:
    low = text.lower()
    return not any(re.search(r"(?<![^\W_])" + re.escape(s), low) for s in stems)


# -- the floor -----------------------------------------------------------------------------------

class Floor:
    """One FTS5 doc per turn, non-stopwords OR-ed, bm25: the baseline gitmem has to beat.
    `visible(turn id)` limits it to what was in memory at the time asked (as `--as-of` does);
    with `dated`, one table serves every time asked instead: `ask(..., upto=day)` sees the turns
    of that day and before (bench/scale.py: hundreds of days asked of one 100k+ line memory; bm25's
    term weights then count the later turns too)."""

    def __init__(self, built: Built, visible: Callable[[str], bool] | None = None, dated: bool = False) -> None:
        self.built = built
        self.conn = sqlite3.connect(":memory:")
        # An UNINDEXED column holds no terms, so bm25 scores the body exactly as without it.
        cols = "body, day UNINDEXED" if dated else "body"
        self.conn.execute(f"CREATE VIRTUAL TABLE t USING fts5({cols}, tokenize='porter unicode61 remove_diacritics 2')")
        self.ids = [tid for tid in built.texts if visible is None or visible(tid)]
        if dated:
            self.conn.executemany("INSERT INTO t(rowid, body, day) VALUES (?, ?, ?)",
                                  [(i, built.texts[tid], built.dates[tid]) for i, tid in enumerate(self.ids)])
        else:
            self.conn.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)",
                                  [(i, built.texts[tid]) for i, tid in enumerate(self.ids)])

    def search(self, question: str, limit: int, upto: str | None = None) -> list[Result]:
        terms = [w.lower() for w in _WORD.findall(question) if w.lower() not in FLOOR_STOPWORDS]
        parts = list(dict.fromkeys(p for t in terms for p in re.split(r"['’-]", t) if p))
        if not parts:
            return []
        fts = " OR ".join('"' + p.replace('"', '""') + '"' for p in parts)
        when = "" if upto is None else " AND day <= ?"
        rows = self.conn.execute(f"SELECT rowid FROM t WHERE t MATCH ?{when} ORDER BY bm25(t) LIMIT ?",
                                 (fts, *(() if upto is None else (upto,)), limit))
        out = []
        for (rowid,) in rows:
            tid = self.ids[rowid]
            path, line = self.built.lines[tid]
            # Costed like a gitmem result (kind, date, citation) so budgets compare like with like.
            out.append(line_result(path, line, self.built.dates[tid], self.built.texts[tid]))
        return out

    @staticmethod
    def depth(budget: int, k: int = 10) -> int:
        """How many bm25 rows a budget's answer is packed from."""
        return max(k * 4, 40, budget // 8)

    def ask(self, question: str, *, k: int = 10, budget: int = 0, upto: str | None = None) -> list[Result]:
        if budget:
            return pack(self.search(question, self.depth(budget, k), upto), budget)
        return self.search(question, k, upto)

    def close(self) -> None:
        self.conn.close()


# -- report --------------------------------------------------------------------------------------

def publish(lines: list[str], title: str, command: str, write: bool) -> None:
    """Print a bench's report and, with `--write`, make it the `## title` section of
    bench/RESULTS.md under the command that reproduces it."""
    text = "\n".join(lines)
    print(text)
    if write:
        write_section(title, f"Command: `{command}`\n\n{text}")


def write_section(title: str, body: str, path: Path = HERE / "RESULTS.md") -> None:
    """Replace (or append) the `## title` section of bench/RESULTS.md, leaving other sections alone."""
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    block = f"## {title}\n\n{body.strip()}\n"
    pat = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pat.search(text):
        text = pat.sub(lambda _: block + "\n", text, count=1).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + block
    path.write_text(text)
