"""Rendering recall answers for people (text), programs (json, jsonl) and prompts (md)."""

from __future__ import annotations

from typing import Any, Protocol

from gitmem.recall.result import OVER_BUDGET, Result


def confidence_move(before: float | None, after: float | None) -> str:
    """A confidence change as people read it: "c 0.70 → 0.20" (an unstated side shows "?")."""
    def c(v: float | None) -> str:
        return "?" if v is None else f"{v:.2f}"

    return f"c {c(before)} → {c(after)}"


class Rendered(Protocol):
    """What render needs of an answer (a recall `Answer`, an `about` answer)."""

    @property
    def results(self) -> list[Result]: ...

    @property
    def notes(self) -> list[str]: ...

    @property
    def as_of(self) -> dict[str, Any] | None: ...

    def to_dict(self) -> dict[str, Any]: ...


def render(answer: Rendered, fmt: str) -> str:
    results = answer.results
    if fmt in ("json", "jsonl"):
        # Imported only for JSON: importing json compiles six regular expressions (its decoder's
        # and encoder's) that a text or Markdown recall never uses.
        import json
    if fmt == "json":
        return json.dumps(answer.to_dict(), ensure_ascii=False, indent=2)
    if fmt == "jsonl":
        return "\n".join(json.dumps(r.to_json(), ensure_ascii=False) for r in results)
    header = _header(answer.as_of)
    if fmt == "md":
        lines = [f"<!-- {header} -->"] if header else []
        lines += [f"- {r.line()}" for r in results]
        return "\n".join(lines)
    lines = [f"note: {n}" for n in answer.notes]
    if header:
        lines.append(header)
    if not results and not any(n.startswith(OVER_BUDGET) for n in answer.notes):
        lines.append("no matching memory")
    for i, r in enumerate(results, 1):
        status = "" if r.status == "current" else f" [{r.status}]"
        lines.append(f"{i:>2}. {r.line()}{status}")
    return "\n".join(lines)


def _header(as_of: dict[str, Any] | None) -> str:
    if not as_of:
        return ""
    if not as_of.get("commit"):
        return f"as of {as_of['when']} (before the first commit)"
    return f"as of {as_of['when']} (commit {as_of['commit'][:12]}, {as_of.get('commit_time') or '-'})"
