"""Generate a synthetic, deterministic memory-workspace history with `git fast-import`.

    python bench/gen_history.py OUT --commits 10000 [--days N] [--seed 1]

The repository looks like years of an assistant's use: one daily log per day
(`memory/YYYY-MM-DD.md`, 20-60 lines, a narrative part and a `## Retain` section of W/B/O/S bullets
with @entities and dates), written by several commits per day that append to it; now and then a
Retain bullet is edited or deleted (a supersession), an older log gets a correction, `memory.md` or
a `bank/entities/<Slug>.md` page changes, and a reflection branch is merged with --no-ff.

Everything (texts, dates, order) comes from one seeded RNG and pinned dates, so the same
arguments give the same commit ids. The whole history is streamed into one `git fast-import`
process (no git call per commit): 100k commits take well under a few minutes.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

START = date(2019, 1, 1)
AGENT = b"Assistant <assistant@example.com>"
HUMAN = b"Human <human@example.com>"
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

FIXED_ENTITIES = (
    "Peter", "Alice", "Andy", "Maria", "The-Castle", "warelay", "Baileys", "OpenClaw", "Marrakech",
    "Lisbon", "Clawdis", "Mario", "Sofia", "Berlin-Office", "homelab", "Jonas", "Ines", "Tokyo-Trip",
)
VERBS = (
    "fixed", "moved", "reviewed", "planned", "booked", "discussed", "deployed", "wrote", "tested",
    "cancelled", "paid", "migrated", "configured", "debugged", "shipped", "called", "drafted",
    "measured", "renamed", "archived", "benchmarked", "upgraded", "rolled back", "scheduled",
)
NOUNS = (
    "the WhatsApp bridge", "the backup job", "flights", "the invoice", "the sqlite index",
    "the dinner reservation", "the release notes", "the gateway config", "the CI pipeline",
    "the apartment lease", "the birthday gift", "the model weights", "the cron schedule",
    "the VPN tunnel", "the photo archive", "the budget sheet", "the dentist appointment",
    "the reconnect loop", "the connection.update handler", "the rate limiter", "the garden lights",
)
PREFS = (
    "Prefers concise replies (<{n} chars) on WhatsApp; long content goes into files",
    "Likes morning meetings before {h}:00",
    "Dislikes being pinged after {h}:00 on weekdays",
    "Wants weekly summaries on {day}",
    "Prefers {lang} for quick scripts",
    "Trusts {ent} with travel bookings",
)
LANGS = ("Python", "TypeScript", "Go", "Rust", "bash")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
SYLLABLES = ("ka", "lo", "mi", "ren", "tu", "vo", "sa", "bel", "dor", "fi", "gan", "hu", "ji", "ner", "pa",
             "qui", "ro", "shi", "tem", "ul", "wex", "yo", "zan", "cor", "dex", "fen")


class Rng:
    """The seeded RNG plus the generated vocabulary, so one object carries all determinism."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        r = self.r
        generated = {
            "".join(r.choice(SYLLABLES) for _ in range(r.randint(2, 3))).capitalize() for _ in range(400)
        }
        self.entities = list(FIXED_ENTITIES) + sorted(generated)[:150]
        self.words = sorted({"".join(r.choice(SYLLABLES) for _ in range(r.randint(1, 4))) for _ in range(6000)})

    def entity(self) -> str:
        # A few entities dominate real memory (the human, the main project); keep a long tail too.
        if self.r.random() < 0.5:
            return self.r.choice(FIXED_ENTITIES[:8])
        return self.r.choice(self.entities)

    def phrase(self, lo: int = 4, hi: int = 12) -> str:
        return " ".join(self.r.choice(self.words) for _ in range(self.r.randint(lo, hi)))

    def when(self, day: date) -> str:
        """Sometimes an explicit event date or range near `day`, as people write them."""
        r = self.r.random()
        if r < 0.15:
            d = day + timedelta(days=self.r.randint(-20, 30))
            return f" on {d.isoformat()}"
        if r < 0.25:
            a = day + timedelta(days=self.r.randint(-5, 20))
            b = a + timedelta(days=self.r.randint(1, 6))
            return f" ({MONTHS[a.month - 1]} {a.day}–{MONTHS[b.month - 1]} {b.day}, {b.year})"
        return ""

    def bullet(self, day: date) -> str:
        r = self.r
        kind = r.choices("WBOS", weights=(4, 4, 2, 1))[0]
        ent = self.entity()
        if kind == "O":
            pref = r.choice(PREFS).format(
                n=r.choice((800, 1000, 1500, 2000)), h=r.randint(7, 22), day=r.choice(WEEKDAYS),
                lang=r.choice(LANGS), ent="@" + self.entity(),
            )
            return f"- O(c={r.randint(50, 99) / 100:.2f}) @{ent}: {pref}."
        if kind == "B":
            return f"- B @{ent}: I {r.choice(VERBS)} {r.choice(NOUNS)}{self.when(day)}; {self.phrase(3, 9)}."
        if kind == "S":
            return f"- S: Busy day around @{ent} and @{self.entity()}: {self.phrase(5, 12)}."
        return f"- W @{ent}: {r.choice(VERBS).capitalize()} {r.choice(NOUNS)}{self.when(day)}, {self.phrase(3, 10)}."


