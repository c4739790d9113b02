"""`shiftkit report`: the data shaped purely (`core.report`), and the page on real projects —
the demo after its four shifts opened in headless Chromium, a history with a demotion and a
claim, and bad input said in one line."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import needs
import pytest
from conftest import (
    git_ok,
    isolated_environment,
    ok,
    run,
    shiftkit,
    write,
)

from shiftkit.core import report
from shiftkit.core.config import CostConfig, ModelPrice
from shiftkit.core.ledger import Entry, Usage

RATIOS = CostConfig()
PRICE = ModelPrice(input=1.0, cache_read=0.0, cache_write=0.0, output=0.0)  # $1 per M input

# -- the data, purely -------------------------------------------------------------------------


def step(
    oid: str, parent: str | None, t: int, passing: int, **events: tuple[str, ...]
) -> report.Step:
    parents = (parent,) if parent else ()
    return report.Step(oid, parents, t, oid, passing, 3, **events)


def usage(at: str, tokens: int, feature: str | None = None) -> Entry:
    return Entry("usage", at, at, feature=feature, model="m", usage=Usage(input=tokens))


def unit(at: str, feature: str, outcome: str, claimed: str) -> Entry:
    return Entry("unit", at + feature, at, feature=feature, outcome=outcome, claimed_at=claimed)


T0 = 1_800_000_000  # 2027-01-15T08:00:00Z


def iso(t: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


HISTORY = [
    step("a", None, T0, 0),
    step("b", "a", T0 + 100, 1, became_passing=("F1",)),
    step("c", "b", T0 + 200, 1, reverted=("F2",)),
    step("d", "c", T0 + 300, 2, became_passing=("F2",)),
    step("e", "d", T0 + 400, 1, demoted=("F1",)),
]
LEDGER = [
    unit(iso(T0 + 90), "F1", "passed", iso(T0 + 40)),
    usage(iso(T0 + 50), 1_000_000, "F1"),
    unit(iso(T0 + 190), "F2", "failed", iso(T0 + 150)),
    usage(iso(T0 + 180), 2_000_000, "F2"),
    unit(iso(T0 + 290), "F2", "passed", iso(T0 + 200)),
    usage(iso(T0 + 250), 3_000_000, "F2"),
    usage(iso(T0 + 500), 1_000_000),  # unattributed, after the last commit
]
HEAD_LIST = [
    report.HeadFeature("F1", "one", "open"),
    report.HeadFeature("F2", "two", "passing"),
    report.HeadFeature("F3", "three", "blocked", "stuck"),
]
CHECK = report.Check("tree0", ("F2",), (), float(T0 + 450))


def built() -> report.Report:
    return report.build(
        "p", "e", HISTORY, HEAD_LIST, LEDGER, RATIOS, [("m", PRICE)], [], CHECK, T0 + 600.0
    )


def test_burnup_follows_heads_first_parent_line_and_marks_demotions() -> None:
    side = step("x", "b", T0 + 250, 3, became_passing=("F3",))  # another branch
    line = report.mainline([*HISTORY, side], "e")
    assert [s.oid for s in line] == ["a", "b", "c", "d", "e"]
    points = report.burnup(line)
    assert [(p.n, p.passing) for p in points] == [(1, 0), (2, 1), (3, 1), (4, 2), (5, 1)]
    assert [p.demoted for p in points if p.demoted] == [("F1",)]


def test_cost_per_passing_feature_over_time_counts_all_spend_so_far() -> None:
    rep = built()
    # $1 at F1's claim; $2 more on F2's failed attempt; $3 more on its passing one; $1 loose
    per = [None if p.per_passing is None else round(p.per_passing.usd or 0, 6) for p in rep.costs]
    # a: nothing passes; b: $1 / 1; c: $3 / 1 (the failed attempt counts); d: $6 / 2;
    # e: $6 / 1 (F1 demoted); now: all $7 / 1 passing at HEAD
    assert per == [None, 1.0, 3.0, 3.0, 6.0, 7.0]
    assert rep.per_passing is not None and rep.per_passing.usd == pytest.approx(7.0)
    assert rep.costs[-1].time == T0 + 500


def test_a_sessions_usage_recorded_after_its_finish_counts_at_that_commit() -> None:
    """Claude Code's SessionEnd records the usage after the finish commit: it belongs to the
    commit that session made, not to the next one (the curve lagged a commit)."""
    ledger = [
        unit(iso(T0 + 90), "F1", "passed", iso(T0 + 40)),
        usage(iso(T0 + 120), 1_000_000, "F1"),  # after b (T0 + 100), before c
        unit(iso(T0 + 290), "F2", "passed", iso(T0 + 200)),
        usage(iso(T0 + 320), 3_000_000, "F2"),  # after d (T0 + 300), before e
    ]
    rep = report.build(
        "p", "e", HISTORY, HEAD_LIST, ledger, RATIOS, [("m", PRICE)], [], CHECK, T0 + 600.0
    )
    per = [None if p.per_passing is None else round(p.per_passing.usd or 0, 6) for p in rep.costs]
    # b: F1's $1 / 1 passing (not $0); d: $4 / 2; e: $4 / 1; now: $4 / 1 passing at HEAD
    assert per == [None, 1.0, 1.0, 2.0, 4.0, 4.0]


def test_feature_rows_attempts_reverts_demotions_and_time_to_passing() -> None:
    rows = {row.id: row for row in built().features}
    f1, f2, f3 = rows["F1"], rows["F2"], rows["F3"]
    assert (f1.attempts, f1.reverts, f1.demotions, f1.status) == (1, 0, 1, "open")
    assert (f2.attempts, f2.reverts, f2.demotions) == (2, 1, 0)
    assert report.time_to_passing(f1) == 60 and report.time_to_passing(f2) == 150
    assert f2.spend.usd == pytest.approx(5.0) and f2.spend.usage.tokens == 5_000_000
    assert (f3.status, f3.blocked_reason, report.time_to_passing(f3)) == ("blocked", "stuck", None)
    assert (f1.verified_at_head, f2.verified_at_head, f3.verified_at_head) == (None, True, None)


def test_a_merge_does_not_count_its_sides_events_again() -> None:
    merge = report.Step("m", ("e", "x"), T0 + 700, "merge", 2, 3, ("F1",), (), ("F2",))
    rows = {
        row.id: row
        for row in report.build(
            "p", "m", [*HISTORY, merge], HEAD_LIST, [], RATIOS, [], [], CHECK, T0 + 800.0
        ).features
    }
    assert rows["F2"].reverts == 1  # (the merge's first-parent diff shows it again)


def test_summary_says_n_of_m_the_cost_and_the_last_check() -> None:
    line = report.summary(built())
    assert line.startswith("1 of 3 passing · $7.00 per passing feature · last check: all 1")
    unchecked = built()._replace(check=report.Check("tree0", (), ("F2",), None))
    assert report.summary(unchecked).endswith(
        "not verified at HEAD's tree (tree0): F2 (`shiftkit check`)"
    )
    assert report.check_text(unchecked.check, 1) == (
        "last check: 0 of 1 passing verified at HEAD's tree (tree0); not verified there: F2 "
        "(`shiftkit check`)"
    )


def test_a_stale_check_is_the_headline_not_a_footnote() -> None:
    """The issue's page: a bold "N of N passing" over a band saying none was verified. The
    headline now says what was verified; the list's word comes second."""
    stale = built()._replace(check=report.Check("tree0", (), ("F2",), None))
    assert report.headline(stale) == (
        "0 of 1 passing verified at HEAD's tree, 1 of 3 marked passing"
    )
    assert report.headline(built()) == "1 of 3 passing"  # (checked: the count is the verdict)


