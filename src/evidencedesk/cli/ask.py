"""``evidencedesk ask QUESTION``: answer from the stored chunks with citations, and keep the trace.

``evidencedesk trace ID`` shows a stored trace in full.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from evidencedesk.cli.app import (
    DEFAULT_STORE,
    AudienceOpt,
    JsonOpt,
    LangOpt,
    StatusOpt,
    StoreOpt,
    TenantOpt,
    ValidAtOpt,
    app,
    console,
    fail,
    print_json,
    scope_from_options,
)


def _open_chunks(store: Path) -> list[Any]:
    from evidencedesk.store import Store, StoreError
    from evidencedesk.store.schema import DB_NAME

    if not (store / DB_NAME).exists():
        fail(f"no store at {store} (run `evidencedesk ingest FOLDER --store {store}` first)")
    try:
        with Store(store) as db:
            return db.chunks()
    except (StoreError, OSError) as exc:
        fail(f"cannot read store {store}: {exc}")


def _generator(name: str, model: str | None, base_url: str | None) -> Any:
    from evidencedesk.answer.generators import get_generator

    params: dict[str, Any] = {}
    if model:
        params["model_path" if name == "llama-cpp" else "model"] = model
    if base_url:
        if name != "openai":
            fail("--base-url: only for --generator openai", 2)
        params["base_url"] = base_url
    if model and name == "extractive":
        fail("--model: not used by the extractive generator", 2)
    try:
        return get_generator(name, **params)
    except ValueError as exc:
        fail(str(exc), 2)
    except (ImportError, FileNotFoundError, RuntimeError) as exc:
        fail(f"generator {name!r} is not available: {exc}")


def _stage_rows(out: dict[str, Any]) -> list[tuple[str, str]]:
    v = out["validation"]
    return [
        ("rewrite", f"{len(out['rewritten'])} quer{'y' if len(out['rewritten']) == 1 else 'ies'}"),
        ("retrieval", f"{len(out['retrieved'])} candidates ({out['method']})"),
        ("rerank", f"{len(out['reranked'])} kept"),
        ("context", f"{len(out['context'])} chunks, {len(out['dropped'])} dropped, {out['context_tokens']} tokens"),
        ("generation", "abstained" if v["raw"] and out["abstained"] and not v["sentences"] else "answered"),
        ("validation", f"{len(v['sentences'])} sentences, {len(v['flagged'])} flagged"),
    ]


def _print_answer(out: dict[str, Any]) -> None:
    title = "[bold yellow]Abstained[/]" if out["abstained"] else "[bold green]Answer[/]"
    console.print(title)
    console.print(out["answer"], highlight=False, markup=False)
    if out["sources"]:
        console.print("\n[bold]Citations[/]")
        for cid, where in out["sources"].items():
            console.print(f"  [{cid}] {where['source']} · {where['location']}", highlight=False, markup=False)
    table = Table(title="trace", show_edge=False)
    table.add_column("stage")
    table.add_column("ms", justify="right")
    table.add_column("what")
    for stage, what in _stage_rows(out):
        table.add_row(stage, f"{out['timings'].get(stage, 0.0):.1f}", what)
    console.print(table)
    for f in out["findings"]:
        console.print(f"  [red]{f['stage']}/{f['label']}[/] {f['detail']}", highlight=False)
    console.print(f"trace id: {out['trace_id']}", highlight=False)


@app.command("ask")
def ask_command(
    question: Annotated[str, typer.Argument(help="The question.")],
    store: StoreOpt = DEFAULT_STORE,
    method: Annotated[str, typer.Option("--method", help="Retrieval method (bm25, tfidf, lsa, dense, hybrid).")] = (
        "hybrid"
    ),
    k: Annotated[int, typer.Option("--k", help="Chunks passed on to the context.")] = 5,
    candidates: Annotated[int, typer.Option("--candidates", help="First-stage depth when reranking.")] = 20,
    rerank: Annotated[str, typer.Option("--rerank", help="none, overlap or cross-encoder:PATH_OR_NAME.")] = "none",
    generator: Annotated[str, typer.Option("--generator", help="extractive, llama-cpp or openai.")] = "extractive",
    model: Annotated[str | None, typer.Option("--model", help="Model path (llama-cpp) or name (openai).")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint.")] = None,
    budget: Annotated[int, typer.Option("--budget", help="Context token budget (cl100k tokens).")] = 800,
    floor: Annotated[float | None, typer.Option("--floor", help="Drop candidates scoring below this.")] = None,
    dedup: Annotated[float, typer.Option("--dedup", help="Word-overlap share that makes a duplicate.")] = 0.8,
    order: Annotated[str, typer.Option("--order", help="Context order: score or edges.")] = "score",
    normalise: Annotated[bool, typer.Option("--normalise", help="Expand abbreviations, tidy spaces.")] = False,
    decompose: Annotated[bool, typer.Option("--decompose", help="Split compound questions.")] = False,
    paraphrase: Annotated[
        list[str] | None, typer.Option("--paraphrase", help="Also search this paraphrase (repeatable).")
    ] = None,
    hyde: Annotated[bool, typer.Option("--hyde", help="Search a hypothetical answer from the generator.")] = False,
    status: StatusOpt = None,
    audience: AudienceOpt = None,
    lang: LangOpt = None,
    tenant: TenantOpt = None,
    valid_at: ValidAtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer a question from the stored documents, citing a chunk after every sentence, or abstain."""
    from evidencedesk.answer.pipeline import ask, result_dict
    from evidencedesk.cli.search import _params as search_params
    from evidencedesk.retrieval.factory import METHODS, make_searcher
    from evidencedesk.retrieval.rerank import get_reranker
    from evidencedesk.retrieval.rewrite import Rewriter
    from evidencedesk.store import Store, StoreError

    if not question.strip():
        fail("QUESTION: must not be empty", 2)
    if method not in METHODS:
        fail(f"--method: unknown method {method!r}; choose from {', '.join(METHODS)}", 2)
    if k < 1 or candidates < k:
        fail(f"--k must be >= 1 and --candidates >= --k (got k={k}, candidates={candidates})", 2)
    scope = scope_from_options(status, audience, lang, tenant, valid_at)
    gen = _generator(generator, model, base_url)
    try:
        reranker = get_reranker(rerank)
    except ValueError as exc:
        fail(str(exc), 2)
    except RuntimeError as exc:
        fail(str(exc))
    chunks = _open_chunks(store)
    by_id = {c.id: c for c in chunks}
    rewrite = None
    if normalise or decompose or paraphrase or hyde:
        rewrite = Rewriter(normalise=normalise, decompose=decompose, paraphrases=paraphrase, hyde=gen if hyde else None)
    try:
        searcher = make_searcher(method, chunks, **search_params(method, None, store))
        checked, trace = ask(
            question, searcher, by_id, gen, scope, k=k, candidates=candidates, reranker=reranker,
            budget_tokens=budget, floor=floor, dedup_threshold=dedup, order=order, rewrite=rewrite,
        )  # fmt: skip
    except ValueError as exc:
        fail(str(exc), 2)
    out = result_dict(checked, trace, by_id)
    try:
        with Store(store) as db:
            db.save_trace(trace.id, out)
    except (StoreError, OSError) as exc:
        fail(f"cannot save the trace in {store}: {exc}")
    if as_json:
        print_json(out)
        return
    _print_answer(out)


