"""``POST /ingest``: uploaded files (multipart) or a server-side folder inside the allowed root (JSON).

Only keys with ``ingest: true`` may call it, and only for documents inside their scope's tenants and
audiences (``write_scope``); the report names only documents the key may see. Ingest adds and
updates; it never removes documents that the upload or folder does not hold. Uploads are staged in
a folder of their own under the store folder (every file name checked first), ingested, and that
folder removed whatever happens (the store keeps the text). Error bodies never name a server path.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

from fastapi import APIRouter, Request
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from evidencedesk.config import ChunkerSettings
from evidencedesk.errors import StoreError
from evidencedesk.server.deps import CallerDep, StateDep, refuse
from evidencedesk.server.models import IngestPathRequest, IngestReportOut
from evidencedesk.server.paths import PathRefused, check_files, inside_root, upload_name
from evidencedesk.server.state import ServiceState
from evidencedesk.server.write_scope import check_writes, visible_report

router = APIRouter(tags=["ingest"])
UPLOADS = "uploads"


def _json_schema() -> dict[str, object]:
    """The JSON body's schema; its nested models are listed in the components by the lab's routes."""
    schema = IngestPathRequest.model_json_schema(ref_template="#/components/schemas/{model}")
    schema.pop("$defs", None)
    return schema


_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": _json_schema()},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
                        "chunker": {"type": "string", "description": "Optional chunker settings as JSON."},
                        "embed": {
                            "type": "string",
                            "enum": ["true", "false"],
                            "description": "Also compute the dense embeddings now (as `ingest --embed`).",
                        },
                    },
                    "required": ["files"],
                }
            },
        },
    }
}


async def _stage_uploads(state: ServiceState, request: Request) -> tuple[Path, ChunkerSettings | None, bool]:
    limit, max_files = state.service.max_upload_bytes, state.service.max_upload_files
    declared = int(request.headers.get("content-length") or 0)
    if declared > limit * max_files:
        refuse(413, f"upload: request larger than {limit * max_files} bytes")
    form = await request.form(max_files=max_files, max_fields=10)
    files = [f for f in form.getlist("files") if isinstance(f, UploadFile)]
    if not files:
        refuse(400, "upload: send one or more files in the form field 'files'")
    chunker = None
    flag = form.get("embed")
    embed = False
    if isinstance(flag, str) and flag.strip():
        if flag.strip().lower() not in ("true", "false"):
            refuse(400, f"embed: must be true or false, got {flag.strip()!r}")
        embed = flag.strip().lower() == "true"
    raw = form.get("chunker")
    if isinstance(raw, str) and raw.strip():
        try:
            chunker = ChunkerSettings.model_validate(json.loads(raw))
        except (json.JSONDecodeError, ValidationError) as exc:
            refuse(400, f"chunker: {exc}")
    names = [upload_name(f.filename) for f in files]  # every name is checked before anything is written
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise PathRefused(400, f"upload: file name {twice!r} appears twice")
    staging = state.store_path / UPLOADS / uuid.uuid4().hex
    staging.mkdir(parents=True)
    try:
        for f, name in zip(files, names, strict=True):
            data = await f.read(limit + 1)
            if len(data) > limit:
                raise PathRefused(413, f"upload: {name!r} is larger than {limit} bytes")
            (staging / name).write_bytes(data)
    except BaseException:  # a refused or failed write, or a client gone mid-upload: nothing staged may stay
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging, chunker, embed


async def _json_folder(state: ServiceState, request: Request) -> tuple[Path, ChunkerSettings | None, bool]:
    try:
        body = IngestPathRequest.model_validate(await request.json())
    except (json.JSONDecodeError, ValidationError) as exc:
        refuse(422, f"body: {exc}")
    root = state.service.ingest_root
    folder = inside_root(root, body.path)
    if not folder.is_dir():
        raise PathRefused(400, f"path: {body.path!r} is not a folder")
    assert root is not None  # inside_root refused a missing root already
    check_files(root, folder)
    return folder, body.chunker, body.embed


@router.post("/ingest", response_model=IngestReportOut, openapi_extra=_BODY)
async def ingest(request: Request, state: StateDep, caller: CallerDep) -> dict[str, object]:
    """Parse, chunk and store: multipart ``files`` (plus optional ``chunker`` JSON and ``embed`` fields), or JSON
    ``{"path"}`` (plus optional ``chunker`` and ``embed``); with ``embed`` the dense embeddings are computed too
    and the report's ``progress`` holds the embedding's count, seconds and rate."""
    if not caller.ingest:
        refuse(403, "this key may not ingest")
    ctype = request.headers.get("content-type", "")
    staged = ctype.startswith("multipart/form-data")
    if staged:
        folder, chunker, embed = await _stage_uploads(state, request)
    elif ctype.startswith("application/json"):
        folder, chunker, embed = await _json_folder(state, request)
    else:
        refuse(415, 'ingest: send multipart/form-data files or a JSON body {"path": ...}')

    def checked_ingest() -> dict[str, object]:
        with state.ingest_lock:  # no other ingest between the scope check and the write
            check_writes(folder, caller.scope, state.desk.document, name_files=staged)
            chosen = (chunker or state.settings.chunker).model_dump()
            report = state.desk.ingest(folder, remove_missing=False, embed=embed, **chosen)
        return visible_report(report, caller.scope, state.desk).to_dict()

    try:
        return await run_in_threadpool(checked_ingest)
    except NotADirectoryError as exc:  # the folder went away: as a store that cannot be written (409)
        raise StoreError(str(exc)) from None
    finally:
        if staged:
            shutil.rmtree(folder, ignore_errors=True)
