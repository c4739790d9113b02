"""`shiftkit report`: the work and its cost as one page — a burn-up over commits and over
time (demotions marked), the cost per passing feature over time, each feature's attempts,
reverts, time and spend, the claims now and what the last check found — or as `--json`.

The page is one self-contained HTML file: the charts are SVG written in (pygal, a
dependency: decisions 0038, 0069), the style is in the page, and there is no script,
font or anything else to fetch: it opens from disk, and as a CI artifact.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from shiftkit.core import report
from shiftkit.core.errors import BadInput, ShiftkitError
from shiftkit.core.ledger import COORDINATION, IDLE, UNATTRIBUTED
from shiftkit.edge import gitio
from shiftkit.edge import prices as price_table
from shiftkit.edge import report as reading
from shiftkit.edge.context import Context

Say = Callable[[str], None]

CHART_POINTS = 400  # the most points a chart line draws (the JSON has every one)
MARKS = 200  # the most demotion marks a chart draws


def charts_library() -> ModuleType:
    """pygal (a dependency: decision 0069), or one line when this installation lacks it."""
    try:
        import pygal
    except ImportError:
        raise BadInput(
            "report: the HTML page's charts need pygal, a dependency of shiftkit that this "
            "installation lacks: install shiftkit again (or `pip install 'pygal>=3.0'`), "
            "or use `shiftkit report --json`"
        ) from None
    return pygal  # type: ignore[no-any-return]


def claims_now(ctx: Context) -> tuple[list[report.Claim], str | None]:
    """Every claim (this repository's, and the claims remote's), or this repository's and
    why the remote's are missing."""
    from shiftkit.commands import claims
    from shiftkit.edge import claims as local_claims

    note = None
    try:
        rows = claims.listing(ctx)
    except ShiftkitError as exc:
        note = f"the claims remote's claims are not shown: {exc.message}"
        rows = [
            {"id": fid, **held.as_json(), "where": "here", "stale": None}
            for fid, held in sorted(local_claims.list_claims(ctx.root).items())
        ]
    found = []
    for row in rows:
        found.append(
            report.Claim(
                str(row.get("id", "?")),
                str(row.get("where", "here")),
                str(row.get("session", "?")),
                str(row.get("host", "?")),
                str(row.get("branch") or "-"),
                str(row.get("taken", "?")),
                str(row.get("heartbeat", row.get("taken", "?"))),
                str(row["stale"]) if row.get("stale") else None,
            )
        )
    return found, note


def build(ctx: Context) -> report.Report:
    from shiftkit.commands import audit
    from shiftkit.edge import ledger

    head = gitio.head_oid(ctx.root)
    if head is None:
        raise BadInput("this branch has no commit yet: there is no history to report")
    selected = audit.commits_in(ctx.root, None, ctx.config.features)
    if not selected:
        raise BadInput(
            "no protocol history here (no commit adds .shiftkit.toml): adopt shiftkit with "
            "`shiftkit new .` first"
        )
    steps = reading.steps(ctx, selected)
    committed, head_list = reading.head_features(ctx)
    check = reading.last_check(ctx, committed)
    found, note = claims_now(ctx)
    ledger.fetch_usage(ctx)  # (every clone's usage ref: decision record 0065)
    return report.build(
        ctx.root.name,
        head,
        steps,
        head_list,
        ledger.read_all(ctx),
        ctx.config.cost,
        price_table.book(ctx.config.prices),
        found,
        check,
        time.time(),
        note,
    )


def report_cmd(ctx: Context, output: Path | None, as_json: bool, say: Say) -> int:
    if as_json:
        import json

        say(json.dumps(report.as_json(build(ctx)), indent=2, ensure_ascii=False))
        return 0
    pygal = charts_library()
    if output is None:  # off the work tree: nothing for `finish` to commit (decision 0069)
        output = gitio.git_dir(ctx.root) / "shiftkit" / "report.html"
        output.parent.mkdir(parents=True, exist_ok=True)
    page = render(build(ctx), pygal)
    write(output, page)
    say(f"report: {output} ({len(page.encode()) // 1024 + 1} KiB; opens from disk)")
    if untracked_in_work_tree(ctx.root, output):
        say(
            f"report: {output} is an untracked file of the work tree, which `finish` commits "
            f"(`git add -A`) and the Stop hook counts as dirty; delete it, ignore it, or write "
            f"it elsewhere with -o"
        )
    return 0