def daily_log(rng: Rng, day: date) -> list[str]:
    """The full day's log (lines); commits during the day reveal it progressively."""
    r = rng.r
    total = r.randint(20, 60)
    lines = [f"# {day.isoformat()}", ""]
    n_retain = max(3, total // 4)
    while len(lines) < total - n_retain - 2:
        if r.random() < 0.3:
            lines += [f"## {rng.phrase(1, 3).capitalize()}", ""]
        if r.random() < 0.5:
            lines.append(f"{rng.phrase(8, 20).capitalize()} with @{rng.entity()}.")
        else:
            lines += [f"- {rng.phrase(4, 10)} #{r.choice(rng.words)}" for _ in range(r.randint(2, 5))]
        lines.append("")
    lines += ["## Retain"]
    lines += [rng.bullet(day) for _ in range(n_retain)]
    return lines


def supersede(rng: Rng, lines: list[str], upto: int, day: date) -> None:
    """Edit or delete one already-committed Retain bullet: the index must record the supersession."""
    candidates = [i for i in range(min(upto, len(lines))) if lines[i][:4] in ("- W ", "- B ", "- O(", "- S:")]
    if not candidates:
        return
    i = rng.r.choice(candidates)
    if rng.r.random() < 0.25:
        del lines[i]
    elif lines[i].startswith("- O("):
        c = rng.r.randint(30, 99) / 100
        lines[i] = f"- O(c={c:.2f}){lines[i][lines[i].index(')') + 1:]}"
    else:
        lines[i] = rng.bullet(day)


class Stream:
    """Buffered writer of a fast-import command stream."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.buf = bytearray()
        self.mark = 0

    def flush(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(self.buf)
        self.buf.clear()

    def commit(
        self,
        branch: str,
        when: datetime,
        message: str,
        files: dict[str, str | None],
        who: bytes = AGENT,
        parent: int | None = None,
        merge: int | None = None,
    ) -> int:
        self.mark += 1
        ts = int(when.timestamp())
        msg = message.encode()
        b = self.buf
        b += b"commit refs/heads/%s\nmark :%d\n" % (branch.encode(), self.mark)
        b += b"author %s %d +0000\ncommitter %s %d +0000\n" % (who, ts, who, ts)
        b += b"data %d\n%s\n" % (len(msg), msg)
        if parent is not None:
            b += b"from :%d\n" % parent
        if merge is not None:
            b += b"merge :%d\n" % merge
        for path, content in files.items():
            if content is None:
                b += b"D %s\n" % path.encode()
            else:
                data = content.encode()
                b += b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data)
        b += b"\n"
        if len(b) > 1 << 20:
            self.flush()
        return self.mark


def generate(out: Path, commits: int, days: int | None, seed: int) -> str:
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"{out} exists and is not empty; choose a new directory")
    rng = Rng(seed)
    r = rng.r
    n_days = days or max(1, min(commits // 5, 6 * 365))
    per_day = [0] * n_days
    for _ in range(commits):
        per_day[r.randrange(n_days)] += 1

    subprocess.run(["git", "init", "-q", "-b", "main", str(out)], check=True)
    proc = subprocess.Popen(
        ["git", "-C", str(out), "fast-import", "--quiet", "--done"], stdin=subprocess.PIPE
    )
    s = Stream(proc)

    memory = ["# Memory", "", "## Preferences"] + [rng.bullet(START) for _ in range(8)]
    entity_pages: dict[str, list[str]] = {}
    past_logs: dict[str, list[str]] = {}
    world: list[str] = ["# World", ""]
    s.commit("main", datetime(2018, 12, 31, 12, tzinfo=timezone.utc), "Start memory",
             {"memory.md": "\n".join(memory) + "\n", ".gitignore": ".memory/\n"}, who=HUMAN)
    tip = s.mark
    made = 1

    for d in range(n_days):
        k = per_day[d]
        if not k:
            continue
        day = START + timedelta(days=d)
        path = f"memory/{day.isoformat()}.md"
        lines = daily_log(rng, day)
        span = range(7 * 60, 23 * 60)  # commits between 07:00 and 23:00, at distinct minutes
        minutes = sorted(r.sample(span, k)) if k <= len(span) else [span[0] + i * len(span) // k for i in range(k)]
        log_commits = max(1, k - sum(1 for _ in range(k) if r.random() < 0.12))
        shown = 0
        for j in range(k):
            when = datetime(day.year, day.month, day.day, tzinfo=timezone.utc) + timedelta(minutes=minutes[j])
            if made >= commits:
                break
            if j < log_commits:
                shown = len(lines) if j == log_commits - 1 else max(shown + 1, (j + 1) * len(lines) // log_commits)
                if j and r.random() < 0.10:
                    supersede(rng, lines, shown, day)
                    shown = min(shown, len(lines))
                s.commit("main", when, f"log {day.isoformat()} ({j + 1}/{log_commits})",
                         {path: "\n".join(lines[:shown]) + "\n"})
            else:
                choice = r.random()
                if choice < 0.35:
                    if len(memory) > 40:
                        del memory[r.randrange(3, len(memory))]
                    memory.append(rng.bullet(day))
                    s.commit("main", when, "memory.md: update core facts", {"memory.md": "\n".join(memory) + "\n"},
                             who=HUMAN)
                elif choice < 0.85 or not past_logs:
                    ent = rng.entity()
                    page = entity_pages.setdefault(ent, [f"# {ent}", "", "## Facts"])
                    if len(page) > 30:
                        page[r.randrange(3, len(page))] = rng.bullet(day)
                    else:
                        page.append(rng.bullet(day))
                    s.commit("main", when, f"entity {ent}", {f"bank/entities/{ent}.md": "\n".join(page) + "\n"})
                else:
                    old_path = r.choice(list(past_logs)[-60:])
                    old = past_logs[old_path]
                    supersede(rng, old, len(old), day)
                    s.commit("main", when, f"fix {old_path}", {old_path: "\n".join(old) + "\n"}, who=HUMAN)
            tip = s.mark
            made += 1
        past_logs[path] = lines[:shown]
        if len(past_logs) > 400:
            past_logs.pop(next(iter(past_logs)))
        # A reflection branch merged every ~90 days: first-parent indexing must see it as one change.
        if d % 90 == 89 and made < commits:
            when = datetime(day.year, day.month, day.day, 23, 30, tzinfo=timezone.utc)
            world += [rng.bullet(day) for _ in range(3)]
            side = s.commit("reflect", when, "reflect: curate bank/world.md",
                            {"bank/world.md": "\n".join(world) + "\n"}, parent=tip)
            s.commit("main", when + timedelta(minutes=10), "Merge branch 'reflect'",
                     {"bank/world.md": "\n".join(world) + "\n"}, who=HUMAN, parent=tip, merge=side)
            tip = s.mark
            made += 1

    s.buf += b"done\n"
    s.flush()
    assert proc.stdin is not None
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    subprocess.run(["git", "-C", str(out), "reset", "-q", "--hard", "main"], check=True)
    return subprocess.run(["git", "-C", str(out), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="directory to create (must not exist or be empty)")
    ap.add_argument("--commits", type=int, default=10_000, help="commits on main (default 10000)")
    ap.add_argument("--days", type=int, default=None, help="days of logs (default commits/5, at most 6 years)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    tip = generate(args.out, args.commits, args.days, args.seed)
    print(f"{args.out}: {args.commits} commits, HEAD {tip} ({time.perf_counter() - t0:.1f}s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
