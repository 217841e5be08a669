"""`gitmem review`: the summary it leads with, the hidden state diff, --discard remembered, and the
--html page rendered by a real headless Chromium (real git repositories, a fake model)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitmem.cli import cli
from gitmem.cli.output import run_guarded
from gitmem.errors import GitmemError
from gitmem.reflect import review
from gitmem.reflect.report import LINE_COLOUR, chart
from gitmem.reflect.run import RunOptions, reflect
from gitrepo import GitRepo
from test_reflect_run import BRANCH, FakeModel, make_ws

EVIDENCE = "@Peter: Asked for the full migration plan inline on WhatsApp and read all of it."
LOG_AGAIN = "# 2025-11-08\n\n## Retain\n- W @Peter: Wanted the deploy plan inline again and read every line.\n"


def cli_out(repo: GitRepo, *args: str) -> str:
    r = CliRunner().invoke(cli, ["-C", str(repo.path), *args])
    assert r.exit_code == 0, r.output
    return r.output


def test_review_leads_with_opinion_moves_and_evidence_text(repo: GitRepo) -> None:
    make_ws(repo)
    reflect(make_ws_ws(repo), RunOptions(model=lambda: FakeModel()))
    out = cli_out(repo, "review")
    lines = out.splitlines()
    move = lines.index("  c 0.80 → 0.70  @Peter: Prefers concise replies on WhatsApp.")
    assert lines[move + 1].startswith(f'      contradicts (strong, -0.10, model): "{EVIDENCE}" memory/2025-11-06.md#L4@')
    assert "  added    bank/entities/Peter.md: summary, facts, opinions" in lines
    first_diff = out.index("diff --git")
    assert out.index("Opinions (1)") < out.index("Pages (") < first_diff  # the summary comes first
    assert "diff --git a/bank/.reflect.json" not in out and "leaves out bank/.reflect.json" in out
    assert len(lines) < 150
    full = cli_out(repo, "review", "--full")
    assert "diff --git a/bank/.reflect.json" in full
    data = json.loads(cli_out(repo, "review", "--json"))
    assert data["hidden"] == ["bank/.reflect.json"] and "bank/.reflect.json" not in data["diff"]
    [ev] = next(c for c in data["summary"]["changes"] if "opinion" in c)["evidence"]
    assert ev["content"] == EVIDENCE and ev["path"] == "memory/2025-11-06.md"


def make_ws_ws(repo: GitRepo):  # type: ignore[no-untyped-def]
    from gitmem.workspace import Workspace

    return Workspace.find(repo.path)


def test_discard_is_remembered_until_new_evidence(repo: GitRepo) -> None:
    ws = make_ws(repo)
    first = reflect(ws, RunOptions(model=lambda: FakeModel()))
    assert first["status"] == "written"
    review.discard(ws)
    # The same facts, the same (cached or fake) model answers: nothing is proposed again.
    for opts in (RunOptions(model=lambda: FakeModel(), if_needed=True), RunOptions(model=lambda: FakeModel()),
                 RunOptions(model=None)):
        again = reflect(ws, opts)
        assert again["status"] == "nothing-new", again
        assert "discarded" in again["message"]
    assert repo.git("branch", "--list", "gitmem/reflect") == ""

    # New evidence arrives: a proposal again, moved by the new evidence only (the discarded one
    # would have taken 0.80 down to 0.60).
    repo.commit("log", "2025-11-08", {"memory/2025-11-08.md": LOG_AGAIN})
    third = reflect(ws, RunOptions(model=lambda: FakeModel()))
    assert third["status"] == "written"
    [move] = [c for c in third["changes"] if "opinion" in c and c["evidence"]]
    assert (move["before"], move["after"]) == (0.8, 0.7)
    assert [e["path"] for e in move["evidence"]] == ["memory/2025-11-08.md"]
    assert "Wanted the deploy plan inline again" in repo.git("show", f"{BRANCH}:bank/entities/Peter.md")

    # Losing the memory (derived data) is harmless: the discarded proposal may just come back.
    review.discard(ws)
    (repo.path / ".memory/reflect-discarded.json").write_text("{not json")
    assert reflect(ws, RunOptions(model=None))["status"] == "written"


# --------------------------------------------------------------------------- HTML


def test_chart_points_follow_confidence_and_time() -> None:
    svg = chart([{"at": "2025-11-05", "confidence": 0.8}, {"at": "2025-11-06", "confidence": 0.7},
                 {"at": "2025-11-15", "confidence": 0.73}])
    assert svg.count("<circle") == 3 and f'stroke="{LINE_COLOUR}"' in svg
    points = svg.split('points="')[1].split('"')[0].split()
    xs = [float(p.split(",")[0]) for p in points]
    ys = [float(p.split(",")[1]) for p in points]
    assert xs[1] - xs[0] < (xs[2] - xs[1]) / 5  # one day vs nine days apart, to scale
    assert ys[0] < ys[2] < ys[1]  # higher confidence is higher up (smaller y)
    assert chart([]) == ""


def html_workspace(repo: GitRepo) -> Path:
    """A proposal whose opinion has a trajectory of three points, written as HTML in the workspace."""
    ws = make_ws(repo)
    reflect(ws, RunOptions(model=lambda: FakeModel()))
    review.merge(ws)
    repo.commit("log", "2025-11-08", {"memory/2025-11-08.md": LOG_AGAIN.replace("read every line", "read every <script>line")})
    reflect(ws, RunOptions(model=lambda: FakeModel(verdict={"relation": "supports", "strength": "weak"})))
    out = cli_out(repo, "review", "--html", ".memory/review.html")
    assert out.startswith("Wrote the review of proposal")
    return repo.path / ".memory/review.html"


def test_html_is_self_contained_and_escaped(repo: GitRepo) -> None:
    page = html_workspace(repo).read_text()
    assert "<script" not in page and "&lt;script&gt;" in page  # memory text is escaped
    assert " src=" not in page and " href=" not in page and "@import" not in page  # nothing fetched
    assert "c 0.70 → 0.73" in page and "Wanted the deploy plan inline again" in page
    assert page.count("<svg") == 1 and page.count("<circle") == 3  # stated 0.80, then 0.70, then 0.73
    assert "diff --git a/bank/opinions.md" in page and "diff --git a/bank/.reflect.json" not in page
    assert cli_out(repo, "review", "--html", "-") == review.html(make_ws_ws(repo))


def test_html_target_must_stay_in_the_workspace(repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = make_ws(repo)
    reflect(ws, RunOptions(model=None))
    for bad in (tmp_path / "out.html", repo.path / ".git/review.html", repo.path / "missing/dir/x.html"):
        with pytest.raises(GitmemError):
            review.write_html(ws, bad)
    (repo.path / "link.html").symlink_to(tmp_path / "elsewhere.html")
    with pytest.raises(GitmemError):
        review.write_html(ws, repo.path / "link.html")
    assert not (tmp_path / "elsewhere.html").exists() and not (tmp_path / "out.html").exists()
    assert run_guarded(cli, ["-C", str(repo.path), "review", "--html", str(tmp_path / "o.html"), "--json"]) == 1
    assert "outside the workspace" in json.loads(capsys.readouterr().out)["error"]


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) bytes) of an 8-bit non-interlaced PNG, as Chromium writes them."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and colour in (2, 6)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, channels, rows


def line_pixels(png: Path) -> int:
    width, channels, rows = read_png(png)
    want = tuple(int(LINE_COLOUR[i : i + 2], 16) for i in (1, 3, 5))
    count = 0
    for row in rows:
        for x in range(width):
            px = row[x * channels : x * channels + 3]
            if all(abs(px[k] - want[k]) <= 24 for k in range(3)):
                count += 1
    return count


def screenshot(page: Path, out: Path) -> Path:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (bash .ci/setup installs it)")
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={out.parent / 'profile'}",
                    f"--screenshot={out}", "--window-size=900,700", "--hide-scrollbars", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    return out


def test_html_charts_render_in_headless_chromium(repo: GitRepo, tmp_path: Path) -> None:
    page = html_workspace(repo)
    drawn = line_pixels(screenshot(page, tmp_path / "review.png"))
    assert drawn > 300, drawn  # the polyline (3 px wide) and its points are on screen
    # Control: the same page without its charts has no pixel of the line colour.
    text = page.read_text()
    bare = page.with_name("bare.html")
    bare.write_text(text[: text.index("<svg")] + text[text.index("</svg>") + 6 :])
    assert line_pixels(screenshot(bare, tmp_path / "bare.png")) == 0
