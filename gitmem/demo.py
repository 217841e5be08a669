"""`gitmem demo`: a realistic, reproducible memory workspace to try recall and `--as-of` on.

Six weeks (Nov 3 – Dec 12, 2025) of an assistant's daily logs about working with Peter, plus the
human's own edits. Facts change on known days so time-travel answers visibly differ:

- Peter lives in Berlin, then Lisbon (memory.md line edited on MOVE_DATE);
- "O @Peter: prefers concise replies" goes c=0.6 -> c=0.8, then a later fact contradicts it;
- project warelay is renamed relay (memory.md bullet edited on RENAME_DATE);
- a secret is deleted from memory.md on DELETE_DATE;
- a hand-written entity page arrives through a merge of the side branch SIDE_BRANCH.

The history is written with `git fast-import` and fully pinned authors, committers and dates, so
the same code yields the same commit ids on every machine. Tests and the README rely on the
constants below; change them together with the data.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from gitmem.errors import GitmemError
from gitmem.layout import CORE_FILE, entity_page_path, log_path
from gitmem.timeline import git

# --- the facts tests and docs rely on ------------------------------------------------------------
BRANCH = "main"
SIDE_BRANCH = "castle-notes"
FIRST_DAY = "2025-11-03"
LAST_DAY = "2025-12-12"

MOVE_DATE = "2025-11-20"  # memory.md: Peter lives in Berlin -> Lisbon
CITY_BEFORE, CITY_AFTER = "Berlin", "Lisbon"
ASK_BEFORE_MOVE, ASK_AFTER_MOVE = "2025-11-15", "2025-12-01"  # --as-of dates that give each answer
HOME_LINE_BEFORE = "- @Peter lives in Berlin (Kreuzberg) and works from home most days."
HOME_LINE_AFTER = "- @Peter lives in Lisbon (Alfama) and works from home most days."

OPINION = "Prefers concise replies"
OPINION_HISTORY = (("2025-11-05", 0.6), ("2025-11-14", 0.8))  # (log date, confidence)
CONTRADICTED_ON = "2025-12-04"  # a W fact in that day's log contradicts the opinion

RENAME_DATE = "2025-12-02"  # memory.md bullet: @warelay -> @relay
ASK_BEFORE_RENAME = "2025-12-01"
OLD_PROJECT, NEW_PROJECT = "warelay", "relay"

DELETE_DATE = "2025-11-28"  # the line is removed from memory.md that day
DELETED_FACT = "- Castle admin password hint: the usual one plus the year Andy was born."
# Deleted from memory.md, but `recall --as-of` before DELETE_DATE still shows it: the demo's forget.
FORGET_TEXT = "admin password hint"

TRIP = "Nov 27–Dec 1, 2025"  # Marrakech, for Andy's birthday
MERGE_DATE = "2025-12-01"

# What the demo is for: questions an assistant would ask its memory (question, --as-of or None
# for now). The README's and .ci/demo's questions, and one per story the demo tells.
QUESTIONS: tuple[tuple[str, str | None], ...] = (
    ("where does Peter live", None),
    ("where does Peter live", ASK_BEFORE_MOVE),
    ("where does Peter live", ASK_AFTER_MOVE),
    ("what does Peter prefer?", None),
    ("how long should replies to Peter be", None),
    ("Peter", None),
    ("where is Peter right now", None),
    ("what is the WhatsApp bridge project called", None),
    ("relay webhook fan-out", None),
    ("warelay", ASK_BEFORE_RENAME),
    ("The Castle", None),
    ("Andy birthday Marrakech", None),
    ("what happened this week", None),
)

FACTS = {
    "move_date": MOVE_DATE, "city_before": CITY_BEFORE, "city_after": CITY_AFTER,
    "ask_before_move": ASK_BEFORE_MOVE, "ask_after_move": ASK_AFTER_MOVE,
    "rename_date": RENAME_DATE, "old_project": OLD_PROJECT, "new_project": NEW_PROJECT,
    "ask_before_rename": ASK_BEFORE_RENAME, "delete_date": DELETE_DATE,
    "contradicted_on": CONTRADICTED_ON, "merge_date": MERGE_DATE, "trip": TRIP,
}

AUTHORS = {
    "assistant": ("Clawd", "clawd@the-castle.lan"),
    "peter": ("Peter", "peter@example.com"),
}

# --- hand-written files --------------------------------------------------------------------------
MEMORY_V1 = f"""# Memory

## People
{HOME_LINE_BEFORE}
- @Andy is Peter's oldest friend; they met at university in Porto.

## Preferences
- Answer in English, even when Peter writes in German late at night.
- No calls or pings before 10:00 his local time.

