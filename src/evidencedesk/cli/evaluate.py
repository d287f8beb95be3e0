"""``evidencedesk eval``, ``diagnose`` and ``compare``: score labelled questions, find the failing stage, gate."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from evidencedesk.cli import options as opt
from evidencedesk.cli.app import (
    app,
    check_method,
    config_scope,
    console,
    err_console,
    fail,
    load_config,
    open_desk,
    print_json,
    scope_flags,
)

if TYPE_CHECKING:
    from evidencedesk import Label, Scope
    from evidencedesk.config import Settings
    from evidencedesk.results.evaluation import AnswerEvaluation, EvalRun, StrategyRow

SMALL_N = 10  # evidencedesk.evaluation.slices.SMALL_N (a copy: the help must not load numpy)
KOpt = Annotated[
    int | None,
    typer.Option("--k", help="How many chunks count as retrieved (the context size). Default: the config's (5)."),
]
FloorOpt = Annotated[
    float | None,
    typer.Option("--floor", help="Score floor: lower-scored chunks leave the context. Default: the config's (none)."),
]
LabelsArg = Annotated[Path, typer.Argument(help="Labels file (JSON lines).")]


def _settings(
    config: Path | None,
    method: str | None,
    k: int | None,
    floor: float | None,
    scopes: list[list[str] | None],
    valid_at: str | None,
) -> tuple[Settings, str, int, float | None, Scope]:
    """The configuration with the shared eval/diagnose flags applied, and what they resolve to."""
    from evidencedesk.config import Overrides

    flags = {"--k": Overrides(k=k), "--floor": Overrides(floor=floor), **scope_flags(*scopes)}
    settings = load_config(config, flags)
    r = settings.retrieval
    return settings, method or r.method, r.k, settings.context.floor, config_scope(settings, valid_at)


def _labels(path: Path) -> list[Label]:
    """The labels of ``path``; its warnings (unknown fields) are printed to stderr as plain lines."""
    import warnings

    from evidencedesk import LabelWarning, load_labels
    from evidencedesk.errors import LabelError

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", LabelWarning)
            labels = load_labels(path)
    except FileNotFoundError as exc:
        fail(str(exc))
    except LabelError as exc:
        fail(str(exc))
    for w in caught:
        if issubclass(w.category, LabelWarning):
            err_console.print(f"[yellow]warning[/]: {w.message}", highlight=False)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if not labels:
        fail(f"no labels in {path}")
    return labels


def _check(method: str | None, k: int | None, methods: list[str]) -> None:
    for m in [method, *methods]:
        check_method(m)
    if k is not None and k < 1:
        fail(f"--k: must be at least 1, got {k}", 2)


_TAG_METRICS = ("hit", "recall", "mrr", "ndcg")


def _print_run(run: EvalRun) -> None:
    overall = Table(title=f"{run.method} · k={run.k} · {len(run.questions)} questions")
    for col in ("metric", "n", "mean", "± SE"):
        overall.add_column(col, justify="left" if col == "metric" else "right")
    for name, st in run.overall.items():
        overall.add_row(name, str(st.n), f"{st.mean:.3f}", f"{st.se:.3f}")
    console.print(overall)
    shown = [f"{m}@{run.k}" for m in _TAG_METRICS] + ["abstain"]
    # a cell is "mean ±SE": on a narrow terminal the SE wraps under the mean, nothing is cut
    tags = Table(title="per tag: mean ±SE (all metrics: --json or --html)")
    tags.add_column("slice", no_wrap=True, overflow="fold")
    tags.add_column("n", justify="right", no_wrap=True)
    for col in shown:
        tags.add_column(col, justify="right", min_width=5, overflow="fold")
    tags.add_column("note", overflow="fold")
    for name, stats in run.slices.items():
        n = max((st.n for st in stats.values()), default=0)
        cells = [f"{stats[m].mean:.2f} ±{stats[m].se:.2f}" if m in stats else "-" for m in shown]
        tags.add_row(name, str(n), *cells, "[yellow]small n[/]" if n < SMALL_N else "")
    console.print(tags)
    _print_counts(run)
    if run.strategies:
        _print_strategies(run.strategies)


def _print_counts(run: EvalRun) -> None:
    filtered = {(c.stage, c.label): c.count for c in run.label_counts}
    unfiltered = {(c.stage, c.label): c.count for c in run.label_counts_unfiltered or ()}
    table = Table(title="questions per finding")
    for col in ("stage", "label", "no filter", "filtered"):
        table.add_column(col, justify="right" if col in ("no filter", "filtered") else "left")
    for key in dict.fromkeys([*unfiltered, *filtered]):
        table.add_row(key[0], key[1], str(unfiltered.get(key, 0)), str(filtered.get(key, 0)))
    console.print(table)


def _print_strategies(rows: Sequence[StrategyRow]) -> None:
    table = Table(title=f"strategies (k={rows[0].k})")
    table.add_column("method")
    hits = list(rows[0].hits)
    for col in [*hits, "answer outranked", "no answer in k", "junk for unanswerable"]:
        table.add_column(col, justify="right")
    for r in rows:
        cells = [f"{r.hits[h]}/{r.n_answerable}" for h in hits]
        table.add_row(r.method, *cells, str(r.outranked), str(r.no_answer_in_k), f"{r.junk}/{r.n_unanswerable}")
    console.print(table)


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _print_answers(res: AnswerEvaluation) -> None:
    count = res.table.count
    table = Table(title=f"retrieval by answer ({res.generator}, {res.n_answerable} answerable questions)")
    for col in ("", "answer correct and supported", "answer wrong or unsupported"):
        table.add_column(col, justify="left" if not col else "right")
    table.add_row("gold in context", str(count("working")), str(count("generation or context failure")))
    table.add_row("gold not in context", str(count("right without evidence")), str(count("retrieval miss")))
    console.print(table)
    rates = Table(title="answers")
    for col in ("measure", "value", "counts"):
        rates.add_column(col, justify="left" if col == "measure" else "right")
    abstained = res.abstained_answerable + res.abstained_unanswerable
    right = res.abstained_unanswerable  # abstentions on questions the documents cannot answer
    rows = [
        ("answer accuracy", res.accuracy, f"{res.correct}/{res.n_answerable} answerable"),
        ("faithfulness", res.faithfulness, f"{res.supported_sentences}/{res.sentences} sentences"),
        ("citation validity", res.citation_validity, f"{res.citations_valid}/{res.answers_generated} answers"),
        ("abstention precision", res.abstention_precision, f"{right}/{abstained} abstained"),
        ("abstention recall", res.abstention_recall, f"{right}/{res.n_unanswerable} unanswerable"),
    ]
    for measure, value, counts in rows:
        rates.add_row(measure, _rate(value), counts)
    console.print(rates)
    sel = res.selective
    rates = Table(title="selective answering")
    for col in ("measure", "value", "counts"):
        rates.add_column(col, justify="left" if col == "measure" else "right")
    rates.add_row("coverage", _rate(sel.coverage), f"{sel.answered}/{sel.n} answered")
    rates.add_row("accuracy among answered", _rate(sel.accuracy_answered), f"{sel.correct}/{sel.answered}")
    rates.add_row("answered but wrong", str(sel.answered_wrong), f"{sel.answered_unanswerable} unanswerable")
    console.print(rates)
    found = sel.suggested_threshold
    if found:
        point = found.point
        console.print(
            f"suggested generator.reader.threshold for these labels: {found.threshold} ({found.rule}; "
            f"{point.answered} answered, {point.correct} right, {point.wrong} wrong)",
            highlight=False,
        )


def _print_floor(run: EvalRun) -> None:
    if run.suggested_floor is not None:
        console.print(run.suggested_floor.sentence(run.method), highlight=False)
    elif not run.unanswerable:
        console.print("no floor suggested: add unanswerable labels (answerable: false) to learn one", highlight=False)
    else:
        console.print("no floor suggested: on these labels no score floor does better than none", highlight=False)


@app.command("eval")
def eval_command(
    labels_path: LabelsArg,
    store: opt.Store = None,
    config: opt.Config = None,
    method: opt.Method = None,
    k: KOpt = None,
    floor: FloorOpt = None,
    methods: Annotated[
        str | None, typer.Option("--methods", help="Comma-separated methods for the strategies comparison.")
    ] = None,
    html: Annotated[Path | None, typer.Option("--html", help="Also write a self-contained HTML report.")] = None,
    save: Annotated[bool, typer.Option("--save/--no-save", help="Store the run (default: yes).")] = True,
    status: opt.Status = None,
    audience: opt.Audience = None,
    lang: opt.Lang = None,
    tenant: opt.Tenant = None,
    valid_at: opt.ValidAt = None,
    answers: Annotated[
        bool,
        typer.Option(
            "--answers/--no-answers",
            help="Also answer every question with --generator and score the answers (default: on).",
        ),
    ] = True,
    generator_name: Annotated[
        str | None,
        typer.Option(
            "--generator", help="Generator for --answers: extractive, llama-cpp or openai. Default: the config's."
        ),
    ] = None,
    as_json: opt.Json = False,
) -> None:
    """Score labelled questions: metrics overall and per tag, label counts with and without the filter."""
    others = [m.strip() for m in (methods or "").split(",") if m.strip()]
    _check(method, k, others)
    settings, method, k, floor, scope = _settings(config, method, k, floor, [status, audience, lang, tenant], valid_at)
    labels = _labels(labels_path)
    with open_desk(settings, store, lines=not as_json) as desk:
        run = desk.evaluate(
            labels, method, k, scope, floor=floor, methods=others,
            answers=(generator_name or settings.generator.name) if answers else None, save=save,
        )  # fmt: skip
        run = replace(run, labels=str(labels_path))
        if html is not None:
            html.parent.mkdir(parents=True, exist_ok=True)
            page = desk.report_html(replace(run, run_id=None), size_series=desk.size_series(labels, method, scope))
            html.write_text(page, encoding="utf-8")
    if as_json:
        print_json(run.response())
        return
    _print_run(run)
    if run.answers is not None:
        _print_answers(run.answers)
    _print_floor(run)
    if html is not None:
        console.print(f"report: {html}", highlight=False)
    if run.run_id is not None:
        console.print(f"run id {run.run_id} (build {run.build_id})", highlight=False)


@app.command()
def diagnose(
    labels_path: LabelsArg,
    store: opt.Store = None,
    config: opt.Config = None,
    method: opt.Method = None,
    k: KOpt = None,
    floor: FloorOpt = None,
    status: opt.Status = None,
    audience: opt.Audience = None,
    lang: opt.Lang = None,
    tenant: opt.Tenant = None,
    valid_at: opt.ValidAt = None,
    generator_name: Annotated[
        str | None,
        typer.Option(
            "--generator",
            help="Generator that answers each question: extractive, llama-cpp or openai. Default: the config's.",
        ),
    ] = None,
    as_json: opt.Json = False,
) -> None:
    """List each failing question with its first finding: the stage where the evidence was lost.

    Every question is answered as ``ask`` answers it, and diagnosed from that answer's trace."""
    _check(method, k, [])
    settings, method, k, floor, scope = _settings(config, method, k, floor, [status, audience, lang, tenant], valid_at)
    labels = _labels(labels_path)
    with open_desk(settings, store, lines=not as_json) as desk:
        failing = desk.diagnose(labels, method, k, scope, floor, generator_name)
    if as_json:
        print_json(
            {
                "method": method,
                "k": k,
                "n_questions": len(labels),
                "n_failed": len(failing),
                "failing": [r.failing_dict() for r in failing],
            }
        )
        return
    table = Table(title=f"{method} · k={k}: {len(failing)} of {len(labels)} questions fail")
    for col in ("id", "stage", "label", "detail"):
        table.add_column(col)
    for r in failing:
        f = r.root
        table.add_row(r.question_id, f.stage, f.label, f.detail)
    console.print(table)


