"""`.gitmem.toml`: defaults, type errors, malformed files and comment-preserving edits."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

from gitmem.config import Config, default_text, load_config, set_value
from gitmem.errors import GitmemError
from gitmem.workspace import Workspace
from gitrepo import GitRepo


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    cfg = load_config(tmp_path)
    assert cfg == Config()
    assert cfg.recall.k == 10 and cfg.reflect.branch == "gitmem/reflect" and cfg.index.max_file_bytes == 5_000_000


def test_template_documents_every_key_with_the_config_defaults() -> None:
    text = default_text()
    parsed = tomllib.loads(text)
    defaults = Config()
    for section in ("index", "recall", "reflect"):
        expected = getattr(defaults, section)._asdict()
        assert parsed[section] == expected, section
        for key in expected:
            # every key line is preceded by a comment line explaining it
            lines = text.splitlines()
            idx = next(i for i, line in enumerate(lines) if line.startswith(f"{key} ="))
            assert lines[idx - 1].startswith("#"), key


def test_partial_file_and_unknown_keys(tmp_path: Path) -> None:
    (tmp_path / ".gitmem.toml").write_text('[recall]\nk = 3\nfuture_knob = "x"\n[experimental]\nfoo = 1\n')
    cfg = load_config(Workspace(tmp_path))
    assert cfg.recall.k == 3 and cfg.recall.budget == 0 and cfg.reflect == Config().reflect


def test_round_trip_preserves_comments_order_and_unknown_keys(tmp_path: Path) -> None:
    original = (
        "# my notes about this config\n"
        "[experimental]\n"
        "foo = 1  # keep me\n"
        "\n"
        "[reflect]\n"
        "# which model: ask Peter before changing\n"
        'model = ""\n'
        "seed = 7 # lucky\n"
    )
    path = tmp_path / ".gitmem.toml"
    path.write_text(original)
    (tmp_path / "models").mkdir()
    (tmp_path / "models/x.gguf").write_bytes(b"GGUF")  # set_value checks that the model file exists
    model = str(tmp_path / "models/x.gguf")
    cfg = set_value(tmp_path, "reflect.model", model)
    assert cfg.reflect.model == model and cfg.reflect.seed == 7
    assert path.read_text() == original.replace('model = ""', f'model = "{model}"')
    set_value(tmp_path, "recall.k", "25")  # text from a CLI becomes an int for an int key
    text = path.read_text()
    assert text.startswith(original.replace('model = ""', f'model = "{model}"'))
    assert load_config(tmp_path).recall.k == 25


def test_set_value_creates_file_from_commented_template(repo: GitRepo) -> None:
    repo.commit("start")  # index.branch must name a branch that exists
    set_value(repo.path, "index.branch", "main")
    text = (repo.path / ".gitmem.toml").read_text()
    assert 'branch = "main"' in text and "# Branch whose first-parent history" in text
    assert load_config(repo.path).index.branch == "main"


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('[recall]\nk = "ten"\n', "recall.k"),
        ("[recall]\nk = true\n", "recall.k"),
        ("[reflect]\nmodel = 3\n", "reflect.model"),
        ("[reflect]\nn_ctx = -1\n", "reflect.n_ctx"),
        ("index = 5\n", "index"),
    ],
)
def test_wrong_types_name_the_key(tmp_path: Path, body: str, key: str) -> None:
    (tmp_path / ".gitmem.toml").write_text(body)
    with pytest.raises(GitmemError) as err:
        load_config(tmp_path)
    assert key in err.value.message and ".gitmem.toml" in err.value.message and err.value.hint


def test_set_value_rejects_wrong_type_without_touching_file(tmp_path: Path) -> None:
    path = tmp_path / ".gitmem.toml"
    path.write_text("[recall]\nk = 4\n")
    with pytest.raises(GitmemError, match="recall.k"):
        set_value(tmp_path, "recall.k", "lots")
    with pytest.raises(GitmemError, match="section.key"):
        set_value(tmp_path, "model", "x")
    assert path.read_text() == "[recall]\nk = 4\n"


def test_malformed_toml_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / ".gitmem.toml").write_text('[recall]\nk = 10\n\n[reflect\nmodel = "x"\n')
    with pytest.raises(GitmemError) as err:
        load_config(tmp_path)
    assert str(tmp_path / ".gitmem.toml") in err.value.message
    assert "line 4" in err.value.message
    assert err.value.hint and "delete the file" in err.value.hint




# --- the parse kept in .memory/config.cache (a recall does not import tomllib for it) --------------

def _load_in_a_fresh_process(root: Path) -> tuple[int, bool]:
    """recall.k as a new process reads it, and whether that process imported tomllib."""
    import subprocess
    import sys

    code = ("import sys; from gitmem.config import load_config\n"
            "print(load_config(sys.argv[1]).recall.k, 'tomllib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True)
    k, imported = out.stdout.split()
    return int(k), imported == "True"


def test_the_parse_is_kept_and_used_only_for_the_same_text(tmp_path: Path) -> None:
    (tmp_path / ".memory").mkdir()
    (tmp_path / ".gitmem.toml").write_text("[recall]\nk = 3\n")
    assert _load_in_a_fresh_process(tmp_path) == (3, True)  # parsed, and kept
    assert (tmp_path / ".memory" / "config.cache").is_file()
    assert _load_in_a_fresh_process(tmp_path) == (3, False)  # the kept parse: no tomllib
    # An edit of the same size within the same second is still seen: the text is compared, not a stamp.
    (tmp_path / ".gitmem.toml").write_text("[recall]\nk = 4\n")
    assert _load_in_a_fresh_process(tmp_path) == (4, True)
    assert _load_in_a_fresh_process(tmp_path) == (4, False)
    # A damaged cache is parsed around (and replaced).
    (tmp_path / ".memory" / "config.cache").write_text("{not json")
    assert _load_in_a_fresh_process(tmp_path) == (4, True)
    assert _load_in_a_fresh_process(tmp_path) == (4, False)


def test_no_cache_without_memory_dir_or_for_values_json_changes(tmp_path: Path) -> None:
    (tmp_path / ".gitmem.toml").write_text("[recall]\nk = 5\n")
    assert _load_in_a_fresh_process(tmp_path) == (5, True)
    assert not (tmp_path / ".memory").exists()  # reading a config never creates .memory/
    (tmp_path / ".memory").mkdir()
    (tmp_path / ".gitmem.toml").write_text("[recall]\nk = 5\n[x]\nwhen = 2025-11-30T10:00:00Z\n")
    assert _load_in_a_fresh_process(tmp_path) == (5, True)
    assert not (tmp_path / ".memory" / "config.cache").exists()  # a TOML date is not JSON: always parsed
    assert _load_in_a_fresh_process(tmp_path) == (5, True)
