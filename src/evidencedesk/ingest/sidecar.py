"""Metadata declared outside a file: sidecar files, folder defaults and a manifest.

For a file ``docs/report.pdf`` under the ingested folder, from lowest to highest precedence:

1. folder defaults: ``_meta.yaml`` in the ingested folder and in every folder down to the file's own
   (``docs/_meta.yaml``); a nearer folder's keys win over a farther one's;
2. the manifest at the top of the ingested folder: ``_manifest.csv`` (a header row with a ``path``
   column, then one column per key; an empty cell sets nothing; ``tags`` comma-separated) or
   ``_manifest.jsonl`` (one JSON object per line with ``path`` and the keys); paths are relative to
   the ingested folder with ``/`` separators;
3. the sidecar ``docs/report.pdf.meta.yaml`` beside the file.

The file's own declarations (Markdown front matter, HTML meta tags) win over all three; document
properties of PDF and Word files (title, dates) rank below them; keys nobody declares take the
defaults. Keys and validation are those of front matter (:mod:`.metadata`); folder defaults may not
set ``id`` (every file below would claim it). These files are never ingested as documents, and a
change to any of them changes the content hash of the documents it applies to, so they are re-indexed.
"""

from __future__ import annotations

import csv
import io
from functools import lru_cache
from pathlib import Path, PurePosixPath

import yaml

from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.json_lines import json_lines

SIDECAR_SUFFIX = ".meta.yaml"
FOLDER_DEFAULTS = "_meta.yaml"
MANIFESTS = ("_manifest.csv", "_manifest.jsonl")


def is_meta_file(rel: str) -> bool:
    """True for a sidecar, a folder defaults file or a top-level manifest (``rel`` relative to the root)."""
    name = PurePosixPath(rel).name
    return name.endswith(SIDECAR_SUFFIX) or name == FOLDER_DEFAULTS or rel in MANIFESTS


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


@lru_cache(maxsize=512)
def _yaml_fields(path: str, stamp: tuple[int, int], label: str) -> dict[str, object] | str:
    """The mapping in a YAML file, or the reason it is not one (cached while the file is unchanged)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        value = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read {label}: {exc}"
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return f"broken metadata in {label}{where}: {problem}"
    if value is None:
        return {}
    if not isinstance(value, dict):
        return f"broken metadata in {label}: expected key: value pairs, got {type(value).__name__}"
    return {str(k): v for k, v in value.items()}


def _read_yaml(path: Path, label: str, rel: str) -> dict[str, object]:
    stamp = _stamp(path)
    if stamp is None:
        return {}
    found = _yaml_fields(str(path), stamp, label)
    if isinstance(found, str):
        raise IngestError(rel, found)
    return dict(found)


def _csv_manifest(text: str, name: str) -> dict[str, dict[str, object]]:
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "path" not in reader.fieldnames:
        raise ValueError(f"{name}: the header row needs a 'path' column")
    rows: dict[str, dict[str, object]] = {}
    for row in reader:
        path = (row.get("path") or "").strip()
        if path:
            rows[path] = {k: v for k, v in row.items() if k and k != "path" and v not in (None, "")}
    return rows


def _jsonl_manifest(text: str, name: str) -> dict[str, dict[str, object]]:
    rows: dict[str, dict[str, object]] = {}
    for n, value in json_lines(text.splitlines(), name):
        if not isinstance(value, dict) or not isinstance(value.get("path"), str):
            raise ValueError(f"{name} line {n}: expected an object with a 'path' string")
        rows[value["path"].strip()] = {k: v for k, v in value.items() if k != "path"}
    return rows


@lru_cache(maxsize=32)
def _manifest(path: str, stamp: tuple[int, int]) -> dict[str, dict[str, object]] | str:
    name = PurePosixPath(path).name
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
        return _csv_manifest(text, name) if name.endswith(".csv") else _jsonl_manifest(text, name)
    except (OSError, UnicodeDecodeError, csv.Error, ValueError) as exc:
        return f"broken manifest {exc}" if isinstance(exc, ValueError) else f"cannot read manifest {name}: {exc}"


def manifest_fields(root: Path, rel: str) -> dict[str, object]:
    """The fields the manifest(s) at ``root`` give ``rel`` (both files may exist; the JSON lines one wins)."""
    fields: dict[str, object] = {}
    for name in MANIFESTS:
        path = root / name
        stamp = _stamp(path)
        if stamp is None:
            continue
        found = _manifest(str(path), stamp)
        if isinstance(found, str):
            raise IngestError(rel, found)
        fields.update(found.get(rel, {}))
    return fields


def outside_fields(root: Path, rel: str) -> dict[str, object]:
    """The metadata declared for ``rel`` outside the file, merged in precedence order (module docstring)."""
    fields: dict[str, object] = {}
    parts = PurePosixPath(rel).parts[:-1]
    for depth in range(len(parts) + 1):
        folder = PurePosixPath(*parts[:depth]) if depth else PurePosixPath()
        label = (folder / FOLDER_DEFAULTS).as_posix()
        defaults = _read_yaml(root.joinpath(*parts[:depth], FOLDER_DEFAULTS), label, rel)
        if "id" in defaults:
            raise IngestError(rel, f"broken metadata in {label}: folder defaults may not set id")
        fields.update(defaults)
    fields.update(manifest_fields(root, rel))
    fields.update(_read_yaml(root / (rel + SIDECAR_SUFFIX), PurePosixPath(rel).name + SIDECAR_SUFFIX, rel))
    return fields
