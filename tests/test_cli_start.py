"""The CLI's start-up work: a read command's `git status` starts before click is imported."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem import cli as cli_pkg
from gitmem.cli import recall_cmd, views_cmd
from gitmem.errors import NotAWorkspace
from gitmem.recall.search import Session
from gitmem.timeline import git
from gitmem.workspace import Workspace
from gitrepo import GitRepo


def test_session_commands_are_the_read_commands() -> None:
    assert cli_pkg.SESSION_COMMANDS == {c.name for c in [*recall_cmd.commands, *views_cmd.commands]}


def test_command_modules_name_every_command_where_it_is_defined() -> None:
    # The group imports only the module COMMAND_MODULES names: every command of every module
    # under gitmem/cli/ must be listed, with its own module, and nothing else.
    found: dict[str, str] = {}
    for path in sorted((Path(cli_pkg.__file__).parent).glob("*_cmd.py")):
        module = importlib.import_module(f"gitmem.cli.{path.stem}")
        found |= {c.name: path.stem for c in module.commands if c.name}
    assert cli_pkg.COMMAND_MODULES == found


def test_a_read_command_imports_no_other_command_module(tmp_path: Path) -> None:
    code = ("import sys\nfrom gitmem.cli import main\ntry:\n    main(['-C', sys.argv[1], 'recall', 'x', '--json'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('gitmem.cli.') and m.endswith('_cmd')), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert proc.stderr.strip().splitlines()[-1] == "['gitmem.cli.recall_cmd']"


@pytest.fixture()
def repo(tmp_path: Path) -> GitRepo:
    r = GitRepo.init(tmp_path / "ws")
    r.commit("one", files={"memory.md": "# Memory\n\n- W @Peter: Lives in Lisbon.\n"})
    (r.path / "sub").mkdir()
    r.write("memory/2025-11-02.md", "- B @Peter: Uncommitted note about Lisbon.\n")
    return r


@pytest.mark.parametrize("args", [["-C", "{ws}/sub", "recall", "x"], ["-C{ws}", "about", "Peter"]])
def test_prestarted_status_is_the_one_the_session_uses(repo: GitRepo, args: list[str]) -> None:
    directory, reads = cli_pkg._read_command([a.format(ws=repo.path) for a in args])
    assert reads
    cli_pkg._prestart(directory)
    git.discard_locate()
    early = git.Status._early
    assert early is not None
    with Session(Workspace.find(repo.path)) as s:
        assert s._status is early[1]
        assert git.Status._early is None
        assert ("M", "memory/2025-11-02.md") in s._status.result()
        assert "memory/2025-11-02.md" in s.overlay()


def test_prestart_elsewhere_is_not_taken(repo: GitRepo, tmp_path: Path) -> None:
    other = GitRepo.init(tmp_path / "other")
    other.commit("x", files={"memory.md": "- W @Ann: Other.\n"})
    cli_pkg._prestart(cli_pkg._read_command(["-C", str(other.path), "recall", "x"])[0])
    git.discard_locate()
    early = git.Status._early
    with Session(Workspace.find(repo.path)) as s:
        assert early is not None and s._status is not early[1]
        assert "memory/2025-11-02.md" in s.overlay()


def test_write_commands_start_nothing(repo: GitRepo) -> None:
    assert cli_pkg._read_command(["-C", str(repo.path), "index"]) == (str(repo.path), False)
    assert cli_pkg._read_command([f"-C{repo.path}", "--json", "recall", "x"]) == (str(repo.path), True)
    code = ("import sys\nfrom gitmem.cli import main\nfrom gitmem.timeline import git\nstarted = []\n"
            "git.Status.prestart = classmethod(lambda cls, d: started.append('status'))\n"
            "git.prestart_locate = lambda d: started.append('locate')\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\nprint(started, file=sys.stderr)")
    for args, started in ((["index"], "[]"), (["recall", "Lisbon"], "['status', 'locate']")):
        proc = subprocess.run([sys.executable, "-c", code, "-C", str(repo.path), *args], capture_output=True, text=True)
        assert proc.stderr.strip().splitlines()[-1] == started


def test_prestarted_locate_answers_as_locate_does(repo: GitRepo, tmp_path: Path) -> None:
    # Taken once, and only by a locate of the directory it ran in: another directory gets its own
    # answer (the early one is reaped), and errors are the same as without a prestart.
    sub = repo.path / "sub"
    fresh = git.locate(sub)
    git.prestart_locate(sub)
    assert git.locate(sub) == fresh == git.Located(repo.path.resolve(), repo.head())
    assert git._early_locate is None
    other = GitRepo.init(tmp_path / "other")
    git.prestart_locate(other.path)
    assert git.locate(sub) == fresh and git._early_locate is None
    assert git.locate(other.path) == git.Located(other.path.resolve(), None)  # no commit yet
    plain = tmp_path / "plain"
    plain.mkdir()
    git.prestart_locate(plain)
    with pytest.raises(NotAWorkspace, match="is not inside a git repository"):
        git.locate(plain)


def test_a_prestarted_locate_reads_head_when_it_starts(repo: GitRepo) -> None:
    # The early call's HEAD is the one at the process's start: a commit made after it (which a CLI
    # process cannot see coming either) is not in the answer, and the next locate sees it.
    git.prestart_locate(repo.path)
    assert git._early_locate is not None
    git._early_locate[1].wait()
    before = repo.head()
    repo.commit("two", files={"memory.md": "# Memory\n\n- W @Peter: Lives in Porto.\n"})
    assert git.locate(repo.path).head == before != repo.head() == git.locate(repo.path).head


def test_recall_cli_sees_uncommitted_edit_through_prestarted_status(repo: GitRepo) -> None:
    out = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(repo.path / "sub"), "recall", "Uncommitted"],
                         capture_output=True, text=True, check=True).stdout
    assert "Uncommitted note about Lisbon" in out and "uncommitted" in out.lower()


def test_read_path_named_tuples_are_built_without_compiling_annotations() -> None:
    # A string annotation costs typing.NamedTuple a compile() per field at import (recall/result.py):
    # the read path's modules evaluate theirs. semantic.py keeps `from __future__ import annotations`:
    # its annotations name numpy and index/vectors types imported only for mypy.
    import gitmem.recall.render  # noqa: F401 - the rest of a recall's modules
    import gitmem.recall.search  # noqa: F401

    checked = []
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("gitmem.") or name == "gitmem.recall.semantic":
            continue
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields") and obj.__module__ == name:
                assert not [a for a in obj.__annotations__.values() if isinstance(a, str)], f"{name}.{obj.__name__}"
                checked.append(obj.__name__)
    assert {"Result", "Options", "Answer", "Query", "Point", "Family", "Link"} <= set(checked)


_GC_PROBE = """
import gc, json, sys
from gitmem.cli import main
from gitmem.recall import search
seen = []
opened = search.Session.__init__
def probe(self, *a, **k):
    seen.append([gc.isenabled(), gc.get_freeze_count() > 0, gc.get_threshold()[0]])
    opened(self, *a, **k)
