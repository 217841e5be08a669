"""`gitmem reflect`: read the facts since the last reflection, write one proposal commit on the
review branch.

Flow: the base is HEAD (the index must be at HEAD); the last reflection point is `through` in
HEAD's bank/.reflect.json (or --since); the facts in that window pick which entity pages, opinions,
lists and daily logs to propose; the model (optional) only summarizes, judges and drafts; pages are
merged block by block (pages.py); every write passes the safety gate (safety.py); the commit is
built from objects (branch.py) with a deterministic identity and time; the branch moves by CAS.

Re-running replaces the pending proposal (a new commit on the current HEAD, the branch moved from
the value read at the start). The proposal commit holds the new state file, so merging it records
the reflection; discarding it leaves the last reflection point where it was.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from gitmem.config import load_config
from gitmem.errors import GitmemError
from gitmem import layout
from gitmem.layout import ENTITIES_DIR, STATE_PATH, log_date
from gitmem.parse import entity_key, mentions, opinion_key, page_aliases, parse_retain_bullet, renames, sections
from gitmem.parse.model import RetainFact
from gitmem.reflect import confidence, discarded, gather, judge, pages
from gitmem.reflect.branch import Builder, check_ours, move, read_ref, ref_name
from gitmem.reflect.records import Change, EvidenceStep, Opinion, OpinionChange, PageChange, RetainChange
from gitmem.reflect.safety import UnsafeWrite, clean_inline, entity_page
from gitmem.reflect.state import State, read_state
from gitmem.timeline import git
from gitmem.workspace import Workspace

if TYPE_CHECKING:
    from gitmem.recall.result import Result
    from gitmem.recall.search import Session
    from gitmem.reflect.model import Model

Progress = Callable[[int, int, str], None]
PROPOSE_MEMORY_AT = 0.85  # opinions at or above this confidence are proposed for memory.md


@dataclass
class RunOptions:
    since: str | None = None
    model: Callable[[], Model] | None = None  # a factory: the model is loaded only when needed
    dry_run: bool = False
    if_needed: bool = False
    progress: Progress | None = None


def _iso_date(ts: int) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).date().isoformat()


def _said_on(op: Result, at: str) -> str:
    """The UTC day the version `op` of an opinion was committed (at the latest `at`, the day
    reflection reads memory through)."""
    if not op.record_time:
        return at
    return min(datetime.fromisoformat(op.record_time).astimezone(timezone.utc).date().isoformat(), at)


def _okey(content: str) -> str:
    return hashlib.sha1(opinion_key(content).encode("utf-8")).hexdigest()[:12]


def _ev_dict(ev: confidence.Evidence, at: str) -> dict[str, Any]:
    return {"content": clean_inline(ev.content, 300), "source": ev.source, "path": ev.path, "commit": ev.commit,
            "strength": ev.strength, "delta": ev.delta, "at": at, "by": ev.by}


def _display_names(facts: list[Result]) -> dict[str, str]:
    """entity key -> the most used spelling of its @mentions (ties: alphabetical)."""
    seen: dict[str, Counter[str]] = {}
    for r in facts:
        for raw in mentions(r.content):
            seen.setdefault(entity_key(raw), Counter())[raw] += 1
    return {k: sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] for k, c in seen.items()}


class _Run:
    def __init__(self, ws: Workspace, opts: RunOptions) -> None:
        self.ws = ws
        self.opts = opts
        self.root = ws.root
        self.cfg = load_config(ws)
        self.ref = ref_name(ws.root, self.cfg.reflect.branch)
        self.rejected: list[dict[str, str]] = []
        self.skipped: list[dict[str, str]] = []
        self.changes: list[Change] = []
        self.notes: list[str] = []
        self.model: Model | None = None
        self.trust: judge.Trust | None = None
        self.discarded = discarded.load(ws)
        self.turned_down: list[str] = []  # pages left out because the same content was discarded
        self.window = ""  # discarded.window_key of this run's facts
        self.done = 0
        self.total = 1

    def tick(self, label: str) -> None:
        self.done += 1
        if self.opts.progress:
            self.opts.progress(min(self.done, self.total), self.total, label)

    def reject(self, what: str, reason: str) -> None:
        self.rejected.append({"item": clean_inline(what, 120), "reason": clean_inline(reason, 200)})

    def ask(self, what: str, fn: Callable[[], Any]) -> Any:
        """One model task; invalid output is reported and skipped, never fatal."""
        from gitmem.reflect.model import InvalidModelOutput

        try:
            return fn()
        except InvalidModelOutput as exc:
            self.reject(what, exc.reason)
            return None

    # ------------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        from gitmem.recall.search import Session

        root = self.root
        head = git.head(root)
        if head is None:
            raise GitmemError("the repository has no commits yet", "commit some memory, then run `gitmem reflect`")
        branch = self.ref.removeprefix("refs/heads/")
        if git.current_branch(root) == branch:
            raise GitmemError(f"HEAD is on the review branch {branch}",
                              "check out your own branch first (e.g. `git switch main`), then run `gitmem reflect`")
        pending = read_ref(root, self.ref)  # the CAS expectation, read before any slow work
        check_ours(root, self.ref, pending)  # before the slow work too: the same refusal later would waste it
        pending_base = git.first_parent(root, pending) if pending else None
        state = read_state(root, head)
        self.notes += state.notes
        result: dict[str, Any] = {"branch": branch, "base": head, "pending": pending, "commit": None,
                                  "dry_run": self.opts.dry_run}
        if self.opts.if_needed and pending and pending_base == head and not self.opts.since:
            return {**result, "status": "up-to-date", "commit": pending,
                    "message": f"a proposal built on HEAD is already pending on {branch}: run `gitmem review`"}
        with Session(self.ws) as s:
            self.notes += s.notes
            if s.tip != head:
                raise GitmemError(
                    "the index does not follow HEAD (index.branch points elsewhere, or another indexer is running)",
                    "check out the indexed branch, or wait a moment and re-run `gitmem reflect`")
            if self.opts.since:
                start = s.position_before(self.opts.since)
            else:
                pos = gather.position_of(s, state.through)
                if pos is None:
                    self.notes.append(f"the last reflection ({state.through[:7] if state.through else '?'}) is not on this "
                                      "branch's history any more: reading all facts")
                    pos = 0
                start = pos
            win = gather.window(s, start, self.cfg.reflect.max_facts)
            if win.capped:
                self.notes.append(f"more than reflect.max_facts={self.cfg.reflect.max_facts} new facts: this run reads "
                                  f"those through {win.through[:7]}; run again for the rest")
            builder = Builder(root, head)
            logs = self._logs_without_retain(builder, win)
            result.update({"since": state.through if not self.opts.since else self.opts.since,
                           "through": win.through, "facts": len(win.facts)})
            if not win.facts and not (logs and self.opts.model):
                return {**result, "status": "nothing-new", "notes": self.notes,
                        "message": "no new facts since the last reflection"}
            self.window = discarded.window_key(result["since"], [(r.path, r.id) for r in win.facts if r.id is not None], logs)
            if self.window in self.discarded.windows:  # checked before the model loads: cheap for cron
                return {**result, "status": "nothing-new", "notes": self.notes,
                        "message": "nothing new since the proposal you discarded (`gitmem review --discard`); "
                                   "it comes back only with new facts"}
            if self.opts.model is not None:
                self.model = self.opts.model()
            return self._propose(s, builder, state, win, logs, pending, result)

    def _logs_without_retain(self, builder: Builder, win: gather.Window) -> list[str]:
        out = []
        for path in win.paths:
            if log_date(path) is None or not layout.LOG_NAME.fullmatch(path):
                continue
            text = builder.base_text(path)
            if text is None:
                continue
            if not any(s.is_retain for s in sections(text, path)):
                out.append(path)
        return out

    # ------------------------------------------------------------------------------------
    def _propose(self, s: Session, builder: Builder, state: State, win: gather.Window, logs: list[str],
                 pending: str | None, result: dict[str, Any]) -> dict[str, Any]:
        at = _iso_date(win.through_time)
        names = _display_names(win.facts)
        keys = sorted({k for r in win.facts for k in r.entities})
        ops = gather.current_opinions(s)
        if self.model and ops:
            # A model that judges the wrong way too often (or was never checked) may not move beliefs.
            self.trust = judge.trust(self.ws, self.model.name, str(getattr(self.model, "runtime", "")))
            self.notes.append(self.trust.reason)
        # The gate and the rules need no model: without one that may judge, the rules' verdicts alone count.
        pairs = self._pairs(s, ops, win) if (self.trust and self.trust.allowed) or judge.RULES_FIRST else {}
        drafting = bool(logs) and self._drafts_retain()
        self.total = len(keys) + sum(len(v) for v in pairs.values()) + (len(logs) if drafting else 0) + 4
        # Records of pages this run does not touch carry over, or their blocks would look hand-written next time.
        blocks: dict[str, str] = dict(state.blocks)

        opinions = self._opinions(ops, pairs, state, at)
        if opinions:
            self._write_page(builder, layout.OPINIONS_PAGE, "Opinions", [("opinions", pages.opinions_block(opinions))],
                             state, blocks, "opinions")
        self.tick("opinions")

        existing = self._entity_pages(builder)
        canon = self._aliases(s, builder, existing)
        keys = sorted({canon.get(k, k) for k in keys})
        aliases_of: dict[str, list[str]] = {}
        for old_key, new_key in sorted(canon.items()):
            aliases_of.setdefault(new_key, []).append(names.get(old_key, old_key))
        summaries = self._writes_summaries()

        def replaced(facts: list[Result]) -> dict[int | None, Result]:
            # What the index holds replaced, and a move from one named place to another.
            return {**gather.replaced_in_index(s, facts), **pages.moves_supersede(facts)}

        for key in keys:
            self.tick(f"entity {key}")
            name = names.get(key, key)
            try:
                path = existing.get(key) or entity_page(name)
            except UnsafeWrite as exc:
                self.reject(f"entity {name}", exc.reason)
                continue
            facts = gather.entity_facts(s, key)
            for alias in sorted(k for k, v in canon.items() if v == key):
                facts += [r for r in gather.entity_facts(s, alias) if r.id not in {f.id for f in facts}]
                if alias in existing:
                    self.notes.append(f"{existing[alias]} is now an alias of {path} (the log says so); "
                                      "reflection no longer updates it: merge or delete it by hand")
            current, _ = pages.current_and_past([r for r in facts if pages.curatable(r)], at, replaced)
            summary = self._summary(name, current) if summaries and current else None
            also = {key, *(k for k, v in canon.items() if v == key)}
            about = [o for o in opinions if also.intersection(o.entities)]
            self._write_page(builder, path, name,
                             pages.entity_blocks(summary, facts, about, at, aliases_of.get(key), replaced),
                             state, blocks, "entity")

        for kind, path, title in (("world", layout.WORLD_PAGE, "World"), ("experience", layout.EXPERIENCE_PAGE, "Experience")):
            if any(r.kind == kind for r in win.facts):
                current, _ = pages.current_and_past(gather.current_facts(s, kind), at, replaced)
                self._write_page(builder, path, title, [(kind, pages.list_block(current))], state, blocks, kind)
        self.tick("world and experience")

        if drafting:
            for path in logs:
                self.tick(f"retain {path}")
                self._draft_retain(builder, path)
        self._memory_proposals(builder, opinions, state, blocks)
        self.tick("memory proposals")

        if layout.OPINIONS_PAGE in self.turned_down:
            self.changes = [c for c in self.changes if not isinstance(c, OpinionChange)]
        if self.turned_down:
            self.notes.append(f"left out, as discarded in an earlier review: {', '.join(self.turned_down)}")
            if not any(isinstance(c, (PageChange, RetainChange)) for c in self.changes):
                return {**result, "status": "nothing-new", "notes": self.notes,
                        "message": "nothing new since the proposal you discarded (`gitmem review --discard`); "
                                   "it comes back only with new facts"}

        changes = [c.to_json() for c in self.changes]  # the JSON shape: docs/json-contract.md
        run_summary = {"base": result["base"],
                       "since": result["since"], "through": win.through, "facts": len(win.facts),
                       "model": self.model.name if self.model else None, "window": self.window, "changes": changes,
                       "skipped": self.skipped, "rejected": self.rejected}
        new_state = State(through=win.through, through_time=datetime.fromtimestamp(win.through_time, timezone.utc).isoformat(),
                          model=self.model.name if self.model else None, blocks=dict(sorted(blocks.items())),
                          opinions=self._state_opinions(state, opinions), run=run_summary)
        builder.write(STATE_PATH, new_state.to_bytes())
        message = self._message(result, win)
        commit = builder.commit(message)
        stat = git.out(self.root, "diff", "--stat", result["base"], commit)
        result.update({"commit": commit, "diffstat": stat, "changes": changes, "skipped": self.skipped,
                       "rejected": self.rejected, "opinions": [o.to_json() for o in opinions],
                       "model": run_summary["model"], "notes": self.notes, "message": message})
        if self.opts.dry_run:
            result["status"] = "dry-run"
            return result
        self.tick("writing the proposal")
        with self.ws.writing():  # the review branch is a ref forget rewrites
            move(self.root, self.ref, commit, pending)
        result["status"] = "unchanged" if pending == commit else "written"
        return result

    # ------------------------------------------------------------------------------------
    def _pairs(self, s: Session, ops: list[Result], win: gather.Window) -> dict[int | None, list[Result]]:
        out: dict[int | None, list[Result]] = {}
        budget = gather.MAX_PAIRS
        passed = considered = 0
        for op in ops:
            if budget <= 0:
                self.notes.append(f"more than {gather.MAX_PAIRS} (fact, opinion) pairs: the rest wait for the next run")
                break
            # The relevance gate runs before any model call: only facts about the opinion's subject.
            evidence = [f for f in win.facts if f.fact and f.kind != "opinion"]
            pool = [f for f in evidence if judge.relevant(f.content, op.content).passed]
            considered += len(evidence)
            passed += len(pool)
            cands = gather.candidates(s, op, pool, win.through)[:budget]
            if cands:
                out[op.id] = cands
                budget -= len(cands)
        self.notes.append(f"relevance gate: {passed} of {considered} (fact, opinion) pairs concern the opinion's subject")
        return out

    def _opinions(self, ops: list[Result], pairs: dict[int | None, list[Result]], state: State,
                  at: str) -> list[Opinion]:
        out: list[Opinion] = []
        for op in ops:
            key = _okey(op.content)
            prev = state.opinions.get(key) or {}
            stated = op.confidence
            restated = not prev or prev.get("stated") != stated
            before = confidence.start(stated) if restated else float(prev.get("confidence", confidence.DEFAULT))
            evidence: list[confidence.Evidence] = []
            for fact in pairs.get(op.id, []):
                self.tick("judging evidence")
                cal = self.trust.calibration if self.trust and self.trust.allowed else None
                if cal is None:  # no model that may judge: the rules only
                    verdict = judge.by_rules(fact.content, op.content)
                else:
                    verdict = self.ask(f"judge {fact.source} vs {op.source}",
                                       partial(judge.judge, self._model(), cal, fact.content, op.content))  # type: ignore[arg-type]
                if verdict is None or verdict.relation == "unrelated":
                    continue
                evidence.append(confidence.Evidence(verdict.relation, verdict.strength, fact.path, fact.commit,
                                                    fact.content, fact.source, verdict.by))
            seen = {confidence.evidence_key(e.get("path", ""), e.get("content", ""))
                    for rel in ("supports", "contradicts") for e in prev.get(rel, []) if isinstance(e, dict)}
            seen |= self.discarded.evidence.get(key, set())  # turned down in a review: never counted again
            upd = confidence.update(before, evidence, seen)
            history = list(prev.get("history", []))
            if restated:
                # Dated when memory said it (the version's commit), not by this reflection: the
                # trajectory (review --html's chart, opinions --history) starts where the user did.
                history.append({"at": _said_on(op, at), "commit": op.commit, "confidence": upd.before, "delta": 0.0,
                                "reason": "stated" if not prev else "restated in memory"})
            if upd.counted:
                history.append({"at": at, "commit": op.commit, "confidence": upd.after, "delta": upd.delta,
                                "reason": f"{len(upd.counted)} new evidence" + (" (clamped)" if upd.clamped else "")})
            supports = list(prev.get("supports", [])) + [_ev_dict(e, at) for e in upd.counted if e.relation == "supports"]
            contradicts = list(prev.get("contradicts", [])) + [_ev_dict(e, at) for e in upd.counted if e.relation == "contradicts"]
            changed = restated or bool(upd.counted)
            body = clean_inline(op.content, 300)
            bullet = f"- O(c={upd.after:.2f}) {body}"
            if not isinstance(parse_retain_bullet(bullet), RetainFact):
                self.reject(f"opinion {op.source}", "its statement does not make a valid Retain bullet")
                bullet = ""
            out.append(Opinion(
                key=key, id=op.id, statement=op.content, entities=op.entities, stated=stated, confidence=upd.after,
                delta=round(upd.after - float(prev.get("confidence", upd.before)), 2),
                last_updated=at if changed else prev.get("last_updated", at), source=op.source,
                history=history, supports=supports, contradicts=contradicts, bullet=bullet))
            if upd.counted or restated:
                self.changes.append(OpinionChange(
                    layout.OPINIONS_PAGE, key, clean_inline(op.content, 120), upd.before, upd.after, upd.delta, upd.clamped,
                    [EvidenceStep(e.relation, e.strength, e.delta, e.source, e.content, e.path, e.by)
                     for e in upd.counted]))
        return out

    def _state_opinions(self, state: State, opinions: list[Opinion]) -> dict[str, dict[str, Any]]:
        # Opinions no longer in memory keep their record, so their history stays viewable.
        out = {k: dict(v, current=False) for k, v in state.opinions.items()}
        for o in opinions:
            out[o.key] = o.to_state()
        return dict(sorted(out.items()))

    def _entity_pages(self, builder: Builder) -> dict[str, str]:
        try:
            tree = builder.base.tree[ENTITIES_DIR]
        except KeyError:
            return {}
        from pygit2 import Tree  # loaded already: the builder uses it

        out: dict[str, str] = {}
        if not isinstance(tree, Tree):
            return out
        for entry in sorted(tree, key=lambda e: e.name or ""):
            name = entry.name or ""  # pygit2 types it Optional; tree entries always have one
            if name.endswith(".md") and entry.type_str == "blob":
                out.setdefault(entity_key(name[:-3]), f"{ENTITIES_DIR}/{name}")
        return out

    def _writes_summaries(self) -> bool:
        """Ask the model for entity summaries? Not when its measured summaries fail the gate (they
        would only cost time: most of a cold reflection with the bundled model)."""
        return self._drafts("entity summaries not written", "summaries", "page", lambda cal: cal.summaries)

    def _drafts_retain(self) -> bool:
        """Ask the model to draft Retain sections? Not when its measured bullets fail the Retain gate."""
        return self._drafts("Retain sections not drafted", "drafted Retain bullets", "Retain", lambda cal: cal.retain)

    def _drafts(self, what: str, drafts: str, gate_name: str, share: Callable[[judge.Calibration], float | None]) -> bool:
        """Whether the model's measured share of `drafts` passing their gate (None: not measured)
        is worth asking for more (`judge.worth_drafting`); if not, a note says so and names the
        setting to change."""
        if self.model is None:
            return False
        cal = judge.load_calibration(self.ws, self.model.name)
        measured = share(cal) if cal is not None else None
        if measured is None or judge.worth_drafting(measured):
            return True
        self.notes.append(f"{what}: {measured:.0%} of this model's {drafts} passed the {gate_name} gate when it was "
                          f"measured (`gitmem model check`, bench/reflect_judge.py); set a larger model with "
                          f"`{judge.CONFIG_HINT}`")
        return False

    def _summary(self, name: str, facts: list[Result]) -> str | None:
        """The model's summary of the current facts about an entity, if it passes the gate."""
        from gitmem.reflect.prompts import gated_summary

        # partial, not a lambda: the arguments are bound now (ask calls it at once anyway).
        summary: str | None = self.ask(f"summary of {name}", partial(gated_summary, self._model(), name,
                                                                     [f.content for f in facts]))
        return summary

    def _aliases(self, s: Session, builder: Builder, existing: dict[str, str]) -> dict[str, str]:
        """{alias key: canonical key} from the renames the memory states ("formerly called X",
        "renamed X to Y", "aka") and the `aliases:` lines of existing entity pages. A pair counts
        only when one side is a known entity; chains resolve to the newest name, cycles are dropped."""
        pairs: list[tuple[str, str]] = []
        for text in gather.rename_statements(s):
            pairs += renames(text)
        for key, path in existing.items():
            pairs += [(key, alias) for alias in page_aliases(builder.base_text(path) or "")]
        known = gather.known_entities(s, {k for pair in pairs for k in pair})
        canon: dict[str, str] = {}
        for new, old in pairs:
            if (new in known or old in known) and old not in canon:
                canon[old] = new
        resolved: dict[str, str] = {}
        for old in canon:
            seen, cur = {old}, canon[old]
            while cur in canon and cur not in seen:
                seen.add(cur)
                cur = canon[cur]
            if cur != old and cur not in canon:
                resolved[old] = cur
        return resolved

    def _write_page(self, builder: Builder, path: str, title: str, blocks: list[tuple[str, str | None]], state: State,
                    hashes: dict[str, str], what: str) -> None:
        if not blocks:
            return
        old = builder.base_text(path)
        res = pages.merge_page(path, old, title, blocks, state.blocks)
        self.skipped += res.skipped
        data = res.text.encode("utf-8")
        if res.text != old and discarded.content_key(data) in self.discarded.pages.get(path, ()):
            self.turned_down.append(path)  # this exact page was discarded in a review: not again
            return
        try:
            changed = builder.write(path, data)
        except UnsafeWrite as exc:
            self.reject(path, exc.reason)
            return
        hashes.update(res.hashes)
        if changed:
            self.changes.append(PageChange(path, what, "added" if old is None else "updated", res.written))

    def _model(self) -> Model:
        """The model, on the paths that only run with one (the callers check `self.model`)."""
        if self.model is None:
            raise GitmemError("reflection needs a model for this step", "this is a gitmem bug; please report it")
        return self.model

    def _draft_retain(self, builder: Builder, path: str) -> None:
        from gitmem.reflect.prompts import RetainDraft, gated_retain

        old = builder.base_text(path) or ""
        day = log_date(path)
        if day is None:  # _logs_without_retain only picks daily logs
            raise GitmemError(f"{path} is not a daily log", "this is a gitmem bug; please report it")
        drafted: RetainDraft | None = self.ask(f"Retain for {path}", partial(gated_retain, self._model(), old, day.isoformat()))
        if drafted is None:
            return
        for line, why in drafted.rejected:
            self.reject(f"Retain for {path}: {line}", why)
        bullets = drafted.kept
        if not bullets:
            return
        sep = "" if old.endswith("\n") or not old else "\n"
        new = f"{old}{sep}\n## Retain\n" + "\n".join(bullets) + "\n"
        try:
            builder.write(path, new.encode("utf-8"))
        except UnsafeWrite as exc:
            self.reject(f"Retain for {path}", exc.reason)
            return
        self.changes.append(RetainChange(path, bullets))

    def _memory_proposals(self, builder: Builder, opinions: list[Opinion], state: State,
                          hashes: dict[str, str]) -> None:
        core = (builder.base_text(layout.CORE_FILE) or "").lower()
        strong = [o for o in opinions if o.confidence >= PROPOSE_MEMORY_AT and o.bullet
                  and " ".join(o.statement.lower().split()) not in " ".join(core.split())]
        if not strong:
            return
        body = ("Proposed additions to memory.md (reflection never edits memory.md: copy what you agree with).\n\n"
                + "\n".join(f"{o.bullet} ({o.source})" for o in strong))
        self._write_page(builder, layout.CORE_PROPOSALS_PAGE, "Proposals for memory.md", [("memory", body)],
                         state, hashes, "memory proposals")

    def _message(self, result: dict[str, Any], win: gather.Window) -> str:
        files = sorted({c.path for c in self.changes})
        since = result.get("since")
        lines = [f"gitmem reflect: {len(win.facts)} facts, {len(files)} files",
                 "",
                 f"Facts added after {since[:7] if since and len(since) == 40 else since or 'the beginning'} "
                 f"through {win.through[:7]}; model: {self.model.name if self.model else 'none (--no-llm)'}.",
                 ""]
        for c in self.changes:
            if isinstance(c, OpinionChange) and not c.evidence:
                lines.append(f"- {c.path}: {c.opinion[:70]}: c={c.after:.2f} (as stated in memory)")
            elif isinstance(c, OpinionChange):
                lines.append(f"- {c.path}: {c.opinion[:70]}: {c.before:.2f} -> {c.after:.2f} ({c.delta:+.2f})")
            elif isinstance(c, RetainChange):
                lines.append(f"- {c.path}: updated (retain)")
            else:
                lines.append(f"- {c.path}: {c.status} ({c.what})")
        for sk in self.skipped:
            lines.append(f"- skipped {sk['path']} block {sk['block']}: {sk['reason']}")
        for rj in self.rejected:
            lines.append(f"- rejected model output for {rj['item']}: {rj['reason']}")
        lines.append("")
        lines.append("Review with `gitmem review`; merge with `gitmem review --merge`.")
        return "\n".join(lines) + "\n"


def reflect(ws: Workspace, opts: RunOptions | None = None) -> dict[str, Any]:
    """Run one reflection (see the module docstring); returns a JSON-able result with `status` in
    written|unchanged|dry-run|nothing-new|up-to-date. Raises ReflectRace when another run moved the
    branch meanwhile, GitmemError for problems the user can fix."""
    return _Run(ws, opts or RunOptions()).run()