def test_red_is_for_failures_only() -> None:
    """A stale check, a feature not checked and one added later are not failures: amber and
    a neutral note, never the red of a demotion."""
    from shiftkit.commands import report as page

    pygal = pytest.importorskip("pygal")
    stale = built()._replace(check=report.Check("tree0", (), ("F2",), None))
    html = page.render(stale, pygal)
    assert '<p class="summary stale"><b>0 of 1 passing verified at HEAD' in html
    reds = re.findall(r"\.([a-z]+)[^{}]*\{[^}]*(?:#fde7e7|#b71c1c|#c62828)", page.CSS)
    assert reds == [], reds
    assert '<p class="summary">' in page.render(built(), pygal)  # (all verified: no band)


def test_thin_keeps_ends_and_marks() -> None:
    assert report.thin(5, 10) == [0, 1, 2, 3, 4]
    kept = report.thin(5000, 100, keep=[4321])
    assert kept[0] == 0 and kept[-1] == 4999 and 4321 in kept and len(kept) <= 103


def test_json_has_the_same_data() -> None:
    data = report.as_json(built())
    assert [f["id"] for f in data["features"]] == ["F1", "F2", "F3"]
    assert [p["passing"] for p in data["burnup"]] == [0, 1, 1, 2, 1]
    assert data["burnup"][-1]["demoted"] == ["F1"]
    assert data["per_passing_feature"]["usd"] == 7.0
    json.dumps(data)


