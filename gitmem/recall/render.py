"""Rendering recall answers for people (text), programs (json, jsonl) and prompts (md)."""

from __future__ import annotations

import json
from typing import Any

from gitmem.recall.result import render_line
from gitmem.recall.search import OVER_BUDGET


def confidence_move(before: float | None, after: float | None) -> str:
    """A confidence change as people read it: "c 0.70 → 0.20" (an unstated side shows "?")."""
    def c(v: float | None) -> str:
        return "?" if v is None else f"{v:.2f}"

    return f"c {c(before)} → {c(after)}"


def render(answer: dict[str, Any], fmt: str) -> str:
    results: list[dict[str, Any]] = answer.get("results", [])
    if fmt == "json":
        return json.dumps(answer, ensure_ascii=False, indent=2)
    if fmt == "jsonl":
        return "\n".join(json.dumps(r, ensure_ascii=False) for r in results)
    header = _header(answer)
    if fmt == "md":
        lines = [f"<!-- {header} -->"] if header else []
        lines += [f"- {render_line(r)}" for r in results]
        return "\n".join(lines)
    lines = [f"note: {n}" for n in answer.get("notes", [])]
    if header:
        lines.append(header)
    if not results and not any(n.startswith(OVER_BUDGET) for n in answer.get("notes", [])):
        lines.append("no matching memory")
    for i, r in enumerate(results, 1):
        status = "" if r["status"] == "current" else f" [{r['status']}]"
        lines.append(f"{i:>2}. {render_line(r)}{status}")
    return "\n".join(lines)


def _header(answer: dict[str, Any]) -> str:
    as_of = answer.get("as_of")
    if not as_of:
        return ""
    if not as_of.get("commit"):
        return f"as of {as_of['when']} (before the first commit)"
    return f"as of {as_of['when']} (commit {as_of['commit'][:12]}, {as_of.get('commit_time') or '-'})"
