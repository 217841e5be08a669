"""`gitmem model check`: measure a model as a judge on the labelled cases, and calibrate it.

The cases (`data/judge_cases.jsonl`, shipped in the package) are (fact, opinion, expected) triples,
a third each of supports / contradicts / unrelated, in two halves by opinion: the margin and the
method are chosen on the `calibration` half, the numbers that decide whether reflection may trust
the model are measured on the `report` half (never the data the margin was tuned on).

Each case goes through the same path as in a reflection: the relevance gate first (a pair it
drops is "unrelated" without a model call), then the model's scores, then the margin.

- accuracy: answers equal to the expected label, over all cases;
- wrong direction: a relation claimed the wrong way (supports <-> contradicts) or claimed on an
  unrelated pair, over all cases (the harm: a belief moved the wrong way);
- abstain: related cases answered "unrelated", over the related cases (the cost: evidence missed).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from datetime import date
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from gitmem.errors import GitmemError
from gitmem.parse import mentions
from gitmem.reflect import judge as J
from gitmem.reflect.prompts import RELATIONS, Relation

if TYPE_CHECKING:
    from gitmem.reflect.model import Model, Scorer

SPLITS = ("calibration", "report")
# The calibration half may use at most this wrong-direction rate: below the bar, because the report
# half (and real memory) will not be as kind as the data the margin was fitted on.
CALIBRATION_WRONG = 0.02
# `contrast` fits two numbers (offset and margin) where the other methods fit one, so on the
# calibration half it wins ties it has only fitted better: it must beat them by this much accuracy.
# Measured: on the bundled SmolLM2 it won the calibration half by 2 of 81 cases (offset +7.8) and
# went 8% wrong-direction on the report half; on Qwen2.5-Coder-1.5B it won by 17 of 81.
CONTRAST_PENALTY = 0.05
# A way of deciding must get at least this share of the calibration half's related pairs right
# (verdicts, not abstentions) to be used at all; below it the model never decides. A handful of
# verdicts cannot show skill: the bundled SmolLM2's best fits got 2 to 6 of 88 related pairs right,
# and on the demo those rare verdicts moved "prefers concise replies" up on a request for long
# answers. The 1.5B gets dozens right.
MIN_RIGHT_VERDICTS = 0.10


class Case(NamedTuple):
    fact: str
    opinion: str
    expected: Relation
    kind: str
    split: str


def load_cases(path: Path | None = None) -> list[Case]:
    """The labelled cases: the shipped set, or a JSONL file in the same format."""
    where = str(path) if path else "the shipped judge cases"
    try:
        text = path.read_text(encoding="utf-8") if path else (
            resources.files("gitmem.reflect").joinpath("data/judge_cases.jsonl").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise GitmemError(f"cannot read {where}: {e}", "pass a readable UTF-8 JSONL file") from e
    cases: list[Case] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            case = Case(str(raw["fact"]), str(raw["opinion"]), raw["expected"], str(raw.get("kind", "")),
                        str(raw.get("split", "report")))
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise GitmemError(f"{where}, line {n}: not a case ({e})",
                              'each line: {"fact": ..., "opinion": ..., "expected": "supports|contradicts|unrelated"}') from e
        if case.expected not in RELATIONS or case.split not in SPLITS:
            raise GitmemError(f"{where}, line {n}: expected must be one of {', '.join(RELATIONS)} and split one of "
                              f"{', '.join(SPLITS)}", "fix that line")
        cases.append(case)
    if not cases:
        raise GitmemError(f"{where} holds no cases", "add cases, one JSON object per line")
    return cases


class Scored(NamedTuple):
    case: Case
    gated: bool  # dropped by the relevance gate (no model call)
    scores: dict[str, J.PairScores]  # method -> the model's scores (empty when gated)


def score_cases(model: Scorer, cases: Sequence[Case], methods: Sequence[J.Method],
                progress: Callable[[int, int], None] | None = None, polarity: bool = True,
                second: bool = True) -> list[Scored]:
    """Every case through the gate, and the pairs it lets through scored with each of `methods`
    (`polarity`: with the polarity step, see `judge.ask`; without `second`, not the questions
    `J.SECOND` asks only where the first step abstains: `ask_second` asks them then).

    The cases are scored once per system prompt (`J.QUESTION_SYSTEM`), not method by method per
    case: llama.cpp keeps one prompt in its cache, so alternating between two system prompts would
    evaluate each again on every pair. Each question is asked once per pair, however many methods
    read it (labels and contrast read the same one; agree reads labels' and yesno's), and a pair's
    questions under one system prompt one after the other, so the pair stays in the prompt cache.
    `progress` counts (case, system prompt) steps."""
    gated = [not J.relevant(c.fact, c.opinion).passed for c in cases]
    wanted = list(dict.fromkeys(q for m in methods for q in J.QUESTIONS[m] if second or q not in J.SECOND.get(m, ())))
    systems = list(dict.fromkeys(J.QUESTION_SYSTEM[q] for q in wanted))
    asked: list[dict[str, J.PairScores]] = [{} for _ in cases]
    done, total = 0, len(cases) * len(systems)
    for system in systems:
        for case, dropped, got in zip(cases, gated, asked):
            if not dropped:
                for q in wanted:
                    if J.QUESTION_SYSTEM[q] == system:
                        got[q] = J.ask(model, case.fact, case.opinion, q, polarity)
            done += 1
            if progress:
                progress(done, total)
    scores: list[dict[str, J.PairScores]] = [{} for _ in cases]
    for got, out in zip(asked, scores):
        if got:
            for m in methods:
                parts = [got[q] for q in J.QUESTIONS[m] if q in got]
                out[m] = parts[0]
                for part in parts[1:]:
                    out[m] = J.merge(out[m], part)
    return [Scored(c, g, sc) for c, g, sc in zip(cases, gated, scores)]


def ask_second(model: Scorer, scored: Sequence[Scored], method: J.Method, margin: float, offset: float,
               floor: float, polarity: bool = True, slack: float = 0.0) -> list[Scored]:
    """`scored` (asked `method`'s first-step questions, `score_cases(..., second=False)`) with its
    `J.SECOND` questions asked, as in a reflection, only of the pairs the first step (these numbers)
    abstains on: the fit of the second step reads no other pair, and on the 1.5B a third to a half
    of the pairs the gate passes are open, so this is most of the prompts a check would ask for it."""
    out = []
    for s in scored:
        sc = s.scores.get(method)
        if sc is not None and J._decide(sc, method, margin, offset, floor, slack).relation == "unrelated":
            for q in J.SECOND.get(method, ()):
                sc = J.merge(sc, J.ask(model, s.case.fact, s.case.opinion, q, polarity))
            s = s._replace(scores={**s.scores, method: sc})
        out.append(s)
    return out


class Metrics(NamedTuple):
    cases: int
    correct: int
    accuracy: float
    wrong_direction: float
    abstain: float
    confusion: dict[Relation, dict[Relation, int]]  # expected -> predicted -> count


def predict(s: Scored, method: J.Method, margin: float, offset: float = 0.0, floor: float = J.NO_FLOOR,
            recheck: J.Recheck = J.NO_RECHECK, slack: float = 0.0, support: J.Support = J.NO_SUPPORT) -> Relation:
    if s.gated:
        return "unrelated"
    return J.decide(s.scores[method], method, margin, offset, floor, recheck, slack, support).relation


def metrics(scored: Sequence[Scored], method: J.Method, margin: float, offset: float = 0.0,
            floor: float = J.NO_FLOOR, recheck: J.Recheck = J.NO_RECHECK, slack: float = 0.0) -> Metrics:
    return tally(scored, [predict(s, method, margin, offset, floor, recheck, slack) for s in scored])


def rules_first(scored: Sequence[Scored], answers: Sequence[Relation]) -> list[Relation]:
    """`answers` (one per case) with the rules' verdict in place of the model's on every
    gate-passing pair the rules decide (`judge.ruled`): what reflection answers."""
    out: list[Relation] = []
    for s, answer in zip(scored, answers, strict=True):
        found = None if s.gated else J.ruled(s.case.fact, s.case.opinion)
        out.append(found.relation if found is not None else answer)
    return out


def tally(scored: Sequence[Scored], answers: Sequence[Relation]) -> Metrics:
    """The metrics of `answers`, one per case of `scored`."""
    confusion = {e: {p: 0 for p in RELATIONS} for e in RELATIONS}
    for s, answer in zip(scored, answers, strict=True):
        confusion[s.case.expected][answer] += 1
    n = len(scored)
    correct = sum(confusion[e][e] for e in RELATIONS)
    wrong = sum(confusion[e][p] for e in RELATIONS for p in ("supports", "contradicts") if p != e)
    related = sum(sum(confusion[e].values()) for e in ("supports", "contradicts"))
    abstained = confusion["supports"]["unrelated"] + confusion["contradicts"]["unrelated"]
    return Metrics(n, correct, correct / n if n else 0.0, wrong / n if n else 0.0,
                   abstained / related if related else 0.0, confusion)


def _candidate_margins(scored: Sequence[Scored], method: J.Method) -> list[float]:
    """Every margin at which some decision on these cases flips, plus 0 and "never decide"."""
    values: set[float] = {0.0}
    for s in scored:
        if s.gated:
            continue
        sc = s.scores[method]
        if method == "labels":
            assert sc.labels is not None
            top = sorted(sc.labels, reverse=True)
            values.add(top[0] - top[1] + 1e-9)
        else:
            assert sc.yes_supports is not None and sc.yes_contradicts is not None
            values.update(v + 1e-9 for v in (sc.yes_supports, sc.yes_contradicts))
    # labels: a gap is never negative; yesno: a negative threshold ("yes" merely not unlikely) is allowed.
    return sorted(v for v in values if v >= 0.0 or method == "yesno") + [math.inf]


class Fit(NamedTuple):
    """A method's decision numbers chosen on some cases, and what they give there."""

    method: J.Method
    margin: float
    offset: float
    floor: float
    metrics: Metrics
    recheck: J.Recheck = J.NO_RECHECK  # method `query`: its second step


def _midpoints(values: list[float]) -> list[float]:
    """Thresholds midway between neighbouring `values` (sorted, distinct) and beyond both ends (log-odds
    of a real model are tens at most, so 1e3 past the last value is beyond every pair)."""
    return [values[0] - 1e3, *((a + b) / 2 for a, b in zip(values, values[1:])), values[-1] + 1e3]


def _fit_two_sided(scored: Sequence[Scored], method: J.Method) -> Fit:
    """`contrast` / `likely` / `agree`: the band [offset - margin, offset + margin] (and for `likely`
    the bears-on-it floor, for `agree` the yes/no framing's lean, both stored as `floor`) with the
    best accuracy at most CALIBRATION_WRONG wrong; ties go to the larger margin, then the higher
    floor. Every band whose ends lie midway between two neighbouring values (or beyond all) is tried:
    every distinct way the method can decide these cases, plus never. Floors: every midpoint for
    `likely`; for `agree` at most FLOOR_STEPS of them (evenly spaced in rank), which bounds the
    search on a few hundred pairs to seconds.

    Counting, not re-deciding: with the pairs sorted by their direction value, a band answers
    "contradicts" for a prefix of the pairs that may contradict (`J.sides`) and "supports" for a
    suffix of those that may support, so each band's correct and wrong counts come from prefix sums."""
    n = len(scored)
    never = Fit(method, math.inf, 0.0, J.NO_FLOOR, metrics(scored, method, math.inf))
    best: tuple[float, float, float] = (never.metrics.accuracy, J.NEVER, J.NO_FLOOR)
    chosen = never
    live = [s for s in scored if not s.gated]
    floors = [J.NO_FLOOR]
    if method == "likely":
        bears = sorted({b for s in live if (b := s.scores[method].bears) is not None})
        floors += _midpoints(bears)[1:-1] if bears else []
    elif method in J.YES_FRAMED:
        leans = sorted({J.yes_lean(s.scores[method]) for s in live})
        mids = _midpoints(leans) if leans else []
        step = max(1, math.ceil(len(mids) / FLOOR_STEPS))
        floors = mids[::step] + ([mids[-1]] if mids and (len(mids) - 1) % step else [])
    unrelated_all = sum(s.case.expected == "unrelated" for s in scored)
    least = _least_right(scored)
    values = sorted({J.direction(s.scores[method], method) for s in live})
    if not values:
        return chosen
    ends = _midpoints(values)
    k = len(values)
    rank = {v: i for i, v in enumerate(values)}
    for floor in floors:
        # per value: counts (supports, contradicts, unrelated expected) among the pairs that may
        # contradict, and among those that may support
        con_at = [[0, 0, 0] for _ in values]
        sup_at = [[0, 0, 0] for _ in values]
        for s in live:
            sc = s.scores[method]
            may_sup, may_con = J.sides(sc, method, floor)
            i = rank[J.direction(sc, method)]
            # a pair asked about the opinion's affirmative form is answered the other way round: a
            # band's "contradicts" for it is right where "supports" was expected
            label = LABEL_INDEX[J.turn(s.case.expected) if sc.flipped else s.case.expected]
            if may_con:
                con_at[i][label] += 1
            if may_sup:
                sup_at[i][label] += 1
        # con_cum[i]: counts among values[:i] (answered contradicts); sup_cum[j]: among values[:j]
        con_cum, sup_cum = [(0, 0, 0)], [(0, 0, 0)]
        for c_, s_ in zip(con_at, sup_at):
            cc, sc_ = con_cum[-1], sup_cum[-1]
            con_cum.append((cc[0] + c_[0], cc[1] + c_[1], cc[2] + c_[2]))
            sup_cum.append((sc_[0] + s_[0], sc_[1] + s_[1], sc_[2] + s_[2]))
        sup_total = sup_cum[k]
        for i in range(k + 1):  # values[:i] answered contradicts (where they may)
            con_sup, con_con, con_unr = con_cum[i]
            for j in range(i, k + 1):  # values[j:] answered supports (where they may)
                before = sup_cum[j]
                sup_sup, sup_con, sup_unr = (sup_total[0] - before[0], sup_total[1] - before[1],
                                             sup_total[2] - before[2])
                wrong = con_sup + con_unr + sup_con + sup_unr
                if wrong > CALIBRATION_WRONG * n:
                    continue
                if con_con + sup_sup < least:
                    continue
                correct = unrelated_all - con_unr - sup_unr + con_con + sup_sup
                margin = (ends[j] - ends[i]) / 2
                key = (correct / n, margin, floor)
                if key > best:
                    best = key
                    offset = (ends[j] + ends[i]) / 2
                    chosen = Fit(method, margin, offset, floor, metrics(scored, method, margin, offset, floor))
    return chosen


# `agree`'s lean is searched over at most this many candidate values (see `_fit_two_sided`).
FLOOR_STEPS = 40


def _fit_recheck(scored: Sequence[Scored], first: Fit) -> Fit:
    """The second step (`query`, `shots`) on top of its first (`first`, fitted as `agree`): the
    threshold on its direction (`J.second_step`: the query's yes-vs-no log-odds, the worked examples'
    supports-vs-contradicts) and the bound its abstention log-odds must stay below (`J.Recheck`),
    read only on the pairs the first step abstains on, with the best accuracy on `scored` while all
    of `scored` stays at most CALIBRATION_WRONG wrong (the first step's wrong answers count); ties go
    to the higher threshold, then the lower bound. For the methods of `J.BOTH_WAYS` also a lower
    threshold, below which the step answers "contradicts"; ties then go to the wider band. No step
    that gains nothing: then `first` as it is. Counted like `_fit_two_sided` (prefix sums over the
    pairs sorted by their direction), for at most FLOOR_STEPS bounds."""
    n = len(scored)
    open_ = []  # (direction, abstention, index of the expected label as asked) of the pairs left open
    for s in scored:
        if s.gated:
            continue
        sc = s.scores[first.method]
        got = J.second_step(sc)
        if got is None:
            continue
        if J._decide(sc, first.method, first.margin, first.offset, first.floor).relation != "unrelated":
            continue
        open_.append((got[0], got[1], LABEL_INDEX[J.turn(s.case.expected) if sc.flipped else s.case.expected]))
    base = first.metrics
    wrong0 = round(base.wrong_direction * n)
    if not open_:
        return first
    bounds = _midpoints(sorted({u for _, u, _ in open_}))[1:]
    step = max(1, math.ceil(len(bounds) / FLOOR_STEPS))
    bounds = bounds[::step] + ([bounds[-1]] if (len(bounds) - 1) % step else [])
    both = first.method in J.BOTH_WAYS
    best: tuple[int, float, float] = (0, -math.inf, 0.0)
    chosen: J.Recheck | None = None
    # a first step that never decides leaves every verdict to the second: it needs as many right as any way of deciding
    least = _least_right(scored) if not math.isfinite(first.margin) or first.margin >= J.NEVER else 1
    for bound in bounds:
        live = sorted((y, label) for y, u, label in open_ if u < bound)
        if not live:
            continue
        values = sorted({y for y, _ in live})
        ends = _midpoints(values)
        k = len(values)
        at = [[0, 0, 0] for _ in values]
        rank = {v: i for i, v in enumerate(values)}
        for y, label in live:
            at[rank[y]][label] += 1
        cum = [(0, 0, 0)]
        for c in at:
            cum.append((cum[-1][0] + c[0], cum[-1][1] + c[1], cum[-1][2] + c[2]))
        total = cum[k]
        for i in range(k + 1 if both else 1):  # values[:i] answered contradicts
            con_sup, con_con, con_unr = cum[i]
            for j in range(i, k + 1):  # values[j:] answered supports
                sup_sup, sup_con, sup_unr = (total[0] - cum[j][0], total[1] - cum[j][1], total[2] - cum[j][2])
                right = sup_sup + con_con
                if wrong0 + sup_con + sup_unr + con_sup + con_unr > CALIBRATION_WRONG * n or right < least or not right:
                    continue
                # one-sided: the higher threshold; both ways: the wider band
                key = (right, ends[j] - ends[i] if both else ends[j], -bound)
                if key > best:
                    no = ends[i] if i > 0 else J.NO_FLOOR  # below every value: never "contradicts"
                    yes = ends[j] if j < k else J.NEVER
                    best, chosen = key, J.Recheck(yes, bound, no)
    if chosen is None:
        return first
    return first._replace(recheck=chosen, metrics=metrics(scored, first.method, first.margin, first.offset, first.floor, chosen))


def _least_right(scored: Sequence[Scored]) -> float:
    """The right verdicts a way of deciding needs on `scored` (MIN_RIGHT_VERDICTS of the related pairs)."""
    return MIN_RIGHT_VERDICTS * sum(s.case.expected != "unrelated" for s in scored)


def _right(m: Metrics) -> int:
    """Related pairs answered with their relation (verdicts right, not abstentions)."""
    return m.confusion["supports"]["supports"] + m.confusion["contradicts"]["contradicts"]


# Each relation's place in the (supports, contradicts, unrelated) counts of `_fit_two_sided`.
LABEL_INDEX: dict[str, int] = {r: i for i, r in enumerate(RELATIONS)}


def choose(scored: Sequence[Scored], methods: Sequence[J.Method]) -> Fit:
    """The method and its numbers (margin; offset for `contrast` and `likely`; floor for `likely`)
    with the best accuracy on `scored` whose wrong-direction rate is at most CALIBRATION_WRONG; ties
    go to the larger margin (fewer, surer verdicts). The two-sided methods fit two or three numbers
    where the others fit one, so they must win by CONTRAST_PENALTY. A margin of infinity (never
    decide) always qualifies, so there is always an answer.

    Every margin between two neighbouring flip points gives the same decisions here; the one
    returned is the middle of that interval, as far as possible from both (new data is noisier)."""
    best: tuple[float, float] | None = None
    chosen: Fit | None = None
    for method in methods:
        if method in J.TWO_SIDED:
            fit = _fit_two_sided(scored, method)
            if method in J.SECOND:
                fit = _fit_recheck(scored, fit)
            key = (fit.metrics.accuracy - CONTRAST_PENALTY, min(fit.margin, J.NEVER))
            if best is None or key > best:
                best, chosen = key, fit
            continue
        margins = _candidate_margins(scored, method)
        for i, margin in enumerate(margins):
            m = metrics(scored, method, margin)
            if m.wrong_direction > CALIBRATION_WRONG or (math.isfinite(margin) and _right(m) < _least_right(scored)):
                continue
            key = (m.accuracy, min(margin, J.NEVER))
            if best is None or key > best:
                upper = margins[i + 1] if i + 1 < len(margins) else math.inf
                best, chosen = key, Fit(method, (margin + upper) / 2 if math.isfinite(upper) else margin, 0.0, J.NO_FLOOR, m)
    assert chosen is not None
    return chosen


class CheckReport(NamedTuple):
    calibration: J.Calibration
    calibration_metrics: Metrics
    report_metrics: Metrics
    per_method: dict[str, Metrics]  # report-half metrics of each method at its own calibrated margin
    gate_pairs: int
    gate_dropped: int
    gate_dropped_related: int
    model_calls: int
    tokens: int
    seconds: float
    scored: list[Scored]  # every case with its scores, for benchmarks
    rules: Metrics | None = None  # every case, the rules alone (no model: `rules_first` over abstentions)
    report_with_rules: Metrics | None = None  # the report half as reflection judges it: the rules, then the model


def check(model: Scorer, model_name: str, cases: Sequence[Case], methods: Sequence[J.Method] = J.DEFAULT_METHODS,
          progress: Callable[[int, int], None] | None = None) -> CheckReport:
    """Score every case, calibrate on the calibration half, measure on the report half."""
    stats = getattr(model, "stats", None)
    calls0, tokens0, secs0 = (stats.calls, stats.prompt_tokens, stats.seconds) if stats else (0, 0, 0.0)
    start = time.perf_counter()
    scored = score_cases(model, cases, methods, progress, second=False)
    for m in methods:
        if m in J.SECOND:  # the first step's fit on the calibration half says which pairs are open
            first = _fit_two_sided([s for s in scored if s.case.split == "calibration"], m)
            scored = ask_second(model, scored, m, first.margin, first.offset, first.floor)
    wall = time.perf_counter() - start
    calls = stats.calls - calls0 if stats else 0
    tokens = stats.prompt_tokens - tokens0 if stats else 0
    seconds = stats.seconds - secs0 if stats else wall
    cal_half = [s for s in scored if s.case.split == "calibration"]
    rep_half = [s for s in scored if s.case.split == "report"]
    if not cal_half or not rep_half:
        raise GitmemError("the cases need both a calibration and a report half",
                          'mark each case "split": "calibration" or "report"')
    per_method: dict[str, Metrics] = {}
    for m in methods:
        own = choose(cal_half, [m])
        per_method[m] = metrics(rep_half, m, own.margin, own.offset, own.floor, own.recheck)
    fit = choose(cal_half, methods)
    margin = round(fit.margin, 4) if math.isfinite(fit.margin) else J.NEVER
    offset, floor = round(fit.offset, 4), round(fit.floor, 4)
    recheck = J.Recheck(*(round(x, 4) for x in fit.recheck))
    answers = [predict(s, fit.method, margin, offset, floor, recheck) for s in rep_half]  # the model's, then the rules'
    rep = tally(rep_half, answers)
    cal = J.Calibration(
        fingerprint=J.fingerprint(model_name), model=model_name, method=fit.method, margin=margin,
        accuracy=round(rep.accuracy, 4), wrong_direction=round(rep.wrong_direction, 4), abstain=round(rep.abstain, 4),
        cases=rep.cases, tokens_per_second=round(tokens / seconds, 1) if seconds else 0.0,
        measured=date.today().isoformat(), offset=offset, floor=floor, gate=J.gate_kind(), polarity=True,
        query_yes=recheck.yes, query_unknown=recheck.unknown, query_no=recheck.no, query_contrast=recheck.contrast,
        runtime=str(getattr(model, "runtime", "")))
    related = [s for s in scored if s.case.expected != "unrelated"]
    rules = tally(scored, rules_first(scored, ["unrelated"] * len(scored)))
    with_rules = tally(rep_half, rules_first(rep_half, answers))
    return CheckReport(cal, fit.metrics, rep, per_method, len(scored), sum(s.gated for s in scored),
                       sum(s.gated for s in related), calls, tokens, seconds, scored, rules, with_rules)


def as_json(r: CheckReport, path: str, stored: str | None, summaries: DraftCheck | None = None,
            retain: DraftCheck | None = None) -> dict[str, object]:
    """The `gitmem model check --json` object (schema: gitmem/schemas/model_check.json)."""

    def m(x: Metrics) -> dict[str, object]:
        return {"cases": x.cases, "correct": x.correct, "accuracy": round(x.accuracy, 4),
                "wrong_direction": round(x.wrong_direction, 4), "abstain": round(x.abstain, 4),
                "confusion": x.confusion}

    cal = r.calibration
    return {"model": cal.model, "path": path, "fingerprint": cal.fingerprint, "method": cal.method,
            "margin": cal.margin, "offset": cal.offset, "floor": cal.floor,
            "gate_kind": cal.gate, "polarity": cal.polarity, "recheck": cal.recheck._asdict(), "runtime": cal.runtime,
            "bar": J.WRONG_DIRECTION_BAR, "trusted": cal.trusted, "decides": not cal.never_decides,
            "report": m(r.report_metrics), "calibration": m(r.calibration_metrics),
            "methods": {k: m(v) for k, v in r.per_method.items()},
            "rules": None if r.rules is None else m(r.rules),
            "report_with_rules": None if r.report_with_rules is None else m(r.report_with_rules),
            "gate": {"pairs": r.gate_pairs, "dropped": r.gate_dropped, "dropped_related": r.gate_dropped_related},
            "model_calls": r.model_calls, "tokens": r.tokens, "seconds": round(r.seconds, 2),
            "tokens_per_second": cal.tokens_per_second, "stored": stored,
            "summaries": None if summaries is None else {**summaries._asdict(), "share": round(summaries.share, 4)},
            "retain": None if retain is None else {**retain._asdict(), "share": round(retain.share, 4)}}


# --------------------------------------------------------------------------- summaries

SUMMARY_ENTITIES = 6


def summary_sets(cases: Sequence[Case], n: int = SUMMARY_ENTITIES) -> list[tuple[str, list[str]]]:
    """(entity, its facts) for entity summaries: the report half's `n` entities with the most
    distinct facts (ties by name), each fact once, in file order. Not the demo's entities."""
    facts: dict[str, list[str]] = {}
    for c in cases:
        if c.split != "report":
            continue
        names = mentions(c.fact)
        if names and c.fact not in facts.setdefault(names[0], []):
            facts[names[0]].append(c.fact)
    ranked = sorted(facts.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [(name, fs) for name, fs in ranked[:n] if len(fs) >= 3]


class DraftCheck(NamedTuple):
    """How many of a model's drafts (entity summaries, Retain bullets) passed their gate."""

    tried: int
    passed: int
    rejected: list[str]  # "where: reason" of each draft that failed

    @property
    def share(self) -> float:
        return self.passed / self.tried if self.tried else 0.0


def with_drafts(report: CheckReport, model: Model, cases: Sequence[Case]) -> tuple[CheckReport, DraftCheck, DraftCheck]:
    """`report` with its calibration's `summaries` and `retain` shares measured by `summary_check`
    and `retain_check`: what reflection reads to decide whether to ask this model for drafts."""
    summaries, retain = summary_check(model, cases), retain_check(model)
    cal = report.calibration._replace(summaries=round(summaries.share, 4), retain=round(retain.share, 4))
    return report._replace(calibration=cal), summaries, retain


def summary_check(model: Model, cases: Sequence[Case], n: int = SUMMARY_ENTITIES) -> DraftCheck:
    """How many entity summaries the model writes that pass the page gate (what reflection would keep)."""
    from gitmem.reflect.model import InvalidModelOutput
    from gitmem.reflect.prompts import gated_summary

    sets = summary_sets(cases, n)
    rejected = []
    for name, facts in sets:
        try:
            gated_summary(model, name, facts)
        except InvalidModelOutput as e:
            rejected.append(f"{name}: {e.reason}")
    return DraftCheck(len(sets), len(sets) - len(rejected), rejected)


# --------------------------------------------------------------------------- Retain drafts


class Log(NamedTuple):
    day: str  # YYYY-MM-DD
    text: str


def load_logs() -> list[Log]:
    """The fixed daily logs (narrative, no Retain section) the Retain drafts are measured on:
    `data/retain_logs.jsonl`, written for this and not the demo's."""
    text = resources.files("gitmem.reflect").joinpath("data/retain_logs.jsonl").read_text(encoding="utf-8")
    return [Log(str(raw["date"]), str(raw["log"])) for raw in map(json.loads, filter(str.strip, text.splitlines()))]


def retain_check(model: Model, logs: Sequence[Log] | None = None) -> DraftCheck:
    """How many of the Retain bullets the model drafts from the fixed logs pass the Retain gate
    (`prompts.gated_retain`: what reflection would append to a log). Counted per distinct bullet;
    a log whose answer is not the JSON asked for counts as one failed bullet (it yields nothing)."""
    from gitmem.reflect.model import InvalidModelOutput
    from gitmem.reflect.prompts import gated_retain

    tried = passed = 0
    rejected: list[str] = []
    for log in load_logs() if logs is None else logs:
        try:
            drafted = gated_retain(model, log.text, log.day)
        except InvalidModelOutput as e:
            tried += 1
            rejected.append(f"{log.day}: {e.reason}")
            continue
        tried += len(drafted.kept) + len(drafted.rejected)
        passed += len(drafted.kept)
        rejected += [f"{log.day}: {why} ({bullet!r})" for bullet, why in drafted.rejected]
    return DraftCheck(tried, passed, rejected)