# -- the demo, in a browser -------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, isolated_home: Path) -> Path:
    """`shiftkit demo` after its four shifts."""
    with isolated_environment(isolated_home):
        target = tmp_path_factory.mktemp("demo") / "todo-app"
        target.parent.mkdir(parents=True, exist_ok=True)
        result = run(["shiftkit", "demo", str(target)], target.parent, timeout=900)
        assert result.returncode == 0, result.output
        return target


def screenshot(page: Path, png: Path) -> str:
    """Chromium's log of opening ``page`` headless (console messages included)."""
    assert CHROMIUM is not None
    proc = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--enable-logging=stderr",
            "--v=0",
            f"--screenshot={png}",
            "--window-size=1280,900",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert png.is_file(), proc.stderr[-2000:]
    return proc.stdout + proc.stderr


def png_spread(png: Path) -> int:
    """How many distinct byte values the image's pixel stream holds (a blank page: a few)."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat = 8, b""
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "big")
        kind = data[at + 4 : at + 8]
        if kind == b"IDAT":
            idat += data[at + 8 : at + 8 + size]
        at += 12 + size
    return len(set(zlib.decompress(idat)))


def console_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if ":CONSOLE" in line]


def test_the_demo_report_opens_in_chromium_and_names_every_feature(
    demo: Path, tmp_path: Path
) -> None:
    if CHROMIUM is None:
        needs.missing("no chromium binary (Debian's `chromium` package; .ci/run installs it)")
    page = tmp_path / "report.html"
    out = ok(demo, "report", "-o", str(page))
    assert str(page) in out
    html = page.read_text(encoding="utf-8")
    assert "<script" not in html.lower()  # nothing runs: nothing can fail to load or throw
    outside = re.findall(r"https?://[^\s\"'<>)]+", html)
    assert set(outside) <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    assert not re.search(r"\b(src|href)\s*=|url\(|@import", html)
    for feature_id in ("F000", "F001", "F002"):
        assert f"<b>{feature_id}</b>" in html
    assert "3 of 3 passing" in html and "per passing feature" in html
    assert html.count("<svg") == 3
    shot = tmp_path / "shot.png"
    log = screenshot(page, shot)
    assert console_lines(log) == []
    # a blank page as the control: the check can tell one from the report
    blank = write(tmp_path / "blank.html", "<!doctype html><title>b</title>")
    screenshot(blank, tmp_path / "blank.png")
    assert png_spread(tmp_path / "blank.png") < 8 < 64 < png_spread(shot)


AXE_DEFAULT = Path(__file__).resolve().parent.parent / ".ci" / "node" / "node_modules"
AXE = Path(os.environ.get("SHIFTKIT_AXE", AXE_DEFAULT / "axe-core" / "axe.min.js"))
AXE_RUN = """<script>%s</script><script>
axe.run(document, {resultTypes: ["violations"]}).then(r => {
  const pre = document.createElement("pre"); pre.id = "axe-result";
  pre.textContent = JSON.stringify(r.violations.map(
    v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(" "))})));
  document.body.appendChild(pre);
});
</script>"""


def axe_violations(page: Path, tmp_path: Path) -> list[dict[str, object]]:
    """axe-core (npm) run in headless Chromium over a copy of ``page`` with axe written in:
    `--virtual-time-budget` lets its promise settle before `--dump-dom` prints the DOM."""
    assert CHROMIUM is not None
    checked = tmp_path / f"axe-{page.name}"
    html = page.read_text(encoding="utf-8")
    checked.write_text(
        html.replace("</body>", AXE_RUN % AXE.read_text(encoding="utf-8") + "</body>"),
        encoding="utf-8",
    )
    proc = subprocess.run(
        [
            *(CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox"),
            *("--virtual-time-budget=30000", "--dump-dom", checked.resolve().as_uri()),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    found = re.search(r'<pre id="axe-result">(.*?)</pre>', proc.stdout, re.DOTALL)
    assert found, proc.stderr[-2000:]
    import html as markup

    return list(json.loads(markup.unescape(found.group(1))))


def test_the_demo_report_is_accessible_by_axe_and_its_charts_say_what_they_show(
    demo: Path, tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    ok(demo, "report", "-o", str(page))
    html = page.read_text(encoding="utf-8")
    # each chart an image with its own title and a description in words (not "Pygal", not
    # the tooltips' coordinates), and its numbers in a table
    assert "<title>Pygal</title>" not in html and html.count('<svg role="img"') == 3
    assert "<title>Burn-up over protocol commits</title><desc>Features and passing over " in html
    assert "<title>Cost per passing feature over time</title><desc>" in html
    assert not re.search(r'<desc class="[xy]', html)
    assert "<summary>Burn-up numbers (a table)</summary>" in html
    assert "<summary>Cost curve numbers (a table)</summary>" in html
    burnup = json.loads(ok(demo, "report", "--json"))["burnup"]
    assert html.count("<tr><td") >= len(burnup)
    assert "HEAD commit " in html  # (a commit, and the check's tree said to be a tree)
    if CHROMIUM is None:
        needs.missing("no chromium binary (Debian's `chromium` package; .ci/run installs it)")
    if not AXE.is_file():
        needs.missing(f"no axe-core at {AXE} (npm's `axe-core`; .ci/run installs it)")
    assert axe_violations(page, tmp_path) == []
    # the control: a page with an image without text and faint text has violations
    bad = write(
        tmp_path / "bad.html",
        '<!doctype html><html lang="en"><title>b</title><body><main><img src="x.png">'
        '<p style="color:#ddd">faint</p></main></body></html>',
    )
    assert {v["id"] for v in axe_violations(bad, tmp_path)} >= {"image-alt", "color-contrast"}


def test_the_console_check_sees_a_script_error(tmp_path: Path) -> None:
    if CHROMIUM is None:
        needs.missing("no chromium binary (Debian's `chromium` package; .ci/run installs it)")
    page = write(tmp_path / "bad.html", "<!doctype html><script>undefinedFn()</script>")
    assert console_lines(screenshot(page, tmp_path / "bad.png"))


def test_the_demo_json_holds_the_shifts(demo: Path) -> None:
    data = json.loads(ok(demo, "report", "--json"))
    rows = {row["id"]: row for row in data["features"]}
    assert set(rows) == {"F000", "F001", "F002"}
    assert (rows["F002"]["attempts"], rows["F002"]["reverts"]) == (2, 1)
    assert all(row["status"] == "passing" and row["verified_at_head"] for row in rows.values())
    assert [p["passing"] for p in data["burnup"]][-1] == 3
    cost = json.loads(ok(demo, "cost", "--json"))
    assert data["per_passing_feature"] == cost["per_passing_feature"]
    assert (
        data["cost_per_passing_feature"][-1]["per_passing_feature"] == cost["per_passing_feature"]
    )
    assert data["last_check"]["unchecked"] == [] and data["claims"] == []


# -- a demotion and a claim -------------------------------------------------------------------


def test_a_demotion_is_marked_and_a_claim_shown(scaffold: Path, tmp_path: Path) -> None:
    ok(scaffold, "claim", "F000")
    ok(scaffold, "finish", "-m", "the environment builds")
    ok(
        scaffold,
        "add",
        "--description",
        "a.txt says ok",
        "--step",
        "s",
        "--verify",
        "grep -q ok a.txt",
    )
    git_ok(scaffold, "commit", "-q", "-am", "Add feature a")
    ok(scaffold, "claim", "F001")
    write(scaffold / "a.txt", "ok\n")
    ok(scaffold, "finish", "-m", "write a.txt")
    write(scaffold / "a.txt", "renamed\n")
    git_ok(scaffold, "commit", "-q", "-am", "Reword a.txt for the new wording")
    assert shiftkit(scaffold, "check").returncode == 1  # F001 fails at HEAD: demoted
    ok(scaffold, "claim", "F001")
    data = json.loads(ok(scaffold, "report", "--json"))
    rows = {row["id"]: row for row in data["features"]}
    assert (rows["F001"]["status"], rows["F001"]["demotions"]) == ("open", 1)
    assert rows["F001"]["claimed"] is True and rows["F001"]["first_passing"] is not None
    assert [p["demoted"] for p in data["burnup"] if p["demoted"]] == [["F001"]]
    assert [c["feature"] for c in data["claims"]] == ["F001"]
    # the demotion commit changed HEAD's tree: F000 was verified at the one before it
    assert data["last_check"]["unchecked"] == ["F000"]
    assert data["summary"].startswith("0 of 1 passing verified at HEAD's tree, 1 of 2 marked")
    page = tmp_path / "r.html"
    ok(scaffold, "report", "-o", str(page))
    html = page.read_text()
    assert "demoted (1)" in html and "claimed" in html and "not checked" in html


# -- bad input: one line ----------------------------------------------------------------------


def one_line(result: object, code: int = 2) -> str:
    assert result.returncode == code, result.output  # type: ignore[attr-defined]
    err = result.stderr.strip()  # type: ignore[attr-defined]
    assert len(err.splitlines()) == 1 and err.startswith("shiftkit: "), err
    assert "Traceback" not in result.output  # type: ignore[attr-defined]
    return err


def test_bad_input_is_one_line(scaffold: Path, tmp_path: Path) -> None:
    assert "is a folder" in one_line(shiftkit(scaffold, "report", "-o", str(tmp_path)))
    # (a path under a file: not writable by anyone, root included)
    assert "cannot write the report" in one_line(
        shiftkit(scaffold, "report", "-o", "/proc/version/r.html")
    )
    ok(scaffold, "claim", "F000")
    ok(scaffold, "finish", "-m", "the environment builds")
    shallow = tmp_path / "shallow"
    git_ok(tmp_path, "clone", "-q", "--depth", "1", scaffold.as_uri(), str(shallow))
    assert "shallow" in one_line(shiftkit(shallow, "report", "--json"))
    empty = tmp_path / "empty"
    empty.mkdir()
    git_ok(empty, "init", "-q")
    write(empty / ".shiftkit.toml", "[shiftkit]\n")
    assert "no commit yet" in one_line(shiftkit(empty, "report"))


def test_without_pygal_the_page_says_how_to_get_it(scaffold: Path, tmp_path: Path) -> None:
    """A pygal that cannot be imported (first on the path): one line, exit 2; --json needs
    no charts and still works."""
    write(tmp_path / "hide" / "pygal" / "__init__.py", "raise ImportError('no pygal here')\n")
    env = {"PYTHONPATH": str(tmp_path / "hide")}
    result = shiftkit(scaffold, "report", "-o", str(tmp_path / "r.html"), env=env)
    assert "pip install 'pygal>=3.0'" in one_line(result)
    assert not (tmp_path / "r.html").exists()
    assert json.loads(shiftkit(scaffold, "report", "--json", env=env).stdout)["passing"] == 0


def test_a_fresh_scaffold_reports_its_one_commit(scaffold: Path) -> None:
    data = json.loads(ok(scaffold, "report", "--json"))
    assert data["features_total"] == 1 and len(data["burnup"]) == 1


# -- the CI workflow's artifact ---------------------------------------------------------------


def test_the_workflow_uploads_the_report_after_the_verdict(scaffold: Path, tmp_path: Path) -> None:
    import yaml

    workflow = yaml.safe_load((scaffold / ".github/workflows/shiftkit-audit.yml").read_text())
    steps = workflow["jobs"]["audit"]["steps"]
    runs = [s.get("run", "") for s in steps]
    [made] = [n for n, r in enumerate(runs) if '"$SHIFTKIT" report -o' in r]
    [upload] = [
        n for n, s in enumerate(steps) if s.get("uses", "").startswith("actions/upload-artifact@")
    ]
    verdict = [
        n for n, r in enumerate(runs) if '"$SHIFTKIT" audit' in r or "check --no-demote" in r
    ]
    assert max(verdict) < made < upload
    for n in (made, upload):
        assert steps[n]["if"] == "always()"  # a failed verdict is when the picture helps most
    assert steps[made]["continue-on-error"] is True  # never the verdict's
    assert steps[upload]["with"]["path"] == "${{ runner.temp }}/report/shiftkit-report.html"
    # The step's report line, run as CI runs it (pygal: a dependency of the shiftkit installed).
    [line] = [x for x in runs[made].splitlines() if '"$SHIFTKIT" report' in x]
    env = {"RUNNER_TEMP": str(tmp_path), "SHIFTKIT": str(shutil.which("shiftkit"))}
    result = run(["bash", "-e", "-c", line], scaffold, env=env)
    assert result.returncode == 0, result.output
    assert "<b>F000</b>" in (tmp_path / "report/shiftkit-report.html").read_text()


def test_the_default_page_leaves_the_work_tree_clean(scaffold: Path, tmp_path: Path) -> None:
    """`report` writes into the git dir by default (decision 0069): nothing for `finish`
    (`git add -A`) to commit, nothing for the Stop hook; a page asked for in the work tree,
    untracked, is named; elsewhere, or ignored, it is quiet."""
    said = ok(scaffold, "report")
    page = scaffold / ".git" / "shiftkit" / "report.html"
    assert f"report: {page} (" in said and page.is_file()
    assert git_ok(scaffold, "status", "--porcelain") == ""
    said = " ".join(ok(scaffold, "report", "-o", "report.html").split())
    assert "report.html is an untracked file of the work tree, which `finish` commits" in said
    assert "untracked file" not in ok(scaffold, "report", "-o", str(tmp_path / "page.html"))
    write(scaffold / ".git" / "info" / "exclude", "report.html\n")
    assert "untracked file" not in ok(scaffold, "report", "-o", "report.html")
