"""`gitmem model check [PATH]`: how well a local model judges evidence, and may it move beliefs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gitmem.cli.output import cwd, emit, json_option


@click.group("model")
def model_group() -> None:
    """The local model used by `gitmem reflect`."""


def _metrics_line(label: str, m: dict[str, Any]) -> str:
    return (f"  {label:<12} accuracy {m['accuracy']:.0%} ({m['correct']}/{m['cases']}), "
            f"wrong direction {m['wrong_direction']:.0%}, abstain {m['abstain']:.0%}")


def _check_text(r: dict[str, Any]) -> str:
    from gitmem.reflect import check as C
    from gitmem.reflect import judge as J

    lines = [f"Model {r['model']}", f"  judge method {r['method']}, margin "
             + ("never decides" if r["margin"] >= 1e9 else f"{r['margin']:.2f}")
             + J.describe_rule(r["method"], r["offset"], r["floor"], r["polarity"], J.Recheck(**r["recheck"]))
             + " (chosen on the calibration half)",
             _metrics_line("report half", r["report"]), _metrics_line("calibration", r["calibration"])]
    for method, m in r["methods"].items():
        lines.append(_metrics_line(f"({method})", m))
    if r.get("rules") is not None and r.get("report_with_rules") is not None:
        # Which verdicts come from rules and which from the model: the rules need no model, so they
        # judge in reflection even with a model that may not (see `gitmem.reflect.judge.ruled`).
        rules = r["rules"]
        decided = sum(rules["confusion"][e][p] for e in rules["confusion"] for p in ("supports", "contradicts"))
        lines.append(f"  rules (no model): {decided} of {rules['cases']} cases decided, wrong direction "
                     f"{rules['wrong_direction']:.0%}; reflection counts their verdicts whatever the model")
        lines.append(_metrics_line("rules first", r["report_with_rules"]) + " (report half: the rules, then the model)")
    g = r["gate"]
    lines.append(f"  relevance gate: {g['dropped']} of {g['pairs']} pairs never reach the model "
                 f"({g['dropped_related']} related pairs dropped)")
    lines.append(f"  speed: {r['tokens']} prompt tokens in {r['model_calls']} calls, {r['seconds']:.1f} s, "
                 f"{r['tokens_per_second']:.0f} tokens/s")
    lines.append(f"  measured on: {r['runtime'] or 'an unrecorded llama.cpp build'} (on another, reflection widens the judge's thresholds)")
    if r["summaries"] is not None:
        sm = r["summaries"]
        lines.append(f"  entity summaries: {sm['passed']} of {sm['tried']} pass the page gate"
                     + ("" if sm["share"] >= J.DRAFT_BAR else "; reflection will not ask this model for summaries"))
    if r["retain"] is not None:
        rt = r["retain"]
        lines.append(f"  Retain bullets: {rt['passed']} of {rt['tried']} drafted from {len(C.load_logs())} daily logs pass "
                     "the Retain gate" + ("" if rt["share"] >= J.DRAFT_BAR else
                                           "; reflection will not ask this model to draft Retain sections"))
    # What the verdict means for reflection holds only for a stored check: one that is not stored
    # (custom cases, or no workspace) leaves reflection with the stored or shipped calibration.
    stored = bool(r["stored"])
    scope = "" if stored else " on these cases"
    wrong = f"wrong direction {r['report']['wrong_direction']:.0%}"
    if not r["decides"]:
        lines.append(f"NEVER DECIDES{scope}: no way of deciding got enough related labelled pairs right ({wrong}, "
                     f"abstain {r['report']['abstain']:.0%}); "
                     + ("reflection will not move opinion confidence with this model. " if stored else "")
                     + "Set a larger model with `gitmem config reflect.model PATH`.")
    elif r["trusted"]:
        lines.append(f"OK{scope}: {wrong} is within the bar ({r['bar']:.0%}); "
                     + ("reflection may move opinion confidence with this model." if stored else
                        "this check does not change what reflection does."))
    else:
        lines.append(f"NOT TRUSTED{scope}: {wrong} is above the bar ({r['bar']:.0%}); "
                     + ("reflection will not move opinion confidence with it. "
                        "Set a larger model with `gitmem config reflect.model PATH`." if stored else
                        "this check does not change what reflection does."))
    if r["stored"]:
        lines.append(f"Calibration stored in {r['stored']}.")
    else:
        lines.append("Calibration not stored (only a check on the shipped cases, run in a workspace, is).")
    return "\n".join(lines)


@model_group.command("check")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--cases", "cases_file", type=click.Path(path_type=Path), metavar="FILE",
              help="Labelled cases (JSONL) instead of the shipped set.")
# judge.METHODS, spelled out: the judge module is imported only when the command runs (CLI start-up stays light).
@click.option("--method", type=click.Choice(["labels", "contrast", "yesno", "likely", "agree", "negate", "query", "shots", "all"]),
              default="all", show_default=True,
              help="Which ways of deciding to measure (all: labels, contrast, yesno and agree, the calibration picks "
                   "the best; likely, negate, query and shots only when named).")
@json_option
@click.pass_context
def check_command(ctx: click.Context, path: Path | None, cases_file: Path | None, method: str, as_json: bool) -> None:
    """Run the labelled judge cases on a model (default: the one reflection would use): accuracy,
    wrong-direction rate, abstain rate, tokens/s; then 6 entity summaries through the page gate and
    Retain bullets drafted from fixed daily logs through the Retain gate. In a workspace, the
    calibration (method, margin, summaries and bullets kept) is stored in .memory/ and reflection
    uses it: a model above the wrong-direction bar never moves opinion confidence, one whose
    summaries (or Retain bullets) mostly fail their gate is not asked for them.

    \b
    Example:
      gitmem model check
      gitmem model check ~/models/qwen2.5-1.5b-instruct-q4_k_m.gguf --json
    """
    from gitmem.errors import NotAWorkspace
    from gitmem.reflect import check as C
    from gitmem.reflect import judge as J
    from gitmem.reflect.model import LlamaModel, existing_model, resolve_model_path
    from gitmem.workspace import Workspace

    try:
        ws: Workspace | None = Workspace.find(cwd(ctx))
    except NotAWorkspace:
        ws = None
    cases = C.load_cases(cases_file)
    methods: list[J.Method] = list(J.DEFAULT_METHODS) if method == "all" else [method]  # type: ignore[list-item]
    if path is not None:
        path = cwd(ctx) / path.expanduser()  # relative to -C, like git -C
    model_path = (existing_model(path, "the PATH argument", "pass the path of a .gguf file").resolve() if path is not None
                  else resolve_model_path(ws))
    model = LlamaModel(model_path)

    def progress(done: int, total: int) -> None:
        if not as_json and (done == total or done % 20 == 0):
            click.echo(f"checking: {done}/{total} cases", err=True)

    report = C.check(model, model.name, cases, methods, progress)
    summaries: C.DraftCheck | None = None
    retain: C.DraftCheck | None = None
    if cases_file is None:  # custom cases calibrate nothing, so their drafts would decide nothing either
        if not as_json:
            click.echo("checking: entity summaries and Retain drafts", err=True)
        report, summaries, retain = C.with_drafts(report, model, cases)
    stored: str | None = None
    # Only a check on the shipped cases calibrates: a handful of custom cases proves too little.
    if ws is not None and cases_file is None:
        target = J.workspace_calibration_path(ws)
        J.write_table(target, report.calibration)
        stored = str(target.relative_to(ws.root))
    emit(C.as_json(report, str(model_path), stored, summaries, retain), as_json, _check_text)


commands: list[click.Command] = [model_group]