def write(output: Path, page: str) -> None:
    from shiftkit.edge.atomic import atomic_write

    if output.is_dir():
        raise BadInput(
            f"-o {output}: is a folder; name the file to write, e.g. {output}/report.html"
        )
    try:
        atomic_write(output, page)
    except OSError as exc:
        raise BadInput(
            f"-o {output}: cannot write the report ({exc.strerror or exc}); choose a path "
            f"you can write"
        ) from None


# -- the page -------------------------------------------------------------------------------

COLORS = {"features": "#52606d", "passing": "#2e7d32", "demoted": "#c62828", "cost": "#1565c0"}

CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: #1f2933; background: #fff; margin: 0; }
main { max-width: 1240px; margin: 0 auto; padding: 16px 20px 32px; }
header { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; }
h1 { font-size: 20px; margin: 0; }
.meta { color: #616e7c; margin: 0; }
.summary { font-size: 18px; margin: 10px 0 14px; padding: 10px 14px; background: #f5f7fa;
  border-left: 4px solid #2e7d32; border-radius: 4px; }
.summary .sep { color: #9aa5b1; padding: 0 6px; }
.summary.stale { border-left-color: #b26a00; background: #fff8ec; }
.charts { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 14px; }
figure { margin: 0; border: 1px solid #e4e7eb; border-radius: 6px; padding: 6px 8px 2px; }
figcaption { font-weight: 600; font-size: 13px; }
figure svg { width: 100%; height: auto; display: block; }
h2 { font-size: 16px; margin: 20px 0 6px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #e4e7eb;
  vertical-align: top; }
th { background: #f5f7fa; font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 12px;
  white-space: nowrap; }
.passing { background: #e3f1e4; color: #1b5e20; }
.open { background: #eef0f3; color: #3e4c59; }
.blocked, .stale, .unverified { background: #fff1dc; color: #7a4100; }
.later { background: #eef0f3; color: #3e4c59; }
.claimed { background: #e3ecfa; color: #0d47a1; }
.reason { color: #616e7c; font-size: 12px; }
.cols { display: grid; grid-template-columns: 1fr 1fr; gap: 20px; }
.note { color: #616e7c; font-size: 12px; }
.nodata { color: #616e7c; text-align: center; padding: 110px 0; margin: 0; }
details { margin: 8px 0; font-size: 13px; }
details summary { cursor: pointer; color: #3e4c59; }
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


_SCRIPT = re.compile(r"<script\b.*?</script>|<!--.*?-->", re.DOTALL)
_DESC = re.compile(r"<desc\b[^>]*>.*?</desc>", re.DOTALL)


def _svg(chart: Any, title: str, desc: str) -> str:
    """The chart's SVG for inlining: no XML declaration, without pygal's script (its
    tooltips' configuration: the page runs no script), comments (its web addresses) and
    `<desc>`s (the tooltips' coordinates); an image with its own title and description, which
    a screen reader says (pygal's own title is "Pygal")."""
    text: str = chart.render(is_unicode=True, disable_xml_declaration=True)
    text = _DESC.sub("", _SCRIPT.sub("", text))
    text = text.replace(
        "<title>Pygal</title>", f"<title>{_e(title)}</title><desc>{_e(desc)}</desc>", 1
    )
    return text.replace("<svg ", '<svg role="img" ', 1)


def numbers_table(caption: str, head: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A chart's numbers as a table, folded under the chart: the text alternative."""
    cells = "".join(
        "<tr>" + "".join(f'<td class="num">{_e(cell)}</td>' for cell in row) + "</tr>"
        for row in rows
    )
    heads = "".join(f'<th scope="col" class="num">{_e(name)}</th>' for name in head)
    return (
        f"<details><summary>{_e(caption)}</summary><table><tr>{heads}</tr>{cells}</table></details>"
    )


def _style(pygal: ModuleType, colors: Sequence[str]) -> Any:
    from pygal.style import Style

    font = 'system-ui, "DejaVu Sans", sans-serif'
    return Style(
        background="white",
        plot_background="white",
        foreground="#3e4c59",
        foreground_strong="#1f2933",
        foreground_subtle="#e4e7eb",
        colors=tuple(colors),
        font_family=font,
        label_font_family=font,
        major_label_font_family=font,
        legend_font_family=font,
        value_font_family=font,
        title_font_family=font,
        guide_stroke_dasharray="2,4",
        major_guide_stroke_dasharray="2,4",
        label_font_size=11,
        major_label_font_size=11,
        legend_font_size=12,
    )


def _chart(pygal: ModuleType, kind: str, colors: Sequence[str], **config: Any) -> Any:
    settings: dict[str, Any] = {
        "style": _style(pygal, colors),
        "js": [],
        "width": 420,
        "height": 290,
        "legend_at_bottom": True,
        "legend_at_bottom_columns": 3,
        "show_y_guides": False,  # (a guide at the total would hide the features line)
        "show_x_guides": False,
        "dots_size": 1.5,
        "margin": 6,
        "truncate_legend": -1,
        "no_data_text": "no commits yet",
    }
    settings.update(config)
    return getattr(pygal, kind)(**settings)


def _time_format(points: Sequence[float]) -> Callable[[datetime], str]:
    span = (max(points) - min(points)) if points else 0
    pattern = "%H:%M:%S" if span < 3600 else "%m-%d %H:%M" if span < 7 * 86400 else "%Y-%m-%d"
    return lambda moment: moment.strftime(pattern)


def _moment(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)


def _time_axis(points: Sequence[float]) -> dict[str, Any]:
    """Five labelled moments from the first to the last (pygal's own crowd each other)."""
    if not points:
        return {}
    low, high = min(points), max(points)
    ticks = [_moment(low + (high - low) * n / 4) for n in range(5)] if high > low else []
    return {"x_value_formatter": _time_format(points), "x_labels": ticks or [_moment(low)]}


def _count_axis(most: int) -> dict[str, Any]:
    """Whole numbers on the y axis, about six of them."""
    step = max(1, -(-most // 6))
    return {"y_labels": list(range(0, most + step + 1, step))}  # (headroom over the total)


DASHED = {"width": 2, "dasharray": "6, 4"}


def burnup_charts(rep: report.Report, pygal: ModuleType) -> tuple[str, str]:
    """The burn-up over commits and over time: features, passing, demotions marked."""
    points = rep.burnup
    marks = [n for n, point in enumerate(points) if point.demoted]
    shown = [points[n] for n in report.thin(len(points), CHART_POINTS, marks[:MARKS])]
    marked = [points[n] for n in report.thin(len(marks), MARKS) for n in [marks[n]]]
    demotions = sum(len(p.demoted) for p in points)
    label = f"demoted ({demotions})"
    colors = (COLORS["features"], COLORS["passing"], COLORS["demoted"])

    counts = _count_axis(max((p.total for p in shown), default=1))
    by_commit = _chart(pygal, "XY", colors, **counts)
    by_commit.add("features", [(p.n, p.total) for p in shown], show_dots=False, stroke_style=DASHED)
    by_commit.add("passing", [(p.n, p.passing) for p in shown], show_dots=len(shown) < 60)
    mark = 5 if len(marked) <= 20 else 2.5
    by_commit.add(label, [(p.n, p.passing) for p in marked], stroke=False, dots_size=mark)

    shown = sorted(shown, key=lambda p: p.time)  # (committer times can step back)
    marked = sorted(marked, key=lambda p: p.time)
    times = [float(p.time) for p in shown]
    by_time = _chart(
        pygal, "DateTimeLine", colors, x_label_rotation=20, **counts, **_time_axis(times)
    )
    by_time.add(
        "features",
        [(_moment(p.time), p.total) for p in shown],
        show_dots=False,
        stroke_style=DASHED,
    )
    by_time.add("passing", [(_moment(p.time), p.passing) for p in shown], show_dots=len(shown) < 60)
    by_time.add(label, [(_moment(p.time), p.passing) for p in marked], stroke=False, dots_size=mark)
    first, last = points[0], points[-1]
    told = (
        f"{last.n} protocol commits on HEAD's first-parent line; features from {first.total} "
        f"to {last.total}, passing from {first.passing} to {last.passing}; {demotions} "
        f"demotions."
    )
    start, end = report.when(first.time), report.when(last.time)
    return (
        _svg(by_commit, "Burn-up over protocol commits", f"Features and passing over {told}"),
        _svg(by_time, "Burn-up over time", f"From {start} to {end}: {told}"),
    )


def burnup_table(rep: report.Report) -> str:
    points = rep.burnup
    shown = [points[n] for n in report.thin(len(points), CHART_POINTS)]
    rows = [
        (p.n, p.commit[:7], report.when(p.time), p.total, p.passing, ", ".join(p.demoted) or "-")
        for p in shown
    ]
    head = ("commit #", "commit", "time", "features", "passing", "demoted")
    return numbers_table("Burn-up numbers (a table)", head, rows)


def cost_table(rep: report.Report) -> str:
    spent = rep.totals.usage.tokens > 0
    points = sorted(
        (p for p in rep.costs if p.per_passing is not None and spent), key=lambda p: p.time
    )
    shown = [points[n] for n in report.thin(len(points), CHART_POINTS)]
    rows = [
        (report.when(p.time), p.passing, report.spend_text(p.per_passing, rep.money)) for p in shown
    ]
    head = ("time", "passing", "per passing feature")
    return numbers_table("Cost curve numbers (a table)", head, rows) if rows else ""


def cost_chart(rep: report.Report, pygal: ModuleType) -> str:
    spent = rep.totals.usage.tokens > 0
    points = sorted(
        (p for p in rep.costs if p.per_passing is not None and spent), key=lambda p: p.time
    )
    shown = [points[n] for n in report.thin(len(points), CHART_POINTS)]

    if not shown:  # (pygal's empty chart is a giant caption over axes of nothing)
        why = "nothing passes yet" if spent else "no usage recorded yet"
        return f'<p class="nodata">{why}</p>'

    def value(spend: Any) -> float:
        return float(spend.usd or 0.0) if rep.money else float(spend.fresh_equivalent)

    chart = _chart(
        pygal,
        "DateTimeLine",
        [COLORS["cost"]],
        x_label_rotation=20,
        value_formatter=(lambda v: f"${v:,.2f}") if rep.money else (lambda v: f"{v:,.0f}"),
        range=(0, None),
        **_time_axis([p.time for p in shown]),
    )
    name = "$ per passing feature" if rep.money else "fresh-eq tokens / passing feature"
    chart.add(
        name,
        [(_moment(p.time), value(p.per_passing)) for p in shown],
        show_dots=len(shown) < 60,
    )
    told = (
        f"{name} at {len(shown)} moments from {report.when(shown[0].time)} to "
        f"{report.when(shown[-1].time)}: from {report.spend_text(shown[0].per_passing, rep.money)} "
        f"to {report.spend_text(shown[-1].per_passing, rep.money)}."
    )
    return _svg(chart, "Cost per passing feature over time", told)


def _badge(text: str, kind: str, title: str | None = None) -> str:
    hint = f' title="{_e(title)}"' if title else ""
    return f'<span class="badge {kind}"{hint}>{_e(text)}</span>'


def feature_table(rep: report.Report) -> str:
    head = (
        "<tr><th>feature</th><th>description</th><th>status</th>"
        '<th class="num">attempts</th><th class="num">reverts</th>'
        '<th class="num">demotions</th><th class="num">claim → passing</th>'
        f'<th class="num">tokens</th><th class="num">{"cost" if rep.money else "fresh-eq"}</th>'
        "<th>at HEAD</th></tr>"
    )
    body = []
    for row in rep.features:
        status = _badge(row.status, row.status, row.blocked_reason)
        if row.claimed:
            status += " " + _badge("claimed", "claimed")
        if row.added_later:
            status += " " + _badge(
                "added later",
                "later",
                "appended after the list's first commit: a person action (`shiftkit audit` "
                "lists it; decision record 0050)",
            )
        if row.blocked_reason:
            status += f'<div class="reason">{_e(row.blocked_reason)}</div>'
        at_head = (
            ""
            if row.verified_at_head is None
            else _badge("verified", "passing")
            if row.verified_at_head
            else _badge("not checked", "unverified")
        )
        if not row.spend.usage.tokens:
            money = "-"
        elif rep.money:
            money = report.spend_text(row.spend, True)
        else:
            money = f"{row.spend.fresh_equivalent:,.0f}"
        body.append(
            f"<tr><td><b>{_e(row.id)}</b></td><td>{_e(row.description)}</td><td>{status}</td>"
            f'<td class="num">{row.attempts}</td><td class="num">{row.reverts}</td>'
            f'<td class="num">{row.demotions}</td>'
            f'<td class="num">{report.duration(report.time_to_passing(row))}</td>'
            f'<td class="num">{row.spend.usage.tokens:,}</td>'
            f'<td class="num">{_e(money)}</td><td>{at_head}</td></tr>'
        )
    return f"<table>{head}{''.join(body)}</table>"


def claims_section(rep: report.Report) -> str:
    parts = ["<h2>Claims now</h2>"]
    if rep.claims:
        rows = "".join(
            f"<tr><td><b>{_e(c.feature)}</b></td><td>{_e(c.where)}</td><td>{_e(c.session)}</td>"
            f"<td>{_e(c.host)}</td><td>{_e(c.branch)}</td><td>{_e(c.taken)}</td>"
            f"<td>{_badge('stale', 'stale', c.stale) if c.stale else _e(c.heartbeat)}</td></tr>"
            for c in rep.claims
        )
        parts.append(
            "<table><tr><th>feature</th><th>where</th><th>session</th><th>host</th>"
            f"<th>branch</th><th>taken</th><th>last heartbeat</th></tr>{rows}</table>"
        )
    else:
        parts.append("<p>No feature is claimed.</p>")
    if rep.claims_note:
        parts.append(f'<p class="note">{_e(rep.claims_note)}</p>')
    return "".join(parts)


def check_section(rep: report.Report) -> str:
    check = rep.check
    lines = [
        "<h2>Last check</h2>",
        f"<p>{_e(report.check_text(check, rep.passing))}</p>",
    ]
    if check.verified:
        lines.append(
            f'<p class="note">verified at HEAD\'s tree: {_e(", ".join(check.verified))}</p>'
        )
    if check.unchecked:
        lines.append(
            '<p class="note">a passing feature not verified at HEAD\'s tree either failed '
            "there or was not checked since: `shiftkit check` verifies every one and demotes "
            "what fails</p>"
        )
    return "".join(lines)


def render(rep: report.Report, pygal: ModuleType) -> str:
    by_commit, by_time = burnup_charts(rep, pygal)
    costs = cost_chart(rep, pygal)
    pieces = report.summary(rep).split(" · ")
    summary = '<span class="sep">·</span>'.join(
        [f"<b>{_e(pieces[0])}</b>", *(f"<span>{_e(p)}</span>" for p in pieces[1:])]
    )
    # (red is for failures only: a stale check or unfinished work is amber, decision 0050's
    # "added later" a neutral note)
    stale = " stale" if rep.passing and rep.check.unchecked else ""
    per = "money" if rep.money else "fresh-equivalent tokens"
    loose = ", ".join(
        f"{name} {report.spend_text(spend, rep.money)}"
        for name, spend in (
            (COORDINATION, rep.coordination),
            (IDLE, rep.idle),
            (UNATTRIBUTED, rep.unattributed),
        )
        if spend.usage.tokens
    )
    notes = [
        f"Cost per passing feature: all spend recorded up to a moment (failed attempts, checks "
        f"and usage outside any feature included) ÷ the features passing then, in {per}; the last "
        f"point is `shiftkit cost`'s figure. Total spend {report.spend_text(rep.totals, rep.money)}"
        f", of which outside any feature {loose or 'none'}.",
        "Attempts: claims that ended in a result (ledger), a repair of a regression not "
        "counted. Reverts: commits that raised a "
        "feature's attempts. Demotions: commits that took its pass away.",
    ]
    if rep.unreadable:
        notes.append(
            f"{len(rep.unreadable)} commits hold a feature list that does not parse "
            f"(first {rep.unreadable[0][:7]}); `shiftkit audit` names them."
        )
    if len(rep.burnup) > CHART_POINTS:
        notes.append(
            f"The charts draw {CHART_POINTS} of {len(rep.burnup)} points (`--json` has all)."
        )
    title = f"shiftkit report — {rep.project}"
    generated = report.when(rep.generated)
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body><main>"
        f"<header><h1>{_e(rep.project)}</h1>"
        f'<p class="meta">shiftkit report · HEAD commit {_e(rep.head[:7])} · {_e(generated)}</p>'
        "</header>"
        f'<p class="summary{stale}">{summary}</p>'
        '<section class="charts">'
        "<figure><figcaption>Burn-up over protocol commits (HEAD's line)</figcaption>"
        f"{by_commit}</figure>"
        f"<figure><figcaption>Burn-up over time</figcaption>{by_time}</figure>"
        f"<figure><figcaption>Cost per passing feature</figcaption>{costs}</figure>"
        "</section>"
        f'<section class="cols"><div>{burnup_table(rep)}</div><div>{cost_table(rep)}</div>'
        "</section>"
        f"<h2>Features</h2>{feature_table(rep)}"
        f'<section class="cols"><div>{claims_section(rep)}</div>'
        f"<div>{check_section(rep)}</div></section>"
        + "".join(f'<p class="note">{_e(n)}</p>' for n in notes)
        + "</main></body></html>\n"
    )


def untracked_in_work_tree(root: Path, output: Path) -> bool:
    """Whether ``output`` is a file of the work tree that git neither tracks nor ignores."""
    from shiftkit.edge import gitio

    try:
        relative = output.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    listed = gitio.run(
        ["ls-files", "--others", "--exclude-standard", "--", relative.as_posix()],
        root,
        check=False,
    )
    return bool(listed.stdout.strip())


def report_and_advise(ctx: Context, output: Path | None, as_json: bool, say: Say, warn: Say) -> int:
    """`shiftkit report`: the report, then the Codex-trust advice on `warn` (the page's
    figures lack a Codex that ran no hooks)."""
    from shiftkit.commands import advice

    code = report_cmd(ctx, output, as_json, say)
    advice.codex_trust(ctx.root, warn)
    return code
