"""A self-contained HTML report of one evaluation run: tables plus inline SVG charts.

The page loads nothing from outside (inline CSS, inline SVG, no script). It shows the overall
metrics, a per-tag table with n, standard error and small-slice flags, label counts with and
without the filter, the strategies comparison, recall@k curves per method, recall against context
words for several chunk sizes, the answer metrics (when the run answered its questions, as
``evidencedesk eval`` does by default) with selective answering (coverage, accuracy among answered,
the risk-coverage curve over the reader's threshold and a suggested threshold), and the failing
questions with their first finding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from evidencedesk.evaluation.svg import bar_chart, line_chart

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#111827;max-width:1100px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #e5e7eb;padding-bottom:4px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #e5e7eb;padding:4px 8px;text-align:right}
th{background:#f3f4f6}td.l,th.l{text-align:left}.small{color:#b45309}.muted{color:#6b7280;font-size:12px}
svg.chart{display:block;margin:8px 0;background:#fff;border:1px solid #e5e7eb}
svg .title{font-size:14px;font-weight:600}svg .axis,svg .legend,svg .value{font-size:11px;fill:#374151}
svg .axisline{stroke:#374151}svg .grid{stroke:#e5e7eb}
"""


@dataclass(frozen=True)
class SizeSeries:
    """Recall against context size for one chunking: points of (mean context words, recall, k)."""

    name: str
    points: tuple[tuple[float, float, int], ...]

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "points": [list(p) for p in self.points]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SizeSeries:
        """A series read back from its JSON."""
        return cls(str(d["name"]), tuple((float(p[0]), float(p[1]), int(p[2])) for p in d["points"]))


def _cell(stat: Mapping[str, Any] | None) -> str:
    if not stat:
        return '<td class="muted">–</td>'
    flag = ' <span class="small" title="fewer than 10 questions">small</span>' if stat.get("small") else ""
    return f"<td>{stat['mean']:.3f} ± {stat['se']:.3f}<br><span class=muted>n={stat['n']}</span>{flag}</td>"


def _metric_order(run: Mapping[str, Any]) -> list[str]:
    seen: dict[str, None] = {}
    for metrics in run.get("slices", {}).values():
        for name in metrics:
            seen.setdefault(name, None)
    return list(seen)


def _overall_table(run: Mapping[str, Any]) -> str:
    rows = ["<table><tr><th class=l>metric</th><th>n</th><th>mean</th><th>± SE</th></tr>"]
    for name, st in run.get("overall", {}).items():
        small = ' <span class="small">small</span>' if st.get("small") else ""
        rows.append(
            f"<tr><td class=l>{escape(name)}</td><td>{st['n']}</td><td>{st['mean']:.3f}</td>"
            f"<td>{st['se']:.3f}{small}</td></tr>"
        )
    return "\n".join(rows + ["</table>"])


def _slices_table(run: Mapping[str, Any]) -> str:
    metrics = _metric_order(run)
    head = "".join(f"<th>{escape(m)}</th>" for m in metrics)
    rows = [f"<table id=slices><tr><th class=l>slice</th>{head}</tr>"]
    for name, stats in run.get("slices", {}).items():
        cells = "".join(_cell(stats.get(m)) for m in metrics)
        rows.append(f"<tr><td class=l>{escape(name)}</td>{cells}</tr>")
    return "\n".join(rows + ["</table>"])


def _label_chart(run: Mapping[str, Any]) -> str:
    filtered = {(r["stage"], r["label"]): r["count"] for r in run.get("label_counts") or []}
    unfiltered_rows = run.get("label_counts_unfiltered")
    series: dict[str, dict[tuple[str, str], int]] = {"with filter": filtered}
    if unfiltered_rows is not None:
        series = {"no filter": {(r["stage"], r["label"]): r["count"] for r in unfiltered_rows}, **series}
    keys = list(dict.fromkeys([k for s in series.values() for k in s]))
    if not keys:
        return "<p class=muted>No findings: every question passed.</p>"
    cats = [f"{s} / {lab}" for s, lab in keys]
    data = {name: [float(counts.get(k, 0)) for k in keys] for name, counts in series.items()}
    return bar_chart(cats, data, chart_id="label-counts", title="Questions per finding (stage / label)")


