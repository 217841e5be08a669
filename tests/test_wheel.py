"""The built wheel carries the templates and hook scripts, and `gitmem init` works from it alone."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import click
import pygit2
import tomlkit
import unidiff

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def _pip_env() -> dict[str, str]:
    env = dict(os.environ)
    # conftest points HOME at a tmp dir; reuse the real user's pip cache so the isolated build
    # does not download setuptools on every run.
    cache = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "pip"
    if cache.is_dir():
        env["PIP_CACHE_DIR"] = str(cache)
    env.pop("PYTHONPATH", None)
    return env


def _run(args: list[str | Path], **kw: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_wheel_installs_and_inits(tmp_path: Path) -> None:
    # Build from a copy: an in-tree build would leave build/ in the shared checkout and reuse stale files.
    src = tmp_path / "src"
    shutil.copytree(
        ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", ".memory",
                                                 ".pytest_cache", ".hypothesis", "tests", "bench"),
    )
    (src / "templates" / "__pycache__").mkdir(exist_ok=True)
    (src / "templates" / "__pycache__" / "stale.cpython-311.pyc").write_bytes(b"\0")  # must not ship
    out = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", src, "--no-deps", "-q", "-w", out], env=_pip_env())
    [wheel] = out.glob("gitmem-*.whl")

    names = set(zipfile.ZipFile(wheel).namelist())
    for rel in ("gitignore", "gitmem.toml", "workspace/memory.md", "workspace/bank/world.md",
                "workspace/bank/experience.md", "workspace/bank/opinions.md",
                "workspace/bank/entities/gitkeep", "workspace/memory/gitkeep"):
        assert f"gitmem/_templates/{rel}" in names, rel
    hook_files = sorted(p.name for p in (ROOT / "hooks").iterdir() if p.is_file() and p.suffix != ".pyc")
    for name in hook_files:
        assert f"gitmem/_hooks/{name}" in names, name
    assert not [n for n in names if n.endswith(".pyc")]
    # `gitmem model check` and reflection read these from the installed package.
    for rel in ("judge_cases.jsonl", "topics.txt", "calibration.json"):
        assert f"gitmem/reflect/data/{rel}" in names, rel

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv])
    py = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", py, "install", "--no-deps", "--no-index", "-q", wheel],
         env=_pip_env())
    # Runtime dependencies come from this test's environment via a .pth (appended after the venv's
    # own site-packages, so gitmem itself still resolves to the installed wheel).
    site = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    deps = sorted({str(Path(m.__file__).resolve().parent.parent) for m in (click, tomlkit, unidiff, pygit2)})
    (site / "zz_gitmem_test_deps.pth").write_text("\n".join(deps) + "\n")

    where = _run([py, "-c", "import gitmem.scaffold as s; print(s.__file__)"], cwd=tmp_path).stdout.strip()
    assert Path(where).is_relative_to(venv), where

    ws = tmp_path / "ws"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    _run([venv / "bin" / "gitmem", "init", ws], cwd=tmp_path, env=env)
    for rel in (".gitignore", ".gitmem.toml", "memory.md", "memory/.gitkeep", "bank/world.md",
                "bank/experience.md", "bank/opinions.md", "bank/entities/.gitkeep"):
        assert (ws / rel).is_file(), rel
    assert (ws / ".gitmem.toml").read_bytes() == (ROOT / "templates" / "gitmem.toml").read_bytes()
    if "hook.sh" in hook_files:
        hook = (ws / ".git" / "hooks" / "post-commit").read_text()
        assert str(py) in hook or str(venv) in hook  # rendered by the wheel's gitmem for its own python