def _candidates_table(title: str, rows: list[dict[str, Any]]) -> Table:
    table = Table(title=title, show_edge=False)
    for name in ("rank", "chunk id", "score", "source", "from"):
        table.add_column(name, justify="right" if name in ("rank", "score") else "left")
    for r in rows:
        parts = ", ".join(f"{p['source']}#{p['rank']}" for p in r.get("parts", []))
        table.add_row(str(r["rank"]), r["chunk_id"], f"{r['score']:.4f}", r["source"], parts)
    return table


@app.command("trace")
def trace_command(
    trace_id: Annotated[str, typer.Argument(help="A trace id printed by `evidencedesk ask`.")],
    store: StoreOpt = DEFAULT_STORE,
    as_json: JsonOpt = False,
) -> None:
    """Show a stored trace in full: every stage's input and output, timings and findings."""
    from evidencedesk.store import Store, StoreError
    from evidencedesk.store.schema import DB_NAME

    if not (store / DB_NAME).exists():
        fail(f"no store at {store}")
    try:
        with Store(store) as db:
            data = db.load_trace(trace_id)
    except (StoreError, OSError) as exc:
        fail(f"cannot read store {store}: {exc}")
    if data is None:
        fail(f"no trace {trace_id!r} in {store}")
    if as_json:
        print_json(data)
        return
    say = console.print
    say(f"[bold]trace {data.get('trace_id', trace_id)}[/]  {data.get('query', '')}", highlight=False)
    say(f"searched: {data.get('rewritten')}  method: {data.get('method')}  scope: {data.get('scope')}", markup=False)
    for step in data.get("rewrite_steps", []):
        say(f"  rewrite {step.get('step')}: {step.get('output')} {step.get('note', '')}", markup=False)
    say(_candidates_table("retrieved", data.get("retrieved", [])))
    say(_candidates_table("reranked", data.get("reranked", [])))
    say(f"context: {data.get('context')} ({data.get('context_tokens', '?')} tokens)", markup=False)
    for d in data.get("dropped", []):
        say(f"  dropped {d['chunk_id']}: {d['reason']} {d['detail']}", markup=False)
    say("[bold]prompt[/]")
    say(data.get("prompt", ""), markup=False, highlight=False)
    say("[bold]raw answer[/]")
    say(data.get("raw_answer", ""), markup=False, highlight=False)
    say("[bold]validated answer[/]" + (" (abstained)" if data.get("abstained") else ""))
    say(data.get("answer") or "", markup=False, highlight=False)
    for s in (data.get("validation") or {}).get("sentences", []):
        mark = "ok " if s["supported"] else "DROP"
        say(f"  {mark} {s['sentence']!r} cites {s['cited']}: {s['why']}", markup=False, highlight=False)
    for f in data.get("findings", []):
        say(f"  [red]{f['stage']}/{f['label']}[/] {f['detail']}", highlight=False)
    timings = ", ".join(f"{k} {v:.1f} ms" for k, v in data.get("timings", {}).items())
    say(f"timings: {timings}", markup=False)


__all__ = ["ask_command", "trace_command"]