## Places
- @The-Castle is Peter's home server (a Mac mini in the hallway closet) that runs me and @warelay.
{DELETED_FACT}

## Projects
- @warelay: Peter's WhatsApp relay (Baileys + TypeScript), repo ~/code/warelay, deployed on @The-Castle.
"""
MEMORY_V2 = MEMORY_V1.replace(HOME_LINE_BEFORE, HOME_LINE_AFTER)
MEMORY_V3 = MEMORY_V2.replace(DELETED_FACT + "\n", "")
MEMORY_V4 = MEMORY_V3.replace(
    "- @warelay: Peter's WhatsApp relay (Baileys + TypeScript), repo ~/code/warelay, deployed on @The-Castle.",
    "- @relay (formerly warelay): Peter's WhatsApp relay (Baileys + TypeScript), repo ~/code/relay, "
    "deployed on @The-Castle.",
).replace("that runs me and @warelay.", "that runs me and @relay.")

PETER_V1 = """# Peter

Peter is the human I work for. Software engineer, freelances on messaging integrations.

- Lives in Berlin (Kreuzberg); works from home, mostly late mornings to late evenings.
- Reads WhatsApp on the go; long text is better sent as a file.
- Friends: @Andy (oldest friend, Porto).
- Runs @The-Castle at home and builds @warelay.
"""
PETER_V2 = PETER_V1.replace("- Lives in Berlin (Kreuzberg);", "- Lives in Lisbon (Alfama) since Nov 20, 2025;")

CASTLE_PAGE = """# The Castle

Peter's home server: a 2018 Mac mini (i7, 32 GB) in the hallway closet, on a UPS.

