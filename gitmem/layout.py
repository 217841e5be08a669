"""Every name in a memory workspace, in one place: the ground floor everything else builds on.

The workspace layout (paths relative to the work tree's root, always with forward slashes):

    memory.md                  the user's curated core memory
    memory/YYYY-MM-DD.md       daily logs (the date of a log comes from its name)
    bank/                      curated pages: entities/<Slug>.md, opinions.md, world.md, ...
    bank/.reflect.json         what reflection remembers between runs
    .gitmem.toml               settings
    .memory/                   derived data, never committed: index.sqlite, locks, hook log, caches

and the citation format `path#Lx-Ly@sha7` (or `@worktree`) that recall writes and `gitmem show`
reads. Imports nothing from gitmem and nothing slow: the post-commit hook imports it.
"""

# Annotations are evaluated at import (no __future__ import): see recall/result.py.

from datetime import date
from functools import lru_cache
from typing import NamedTuple

from gitmem.lazyre import lazy

# --- files at the root ---------------------------------------------------------------------------
CORE_FILE = "memory.md"
CONFIG_FILE = ".gitmem.toml"
LOG_DIR = "memory"

# --- derived data: .memory/ ----------------------------------------------------------------------
DERIVED_DIR = ".memory"
INDEX_FILE = "index.sqlite"
INDEX_LOCK = "index.lock"  # serialises indexers
# Serialises gitmem's writers to the user's refs (Workspace.writing). The file keeps the name it had
# when only `gitmem retain` took it, so a retain from an older install still waits for a new forget.
WRITE_LOCK = "retain.lock"
HOOK_LOG = "hook.log"
HOOK_STATE = "hook.state"
REFLECT_CACHE = "reflect-cache.sqlite"
JUDGE_CALIBRATION = "judge-calibration.json"  # `gitmem model check` results, by model fingerprint
REFLECT_DISCARDED = "reflect-discarded.json"  # what `gitmem review --discard` turned down
EMBED_SOCKET = "embed.sock"  # the warm embedder the CLI talks to (recall/warm.py)
EMBED_LOCK = "embed.lock"  # one warm embedder per workspace
EMBED_LOG = "embed.log"  # why the warm embedder stopped or failed
CONFIG_CACHE = "config.cache"  # .gitmem.toml parsed, with the text it was parsed from (config.py)
REGEX_CACHE = "regex.cache"  # compiled regular expressions, kept by recall sessions and the hook (lazyre.py)

# Any of these at the top of a work tree makes it a memory workspace (the hooks skip other repos).
WORKSPACE_MARKS = (DERIVED_DIR, CONFIG_FILE, CORE_FILE, LOG_DIR)

# --- bank/ ---------------------------------------------------------------------------------------
BANK_DIR = "bank"
ENTITIES_DIR = f"{BANK_DIR}/entities"
STATE_PATH = f"{BANK_DIR}/.reflect.json"
OPINIONS_PAGE = f"{BANK_DIR}/opinions.md"
WORLD_PAGE = f"{BANK_DIR}/world.md"
EXPERIENCE_PAGE = f"{BANK_DIR}/experience.md"
CORE_PROPOSALS_PAGE = f"{BANK_DIR}/proposals/{CORE_FILE}"


def is_memory_markdown(rel: str) -> bool:
    """Whether a workspace-relative path is memory: any *.md (any case) outside the derived folder.
    The one rule the indexer, the working-tree overlay, status and lint share."""
    return rel.lower().endswith(".md") and not rel.startswith((f"{DERIVED_DIR}/", ".git/"))


def in_bank(rel: str) -> bool:
    return rel.startswith(f"{BANK_DIR}/")


def entity_page_path(slug: str) -> str:
    """bank/entities/<slug>.md (the slug must already be safe: see parse.entity_slug)."""
    return f"{ENTITIES_DIR}/{slug}.md"


_ENTITY_PAGES = f"{ENTITIES_DIR}/"  # built once: recall asks of every pool row (~600 a question)


def entity_page_stem(rel: str) -> str | None:
    """The file-name stem of an entity page (bank/entities/Peter.md -> Peter), else None."""
    if not rel.startswith(_ENTITY_PAGES):
        return None
    return rel[len(_ENTITY_PAGES) :].rsplit(".", 1)[0]


def bank_folder_stem(rel: str) -> str | None:
    """The file-name stem of a page in a folder of bank/ (bank/people/kazue.md -> kazue,
    bank/entities/Peter.md -> Peter), else None: not a page at bank/'s top (world.md, opinions.md:
    pages of many things) nor a proposal. parse.entities `page_entity` reads whether its heading
    names it."""
    if not rel.startswith(_BANK) or rel.startswith(_PROPOSALS) or not rel.lower().endswith(".md"):
        return None
    folder, _, name = rel[len(_BANK):].rpartition("/")
    return name[:-3] if folder and name[:-3] else None


_BANK = f"{BANK_DIR}/"
_PROPOSALS = f"{BANK_DIR}/proposals/"


