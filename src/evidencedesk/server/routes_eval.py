"""``POST /eval``: score labelled questions inside the caller's scope; stored runs and their HTML report.

Labels whose evidence sits only in documents outside the scope are left out (their gold phrases are
copies of hidden text), and the run is computed over the chunks the caller may see, so neither a
finding nor a ranking names anything outside the scope.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from evidencedesk import Scope, load_labels
from evidencedesk.errors import LabelError
from evidencedesk.results.evaluation import EvalRun
from evidencedesk.server.access import Caller, current_chunk_ok, record_visible
from evidencedesk.server.deps import CallerDep, StateDep, check_k, refuse, scope_for
from evidencedesk.server.labels import visible_labels
from evidencedesk.server.models import REFUSALS, EvalRequest, EvalRunOut
from evidencedesk.server.paths import inside_root, without_paths
from evidencedesk.server.state import ServiceState

router = APIRouter(tags=["evaluation"])


def _labels_file(state: ServiceState, requested: str | None) -> Path:
    if requested is None:
        path = state.labels_path()
        if path is None:
            refuse(
                404,
                "labels: no labels file is configured (serve --labels FILE or labels: in the keys file); "
                "name one inside the ingest root",
            )
        return path
    path = inside_root(state.service.ingest_root, requested, "labels")
    if not path.is_file():
        refuse(400, f"labels: {requested!r} is not a file")
    return path


def _run(state: ServiceState, body: EvalRequest, scope: Scope) -> EvalRun:
    path = _labels_file(state, body.labels)
    try:
        labels = state.labels(path) if body.labels is None else load_labels(path)
    except (LabelError, UnicodeDecodeError) as exc:  # named as the caller named it: never the server's path
        message = str(exc).replace(str(path), body.labels or "(service labels)")
        refuse(400, "labels: " + without_paths(message, state.service.ingest_root, state.store_path))
    labels = visible_labels(labels, state.each_document(), scope)
    if not labels:
        refuse(400, "labels: no labelled question can be evaluated inside this scope")
    run = state.desk.evaluate(
        labels, body.method, body.k, scope, floor=body.floor, methods=body.methods, unfiltered=False,
        hide_outside_scope=True, size_series=body.size_series, save=False,
    )  # fmt: skip
    return replace(run, labels=body.labels or "(service labels)")


@router.post("/eval", response_model=EvalRunOut)
def run_eval(body: EvalRequest, state: StateDep, caller: CallerDep) -> dict[str, object]:
    """Evaluate labelled questions (the service's labels, or a file inside the ingest root) and return the run."""
    if caller.anonymous and not state.service.anonymous_eval:
        refuse(403, "evaluation needs an API key (anonymous_eval is off)")
    body = state.with_defaults(body)
    assert body.k is not None  # with_defaults filled it in
    check_k(state, body.k)
    scope = scope_for(caller, body.scope)
    run = _run(state, body, scope)
    run_id = state.desk.save_eval_run(run, owner=caller.name) if body.save else None
    return replace(run, run_id=run_id).response()


def _shown(state: ServiceState, caller: Caller, run: dict[str, Any] | None) -> bool:
    """The run was made under a scope the caller's covers, and names only chunks allowed today."""
    if run is None:
        return False
    # reads only the chunks the run names; a chunk of a lab re-chunking is judged by its document
    return record_visible(caller.scope, run, current_chunk_ok(state.desk, caller.scope))


RUN_IDS = range(1, 2**63)  # what an id column (SQLite INTEGER, PostgreSQL bigint) can hold; runs start at 1


def _visible_run(state: ServiceState, caller: Caller, run_id: int) -> dict[str, Any]:
    # an id no column can hold is answered like any unknown one (the database would overflow)
    stored = not caller.anonymous and run_id in RUN_IDS
    run = state.store.load_eval_run(run_id, owner=caller.owner_filter) if stored else None
    if run is None or not _shown(state, caller, run):
        refuse(404, f"no evaluation run {run_id}")
    return run


@router.get("/eval/runs")
def list_runs(state: StateDep, caller: CallerDep) -> list[dict[str, Any]]:
    """The caller's stored evaluation runs (any key's with an admin key), newest first (summaries)."""
    if caller.anonymous:
        return []
    keys = ("id", "created_at", "build_id", "method", "k", "n_questions", "n_failed", "overall", "labels")
    runs = reversed(state.store.eval_runs(owner=caller.owner_filter))
    return [{k: run.get(k) for k in keys} for run in runs if _shown(state, caller, run)]


@router.get("/eval/runs/{run_id}")
def get_run(run_id: int, state: StateDep, caller: CallerDep) -> dict[str, Any]:
    return _visible_run(state, caller, run_id)


# the page is HTML, its refusals JSON like every other route's (the Refusal schema, registered by them)
REFUSED_AS_JSON = {"application/json": {"schema": {"$ref": "#/components/schemas/Refusal"}}}
REPORT_REFUSALS: dict[int | str, dict[str, Any]] = {
    "4XX": {"description": REFUSALS["4XX"]["description"], "content": REFUSED_AS_JSON}
}


@router.get("/eval/runs/{run_id}/report", response_class=HTMLResponse, responses=REPORT_REFUSALS)
def run_report(run_id: int, state: StateDep, caller: CallerDep) -> HTMLResponse:
    """The run as a self-contained HTML page: metrics tables and the report's charts."""
    run = _visible_run(state, caller, run_id)
    html = state.desk.report_html(run, title=f"evaluation run {run_id}")
    headers = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:"}
    return HTMLResponse(html, headers=headers)