- Runs the assistant, @warelay (systemd unit `warelay.service`) and a Postgres 16 for both.
- Reachable as `castle.lan` at home and over Tailscale when travelling.
- Restart procedure: `sudo systemctl restart warelay`, then check `journalctl -u warelay -n 50`.
- Backups: nightly restic to a Hetzner storage box at 03:30.
"""

# --- daily logs: (date, narrative, retain bullets) -----------------------------------------------
LOGS: list[tuple[str, str, list[str]]] = [
    ("2025-11-03", "First day with the new memory layout. Peter walked me through how he likes to work: "
     "quick questions on WhatsApp, anything long as a file in the repo. Set up the daily log.",
     ["B: I set up this memory workspace with Peter: daily logs, memory.md and bank/.",
      "W @Peter: Works on @warelay most afternoons; mornings are for client calls."]),
    ("2025-11-04", "Peter wrote his own page under bank/entities. Spent the afternoon reading the warelay "
     "codebase: a Baileys socket, a small queue and a webhook fan-out.",
     ["W @warelay: Uses Baileys for the WhatsApp socket and a Postgres-backed outbound queue.",
      "B @warelay: I read the whole warelay codebase and wrote notes on the queue design."]),
    ("2025-11-05", "Sent Peter a long status summary; he replied 'tl;dr?'. Noted for next time.",
     [f"O(c={OPINION_HISTORY[0][1]}) @Peter: {OPINION} on WhatsApp; long answers get skimmed.",
      "S: Long WhatsApp messages went unread today; a two-line summary got an answer in minutes."]),
    ("2025-11-06", "warelay dropped messages overnight. Logs show the websocket closing with 428 and "
     "no reconnect. Peter asked me to dig in tomorrow.",
     ["W @warelay: Drops outbound messages when the WhatsApp websocket closes with status 428.",
      "W @The-Castle: Was offline for 20 minutes at 03:10 during the nightly backup."]),
    ("2025-11-07", "Reproduced the 428 drop locally by killing the socket mid-send. The queue marks "
     "messages as sent before the ack arrives.",
     ["B @warelay: I reproduced the message drop: the queue marks messages sent before the server ack.",
      "W @warelay: Issue #41 tracks the lost-message bug."]),
    ("2025-11-10", "Peter is flying to Munich on Thursday for a client workshop. Booked the train back "
     "for Friday evening. Still chasing the warelay drop.",
     ["W @Peter: In Munich Nov 13–14, 2025 for a client workshop; back Friday evening by train.",
      "B @Peter: I booked the ICE back from Munich for 2025-11-14 at 17:28."]),
    ("2025-11-11", "Read up on how Baileys emits connection.update. Unhandled exceptions inside the "
     "handler take the whole process down.",
     ["W @warelay: An exception inside a Baileys connection.update handler crashes the process."]),
    ("2025-11-12", "Fixed it. Wrapped the connection.update handlers in try/catch and moved the "
     "'sent' mark to the ack callback. Peter reviewed and merged before dinner.",
     ["B @warelay: I fixed the Baileys WS crash by wrapping connection.update handlers in try/catch.",
      "B @warelay: I moved the 'sent' mark to the server ack callback; issue #41 closed."]),
    ("2025-11-13", "Peter in Munich. Quiet day: he only asked for the workshop slides as a PDF.",
     ["B @Peter: I exported the workshop slides to PDF and put them in ~/Documents/munich/."]),
    ("2025-11-14", "Peter back tonight. He said the two-line summaries this week were 'exactly right'.",
     [f"O(c={OPINION_HISTORY[1][1]}) @Peter: {OPINION} on WhatsApp (<1500 chars); long content goes into files.",
      "W @Peter: Back in Berlin from Munich on the evening train."]),
    ("2025-11-17", "Peter mentioned he signed a lease in Lisbon. Moving on Thursday. Lots of logistics: "
     "movers, the Castle, internet at the new flat.",
     ["W @Peter: Signed a lease for a flat in Alfama, Lisbon; moving on 2025-11-20.",
      "W @The-Castle: Stays in Berlin at a friend's place for now, reachable over Tailscale."]),
    ("2025-11-18", "Helped plan the move. Peter wants the Castle shipped later, once fibre is in.",
     ["B @Peter: I made the moving checklist (movers at 08:00 on Nov 20, keys handover, fibre install).",
      "W @The-Castle: Will be shipped to Lisbon after the fibre install, planned Dec 8–9, 2025."]),
    ("2025-11-19", "Last day in Berlin. warelay quiet since the fix, zero dropped messages in a week.",
     ["S @warelay: No dropped messages in the seven days since the ack fix."]),
    ("2025-11-20", "Moving day. Peter updated memory.md himself this morning. Movers were late but "
     "everything arrived. Timezone is now Lisbon (WET).",
     ["W @Peter: Moved from Berlin to Lisbon on 2025-11-20.",
      "B: I switched my reminder times to Lisbon time (UTC+0)."]),
    ("2025-11-21", "Unpacking. Fibre technician booked. Peter asked me to find a coworking space nearby.",
     ["B @Peter: I shortlisted three coworking spaces within 10 minutes' walk of the Alfama flat.",
      "W @Peter: Fibre installation at the Lisbon flat is booked for 2025-11-25."]),
    ("2025-11-24", "warelay webhook fan-out is slow with many subscribers. Sketched a batching change.",
     ["W @warelay: Webhook fan-out is sequential; 40 subscribers take ~6 s per message.",
      "B @warelay: I drafted a batching change for the webhook fan-out (not merged yet)."]),
    ("2025-11-25", "Fibre is in. Peter wrote a proper page about the Castle on his laptop (on a branch, "
     "he'll merge it when back).",
     ["W @Peter: The Lisbon flat has fibre since 2025-11-25.",
      "B @warelay: I benchmarked the batched fan-out: 40 subscribers now take 0.7 s."]),
    ("2025-11-26", "Packing for Marrakech. Andy turns 40 on Saturday.",
     ["W @Andy: Turns 40 on 2025-11-29; birthday dinner at Nomad, Marrakech.",
      "B @Peter: I checked in Peter for the TAP flight to Marrakech on Nov 27."]),
    ("2025-11-27", "Peter landed in Marrakech. Kept replies short; he is on his phone all week.",
     [f"W @Peter: Currently in Marrakech ({TRIP}) for Andy's birthday.",
      "W @The-Castle: Rebooted itself after a power cut in Berlin; services came back on their own."]),
    ("2025-11-28", "Peter asked me to stop keeping anything password-like in memory and removed the "
     "Castle hint from memory.md himself.",
     ["B: I checked my logs for secrets; none besides the one Peter removed from memory.md.",
      "O(c=0.9) @Peter: Does not want secrets or password hints stored in memory files."]),
    ("2025-11-29", "Andy's birthday. No work. Peter sent photos from the dinner.",
     ["W @Andy: Celebrated his 40th birthday at Nomad, Marrakech, on 2025-11-29."]),
    ("2025-12-01", "Peter is back in Lisbon and merged his Castle notes branch.",
     ["W @Peter: Back in Lisbon from Marrakech on 2025-12-01.",
      "B @The-Castle: I read Peter's new Castle page; restart procedure noted."]),
    ("2025-12-02", "Peter decided to rename warelay to relay: shorter, and the 'wa' prefix confused "
     "people. Renamed the repo, the systemd unit and the npm package.",
     ["B @relay: I renamed warelay to relay: repo, systemd unit relay.service and npm package.",
      "W @relay: The project formerly called warelay is now relay (since 2025-12-02)."]),
    ("2025-12-03", "Merged the batched fan-out into relay. Deployed to the Castle over Tailscale.",
     ["B @relay: I merged and deployed the batched webhook fan-out on @The-Castle."]),
    ("2025-12-04", "Surprise: Peter asked for the full relay migration plan inline on WhatsApp, "
     "'all of it, no file'. He read every line and replied point by point.",
     [f"W @Peter: On {CONTRADICTED_ON} asked for the full relay migration plan inline on WhatsApp, "
      "not as a file, and answered it point by point.",
      "S @Peter: Wants long inline answers when planning, short ones for quick questions."]),
    ("2025-12-05", "Started the Postgres 16 → 17 upgrade plan for the Castle.",
     ["W @The-Castle: Runs Postgres 16; upgrade to 17 planned with the SSD swap."]),
    ("2025-12-08", "Castle downtime for the SSD swap started. relay runs from Peter's laptop meanwhile.",
     ["W @The-Castle: Down Dec 8–9, 2025 for the SSD swap and shipping prep.",
      "B @relay: I moved relay temporarily to Peter's laptop during the Castle downtime."]),
    ("2025-12-09", "SSD swap done, Postgres 17 running. The Castle ships to Lisbon on Thursday.",
     ["W @The-Castle: Now on a 2 TB SSD with Postgres 17.",
      "B @The-Castle: I restored the relay database from the restic backup; checksums match."]),
    ("2025-12-10", "Peter asked for a weekly summary every Friday at 17:00, as a file, with a 3-line "
     "WhatsApp teaser.",
     ["W @Peter: Wants a weekly summary on Fridays at 17:00: a file plus a 3-line WhatsApp teaser."]),
    ("2025-12-11", "The Castle is in a box on its way to Lisbon. relay still on the laptop.",
     ["W @The-Castle: Shipped from Berlin to Lisbon on 2025-12-11; arrival expected Dec 15–16, 2025."]),
    ("2025-12-12", "First Friday summary sent. Peter replied with a thumbs up and one question.",
     ["B @Peter: I sent the first Friday weekly summary (file + 3-line teaser).",
      "O(c=0.7) @relay: The batched fan-out is the right design; no regressions in nine days."]),
]

# Human edits and the side branch, as (datetime, author, message, files, branch, merge-from).
# Daily-log commits are added from LOGS by history().
EXTRA: list[tuple[str, str, str, dict[str, str | None], str, str | None]] = [
    ("2025-11-03T09:00:00+01:00", "peter", "Set up memory workspace", {CORE_FILE: MEMORY_V1}, BRANCH, None),
    ("2025-11-04T11:20:00+01:00", "peter", "Add my own entity page",
     {entity_page_path("Peter"): PETER_V1}, BRANCH, None),
    (f"{MOVE_DATE}T09:15:00+00:00", "peter", "memory: I live in Lisbon now",
     {CORE_FILE: MEMORY_V2, entity_page_path("Peter"): PETER_V2}, BRANCH, None),
    ("2025-11-25T16:40:00+00:00", "peter", "Write up the Castle",
     {entity_page_path("The-Castle"): CASTLE_PAGE}, SIDE_BRANCH, None),
    (f"{DELETE_DATE}T11:05:00+01:00", "peter", "memory: no password hints in memory",
     {CORE_FILE: MEMORY_V3}, BRANCH, None),
    (f"{MERGE_DATE}T20:00:00+00:00", "peter", f"Merge branch '{SIDE_BRANCH}'", {}, BRANCH, SIDE_BRANCH),
    (f"{RENAME_DATE}T10:30:00+00:00", "peter", "memory: warelay is now relay", {CORE_FILE: MEMORY_V4}, BRANCH, None),
]


@dataclass(frozen=True)
class DemoCommit:
    when: datetime
    author: str
    message: str
    files: dict[str, str | None]  # None deletes the file
    branch: str = BRANCH
    merge: str | None = None


@dataclass(frozen=True)
class DemoInfo:
    root: Path
    head: str
    branch: str
    commits: int  # commits reachable from HEAD, merge and side-branch commit included
    first_day: str = FIRST_DAY
    last_day: str = LAST_DAY
    facts: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {"root": str(self.root), "head": self.head, "branch": self.branch, "commits": self.commits,
                "first_day": self.first_day, "last_day": self.last_day, "facts": self.facts}


def _tz(day: str) -> timezone:
    # Berlin (UTC+1) before the move, Marrakech (UTC+1) during the trip, Lisbon (UTC+0) otherwise.
    if day < MOVE_DATE or "2025-11-27" <= day <= "2025-11-30":
        return timezone(timedelta(hours=1))
    return timezone.utc


def log_text(day: str, narrative: str, retain: list[str]) -> str:
    weekday = date.fromisoformat(day).strftime("%a")
    bullets = "\n".join(f"- {b}" for b in retain)
    return f"# {day} ({weekday})\n\n{narrative}\n\n## Retain\n{bullets}\n"


def _layout() -> dict[str, str]:
    """The plain workspace files every gitmem workspace has (.gitignore, .gitmem.toml, bank/)."""
    from gitmem.scaffold import layout_files

    return {rel: data.decode("utf-8") for rel, data in layout_files()
            if not rel.endswith(".gitkeep") and rel != CORE_FILE}


def history() -> list[DemoCommit]:
    """Every commit of the demo in the order it is written (by time)."""
    commits = [DemoCommit(datetime.fromisoformat(w), a, m, f, b, g) for w, a, m, f, b, g in EXTRA]
    commits[0] = DemoCommit(commits[0].when, "peter", commits[0].message, {**_layout(), **commits[0].files})
    for day, narrative, retain in LOGS:
        when = datetime.fromisoformat(f"{day}T22:00:00").replace(tzinfo=_tz(day))
        commits.append(DemoCommit(when, "assistant", f"log: {day}",
                                  {log_path(day): log_text(day, narrative, retain)}))
    return sorted(commits, key=lambda c: c.when)


def _data(payload: bytes) -> bytes:
    return b"data %d\n" % len(payload) + payload + b"\n"


def fast_import_stream(commits: list[DemoCommit]) -> bytes:
    """A `git fast-import` stream for the commits; branch tips are tracked with marks."""
    out: list[bytes] = []
    tips: dict[str, int] = {}
    branch_files: dict[str, dict[str, str | None]] = {}  # files each side branch changed, for the merge tree
    for mark, c in enumerate(commits, start=1):
        name, email = AUTHORS[c.author]
        ident = f"{name} <{email}> {int(c.when.timestamp())} {c.when.strftime('%z')}".encode()
        out += [f"commit refs/heads/{c.branch}\n".encode(), b"mark :%d\n" % mark,
                b"author " + ident + b"\n", b"committer " + ident + b"\n", _data(c.message.encode() + b"\n")]
        parent = tips.get(c.branch, tips.get(BRANCH))  # a new side branch starts at main's tip
        if parent:
            out.append(b"from :%d\n" % parent)
        files = dict(c.files)
        if c.merge:
            out.append(b"merge :%d\n" % tips[c.merge])
            files = {**branch_files.pop(c.merge), **files}
        elif c.branch != BRANCH:
            branch_files.setdefault(c.branch, {}).update(c.files)
        for path, content in sorted(files.items()):
            if content is None:
                out.append(f"D {path}\n".encode())
            else:
                out += [f"M 100644 inline {path}\n".encode(), _data(content.encode("utf-8"))]
        out.append(b"\n")
        tips[c.branch] = mark
    return b"".join(out)


def build_demo(path: Path, *, force: bool = False) -> DemoInfo:
    """Create the demo workspace at `path` (a new or empty folder; any folder with force=True,
    but never an existing git repository). Same code, same commit ids."""
    path = Path(path).expanduser()
    if os.path.lexists(path) and not path.is_dir():
        raise GitmemError(f"{path} exists and is not a folder", "pick a new folder for the demo")
    if path.is_dir() and (path / ".git").exists():
        raise GitmemError(f"{path} is already a git repository; the demo needs its own",
                          "pick a new folder, e.g. `gitmem demo /tmp/gitmem-demo`")
    if path.is_dir() and any(path.iterdir()) and not force:
        raise GitmemError(f"{path} is not empty; the demo would mix its files with yours",
                          "pick an empty folder, or pass --force to write into it anyway")
    path.mkdir(parents=True, exist_ok=True)
    root = path.resolve()
    git.run(root, ["init", "-q"])
    git.run(root, ["fast-import", "--quiet"], input=fast_import_stream(history()))
    git.run(root, ["symbolic-ref", "HEAD", f"refs/heads/{BRANCH}"])
    git.run(root, ["update-ref", "-d", f"refs/heads/{SIDE_BRANCH}"])  # merged; keep the demo tidy
    git.run(root, ["reset", "-q", "--hard", BRANCH])
    head = git.head(root)
    assert head is not None
    return DemoInfo(
        root=root, head=head, branch=BRANCH, commits=int(git.out(root, "rev-list", "--count", "HEAD")),
        facts=dict(FACTS),
    )
