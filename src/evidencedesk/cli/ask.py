"""``evidencedesk ask QUESTION``: answer from the stored chunks with citations, and keep the trace.

``evidencedesk trace ID`` shows a stored trace in full.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from evidencedesk.cli import options as opt
from evidencedesk.cli.app import (
    app,
    check_method,
    config_scope,
    console,
    fail,
    load_config,
    open_desk,
    print_json,
    scope_flags,
    store_label,
)
from evidencedesk.cli.plain import wrap

if TYPE_CHECKING:
    from evidencedesk.desk import AskRequest, Desk
    from evidencedesk.results.ask import AskResult, Passage


def _stage_rows(out: AskResult) -> list[tuple[str, str]]:
    v = out.validation
    return [
        ("rewrite", f"{len(out.rewritten)} quer{'y' if len(out.rewritten) == 1 else 'ies'}"),
        ("retrieval", f"{len(out.retrieved)} candidates ({out.method})"),
        ("rerank", f"{len(out.reranked)} kept"),
        ("context", f"{len(out.context)} chunks, {len(out.dropped)} dropped, {out.context_tokens} tokens"),
        ("generation", "abstained" if v.raw and out.abstained and not v.sentences else "answered"),
        ("validation", f"{len(v.sentences)} sentences, {len(v.flagged)} flagged"),
    ]


def _print_answer(out: AskResult) -> None:
    title = "[bold yellow]Abstained[/]" if out.abstained else "[bold green]Answer[/]"
    console.print(title)
    width = console.width
    answer = [line for text in out.answer.splitlines() for line in (wrap(text, width) if text.strip() else [""])]
    console.print("\n".join(answer), highlight=False, markup=False, soft_wrap=True)
    outside = out.outside_scope or ()
    if outside:
        named = "; ".join(f"{o.doc_id} ({o.why})" for o in outside[:3])
        console.print(
            f"Only text outside the scope matched best: {named}. Widen the scope (--status, --audience, "
            f"--valid-at any ...) to see it.",
            highlight=False,
            markup=False,
        )
    if out.sources:
        console.print("\n[bold]Citations[/]")
        lines = [
            line
            for cid, where in out.sources.items()
            for line in wrap(f"[{cid}] {where.source} · {where.location}", width, "    ", first="  ")
        ]
        console.print("\n".join(lines), highlight=False, markup=False, soft_wrap=True)
    stages = [(stage, f"{out.timings.get(stage, 0.0):.1f} ms", what) for stage, what in _stage_rows(out)]
    ms_width = max(len(ms) for _, ms, _ in stages)
    trace = ["", "Trace"]
    for stage, ms, what in stages:
        trace += wrap(what, width, " " * (15 + ms_width), first=f"  {stage:<11}{ms:>{ms_width}}  ")
    console.print("\n".join(trace), highlight=False, markup=False, soft_wrap=True)
    for f in out.findings:
        console.print(f"  [red]{f.stage}/{f.label}[/] {f.detail}", highlight=False)
    console.print(f"trace id: {out.trace_id}", highlight=False)


@app.command("ask")
def ask_command(
    question: Annotated[str, typer.Argument(help="The question.")],
    store: opt.Store = None,
    config: opt.Config = None,
    method: opt.Method = None,
    k: Annotated[
        int | None, typer.Option("--k", help="Chunks passed on to the context. Default: the config's retrieval.k (5).")
    ] = None,
    candidates: Annotated[
        int | None, typer.Option("--candidates", help="First-stage depth when reranking. Default: the config's (10).")
    ] = None,
    rerank: Annotated[
        str | None,
        typer.Option(
            "--rerank",
            help="none, overlap, llm, cross-encoder (the bundled model) or cross-encoder:PATH_OR_NAME. "
            "Default: the config's (cross-encoder).",
        ),
    ] = None,
    generator: Annotated[
        str | None,
        typer.Option("--generator", help="extractive, llama-cpp or openai. Default: the config's (extractive)."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="llama-cpp: a GGUF path, qwen2.5-1.5b or smollm2-135m; openai: a model name."),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", help="Token limit of a language model's answer. Default: the config's (256)."),
    ] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint.")] = None,
    budget: Annotated[
        int | None, typer.Option("--budget", help="Context token budget (cl100k tokens). Default: the config's (800).")
    ] = None,
    floor: Annotated[float | None, typer.Option("--floor", help="Drop candidates scoring below this.")] = None,
    dedup: Annotated[
        float | None,
        typer.Option("--dedup", help="Word-overlap share that makes a duplicate. Default: the config's (0.8)."),
    ] = None,
    order: Annotated[
        str | None, typer.Option("--order", help="Context order: score or edges. Default: the config's (score).")
    ] = None,
    normalise: Annotated[bool, typer.Option("--normalise", help="Expand abbreviations, tidy spaces.")] = False,
    decompose: Annotated[bool, typer.Option("--decompose", help="Split compound questions.")] = False,
    paraphrase: Annotated[
        list[str] | None, typer.Option("--paraphrase", help="Also search this paraphrase (repeatable).")
    ] = None,
    hyde: Annotated[bool, typer.Option("--hyde", help="Search a hypothetical answer from the generator.")] = False,
    status: opt.Status = None,
    audience: opt.Audience = None,
    lang: opt.Lang = None,
    tenant: opt.Tenant = None,
    valid_at: opt.ValidAt = None,
    as_json: opt.Json = False,
) -> None:
    """Answer a question from the stored documents, citing a chunk after every sentence, or abstain.

    A language model's answer (--generator llama-cpp) is printed as it is written; the validated
    answer (unsupported sentences removed) and its citations follow."""
    from evidencedesk.config import Overrides
    from evidencedesk.desk import AskRequest, RewriteOptions

    if not question.strip():
        fail("QUESTION: must not be empty", 2)
    check_method(method)
    if (k is not None and k < 1) or (candidates is not None and candidates < (k or 1)):
        fail(f"--k must be >= 1 and --candidates >= --k (got k={k}, candidates={candidates})", 2)
    flags = {
        "--k": Overrides(k=k),
        "--candidates": Overrides(rerank_candidates=candidates),
        "--generator": Overrides(generator=generator),
        "--model": Overrides(model=model),
        "--max-tokens": Overrides(max_tokens=max_tokens),
        "--base-url": Overrides(base_url=base_url),
        "--budget": Overrides(budget_tokens=budget),
        "--floor": Overrides(floor=floor),
        "--dedup": Overrides(dedup_threshold=dedup),
        "--order": Overrides(order=order),
        **scope_flags(status, audience, lang, tenant),
    }
    settings = load_config(config, flags)
    if base_url and settings.generator.name != "openai":
        fail("--base-url: only for --generator openai", 2)
    if model and settings.generator.name == "extractive":
        fail("--model: not used by the extractive generator", 2)
    if candidates is not None and candidates < settings.retrieval.k:
        fail(f"--candidates must be >= k (got k={settings.retrieval.k}, candidates={candidates})", 2)
    scope = config_scope(settings, valid_at)
    rewrite = RewriteOptions(normalise, decompose, tuple(paraphrase or ()), hyde)
    request = AskRequest(question, scope, method=method, rerank=rerank, rewrite=rewrite, explain_abstention=True)
    with open_desk(settings, store, lines=not as_json) as desk:
        if as_json:
            print_json(desk.ask(request).to_dict())
            return
        out = _stream_answer(desk, request)
    _print_answer(out)


def _stream_answer(desk: Desk, request: AskRequest) -> AskResult:
    """Ask, printing a language model's answer as it is written; the validated answer follows it."""
    from evidencedesk import AnswerDone

    streams = desk.prepare_generator()
    written: list[str] = []
    with desk.ask_stream(request) as events:
        for event in events:
            if isinstance(event, AnswerDone):
                if written:
                    sys.stdout.write("\n")
                    sys.stdout.flush()
                return event.result
            if streams:
                if not written:
                    console.print("[bold]Writing[/]")
                written.append(event.text)
                sys.stdout.write(event.text)
                sys.stdout.flush()
    fail("the generator stopped before it finished its answer")


