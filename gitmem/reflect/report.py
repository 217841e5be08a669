"""`gitmem review --html`: the pending proposal as one self-contained HTML page.

No network, no scripts: inline CSS, the evidence text next to each confidence change, each
opinion's confidence trajectory as an inline SVG line chart, then the diff. Every piece of memory
text is HTML-escaped (memory is untrusted: a fact could hold markup).
"""

from __future__ import annotations

from datetime import date
from html import escape
from typing import Any

from gitmem.recall.render import confidence_move
from gitmem.reflect.records import OpinionChange, PageChange, RetainChange, listed, read_changes

LINE_COLOUR = "#d9480f"  # the chart's line: the browser test looks for pixels of this colour
CHART_W, CHART_H, PAD = 480, 140, 28

_CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.op { margin: 1em 0 1.6em; } .move { font-weight: 600; font-family: ui-monospace, monospace; }
.ev { margin: .2em 0 .2em 1.5em; } .ev cite { color: #666; font-family: ui-monospace, monospace; font-size: .85em; }
.supports { color: #2b8a3e; } .contradicts { color: #c92a2a; }
pre.diff { background: #f8f9fa; padding: 1em; overflow-x: auto; font-size: 13px; line-height: 1.35; }
.add { color: #2b8a3e; } .del { color: #c92a2a; } .hunk { color: #1971c2; } .file { font-weight: 700; }
svg { display: block; margin: .4em 0; } .note { color: #666; }
"""


def _day(at: str) -> int | None:
    try:
        return date.fromisoformat(at[:10]).toordinal()
    except ValueError:
        return None


def chart(history: list[dict[str, Any]]) -> str:
    """An inline SVG line chart of confidence (0..1, y) over time (x: the reflection dates, to
    scale; in order when a date is missing or all are one day), each point labelled with its
    date; a single point is drawn as a short flat line."""
    points = [(str(h.get("at", "")), float(h["confidence"])) for h in history
              if isinstance(h, dict) and isinstance(h.get("confidence"), (int, float))]
    if not points:
        return ""
    if len(points) == 1:
        points = points * 2
    inner_w, inner_h = CHART_W - 2 * PAD, CHART_H - 2 * PAD
    days = [_day(at) for at, _ in points]
    known = [d for d in days if d is not None]
    if len(known) == len(days) and max(known) > min(known):
        xs = [PAD + (d - min(known)) / (max(known) - min(known)) * inner_w for d in known]
    else:
        xs = [PAD + i * inner_w / (len(points) - 1) for i in range(len(points))]
    xy = [(x, PAD + (1 - c) * inner_h) for x, (_, c) in zip(xs, points)]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{CHART_W}" height="{CHART_H}" role="img" class="chart"'
             f' aria-label="confidence over time">',
             f'<rect x="{PAD}" y="{PAD}" width="{inner_w}" height="{inner_h}" fill="none" stroke="#ccc"/>']
    for level in (0.0, 0.5, 1.0):
        y = PAD + (1 - level) * inner_h
        parts.append(f'<text x="{PAD - 4}" y="{y + 4:.1f}" font-size="10" text-anchor="end" fill="#666">{level:.1f}</text>')
    parts.append(f'<polyline points="{path}" fill="none" stroke="{LINE_COLOUR}" stroke-width="3"/>')
    shown = ""
    for (x, y), (at, c) in zip(xy, points):
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{LINE_COLOUR}"><title>{escape(at)}: {c:.2f}</title></circle>')
        if at != shown:  # one date label per day
            parts.append(f'<text x="{x:.1f}" y="{CHART_H - 6}" font-size="10" text-anchor="middle" fill="#666">{escape(at[5:])}</text>')
            shown = at
    parts.append("</svg>")
    return "".join(parts)


def _diff_html(diff: str) -> str:
    out = []
    for line in diff.split("\n"):
        cls = ("file" if line.startswith(("diff --git", "+++ ", "--- ")) else "add" if line.startswith("+")
               else "del" if line.startswith("-") else "hunk" if line.startswith("@@") else "")
        out.append(f'<span class="{cls}">{escape(line)}</span>' if cls else escape(line))
    return "\n".join(out)


def render(shown: dict[str, Any], opinions: dict[str, dict[str, Any]]) -> str:
    """The page for `review.show(...)`'s result and the proposal's state-file opinions."""
    s = shown.get("summary") or {}
    changes = read_changes(s.get("changes", []))
    moves = [c for c in changes if isinstance(c, OpinionChange)]
    others = [p for p in changes if isinstance(p, (PageChange, RetainChange))]
    title = f"gitmem review: proposal {shown['commit'][:7]}"
    body = [f"<h1>{escape(title)}</h1>",
            f'<p class="note">branch {escape(shown["branch"])}, base {shown["base"][:7]}, {escape(str(s.get("facts", "?")))} facts,'
            f' model: {escape(str(s.get("model") or "none"))}{" — stale: your branch moved since" if shown.get("stale") else ""}</p>',
            "<h2>Opinions</h2>" if moves else ""]
    for c in moves:
        op = opinions.get(c.key) or {}
        move = (confidence_move(c.before, c.after) if c.evidence else f"c {c.after:.2f} (as stated in memory)")
        body.append(f'<div class="op"><div><span class="move">{escape(move)}</span> {escape(c.opinion)}</div>')
        for e in c.evidence:
            body.append(f'<div class="ev"><span class="{escape(e.relation)}">{escape(e.label)}</span>: “{escape(e.content)}”'
                        f' <cite>{escape(e.source)}</cite></div>')
        body.append(chart(op.get("history", [])) + "</div>")
    moved = {c.key for c in moves}
    steady = sorted((op for key, op in opinions.items() if key not in moved and op.get("current") and op.get("history")),
                    key=lambda op: str(op.get("statement", "")))
    if steady:
        body.append("<h2>Other opinions (unchanged by this proposal)</h2>")
        for op in steady:
            value = op.get("confidence")
            shown_c = f"c {value:.2f}" if isinstance(value, (int, float)) else "c ?"
            body.append(f'<div class="op"><div><span class="move">{shown_c}</span> {escape(str(op.get("statement", "")))}</div>'
                        f'{chart(op.get("history", []))}</div>')
    if others:
        body.append("<h2>Pages</h2><ul>")
        for p in others:
            body.append(f"<li>{escape(p.status)} <code>{escape(p.path)}</code>: {escape(listed(p, 'Retain bullets'))}</li>")
        body.append("</ul>")
    for label, key, fmt in (("Skipped", "skipped", lambda x: f"{x['path']} [{x['block']}]: {x['reason']}"),
                            ("Rejected model output", "rejected", lambda x: f"{x['item']}: {x['reason']}")):
        items = [x for x in s.get(key, []) if isinstance(x, dict)]
        if items:
            body.append(f"<h2>{label}</h2><ul>" + "".join(f"<li>{escape(fmt(x))}</li>" for x in items) + "</ul>")
    hidden = shown.get("hidden") or []
    body.append("<h2>Diff</h2>")
    if hidden:
        body.append(f'<p class="note">Not shown: {escape(", ".join(hidden))} (gitmem review --html FILE --full shows it).</p>')
    body.append(f'<pre class="diff">{_diff_html(shown.get("diff", ""))}</pre>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>\n" + "\n".join(b for b in body if b)
            + "\n</body></html>\n")