search.Session.__init__ = probe
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps({"session": seen, "enabled": gc.isenabled(), "frozen": gc.get_freeze_count() > 0,
                  "threshold": gc.get_threshold()[0]}), file=sys.stderr)
"""


def _gc_seen(*args: str) -> dict[str, object]:
    import json

    proc = subprocess.run([sys.executable, "-c", _GC_PROBE, *args], capture_output=True, text=True)
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_a_read_command_freezes_its_start_up_and_collects_during_its_work(repo: GitRepo) -> None:
    # The collector is off while click and the read path are imported, then what they made is
    # frozen and collection is back on before the session opens (a catch-up may index a lot), its
    # young generation collected every 10,000 allocations instead of 700 until main returns.
    assert _gc_seen("-C", str(repo.path), "recall", "Lisbon", "--json") == {
        "session": [[True, True, 10_000]], "enabled": True, "frozen": True, "threshold": 700}


def test_other_commands_and_in_process_callers_keep_the_collector_as_it_is(repo: GitRepo) -> None:
    assert _gc_seen("-C", str(repo.path), "index") == {"session": [], "enabled": True, "frozen": False, "threshold": 700}
    from click.testing import CliRunner

    import gc

    before, threshold = gc.get_freeze_count(), gc.get_threshold()
    result = CliRunner().invoke(cli_pkg.__getattr__("cli"), ["-C", str(repo.path), "recall", "Lisbon"])
    assert result.exit_code == 0 and "Lives in Lisbon" in result.output
    assert gc.isenabled() and gc.get_freeze_count() == before and gc.get_threshold() == threshold


def test_a_read_command_that_stops_early_leaves_the_collector_on(repo: GitRepo) -> None:
    # `recall --help` never opens a session: main still turns the collector back on.
    assert _gc_seen("-C", str(repo.path), "recall", "--help") == {"session": [], "enabled": True, "frozen": True,
                                                                 "threshold": 700}


def _entry(*code_and_args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", *code_and_args], capture_output=True, text=True)


def test_a_read_command_run_as_the_process_leaves_its_output_and_exit_code_whole(repo: GitRepo) -> None:
    # main() with no argv skips the interpreter's teardown for a read command: the output must be
    # flushed first, all of it (here ~400 results of JSON through a pipe), and the exit codes kept.
    lines = "".join(f"- W @Peter: Lives in Lisbon, note {i} of many.\n" for i in range(400))
    repo.commit("many", files={"memory/2025-11-03.md": lines})
    run = "import sys\nfrom gitmem.cli import main\nsys.argv[0] = 'gitmem'\nmain()"
    ok = _entry(run, "-C", str(repo.path), "recall", "Lisbon", "-k", "1000", "--json")
    assert ok.returncode == 0, ok.stderr
    import json

    answer = json.loads(ok.stdout)
    notes = {r["content"] for r in answer["results"] if "of many" in r["content"]}
    assert len(notes) == 400 and "W @Peter: Lives in Lisbon, note 399 of many." in notes
    usage = _entry(run, "-C", str(repo.path), "recall", "Lisbon", "-k", "0", "--json")
    assert usage.returncode == 2 and json.loads(usage.stdout)["type"] == "UsageError"
    missing = _entry(run, "-C", str(repo.path / "nowhere"), "recall", "Lisbon")
    assert missing.returncode == 1 and missing.stderr.startswith("Error:")


def test_a_process_with_exit_handlers_exits_as_usual(repo: GitRepo) -> None:
    code = ("import atexit, sys\natexit.register(lambda: print('handler ran', file=sys.stderr))\n"
            "from gitmem.cli import main\nsys.argv[0] = 'gitmem'\nmain()")
    proc = _entry(code, "-C", str(repo.path), "recall", "Lisbon")
    assert proc.returncode == 0 and "Lives in Lisbon" in proc.stdout
    assert proc.stderr.strip().splitlines()[-1] == "handler ran"


def _main_in_process(*args: str) -> tuple[int, str, str, bool]:
    """main(args) in a fresh process: exit code, stdout, stderr, and whether difflib was imported."""
    code = ("import sys\nfrom gitmem.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
            "    code = e.code\nsys.stdout.flush()\nprint('\\n@@', code, 'difflib' in sys.modules, file=sys.stderr)")
    proc = _entry(code, *args)
    err, _, tail = proc.stderr.rpartition("\n@@ ")
    code, difflib = tail.split()
    return int(code), proc.stdout, err, difflib == "True"


def test_a_sole_dash_c_is_read_as_click_reads_it_without_difflib(repo: GitRepo, tmp_path: Path) -> None:
    # `-C DIR` is taken out of the line before click's parser (which would try it as a long option
    # and import difflib for the error it then drops); `-CDIR` (attached) still goes through
    # click's parser: both must answer alike, errors included.
    ws = str(repo.path)
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    for rest in (["recall", "Lisbon", "--json"], ["--json", "recall", "Lisbon"], ["recall", "Lisbon"], ["about", "Peter"]):
        ours = _main_in_process("-C", ws, *rest) if rest[0] != "--json" else _main_in_process("--json", "-C", ws, *rest[1:])
        clicks = _main_in_process(f"-C{ws}", *rest) if rest[0] != "--json" else _main_in_process("--json", f"-C{ws}", *rest[1:])
        assert ours[:3] == clicks[:3] and ours[0] == 0 and "Lisbon" in ours[1]
        assert not ours[3] and clicks[3]  # click's own way imports difflib, ours does not
    for where in (str(tmp_path / "nowhere"), str(plain)):
        ours, clicks = _main_in_process("-C", where, "recall", "x"), _main_in_process(f"-C{where}", "recall", "x")
        assert ours[:3] == clicks[:3] and ours[0] == 1 and "is not a directory" in ours[2]
    # Twice: click's way (the last wins), the same answer as the last alone.
    twice = _main_in_process("-C", str(tmp_path / "nowhere"), "-C", ws, "recall", "Lisbon")
    assert twice[:3] == _main_in_process("-C", ws, "recall", "Lisbon")[:3] and twice[3]
    # --help is still read first: no -C check.
    assert _main_in_process("-C", str(plain), "--help")[0] == 0