def _candidates_table(title: str, rows: Sequence[Passage]) -> Table:
    table = Table(title=title, show_edge=False)
    for name in ("rank", "chunk id", "score", "source", "from"):
        table.add_column(name, justify="right" if name in ("rank", "score") else "left")
    for r in rows:
        parts = ", ".join(f"{p.source}#{p.rank}" for p in r.parts)
        table.add_row(str(r.rank), r.chunk_id, f"{r.score:.4f}", r.source, parts)
    return table


@app.command("trace")
def trace_command(
    trace_id: Annotated[str, typer.Argument(help="A trace id printed by `evidencedesk ask`.")],
    store: opt.Store = None,
    config: opt.Config = None,
    as_json: opt.Json = False,
) -> None:
    """Show a stored trace in full: every stage's input and output, timings and findings."""
    from evidencedesk.results.ask import AskResult

    settings = load_config(config)
    with open_desk(settings, store, lines=not as_json) as desk:
        data = desk.trace(trace_id)
    if data is None:
        fail(f"no trace {trace_id!r} in {store_label(store or settings.store)}")
    if as_json:
        print_json(data)
        return
    try:
        t = AskResult.from_dict(data)
    except ValueError as exc:
        fail(f"trace {trace_id!r} was stored in another shape ({str(exc).splitlines()[0]}); --json shows it whole")
    say = console.print
    say(f"[bold]trace {t.trace_id}[/]  {t.query}", highlight=False)
    say(f"searched: {list(t.rewritten)}  method: {t.method}  scope: {t.scope.to_dict()}", markup=False)
    for step in t.rewrite_steps:
        say(f"  rewrite {step.get('step')}: {step.get('output')} {step.get('note', '')}", markup=False)
    say(_candidates_table("retrieved", t.retrieved))
    say(_candidates_table("reranked", t.reranked))
    say(f"context: {list(t.context)} ({t.context_tokens} tokens)", markup=False)
    for d in t.dropped:
        say(f"  dropped {d.chunk_id}: {d.reason} {d.detail}", markup=False)
    say("[bold]prompt[/]")
    say(t.prompt, markup=False, highlight=False)
    say("[bold]raw answer[/]")
    say(t.raw_answer, markup=False, highlight=False)
    say("[bold]validated answer[/]" + (" (abstained)" if t.abstained else ""))
    say(t.answer, markup=False, highlight=False)
    for check in t.validation.sentences:
        mark = "ok " if check.supported else "DROP"
        say(f"  {mark} {check.sentence!r} cites {list(check.cited)}: {check.why}", markup=False, highlight=False)
    for f in t.findings:
        say(f"  [red]{f.stage}/{f.label}[/] {f.detail}", highlight=False)
    timings = ", ".join(f"{k} {v:.1f} ms" for k, v in t.timings.items())
    say(f"timings: {timings}", markup=False)


__all__ = ["ask_command", "trace_command"]
