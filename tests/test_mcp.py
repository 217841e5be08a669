"""`gitmem mcp`: a real MCP client talks to the real server over stdio, on the demo workspace."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem import demo

# Before any import the extra brings (anyio comes with mcp): without it, skip this module only.
pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from gitrepo import sealed_demo  # noqa: E402

CITATION = re.compile(r"^[^#]+\.md#L\d+(-L\d+)?@([0-9a-f]{7}|worktree)$")
TOOLS = {"recall", "about", "opinions", "changes", "why", "core", "retain"}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sealed_demo(tmp_path_factory, "mcp").root


def _run(ws: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], list[Any]]:
    """Start `python -m gitmem -C ws mcp`, list its tools, make `calls`; return (tools, results)."""

    async def main() -> tuple[list[Any], list[Any]]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "gitmem", "-C", str(ws), "mcp"])
        with anyio.fail_after(120):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                tools = (await session.list_tools()).tools
                results = [await session.call_tool(name, args) for name, args in calls]
                return tools, results

    return anyio.run(main)


def _data(result: Any) -> dict[str, Any]:
    """The tool's JSON, checked to be the same in the text block and the structured content."""
    text = json.loads(result.content[0].text)
    assert result.structured_content == text
    return text


def _sources(items: list[dict[str, Any]]) -> list[str]:
    assert items, "expected cited results"
    for item in items:
        assert CITATION.match(item["source"]), item["source"]
    return [i["source"] for i in items]


def test_tools_listed_and_each_answers_with_citations(ws: Path) -> None:
    calls = [
        ("recall", {"query": "where does Peter live"}),
        ("recall", {"query": "where does Peter live", "as_of": demo.ASK_BEFORE_MOVE, "k": 3}),
        ("about", {"entity": "Peter", "k": 5}),
        ("opinions", {"entity": "Peter", "history": True}),
        ("changes", {"since": "2025-11-19", "until": "2025-11-21"}),
        ("why", {"target": "Peter lives in"}),
        ("core", {"budget": 300}),
        ("recall", {"query": "a AND (", "raw": True}),
    ]
    tools, results = _run(ws, calls)
    by_name = {t.name: t for t in tools}
    assert set(by_name) == TOOLS
    for t in tools:
        assert t.description
        assert t.input_schema["type"] == "object"
    assert by_name["recall"].input_schema["properties"]["k"]["anyOf"][0]["type"] == "integer"
    assert by_name["retain"].input_schema["required"] == ["bullet"]
    assert by_name["about"].input_schema["required"] == ["entity"]

    recall_now, recall_then, about, opinions, changes, why, core, bad = results
    assert not any(r.is_error for r in results[:-1])

    now = _data(recall_now)
    _sources(now["results"])
    assert demo.CITY_AFTER in now["results"][0]["content"]
    then = _data(recall_then)
    assert then["as_of"]["when"] == demo.ASK_BEFORE_MOVE
    assert len(then["results"]) <= 3
    assert demo.CITY_BEFORE in then["results"][0]["content"]
    assert not any(demo.CITY_AFTER in r["content"] for r in then["results"])

    a = _data(about)
    assert a["entity"] == "peter"
    assert 0 < len(a["results"]) <= 5
    _sources(a["results"])
    assert all("peter" in r["entities"] for r in a["results"])

    o = _data(opinions)
    _sources(o["opinions"])
    assert all("history" in x for x in o["opinions"])

    c = _data(changes)
    _sources(c["changes"])
    assert any(x["change"] == "changed" and demo.CITY_AFTER in x["content"] for x in c["changes"])

    w = _data(why)
    _sources(w["versions"])
    assert [demo.CITY_BEFORE in v["content"] for v in w["versions"]][:1] == [True]
    assert any(demo.CITY_AFTER in v["content"] for v in w["versions"])

    co = _data(core)
    assert co["budget"] == 300
    assert co["markdown"].startswith("# Core memory")

    assert bad.is_error
    err = json.loads(bad.content[0].text)
    assert err["type"] == "BadQuery" and err["error"] and err["hint"]


def test_same_json_as_the_cli(ws: Path) -> None:
    _, (result,) = _run(ws, [("recall", {"query": "warelay", "as_of": demo.ASK_BEFORE_RENAME})])
    cli = subprocess.run(
        [sys.executable, "-m", "gitmem", "-C", str(ws), "recall", "warelay", "--as-of", demo.ASK_BEFORE_RENAME,
         "--json"], capture_output=True, text=True, check=True,
    )
    assert _data(result) == json.loads(cli.stdout)


def test_retain_appends_commits_and_is_recalled_next_call(tmp_path: Path) -> None:
    root = demo.build_demo(tmp_path / "ws").root
    head_before = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                 check=True).stdout.strip()
    bullet = "W @Peter: Bought a red bicycle named Zoltrak on 2025-12-13."
    _, (retained, bad, found) = _run(root, [
        ("retain", {"bullet": bullet, "day": "2025-12-13"}),
        ("retain", {"bullet": "Q @Peter: not a kind", "day": "2025-12-13"}),
        ("recall", {"query": "Zoltrak"}),
    ])
    r = _data(retained)
    assert r["committed"] and r["path"] == "memory/2025-12-13.md"
    assert r["source"] == f"memory/2025-12-13.md#L{r['line']}@{r['commit'][:7]}"
    log = subprocess.run(["git", "-C", str(root), "log", "--format=%H %P %s", "-2"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert log[0].split()[:2] == [r["commit"], head_before]
    assert "retain: W @Peter: Bought a red bicycle" in log[0]
    shown = subprocess.run(["git", "-C", str(root), "show", f"{r['commit']}:memory/2025-12-13.md"],
                           capture_output=True, text=True, check=True).stdout
    assert shown.splitlines()[r["line"] - 1] == f"- {bullet}"

    assert bad.is_error
    assert "unknown kind" in json.loads(bad.content[0].text)["error"]

    hits = _data(found)["results"]
    assert hits and hits[0]["source"] == r["source"] and hits[0]["status"] == "current"


def test_every_request_written_before_stdin_closes_is_answered(ws: Path) -> None:
    """A client that writes its requests and closes its end at once (a shell pipe, a batch job)
    gets an answer to each: the server answers every request it has read before it exits. On
    141d1aa only `initialize` and the quick errors came back; the recalls in flight were cancelled."""
    words = ["Marrakech", "WhatsApp", "Castle", "birthday"]
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
               "params": {"name": "recall", "arguments": {"query": w, "k": 2, "semantic": False}}} for i, w in enumerate(words)]
    lines.append({"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": {"name": "why", "arguments": {"target": "Marrakech"}}})
    out = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(ws), "mcp"], capture_output=True, text=True, timeout=120,
                         input="".join(json.dumps(m) + "\n" for m in lines))
    assert out.returncode == 0, out.stderr
    answers = {m["id"]: m for m in map(json.loads, out.stdout.splitlines())}
    assert sorted(answers) == [1, 10, 11, 12, 13, 20], out.stdout
    for i, w in enumerate(words):
        body = json.loads(answers[10 + i]["result"]["content"][0]["text"])
        assert body["query"] == w and body["results"], body
        assert w.lower() in body["results"][0]["content"].lower(), body["results"][0]
    why = json.loads(answers[20]["result"]["content"][0]["text"])
    assert "Marrakech" in json.dumps(why["versions"]), why