def _load_run(ref: str, store: str | None, config: Path | None) -> EvalRun | dict[str, object]:
    path = Path(ref)
    if not ref.isdigit() and path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            fail(f"cannot read run file {ref}: {exc}")
        if not isinstance(data, dict):
            fail(f"run file {ref}: not a JSON object")
        return data
    if not ref.isdigit():
        fail(f"{ref!r} is neither a run id nor a run file", 2)
    settings = load_config(config)
    with open_desk(settings, store) as desk:
        return desk.eval_run(int(ref))  # a run id the store lacks: StoreError, exit 1


@app.command()
def compare(
    run_a: Annotated[str, typer.Argument(help="Baseline: a stored run id or a run JSON file.")],
    run_b: Annotated[str, typer.Argument(help="Candidate: a stored run id or a run JSON file.")],
    store: opt.Store = None,
    config: opt.Config = None,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Largest allowed drop of any metric on any slice.")
    ] = 0.02,
    as_json: opt.Json = False,
) -> None:
    """Compare two runs slice by slice; exit 3 when any metric on any slice drops by more than the threshold."""
    from evidencedesk.constants import EXIT_REGRESSED
    from evidencedesk.desk import Desk

    a, b = _load_run(run_a, store, config), _load_run(run_b, store, config)
    result = Desk.compare_runs(a, b, threshold)  # a ValueError exits 2 (errors.ERROR_TABLE)
    if not result.deltas:
        fail("the runs share no metric on any slice; " + "; ".join(result.notes))
    if as_json:
        print_json({"run_a": run_a, "run_b": run_b, **result.to_dict()})
    else:
        table = Table(title=f"run {run_a} → run {run_b} (threshold {threshold:g})")
        for col in ("slice", "metric", "A", "B", "Δ", ""):
            table.add_column(col, justify="right" if col in ("A", "B", "Δ") else "left")
        for d in result.deltas:
            mark = "[red]REGRESSED[/]" if d.regressed else ("[yellow]small[/]" if d.small else "")
            table.add_row(d.slice, d.metric, f"{d.a:.3f}", f"{d.b:.3f}", f"{d.delta:+.3f}", mark)
        console.print(table)
        for note in result.notes:
            err_console.print(f"note: {note}", highlight=False)
        verdict = (
            f"[red]regressed[/]: {len(result.regressions)} drop(s)" if result.regressed else "[green]no regression"
        )
        console.print(verdict)
    if result.regressed:
        raise typer.Exit(EXIT_REGRESSED)
