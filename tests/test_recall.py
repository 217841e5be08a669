"""Recall on the demo workspace (known answers) and the as-of promise on edited histories."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem import demo
from gitmem.errors import BadQuery, BadRevision, GitmemError
from gitmem.recall import views
from gitmem.recall.search import Options, Session
from gitmem.workspace import Workspace
from gitrepo import GitRepo, sealed_demo
from indexoracle import recalled, tree_chunks


@pytest.fixture(scope="module")
def demo_ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(sealed_demo(tmp_path_factory, "demo").root)


def contents(answer: object) -> list[str]:
    return [r.content for r in answer.results]  # type: ignore[attr-defined]


def test_as_of_dates_give_the_answer_true_then(demo_ws: Workspace) -> None:
    with Session(demo_ws) as s:
        before = s.search("where does Peter live", Options(k=3, as_of=demo.ASK_BEFORE_MOVE))
        after = s.search("where does Peter live", Options(k=3, as_of=demo.ASK_AFTER_MOVE))
        now = s.search("where does Peter live", Options(k=3))
    assert demo.CITY_BEFORE in before.results[0].content
    assert not any(demo.CITY_AFTER in c for c in contents(before))
    assert demo.CITY_AFTER in after.results[0].content
    assert demo.CITY_AFTER in now.results[0].content
    assert before.as_of and before.as_of["commit"] and after.index["commit"] == demo_ws_head(demo_ws)


def demo_ws_head(ws: Workspace) -> str:
    return subprocess.run(["git", "-C", str(ws.root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()


def test_deleted_fact_is_found_as_of_before_deletion_only(demo_ws: Workspace) -> None:
    needle = "password hint"
    with Session(demo_ws) as s:
        then = s.search(needle, Options(k=5, as_of="2025-11-27"))
        now = s.search(needle, Options(k=5, kinds=("note",)))
        hist = s.search(needle, Options(k=10, include_history=True))
    assert any("Castle admin password hint" in c for c in contents(then))
    assert not any("Castle admin password hint" in c for c in contents(now))
    removed = [r for r in hist.results if "Castle admin password hint" in r.content]
    assert removed and removed[0].status == "removed" and removed[0].valid_until.time.startswith(demo.DELETE_DATE)


def test_every_result_carries_the_contract_fields_and_exact_citations(demo_ws: Workspace) -> None:
    with Session(demo_ws) as s:
        ans = s.search("Peter", Options(k=10, as_of="2025-11-30"))
    assert ans.results
    for r in ans.results:
        for key in ("kind", "timestamp", "record_time", "entities", "content", "source", "confidence", "commit"):
            assert key in r.to_json()
        shown = views.show(demo_ws, r.source)
        text = " ".join(line.strip() for line in shown["lines"])
        first_words = r.content.split()[:3]
        assert all(w in text for w in first_words), (r.source, shown["lines"], r.content)
    opinions = [r for r in ans.results if r.kind == "opinion"]
    assert opinions and all(isinstance(r.confidence, float) for r in opinions)


def test_revision_forms_and_bad_when(demo_ws: Workspace) -> None:
    with Session(demo_ws) as s:
        a = s.search("Peter", Options(k=50, as_of="HEAD~3"))
        oid = subprocess.run(["git", "-C", str(demo_ws.root), "rev-parse", "HEAD~3"], capture_output=True,
                             text=True).stdout.strip()
        b = s.search("Peter", Options(k=50, as_of=oid[:10]))
        assert a.as_of and a.as_of["commit"] == oid and contents(a) == contents(b)
        with pytest.raises(BadRevision):
            s.search("Peter", Options(as_of="not-a-date-or-rev"))
        merge = subprocess.run(["git", "-C", str(demo_ws.root), "rev-list", "--merges", "-1", "HEAD"],
                               capture_output=True, text=True).stdout.strip()
        side = merge + "^2"  # the merged side branch's commit: not on the first-parent line
        with pytest.raises(BadRevision, match="first-parent"):
            s.search("Peter", Options(as_of=side))
        assert s.search("Peter", Options(as_of="2020-01-01")).results == []


def test_filters_kind_entity_during_since_until(demo_ws: Workspace) -> None:
    with Session(demo_ws) as s:
        world = s.search("", Options(k=100, kinds=("world",)))
        assert world.results and {r.kind for r in world.results} == {"world"}
        castle = s.search("", Options(k=100, entity="the castle"))
        assert castle.results and all("the-castle" in r.entities for r in castle.results)
        trip = s.search("", Options(k=100, during="2025-11-29"))
        assert any("Marrakech" in c for c in contents(trip))  # Nov 27–Dec 1 overlaps Nov 29
        assert all(r.event_start <= "2025-11-29" <= r.event_end for r in trip.results)
        window = s.search("", Options(k=500, since="2025-12-02", until="2025-12-03"))
        days = {r.record_time[:10] for r in window.results}
        assert days and days <= {"2025-12-02", "2025-12-03"}
        with pytest.raises(GitmemError):
            s.search("", Options(kinds=("bogus",)))


def test_natural_language_and_raw_queries(demo_ws: Workspace) -> None:
    with Session(demo_ws) as s:
        ans = s.search("what did we decide about the Castle?", Options(k=5))
        assert ans.results and any("the-castle" in r.entities for r in ans.results)
        # FTS5 operators in a question are just words
        assert s.search('AND OR NOT "NEAR( -col: *', Options(k=5)) is not None
        assert s.search("relay", Options(k=5, raw=True)).results
        with pytest.raises(BadQuery):
            s.search("relay AND (", Options(raw=True))


def test_budget_packs_into_tokens(demo_ws: Workspace) -> None:
    from gitmem.recall.result import estimate_tokens

    with Session(demo_ws) as s:
        for budget in (60, 200, 1000):
            ans = s.search("Peter relay Castle", Options(budget=budget))
            assert sum(estimate_tokens(r.line()) for r in ans.results) <= budget
        assert len(s.search("Peter relay Castle", Options(budget=1000)).results) > len(
            s.search("Peter relay Castle", Options(budget=60)).results)


def test_views_about_opinions_why_changes_core(demo_ws: Workspace) -> None:
    with Session(demo_ws) as s:
        about = views.about(s, "The Castle")
        assert about.page and about.page["path"] == "bank/entities/The-Castle.md"
        stamps = [r.timestamp for r in about.results]
        assert stamps == sorted(stamps, reverse=True)
        early = views.about(s, "the_castle", as_of="2025-11-15")
        assert early.page is None  # the page arrived with the merge on Dec 1
        ops = views.opinions(s, entity="Peter", min_confidence=0.7)
        assert ops["opinions"] and all(o["confidence"] >= 0.7 for o in ops["opinions"])
        why = views.why(s, "Peter lives in Lisbon")
        assert [demo.CITY_BEFORE in v["content"] for v in why["versions"]][:2] == [True, False]
        assert why["versions"][0]["valid_until"]["time"].startswith(demo.MOVE_DATE)
        ch = views.changes(s, since=demo.RENAME_DATE, until=demo.RENAME_DATE, by_entity=True)
        changed = [c for c in ch["changes"] if c["change"] == "changed"]
        assert any(demo.OLD_PROJECT in c["previous"]["content"] and demo.NEW_PROJECT in c["content"] for c in changed)
        assert "relay" in ch["by_entity"]
        core = views.core(s, budget=300)
        assert core["markdown"].startswith("# Core memory") and core["tokens"] <= 300 + 50
        with pytest.raises(GitmemError):
            views.show(demo_ws, "memory.md#L999@" + demo_ws_head(demo_ws)[:7])


def test_recall_catches_up_when_behind(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("a", "2025-11-01", {"memory.md": "- alpha fact\n"})
    ws = Workspace(repo.path)
    assert recalled(ws, None) == {("memory.md", "alpha fact")}
    repo.commit("b", "2025-11-02", {"memory.md": "- alpha fact\n- beta fact\n"})  # no hook installed
    with Session(ws) as s:
        ans = s.search("beta", Options(k=5))
        assert contents(ans) == ["beta fact"] and ans.index["stale"] is False


def test_as_of_never_leaks_across_edits_reverts_and_skewed_clocks(tmp_path: Path) -> None:
    """The core promise: for every commit and for dates between them, the as-of answer is exactly
    the memory of that point: nothing later, nothing missing."""
    repo = GitRepo.init(tmp_path / "r")
    steps = [
        ("2025-11-01", {"memory.md": "- Peter lives in Berlin\n- likes tea\n"}),
        ("2025-11-05", {"memory.md": "- Peter lives in Lisbon\n- likes tea\n"}),
        ("2025-11-03", {"memory/2025-11-03.md": "## Retain\n- O(c=0.6) @Peter: likes coffee\n"}),  # clock behind
        ("2025-11-08", {"memory.md": "- likes tea\n"}),
    ]
    for i, (day, files) in enumerate(steps):
        repo.commit(f"s{i}", day, files)
    repo.git("revert", "--no-edit", "HEAD", date="2025-11-09")
    repo.commit("after revert", "2025-11-10", {"memory/2025-11-03.md": "## Retain\n- O(c=0.7) @Peter: likes coffee\n"})
    ws = Workspace(repo.path)
    oids = repo.git("rev-list", "--first-parent", "--reverse", "HEAD").split()
    for oid in oids:
        assert recalled(ws, oid) == tree_chunks(repo.path, oid)
    # dates: the state is that of the last commit whose date, and every earlier commit's date, is <= WHEN
    times = [int(repo.git("show", "-s", "--format=%ct", o)) for o in oids]
    from datetime import datetime

    for day in ("2025-11-02", "2025-11-04", "2025-11-06", "2025-11-09", "2025-11-10"):
        end = int(datetime.fromisoformat(f"{day}T23:59:59+00:00").timestamp())
        running, expect = 0, None
        for oid, t in zip(oids, times):
            running = max(running, t)
            if running <= end:
                expect = oid
        want = tree_chunks(repo.path, expect) if expect else set()
        with Session(ws) as s:
            got = s.search("", Options(k=1000, as_of=f"{day}T23:59:59+00:00")).results
        assert {(r.path, r.content) for r in got} == want, day
        assert all(r.record_time is None or datetime.fromisoformat(r.record_time).timestamp() <= end
                   for r in got)


def test_cli_formats_and_errors(demo_ws: Workspace) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gitmem", "-C", str(demo_ws.root), *args],
                              capture_output=True, text=True)

    j = json.loads(run("recall", "relay", "--json", "-k", "3").stdout)
    assert j["index"]["commit"] and len(j["results"]) == 3
    lines = run("recall", "relay", "--format", "jsonl", "-k", "3").stdout.strip().splitlines()
    assert len(lines) == 3 and all(json.loads(x)["source"] for x in lines)
    md = run("recall", "relay", "--format", "md", "-k", "2").stdout
    assert md.count("\n- ") + md.startswith("- ") >= 1
    bad = run("recall", "relay AND (", "--raw")
    assert bad.returncode == 1 and "malformed" in bad.stderr and "Traceback" not in bad.stderr
    usage = run("recall", "--k", "zero")
    assert usage.returncode == 2
    shown = run("show", j["results"][0]["source"])
    assert shown.returncode == 0 and shown.stdout.strip()


def test_result_writes_each_json_field_by_its_rule_and_is_immutable() -> None:
    from gitmem.recall.result import Ended, Replacement, Result

    base = Result(id=7, kind="world", fact=True, content="@Peter: Moved to Lisbon.", entities=("peter",),
                  confidence=None, timestamp="2025-11-20", event_start="2025-11-20", event_end="2025-11-20",
                  record_time="2025-11-20T10:00:00+01:00", status="current", source="memory/2025-11-20.md#L6@abcdef0",
                  path="memory/2025-11-20.md", lines=(6, 6), heading="2025-11-20 > Retain", commit="abcdef0", score=1.5)
    plain = ["id", "kind", "fact", "content", "entities", "confidence", "timestamp", "event_start", "event_end",
             "record_time", "status", "source", "path", "lines", "heading", "commit", "score"]
    j = base.to_json()
    assert list(j) == plain and j["entities"] == ["peter"] and j["lines"] == [6, 6]
    ended = base._replace(status="superseded", valid_until=Ended("b" * 40, "2025-11-21T09:00:00+01:00"), successor=9)
    assert list(ended.to_json()) == [*plain, "valid_until", "successor"]
    assert ended.to_json()["valid_until"] == {"commit": "b" * 40, "time": "2025-11-21T09:00:00+01:00"}
    marked = base._replace(marked=True, superseded_by=Replacement(9, "bank/world.md#L3@1234567", "moved"),
                     copies=("bank/entities/Peter.md#L5@1234567",), excerpt=True)
    assert list(marked.to_json()) == [*plain, "superseded_by", "copies", "past", "excerpt"]
    assert marked.to_json()["superseded_by"] == {"id": 9, "source": "bank/world.md#L3@1234567", "reason": "moved"}
    assert marked.to_json()["copies"] == ["bank/entities/Peter.md#L5@1234567"]
    # The line leaves out what the citation says (the log's date) and says what currency decided.
    assert marked.line() == ("[world] @Peter: Moved to Lisbon. (memory/2025-11-20.md#L6@abcdef0)"
                             " [superseded by bank/world.md#L3@1234567] [also in bank/entities/Peter.md#L5@1234567]")
    assert marked.tokens() == len(marked.line()) // 4 + 1
    with pytest.raises(AttributeError):
        base.content = "changed"  # type: ignore[misc]
    assert "marked" not in marked.to_json()  # never written: it says the currency fields are


def test_recall_json_is_the_library_answer(demo_ws: Workspace) -> None:
    with Session(demo_ws) as s:
        ans = s.search("where does Peter live", Options(k=5, as_of="2025-12-01", include_history=True))
    out = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(demo_ws.root), "recall", "--json", "-k", "5",
                          "--as-of", "2025-12-01", "--include-history", "where does Peter live"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["results"] == [r.to_json() for r in ans.results] and ans.results