# --- daily logs ----------------------------------------------------------------------------------
# The shape of a log's name; `log_date` also checks that the date exists.
LOG_NAME = lazy(rf"{LOG_DIR}/\d{{4}}-\d{{2}}-\d{{2}}\.md")
_LOG_PATH = lazy(rf"(?:\./)?{LOG_DIR}/(\d{{4}})-(\d{{2}})-(\d{{2}})\.md")


def log_path(day: date | str) -> str:
    """memory/2025-11-27.md for a date (or an ISO date string)."""
    return f"{LOG_DIR}/{day.isoformat() if isinstance(day, date) else day}.md"


@lru_cache(maxsize=4096)  # the indexer asks once per file version: the same few paths, over and over
def log_date(path: str) -> date | None:
    """The date of a daily log, from its workspace-relative path: memory/2025-11-27.md -> 2025-11-27."""
    m = _LOG_PATH.fullmatch(path.replace("\\", "/"))
    if not m:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


# --- git's own files in the work tree ----------------------------------------------------------------
ATTRIBUTES_FILE = ".gitattributes"  # committed: `merge=gitmem` for memory files (merge_setup.py)

# --- citations -----------------------------------------------------------------------------------
WORKTREE_REV = "worktree"
CITATION_EXAMPLE = "memory/2025-11-27.md#L12-L13@1a2b3c4"
_CITATION = lazy(r"^(?P<path>.+)#L(?P<s>\d+)(?:-L?(?P<e>\d+))?@(?P<rev>[0-9a-fA-F]{4,64}|worktree)$")


class Citation(NamedTuple):
    path: str
    start: int
    end: int
    rev: str  # an abbreviated commit id, or WORKTREE_REV for uncommitted text


def citation(path: str, start: int, end: int, oid: str | None) -> str:
    """`path#Lstart-Lend@sha7` (`#Lstart` for one line; `@worktree` without a commit)."""
    lines = f"L{start}" if start == end else f"L{start}-L{end}"
    return f"{path}#{lines}@{oid[:7] if oid else WORKTREE_REV}"


def parse_citation(text: str) -> Citation | None:
    """The parts of a citation (surrounding whitespace ignored), or None when it is not one."""
    m = _CITATION.match(text.strip())
    if not m:
        return None
    start = int(m.group("s"))
    return Citation(m.group("path"), start, int(m.group("e") or start), m.group("rev"))


# A citation inside running text (bank pages cite logs, e.g. "... (memory/2025-11-27.md#L4@1a2b3c4)"):
# the same shape as CITATION, unanchored; the path stops at whitespace, parentheses and backquotes.
CITATION_IN_TEXT = lazy(r"(?P<path>[^\s()#`]+)#L(?P<s>\d+)(?:-L?(?P<e>\d+))?@(?P<rev>[0-9a-fA-F]{4,64}|worktree)\b")


# --- bank/opinions.md's evidence section -------------------------------------------------------------
# Written by reflection (reflect/pages.py), read back by the index (a quoted fact is a copy of the
# line it quotes: index/supersede.py) and by recall (the bookkeeping lines are no memory).
EVIDENCE_RELATIONS = ("supports", "contradicts")
NO_EVIDENCE = "no evidence judged yet"
_EVIDENCE = lazy(r"^(?:-\s+)?(?:" + "|".join(EVIDENCE_RELATIONS) + r")\s*\([^()]*\):\s*(.+)$")
# The lines an opinion's evidence record states about the opinion itself, not about the world:
# "- <label>: <value>", written by record_lines and recognised by is_bookkeeping.
_RECORD_LABELS = ("confidence", "last_updated", "stated in")
_BOOKKEEPING = lazy(r"^(?:-\s+)?(?:(?:" + "|".join(_RECORD_LABELS) + r"): |" + NO_EVIDENCE + ")")


def evidence_line(relation: str, strength: str, delta: float, text: str, source: str) -> str:
    """`- supports (strong, +0.06): <the fact's text> (<its citation>)`."""
    return f"- {relation} ({strength}, {delta:+.2f}): {text} ({source})"


def evidence_quote(line: str) -> str | None:
    """The text an evidence line quotes (its citation still at the end), or None for another line."""
    m = _EVIDENCE.match(line)
    return m.group(1) if m else None


def record_lines(confidence: float, stated: str, delta: float, last_updated: str, source: str) -> list[str]:
    """The bookkeeping lines of an opinion's evidence record: its confidence, when, where stated."""
    conf, updated, where = _RECORD_LABELS
    return [f"- {conf}: {confidence:.2f} (stated {stated}; this reflection {delta:+.2f})",
            f"- {updated}: {last_updated}", f"- {where}: {source}"]


def is_bookkeeping(rel: str, content: str) -> bool:
    """Whether a chunk of `rel` is one of those bookkeeping lines (or "no evidence judged yet"):
    never a recall result."""
    return rel == OPINIONS_PAGE and _BOOKKEEPING.match(content) is not None


def says_something(rel: str, content: str | None) -> bool:
    """Whether a chunk of `rel` is memory at all (a recall result, a line of `gitmem changes`): a
    block that was only an HTML comment (a template's guidance, a generated block's marker) has no
    text left to say, and an opinion's bookkeeping says nothing about the world."""
    return bool(content) and not is_bookkeeping(rel, content or "")
