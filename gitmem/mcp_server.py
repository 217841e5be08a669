"""`gitmem mcp`: the memory as Model Context Protocol tools, over stdio.

Each tool calls the same library function as the matching CLI command and returns the same dict
its `--json` prints (see docs/json-contract.md), so an agent can switch between the CLI and MCP
without relearning the shapes. Every call opens its own recall Session: the session catches the
index up first, so a tool call always sees the newest commits (including a `retain` made a
moment earlier). Errors come back as an MCP error result whose text (and structured content) is
the CLI's JSON error object {"error", "hint", "type"}.

Uses the official MCP Python SDK (`pip install 'gitmem[mcp]'`): `MCPServer` in mcp 2.x, which
was called `FastMCP` in 1.x; both register plain typed functions as tools with JSON-schema inputs.
"""

# No `from __future__ import annotations` here: the SDK reads each tool's parameter annotations at
# runtime to build its JSON schema, and string annotations of these nested functions could not be
# resolved (they refer to names local to build_server).
import json
from collections.abc import Callable
from typing import Annotated, Any

from gitmem.errors import GitmemError
from gitmem.workspace import Workspace

SERVER_NAME = "gitmem"

INSTRUCTIONS = """\
gitmem is this assistant's long-term memory: Markdown files in a git repository, searchable with
citations. Call `recall` (or `about` for a person/project) before answering questions about
people, decisions, preferences or the past; cite results by their `source`
(path#Lx-Ly@commit). Call `retain` to save a durable fact as one bullet:
`W @Entity: fact` (world), `B: I did ...` (experience), `O(c=0.8) @Entity: opinion`,
`S: summary`. Use `as_of` to answer from memory as it stood at a date or git revision."""


def _sdk() -> tuple[Any, Any]:
    """The server class and the CallToolResult type of the installed SDK (2.x first, then 1.x)."""
    try:
        from mcp.server.mcpserver import MCPServer as server_cls
    except ImportError:
        try:
            from mcp.server.fastmcp import FastMCP as server_cls  # type: ignore[attr-defined,no-redef,unused-ignore]  # mcp 1.x
        except ImportError:
            raise GitmemError(
                "the MCP server needs the `mcp` package, which is not installed",
                "pip install 'gitmem[mcp]'",
            ) from None
    from mcp.types import CallToolResult

    return server_cls, CallToolResult


def error_dict(exc: GitmemError) -> dict[str, Any]:
    """The JSON error object, identical to what the CLI prints in --json mode."""
    return {"error": exc.message, "hint": exc.hint, "type": type(exc).__name__}


def _usage_error(tool: str, exc: BaseException) -> dict[str, Any]:
    """The contract's error object for a call the SDK refused (unknown tool, arguments that do not
    fit the tool's input schema): a usage error, as the CLI's exit 2."""
    cause = exc.__cause__
    errors = getattr(cause, "errors", None)
    if callable(errors):
        fields = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors())
        message = f"invalid arguments for {tool}: {fields}"
    else:
        message = " ".join(str(exc).split())
    return {"error": message, "hint": "see the tool's input schema (tools/list)", "type": "UsageError"}


def open_session(ws: Workspace, dense: list[Any], semantic: bool = False) -> Any:
    """A recall Session for one tool call of this long-lived process. `dense` holds the model and
    the vectors once the first semantic question has loaded them. Once the read path is imported
    (the first session), the process's collector is set for many questions
    (`semantic.steady_collector`), lexical ones too: with the interpreter's settings a lexical
    question at 1M lines ran ~1 young collection (0.5 ms of CPU) and every ~100th a full one
    (15+ ms), walking what the server holds (bench/RESULTS.md, "Recall latency, wave 12")."""
    from gitmem.recall.search import Session
    from gitmem.recall.semantic import InProcess, steady_collector

    if not semantic:
        s = Session(ws)
    else:
        if not dense:
            dense.append(InProcess())
        s = Session(ws, dense=dense[0])
    steady_collector()
    return s


