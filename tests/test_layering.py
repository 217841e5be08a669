"""Imports only run downward: parse and timeline at the bottom, then the index, recall, reflection,
and the edges (CLI, hooks, MCP). A lower floor gets what it needs from a higher one as an argument.

Every `import gitmem...` in the package, at module level or inside a function, is checked: a lazy
import is still an arrow."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "gitmem"

# The floor of each module, by dotted-name prefix (the longest prefix wins). Anything not listed is
# an edge module (CLI, hooks, MCP, retain, demo...): it may import anything, and no floor below it
# may import it.
FLOORS = {
    "gitmem.errors": 0,
    "gitmem.layout": 0,
    "gitmem.lazyre": 0,
    "gitmem.safefile": 0,
    "gitmem.parse": 1,
    "gitmem.timeline": 1,
    "gitmem.templates": 2,
    "gitmem.workspace": 2,
    "gitmem.config": 3,
    "gitmem.lint": 3,
    "gitmem.index": 4,
    "gitmem.recall": 5,
    "gitmem.reflect": 6,
}
EDGE = 7


def floor(module: str) -> int:
    best, level = "", EDGE
    for prefix, n in FLOORS.items():
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
            best, level = prefix, n
    return level


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(tree: ast.AST, here: str) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("gitmem")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this package
                base = here.split(".")[: -node.level] if not here.endswith("__init__") else here.split(".")
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            if mod.startswith("gitmem"):
                # `from gitmem import layout` names a module; `from gitmem.x import f` names x.
                out |= {f"{mod}.{a.name}" if mod == "gitmem" else mod for a in node.names}
    return out


def test_imports_only_run_downward() -> None:
    upward = []
    for path in sorted(PKG.rglob("*.py")):
        here = module_name(path)
        mine = floor(here)
        for target in imported(ast.parse(path.read_text(encoding="utf-8")), here):
            if target == "gitmem" or target.startswith(here + "."):
                continue
            theirs = floor(target)
            # Same floor is fine between packages of one floor only within the same package.
            same_pkg = target.split(".")[:2] == here.split(".")[:2]
            if theirs > mine or (theirs == mine and not same_pkg and mine != EDGE and mine != 0):
                upward.append(f"{here} (floor {mine}) imports {target} (floor {theirs})")
    assert not upward, "\n".join(upward)


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    # The test above must be able to fail: an index module importing recall is caught.
    tree = ast.parse("from gitmem.recall.search import Session\n")
    targets = imported(tree, "gitmem.index.store")
    assert [t for t in targets if floor(t) > floor("gitmem.index.store")] == ["gitmem.recall.search"]