def _strategies_table(run: Mapping[str, Any]) -> str:
    rows = run.get("strategies") or []
    if not rows:
        return ""
    hits = list(rows[0]["hits"])
    head = "".join(f"<th>{escape(h)}</th>" for h in hits)
    out = [
        "<h2>Strategies (same chunks, scope, labels and k)</h2>",
        f"<table id=strategies><tr><th class=l>method</th>{head}<th>answer outranked</th>"
        "<th>no answer in k</th><th>junk for unanswerable</th></tr>",
    ]
    for r in rows:
        cells = "".join(f"<td>{r['hits'][h]}/{r['n_answerable']}</td>" for h in hits)
        out.append(
            f"<tr><td class=l>{escape(r['method'])}</td>{cells}<td>{r['outranked']}</td>"
            f"<td>{r['no_answer_in_k']}</td><td>{r['junk']}/{r['n_unanswerable']}</td></tr>"
        )
    return "\n".join(out + ["</table>"])


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _answers_section(run: Mapping[str, Any]) -> str:
    """The answer metrics ``evidencedesk eval`` prints for the same run: retrieval against answer
    correctness (four cells) and the rates with their counts."""
    res = run.get("answers")
    if not res:
        return ""
    cells = {name: cell["count"] for name, cell in res["table"]["cells"].items()}
    right = res["abstained_unanswerable"]
    abstained = res["abstained_answerable"] + right
    rates = [
        ("answer accuracy", res["accuracy"], f"{res['correct']}/{res['n_answerable']} answerable"),
        ("faithfulness", res["faithfulness"], f"{res['supported_sentences']}/{res['sentences']} sentences"),
        ("citation validity", res["citation_validity"], f"{res['citations_valid']}/{res['answers_generated']} answers"),
        ("abstention precision", res["abstention_precision"], f"{right}/{abstained} abstained"),
        ("abstention recall", res["abstention_recall"], f"{right}/{res['n_unanswerable']} unanswerable"),
    ]
    out = [
        f"<h2>Answers ({escape(str(res['generator']))}, {res['n_answerable']} answerable questions)</h2>",
        "<table id=answers-table><tr><th class=l></th><th>answer correct and supported</th>"
        "<th>answer wrong or unsupported</th></tr>",
        f"<tr><td class=l>gold in context</td><td>{cells['working']}</td>"
        f"<td>{cells['generation or context failure']}</td></tr>",
        f"<tr><td class=l>gold not in context</td><td>{cells['right without evidence']}</td>"
        f"<td>{cells['retrieval miss']}</td></tr></table>",
        "<table id=answer-rates><tr><th class=l>measure</th><th>value</th><th>counts</th></tr>",
    ]
    out += [f"<tr><td class=l>{m}</td><td>{_rate(v)}</td><td>{escape(c)}</td></tr>" for m, v, c in rates]
    return "\n".join(out + ["</table>"])


def _selective_section(run: Mapping[str, Any]) -> str:
    """Selective answering: coverage, accuracy among answered, answered-but-wrong, the risk-coverage curve over
    the reader's threshold and the threshold suggested for these labels."""
    sel = (run.get("answers") or {}).get("selective")
    if not sel:
        return ""
    out = [
        "<h2>Selective answering</h2>",
        "<table id=selective><tr><th class=l>measure</th><th>value</th><th>counts</th></tr>",
        f"<tr><td class=l>coverage (share answered)</td><td>{_rate(sel['coverage'])}</td>"
        f"<td>{sel['answered']}/{sel['n']} questions</td></tr>",
        f"<tr><td class=l>accuracy among answered</td><td>{_rate(sel['accuracy_answered'])}</td>"
        f"<td>{sel['correct']}/{sel['answered']} answers</td></tr>",
        f"<tr><td class=l>answered but wrong</td><td>{sel['answered_wrong']}</td>"
        f"<td>{sel['answered_unanswerable']} of them unanswerable</td></tr></table>",
    ]
    curve = [p for p in sel.get("curve", []) if p.get("risk") is not None]
    if curve:
        pts = {"risk": [(float(p["coverage"]), float(p["risk"])) for p in sorted(curve, key=lambda p: p["coverage"])]}
        out.append(
            line_chart(
                pts,
                chart_id="risk-coverage",
                title="Risk (wrong answers / answers) against coverage",
                x_label="coverage (share answered)",
                y_label="risk",
            )  # fmt: skip
        )
        out.append(
            "<p class=muted>Each point is one reader threshold: the questions whose best unit scores at or above it "
            "are answered.</p>"
        )
    found = sel.get("suggested_threshold")
    if found:
        out.append(
            f"<p id=suggested-threshold>Suggested <code>generator.reader.threshold: {found['threshold']}</code> for "
            f"these labels ({escape(str(found['rule']))}): {found['answered']} answered, {found['correct']} right, "
            f"{found['wrong']} wrong.</p>"
        )
    return "\n".join(out)