def build_server(ws: Workspace) -> Any:
    """An MCP server exposing gitmem's tools for the workspace `ws` (not yet running)."""
    server_cls, call_tool_result = _sdk()  # first: it turns a missing SDK into a GitmemError
    from pydantic import Field  # installed with the SDK

    def error_result(err: dict[str, Any]) -> Any:
        return call_tool_result.model_validate({
            "content": [{"type": "text", "text": json.dumps(err, ensure_ascii=False)}],
            "structuredContent": err,
            "isError": True,
        })

    class Server(server_cls):  # type: ignore[misc, valid-type]
        """The SDK's server, with every failure of a tool call answered by the contract's error
        object, and lines that are not JSON-RPC answered by a JSON-RPC error (see _serve_stdio)."""

        async def call_tool(self, name: str, arguments: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            try:
                return await super().call_tool(name, arguments, *args, **kwargs)
            except Exception as exc:  # the SDK's ToolError: unknown tool, arguments off the schema
                return error_result(_usage_error(name, exc))

        async def run_stdio_async(self) -> None:
            await _serve_stdio(self)

    server = Server(SERVER_NAME, instructions=INSTRUCTIONS)

    def guarded(fn: Callable[[], dict[str, Any]]) -> Any:
        try:
            return fn()
        except Exception as exc:  # a tool call never crashes the server or leaks a traceback
            from gitmem.crash import as_error

            return error_result(error_dict(as_error(exc, ws.root, "mcp")))

    dense: list[Any] = []  # the model and vectors, loaded on the first semantic question and kept

    def session(semantic: bool = False) -> Any:
        return open_session(ws, dense, semantic)

    When = Annotated[str | None, Field(description="A date (2025-11-30), datetime, relative (30d) or git revision"
                                                   " (HEAD~3, a tag, an oid); default: now.")]

    @server.tool(description="Search memory (lexical, by entity, kind or event time; time-travel with as_of). "
                             "Returns ranked facts, each with a citation in `source`.")
    def recall(
        query: Annotated[str, Field(description="What to look for: words, names, a question.")] = "",
        k: Annotated[int | None, Field(ge=1, le=1000, description="How many results (default 10).")] = None,
        as_of: When = None,
        since: Annotated[str | None, Field(description="Only what entered memory after this time.")] = None,
        until: Annotated[str | None, Field(description="Only what entered memory up to this time.")] = None,
        during: Annotated[str | None, Field(description="Event-time window: 2025-11, 'Nov 2025', "
                                                        "2025-11-01..2025-11-30.")] = None,
        kinds: Annotated[list[str] | None, Field(description="Any of world, experience, opinion, "
                                                             "observation, note.")] = None,
        entity: Annotated[str | None, Field(description="Only facts that mention this entity.")] = None,
        include_history: Annotated[bool, Field(description="Also superseded and removed versions.")] = False,
        budget: Annotated[int | None, Field(ge=0, description="Pack the best results into this many "
                                                              "tokens (0 = no budget).")] = None,
        raw: Annotated[bool, Field(description="Pass query to SQLite FTS5 unchanged.")] = False,
        semantic: Annotated[bool | None, Field(description="Also rank by meaning with the bundled embedding model "
                                                           "(default: recall.semantic in .gitmem.toml).")] = None,
    ) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            from gitmem.config import load_config
            from gitmem.recall.search import options_for

            from gitmem.recall.semantic import Default, default_for

            default = default_for(ws, load_config(ws).recall.semantic) if semantic is None else Default(semantic)
            use = default.use
            with session(use) as s:
                if default.note:
                    s.notes.append(default.note)
                opts = options_for(s.ws, k=k, budget=budget, as_of=as_of, since=since, until=until,
                                   during=during, kinds=kinds, entity=entity, include_history=include_history,
                                   raw=raw, semantic=use)
                return s.search(query, opts).to_dict()

        return guarded(run)

    @server.tool(description="Tell me about an entity (person, project, place): its bank/entities page and "
                             "the facts that mention it, newest first.")
    def about(
        entity: Annotated[str, Field(description="Entity name: Peter, The-Castle, 'The Castle', @warelay.")],
        as_of: When = None,
        k: Annotated[int, Field(ge=1, le=1000, description="How many facts.")] = 25,
    ) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            from gitmem.recall.views import about as about_view

            with session() as s:
                return about_view(s, entity, as_of=as_of, k=k).to_dict()

        return guarded(run)

    @server.tool(description="Opinions (what someone prefers or believes) with confidence and evidence.")
    def opinions(
        entity: Annotated[str | None, Field(description="Only opinions mentioning this entity.")] = None,
        min_confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0,
        as_of: When = None,
        history: Annotated[bool, Field(description="Include each opinion's confidence over time.")] = False,
    ) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            from gitmem.recall.views import opinions as opinions_view
            from gitmem.reflect.state import opinion_history

            with session() as s:
                return opinions_view(s, entity=entity, min_confidence=min_confidence, as_of=as_of,
                                     history=opinion_history if history else None)

        return guarded(run)

    @server.tool(description="Facts added, changed and removed in a window of record time.")
    def changes(
        since: Annotated[str, Field(description="Start of the window: 7d, 2025-11-01, a git revision.")] = "7d",
        until: Annotated[str | None, Field(description="End of the window (default: now).")] = None,
        by_entity: Annotated[bool, Field(description="Also group the changes by entity.")] = False,
    ) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            from gitmem.recall.views import changes as changes_view

            with session() as s:
                return changes_view(s, since=since, until=until, by_entity=by_entity)

        return guarded(run)

    @server.tool(description="git blame for a belief: where a fact came from and every version of it.")
    def why(
        target: Annotated[str, Field(description="Text of the fact, or a result id from recall.")],
    ) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            from gitmem.recall.views import why as why_view

            with session() as s:
                return why_view(s, target)

        return guarded(run)

    @server.tool(description="Core memory for the prompt: memory.md plus the newest facts, within a token "
                             "budget. The `markdown` field is ready to paste.")
    def core(
        budget: Annotated[int, Field(ge=50, description="Token budget.")] = 1500,
        as_of: When = None,
    ) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            from gitmem.recall.views import core as core_view

            with session() as s:
                return core_view(s, budget=budget, as_of=as_of)

        return guarded(run)

    @server.tool(description="Save one durable fact: append a Retain bullet to today's daily log "
                             "(memory/YYYY-MM-DD.md) and commit it. Grammar: `W @Entity: fact` (world), "
                             "`B: I did ...` (experience), `O(c=0.8) @Entity: opinion`, `S: summary`; "
                             "or other names of an entity: `alias: @Robert = Bob, Bobby`.")
    def retain(
        bullet: Annotated[str, Field(description="One line, e.g. 'W @Peter: Moved to Lisbon on 2025-11-20.'")],
        day: Annotated[str | None, Field(description="The log's day, YYYY-MM-DD (default: today).")] = None,
        commit: Annotated[bool, Field(description="Commit the log file (default true).")] = True,
    ) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            from gitmem.retain import retain as retain_fn

            return retain_fn(ws, bullet, day=day, commit=commit)

        return guarded(run)

    return server


async def _serve_stdio(server: Any) -> None:
    """The SDK's stdio transport, plus an answer to every line that is not a JSON-RPC message:
    the SDK drops those without a reply, which leaves a client waiting forever. JSON-RPC 2.0 says:
    -32700 Parse error for invalid JSON, -32600 Invalid Request for JSON that is not a request,
    both with id null (the id could not be read).

    And every request read is answered before the server exits: the SDK ends its session when its
    read stream closes and cancels the handlers still running, so a client that writes its
    requests and closes stdin got answers only to those already done. The read side is held open
    until each request forwarded has had its response or error written."""
    from collections import Counter

    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse

    lowlevel = server._lowlevel_server  # what the SDK's own run_stdio_async serves
    unanswered: Counter[Any] = Counter()  # request id -> requests read with it and not yet answered
    done = anyio.Event()  # set once stdin has ended and nothing is unanswered
    ended = False
    async with stdio_server() as (read_stream, write_stream):
        relay_send, relay_receive = anyio.create_memory_object_stream[Any](0)
        # What the server writes passes through `answers`, which counts the answers off; None: the
        # server has stopped (the SDK keeps copies of this stream open, so it never ends by itself).
        out_send, out_receive = anyio.create_memory_object_stream[SessionMessage | None](0)

        async def relay() -> None:
            nonlocal ended
            async with relay_send:
                async for item in read_stream:
                    if not isinstance(item, Exception):
                        if isinstance(item.message, JSONRPCRequest):
                            unanswered[item.message.id] += 1
                        await relay_send.send(item)
                        continue
                    errors = getattr(item, "errors", None)
                    kinds = {e.get("type") for e in errors()} if callable(errors) else set()
                    code, text = (PARSE_ERROR, "Parse error") if "json_invalid" in kinds or not kinds \
                        else (INVALID_REQUEST, "Invalid Request")
                    reply = JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=text))
                    await out_send.send(SessionMessage(reply))
                ended = True
                if +unanswered:
                    await done.wait()

        async def answers() -> None:
            async with out_receive, write_stream:  # stdout's writer ends when this closes
                async for msg in out_receive:
                    if msg is None:
                        return
                    await write_stream.send(msg)
                    if isinstance(msg.message, JSONRPCResponse | JSONRPCError) and unanswered[msg.message.id] > 0:
                        unanswered[msg.message.id] -= 1
                    if ended and not +unanswered:
                        done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(relay)
            tg.start_soon(answers)
            await lowlevel.run(relay_receive, out_send.clone(), lowlevel.create_initialization_options())
            await out_send.send(None)


def serve(ws: Workspace) -> None:
    """Run the MCP server on stdin/stdout until the client disconnects."""
    build_server(ws).run("stdio")
