"""Issue 12, reading outside the workspace and denial of service: symlinks, unbounded reads, huge
blobs, long hook runs; plus the user-facing read-path cases (Unicode entities, budgets, as-of
edges, option-like text, terminal escapes, ranges, --json placement, exit codes).

Real git repositories, real files, real `gitmem` processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest
from gitrepo import GitRepo

SECRET = "TOPSECRET-credential-42"


def gm(repo: GitRepo, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitmem", "-C", str(repo.path), *args],
                          capture_output=True, text=True, timeout=timeout, check=False)


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


@pytest.fixture
def ws(repo: GitRepo, tmp_path: Path) -> GitRepo:
    repo.commit("start", "2025-11-01", {"memory.md": "# Core\n\nPeter likes tea.\n",
                                         "memory/2025-11-01.md": "# Day\n\n## Retain\n- W @Peter: lives in Berlin.\n"})
    (tmp_path / "secret.txt").write_text(f"{SECRET} in plain sight\n")
    return repo


# --- (6) symlinks are never followed --------------------------------------------------------------


def test_untracked_symlink_in_memory_is_not_read_by_recall(ws: GitRepo, tmp_path: Path) -> None:
    os.symlink(tmp_path / "secret.txt", ws.path / "memory" / "leak.md")
    out = _ok(gm(ws, "recall", "TOPSECRET", "--json"))
    assert SECRET not in out
    assert json.loads(out)["results"] == []
    # a regular untracked file next to it is still seen (the overlay works)
    ws.write("memory/2025-11-02.md", "# Day\n\nTOPSECRET is a word here too.\n")
    out = _ok(gm(ws, "recall", "TOPSECRET", "--json"))
    assert [r["path"] for r in json.loads(out)["results"]] == ["memory/2025-11-02.md"]


def test_symlinked_folder_is_not_read_by_the_overlay(ws: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text(f"{SECRET}\n")
    os.symlink(outside, ws.path / "memory" / "linked")
    assert SECRET not in _ok(gm(ws, "recall", "TOPSECRET"))


def test_committed_memory_md_symlink_is_not_read_by_core_nor_indexed(ws: GitRepo, tmp_path: Path) -> None:
    ws.remove("memory.md")
    os.symlink(tmp_path / "secret.txt", ws.path / "memory.md")
    ws.commit("link", "2025-11-02")
    core = _ok(gm(ws, "core", "--json"))
    assert SECRET not in core
    assert str(tmp_path) not in core  # the link's target path is not memory either
    recall = _ok(gm(ws, "recall", "secret", "--json"))
    assert str(tmp_path / "secret.txt") not in recall
    assert all(r["path"] != "memory.md" for r in json.loads(recall)["results"])


def test_symlink_in_history_is_never_indexed_and_typechange_is_seen(ws: GitRepo) -> None:
    os.symlink("/etc/hostname-target-path", ws.path / "memory" / "link.md")
    ws.commit("add a link", "2025-11-02")
    assert "hostname-target-path" not in _ok(gm(ws, "recall", "hostname", "--json", "--include-history"))
    # link -> regular file: the file's text is indexed from then on
    ws.remove("memory/link.md")
    ws.write("memory/link.md", "# Now a file\n\nZebra crossing notes.\n")
    ws.commit("now a file", "2025-11-03")
    res = json.loads(_ok(gm(ws, "recall", "zebra", "--json")))["results"]
    assert [r["path"] for r in res] == ["memory/link.md"]


@pytest.mark.parametrize("citation", ["/etc/passwd#L1@worktree", "../../x#L1@worktree", ".git/config#L1@worktree",
                                      "memory/../../x.md#L1@worktree"])
def test_show_worktree_reads_only_memory_files(ws: GitRepo, tmp_path: Path, citation: str) -> None:
    (tmp_path / "x").write_text("outside\n")
    (tmp_path / "x.md").write_text("outside\n")
    proc = gm(ws, "show", citation)
    assert proc.returncode == 1, proc.stdout
    assert "root:" not in proc.stdout and "outside" not in proc.stdout and "[core]" not in proc.stdout
    assert "Traceback" not in proc.stderr
    assert "not a memory file" in proc.stderr


def test_show_worktree_refuses_symlink(ws: GitRepo, tmp_path: Path) -> None:
    os.symlink(tmp_path / "secret.txt", ws.path / "memory" / "leak.md")
    proc = gm(ws, "show", "memory/leak.md#L1@worktree")
    assert proc.returncode == 1 and SECRET not in proc.stdout
    assert "symlink" in proc.stderr
    assert "Peter likes tea." in _ok(gm(ws, "show", "memory.md#L3@worktree"))


def test_lint_reports_symlinked_memory(ws: GitRepo, tmp_path: Path) -> None:
    os.symlink(tmp_path / "secret.txt", ws.path / "memory" / "leak.md")
    proc = gm(ws, "lint", "--json")
    assert SECRET not in proc.stdout
    assert "memory/leak.md" in proc.stdout and "symlink" in proc.stdout


# --- (7) bounded, regular-only reads of config and memory -----------------------------------------


def test_config_symlink_to_dev_zero_is_refused_quickly(ws: GitRepo) -> None:
    os.symlink("/dev/zero", ws.path / ".gitmem.toml")
    ws.commit("zero config", "2025-11-02")  # runs no hook here; the CLI reads the config
    t0 = time.monotonic()
    proc = gm(ws, "recall", "tea", timeout=30)
    assert time.monotonic() - t0 < 20
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert ".gitmem.toml" in proc.stderr and "symlink" in proc.stderr


def test_config_fifo_and_huge_config_are_refused(ws: GitRepo) -> None:
    os.mkfifo(ws.path / ".gitmem.toml")
    proc = gm(ws, "recall", "tea", timeout=30)
    assert proc.returncode == 1 and "not a regular file" in proc.stderr
    os.unlink(ws.path / ".gitmem.toml")
    ws.write(".gitmem.toml", "# x\n" * 200_000)
    proc = gm(ws, "recall", "tea", timeout=30)
    assert proc.returncode == 1 and "over" in proc.stderr


def test_overlay_of_a_fifo_memory_file_does_not_block(ws: GitRepo) -> None:
    os.mkfifo(ws.path / "memory" / "pipe.md")
    proc = gm(ws, "recall", "tea", timeout=30)
    assert proc.returncode == 0, proc.stderr


# --- (8) a blob over max_file_bytes is never read -------------------------------------------------


def test_history_walk_skips_big_blobs_by_size(ws: GitRepo) -> None:
    from gitmem.timeline.history import walk

    big = "# Big\n\n" + "word " * 40_000 + "\n"  # ~200 KB
    ws.commit("big", "2025-11-02", {"memory/big.md": big})
    ws.commit("small again", "2025-11-03", {"memory/big.md": "# Small\n\nNow tiny: kiwi.\n"})
    seen = {}
    for info, changes in walk(ws.path, ws.head(), None, 10_000):
        for ch in changes:
            seen[(info.message, ch.path)] = ch
    big_change = seen[("big", "memory/big.md")]
    assert big_change.data is None and big_change.too_large == len(big.encode())
    small = seen[("small again", "memory/big.md")]
    assert small.data == b"# Small\n\nNow tiny: kiwi.\n" and not small.binary


def test_big_file_is_reported_too_large_and_small_version_indexed(ws: GitRepo) -> None:
    ws.write(".gitmem.toml", "[index]\nmax_file_bytes = 10000\n")
    ws.commit("cfg", "2025-11-02")
    ws.commit("big", "2025-11-03", {"memory/big.md": "# Big\n\n" + "mango " * 5000 + "\n"})
    assert json.loads(_ok(gm(ws, "recall", "mango", "--json")))["results"] == []
    status = _ok(gm(ws, "status", "--json"))
    assert "too-large" in status
    ws.commit("small", "2025-11-04", {"memory/big.md": "# Small\n\nmango once.\n"})
    res = json.loads(_ok(gm(ws, "recall", "mango", "--json")))["results"]
    assert [r["content"] for r in res] == ["mango once."]


# --- (9) a hook with a lot of work hands it to one background run -----------------------------


def _fast_import_commits(repo: GitRepo, n: int) -> None:
    base = repo.head()
    lines = []
    for i in range(n):
        body = f"# Day {i}\n\nNote number {i} about walrus{i}.\n"
        ts = 1764590400 + i * 60
        lines += ["commit refs/heads/main", f"committer Test User <test@example.com> {ts} +0000",
                  f"data {len(f'c{i}')}", f"c{i}", *([f"from {base}"] if i == 0 else []),
                  f"M 100644 inline memory/n{i % 50}.md", f"data {len(body.encode())}", body]
    repo.fast_import("\n".join(lines) + "\n")
    repo.git("reset", "-q", "--hard", "main")


def test_hook_with_many_commits_defers_to_a_background_index(ws: GitRepo) -> None:
    from gitmem import githooks, hookrun
    from gitmem.index.db import get_meta, open_index
    from gitmem.workspace import Workspace

    _ok(gm(ws, "index"))
    _ok(gm(ws, "hooks", "install"))
    _fast_import_commits(ws, hookrun.HOOK_MAX_COMMITS + 50)
    ws.commit("one more", "2025-12-01", {"memory/2025-12-01.md": "# Day\n\nlast one: narwhal.\n"})
    w = Workspace(ws.path)
    deadline = time.monotonic() + 60
    tip = None
    state: dict[str, object] = {}
    # The background run commits the index's tip first and records its success in hook.state just
    # after: wait for both, or a fast poll can see the tip before the record (a CI flake).
    while time.monotonic() < deadline:
        conn, _ = open_index(w)
        tip = get_meta(conn, "tip")
        conn.close()
        state = githooks.read_state(w)
        by_hook = state.get("by_hook")
        if tip == ws.head() and isinstance(by_hook, dict) and "background-index" in by_hook:
            break
        time.sleep(0.2)
    assert tip == ws.head()  # indexed without any recall: by the background run
    by_hook = state.get("by_hook")
    assert isinstance(by_hook, dict) and "background-index" in by_hook, state
    assert githooks.last_hook_error(w) is None
    # a short hook run still indexes in the hook itself
    ws.commit("small", "2025-12-02", {"memory/2025-12-02.md": "# Day\n\nokapi.\n"})
    conn, _ = open_index(w)
    assert get_meta(conn, "tip") == ws.head()
    conn.close()


def test_update_with_max_commits_defers_without_indexing(ws: GitRepo) -> None:
    from gitmem.index import indexer
    from gitmem.workspace import Workspace

    _fast_import_commits(ws, 30)
    r = indexer.update(Workspace(ws.path), max_commits=10)
    assert r.deferred == 31 and r.commits == 0 and r.tip is None
    r = indexer.update(Workspace(ws.path), max_commits=100)
    assert r.deferred == 0 and r.commits == 31


# --- (13) (14) (15) ---------------------------------------------------------------------------------


def test_nfd_mention_is_the_same_entity_as_nfc(ws: GitRepo) -> None:
    nfd = unicodedata.normalize("NFD", "José")
    ws.commit("jose", "2025-11-02", {"memory/2025-11-02.md": f"# Day\n\n## Retain\n- W @{nfd}: plays chess.\n"})
    res = json.loads(_ok(gm(ws, "recall", "--entity", "José", "--json")))["results"]
    assert [r["entities"] for r in res] == [["josé"]]
    assert json.loads(_ok(gm(ws, "recall", "--entity", "jose", "--json")))["results"] == []


def test_budget_that_fits_nothing_says_results_exist(ws: GitRepo) -> None:
    ws.commit("long", "2025-11-02", {"memory/2025-11-02.md": "# Day\n\n" + "aardvark " * 60 + "\n"})
    out = _ok(gm(ws, "recall", "aardvark", "--budget", "10"))
    assert "no matching memory" not in out
    assert "1 matching result(s), none fits in --budget 10 tokens" in out
    assert "no matching memory" in _ok(gm(ws, "recall", "zzzunknownword", "--budget", "10"))


def test_as_of_outside_history_says_so(ws: GitRepo) -> None:
    before = _ok(gm(ws, "recall", "Peter", "--as-of", "2024-01-01"))
    assert "before the first commit (the first commit is from 2025-11-01)" in before
    assert "as of 2024-01-01 (before the first commit)" in before
    assert "commit before the f" not in before
    after = _ok(gm(ws, "recall", "Peter", "--as-of", "2030-01-01"))
    assert "2030-01-01 is after the newest commit (2025-11-01)" in after
    assert "Berlin" in after
    inside = _ok(gm(ws, "recall", "Peter", "--as-of", "2025-11-01"))
    assert "after the newest" not in inside and "before the first" not in inside


# --- smaller, user-facing ----------------------------------------------------------------------------


def test_option_like_text_gets_a_dash_dash_hint_and_works_after_it(ws: GitRepo) -> None:
    proc = gm(ws, "retain", "- W @Pat: likes figs")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "put it after --" in proc.stderr and "gitmem retain -- " in proc.stderr
    _ok(gm(ws, "retain", "--", "- W @Pat: likes figs"))
    assert "likes figs" in (ws.path / "memory" / max(p.name for p in (ws.path / "memory").iterdir())).read_text()
    proc = gm(ws, "config", "recall.k", "-5")
    assert proc.returncode == 2 and "gitmem config -- " in proc.stderr


def test_git_error_quotes_the_fatal_line_not_the_hint() -> None:
    from gitmem.timeline.git import error_line

    err = b"error: cannot lock ref 'refs/heads/x'\nhint: Use 'git config advice.x false'\nhint: to hide this\n"
    assert error_line(err) == "error: cannot lock ref 'refs/heads/x'"
    assert error_line(b"fatal: bad object abc\n") == "fatal: bad object abc"
    assert error_line(b"warning: one\nsomething broke\nhint: more\n") == "something broke"


def test_control_characters_are_escaped_in_text_output_and_linted(ws: GitRepo) -> None:
    evil = "- W @Eve: hides \x1b[2J\x1b]0;pwned\x07 here\n"
    ws.commit("evil", "2025-11-02", {"memory/2025-11-02.md": "# Day\n\n## Retain\n" + evil + "<<<<<<< HEAD\n"})
    for args in (["recall", "hides"], ["recall", "hides", "--format", "md"], ["about", "Eve"], ["core"],
                 ["show", "memory/2025-11-02.md#L4@worktree"], ["changes", "--since", "2020-01-01"]):
        out = _ok(gm(ws, *args))
        assert "\x1b" not in out and "\x07" not in out, args
        assert "\\x1b[2J" in out, args
    as_json = json.loads(_ok(gm(ws, "recall", "hides", "--json")))
    assert "\x1b[2J" in as_json["results"][0]["content"]  # JSON keeps the text, escaped by JSON itself
    lint = json.loads(gm(ws, "lint", "--json").stdout)
    codes = {(d["line"], d["code"]) for d in lint["diagnostics"]}
    assert (4, "control-character") in codes and (5, "conflict-marker") in codes


def test_reversed_ranges_are_usage_errors(ws: GitRepo) -> None:
    for args in (["recall", "x", "--during", "2025-12-01..2025-11-01"],
                 ["recall", "x", "--since", "2025-12-01", "--until", "2025-11-01"],
                 ["changes", "--since", "2025-12-01", "--until", "2025-11-01"]):
        proc = gm(ws, *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr and ("swap" in proc.stderr or "other way round" in proc.stderr)
    proc = gm(ws, "recall", "x", "--since", "2025-12-01", "--until", "2025-11-01", "--json")
    assert proc.returncode == 2 and json.loads(proc.stdout)["type"] == "BadUsage"


def test_json_flag_before_or_after_the_command(ws: GitRepo) -> None:
    a = json.loads(_ok(gm(ws, "--json", "recall", "Berlin")))
    b = json.loads(_ok(gm(ws, "recall", "Berlin", "--json")))
    assert a["results"] and [r["source"] for r in a["results"]] == [r["source"] for r in b["results"]]
    err = gm(ws, "--json", "recall", "x", "--kind", "wrld")
    assert err.returncode == 2 and json.loads(err.stdout)["error"] == "unknown kind 'wrld'"


def test_kind_typo_is_usage_and_unknown_entity_is_a_problem(ws: GitRepo) -> None:
    proc = gm(ws, "recall", "x", "--kind", "wrld")
    assert proc.returncode == 2 and "use one of: world" in proc.stderr
    proc = gm(ws, "about", "Nobody")
    assert proc.returncode == 1 and "nothing in memory mentions Nobody" in proc.stderr and "Hint:" in proc.stderr
    assert "Berlin" in _ok(gm(ws, "about", "Peter"))


def test_hooks_install_refuses_a_hooks_path_inside_the_work_tree(ws: GitRepo) -> None:
    husky = ws.path / ".husky"
    husky.mkdir()
    (husky / "post-commit").write_text("#!/bin/sh\nnpx lint-staged\n")
    ws.commit("husky", "2025-11-02")
    ws.git("config", "core.hooksPath", ".husky")
    before = {p.name: p.read_bytes() for p in husky.iterdir()}
    proc = gm(ws, "hooks", "install")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "core.hooksPath is .husky/, a folder committed" in proc.stderr and "python -m gitmem.hookrun" in proc.stderr
    assert {p.name: p.read_bytes() for p in husky.iterdir()} == before
    assert ws.git("status", "--porcelain") == ""


def test_plain_repo_is_noted_once(repo: GitRepo) -> None:
    repo.commit("notes", "2025-11-01", {"notes/a.md": "# A\n\nquokka facts.\n"})
    first = gm(repo, "recall", "quokka")
    assert "quokka" in _ok(first)
    assert "never set up with `gitmem init`" in first.stderr
    second = gm(repo, "recall", "quokka")
    assert "quokka" in _ok(second) and "gitmem init" not in second.stderr


def test_retain_refuses_a_log_over_the_size_limit_without_reading_it(ws: GitRepo) -> None:
    # Item 8's sibling ("retain into it: 74 s"; a 50 MB log took 123 s and 840 MB here): a log over
    # index.max_file_bytes is never indexed, so retain refuses it from its size alone.
    (ws.path / ".gitmem.toml").write_text("[index]\nmax_file_bytes = 2000\n", encoding="utf-8")
    log = ws.path / "memory" / "2025-11-03.md"
    big = "# Log\n\n" + "".join(f"- line {i} of a long log\n" for i in range(400))
    log.write_text(big, encoding="utf-8")
    proc = gm(ws, "retain", "--date", "2025-11-03", "W @Peter: lives in Porto")
    assert proc.returncode == 1 and "over index.max_file_bytes" in proc.stderr and "Traceback" not in proc.stderr
    assert log.read_text(encoding="utf-8") == big  # untouched
    _ok(gm(ws, "retain", "--date", "2025-11-04", "--no-commit", "W @Peter: lives in Porto"))
    assert "lives in Porto" in (ws.path / "memory" / "2025-11-04.md").read_text(encoding="utf-8")