def _floor_note(run: Mapping[str, Any]) -> str:
    found = run.get("suggested_floor")
    if not found:
        return ""
    from evidencedesk.evaluation.floor import FloorSuggestion

    return f"<p id=suggested-floor>{escape(FloorSuggestion(**found).sentence(str(run.get('method', ''))))}</p>"


def _failures_table(run: Mapping[str, Any]) -> str:
    failing = [q for q in run.get("questions", []) if q.get("findings")]
    if not failing:
        return "<p class=muted>No failing questions.</p>"
    head = "".join(f"<th class=l>{h}</th>" for h in ("id", "stage", "label", "detail"))
    out = [f"<table id=failures><tr>{head}</tr>"]
    for q in failing:
        f = q["findings"][0]
        out.append(
            f"<tr><td class=l title='{escape(q['question'])}'>{escape(q['id'])}</td>"
            + "".join(f"<td class=l>{escape(f[key])}</td>" for key in ("stage", "label", "detail"))
            + "</tr>"
        )
    return "\n".join(out + ["</table>"])


def render_report(
    run: Mapping[str, Any],
    *,
    curves: Mapping[str, Sequence[float]] | None = None,
    size_series: Sequence[SizeSeries] = (),
    title: str = "evidencedesk evaluation",
) -> str:
    """The whole page as one string. ``curves`` defaults to the run's own ``curves``."""
    curves = curves if curves is not None else run.get("curves") or {}
    scope = ", ".join(f"{k}={v}" for k, v in (run.get("scope") or {}).items() if v is not None)
    info = (
        f"method <b>{escape(str(run.get('method', '')))}</b>, k = {run.get('k')}, build {run.get('build_id')}, "
        f"{run.get('n_questions', 0)} questions ({run.get('n_answerable', 0)} answerable), "
        f"{run.get('n_failed', 0)} with findings; scope: {escape(scope)}"
    )
    body = [
        f"<h1>{escape(title)}</h1><p class=muted>{info}</p>",
        "<h2>Overall</h2>",
        "<p class=muted>Means over answerable questions (abstain: over unanswerable ones); ± standard error.</p>",
        _overall_table(run),
        "<h2>Per tag</h2>",
        "<p class=muted>mean ± standard error; <span class=small>small</span> = fewer than 10 questions.</p>",
        _slices_table(run),
        "<h2>Label counts</h2>",
        _label_chart(run),
        _strategies_table(run),
        _answers_section(run),
        _selective_section(run),
        _floor_note(run),
    ]
    if curves:
        pts = {name: [(float(i), float(v)) for i, v in enumerate(c, 1)] for name, c in curves.items()}
        body += [
            "<h2>Recall@k by method</h2>",
            line_chart(pts, chart_id="recall-curves", title="Recall@k", x_label="k", y_label="recall"),
        ]
    if size_series:
        pts = {s.name: [(p[0], p[1]) for p in s.points] for s in size_series}
        body += [
            "<h2>Recall against context size</h2>",
            "<p class=muted>Each point is one k: mean words in the top k against answer recall@k.</p>",
            line_chart(
                pts,
                chart_id="size-curves",
                title="Answer recall vs context words",
                x_label="context words",
                y_label="answer recall",
            ),
        ]
    body += ["<h2>Failing questions (first finding = root cause)</h2>", _failures_table(run)]
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def write_report(path: str | Path, run: Mapping[str, Any], **kwargs: Any) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_report(run, **kwargs), encoding="utf-8")
    return path


__all__ = ["SizeSeries", "render_report", "write_report"]
