"""Resident memory of the HTTP service as the corpus grows, over PostgreSQL and over a snapshot.

    python bench/service_memory.py [--sizes 10k 100k] [--requests 200] [--pg-url postgresql://...]

For each size, generated documents (bench/corpus_gen.py, SciFact sentences) are ingested into an
embedded store, whose BM25 snapshot is written, and into a fresh PostgreSQL database. Then
``evidencedesk serve`` runs as its own process over each store (BM25 only: the vectors of 100k
chunks cannot be embedded on a shared 2-core machine in the time of a run) and answers
``--requests`` requests, alternating ``POST /search`` and ``POST /ask`` with SciFact claims as
queries. The table gives the server's resident set size (RSS) after start-up, after the first
request of each kind, and after all requests, and which searcher the traces name. A service that
loaded every chunk would grow with the corpus; the ratio column divides each RSS by the smallest
size's on the same backend.

The data cache (``--cache-dir``) keeps the generated documents and the embedded stores between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus_gen import generate, load_sources  # noqa: E402
from machine_info import machine  # noqa: E402

SIZES = {"10k": 10_000, "30k": 30_000, "100k": 100_000, "1m": 1_000_000}
CHUNKS_PER_DOC = 14.3  # what the structure chunker makes of one generated document (bench/scale.py)
# shared BM25 statistics: the snapshot keeps one index for all tenants (per-tenant statistics are
# built in memory, so they would defeat the point of this measurement)
CONFIG = (
    "retrieval:\n  k: 5\n  tenant_statistics: false\n  legs:\n    - method: bm25\n"
    "scope:\n  statuses: null\n  audiences: null\n"
)
RESULTS = HERE / "RESULTS.md"
DEFAULT_PG = "postgresql://postgres@127.0.0.1:55432/evidencedesk_test"


def claims(scifact: Path, n: int) -> list[str]:
    lines = (scifact / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines if line.strip()][:n]


def post(url: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        return json.loads(r.read())


def rss_mb(pid: int) -> float:
    import psutil

    return float(psutil.Process(pid).memory_info().rss / 2**20)


def rss_parts_mb(pid: int) -> tuple[float, float]:
    """``(anonymous, file-backed)`` resident MB (Linux): what the process holds itself, and the pages of
    mapped files (the snapshot's postings, vectors, the model files) that the OS may drop and read again."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("RssAnon", "RssFile"):
            fields[name] = int(value.split()[0]) / 1024
    return fields.get("RssAnon", float("nan")), fields.get("RssFile", float("nan"))


def prepare(size: str, cache: Path, scifact: Path, config: Path, scale_cache: Path) -> tuple[Path, Path, float]:
    """The generated documents and the embedded store (with its snapshot) for ``size``; seconds spent.

    Where bench/scale.py's data cache (``scale_cache``) already holds the store of this size (the same
    generated documents, chunked the same way), it is copied instead of ingesting them again."""
    from evidencedesk.config import load_settings
    from evidencedesk.desk import Desk

    docs, store = cache / size / "docs", cache / size / "store"
    start = time.perf_counter()
    scaled = scale_cache / size
    if not store.is_dir() and (scaled / "store").is_dir() and (scaled / "docs").is_dir():
        shutil.copytree(scaled / "store", store, ignore=shutil.ignore_patterns("snapshot"))
        docs = scaled / "docs"
    elif (scaled / "docs").is_dir() and not docs.is_dir():
        docs = scaled / "docs"
    if not docs.is_dir():
        generate(docs, load_sources(scifact), round(SIZES[size] / CHUNKS_PER_DOC))
    if not (store / "snapshot").is_dir():
        with Desk(store, load_settings(config)) as desk:
            if not desk.store.chunk_count():
                desk.ingest(docs)
            desk.write_index(dense=False)
    with Desk(store, load_settings(config)) as desk:
        if not desk.snapshot_status().startswith("snapshot of build"):  # stale or other settings: write it again
            desk.write_index(dense=False)
    return docs, store, time.perf_counter() - start


def pg_database(pg_url: str, docs: Path, config: Path) -> tuple[str, float]:
    """A fresh PostgreSQL database holding ``docs``; its URL and the seconds the ingest took."""
    import psycopg
    from psycopg import sql

    from evidencedesk.config import load_settings
    from evidencedesk.desk import Desk

    name = f"evd_mem_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = urlsplit(pg_url)._replace(path=f"/{name}").geturl()
    start = time.perf_counter()
    with Desk(url, load_settings(config)) as desk:
        desk.ingest(docs)
    return url, time.perf_counter() - start


def drop_database(pg_url: str, url: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(pg_url, autocommit=True) as conn:
        name = urlsplit(url).path.lstrip("/")
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def measure(store: str, config: Path, queries: list[str], requests: int, port: int) -> dict[str, Any]:
    """Start ``evidencedesk serve`` over ``store``, send ``requests`` requests, and read its RSS."""
    serve = ["serve", "--store", store, "--config", str(config), "--port", str(port), "--log-level", "warning"]
    from evidencedesk.backends import open_store

    with open_store(store) as opened:  # the generated corpus has several tenants: a keyless caller may see them all
        for tenant in opened.tenants():
            serve += ["--anonymous-tenant", tenant]
    cmd = [sys.executable, "-c", "from evidencedesk.cli import main; main()", *serve]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ.copy())
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None:
                    why = proc.stderr.read().decode()[-500:] if proc.stderr else ""
                    raise RuntimeError(f"serve exited: {why}") from None
                time.sleep(0.5)
        out: dict[str, Any] = {"start": rss_mb(proc.pid)}
        latencies = []
        searcher = ""
        for n in range(requests):
            q = queries[n % len(queries)]
            t = time.perf_counter()
            if n % 2 == 0:
                post(f"{base}/search", {"query": q})
            else:
                searcher = post(f"{base}/ask", {"question": q})["searcher"]
            latencies.append((time.perf_counter() - t) * 1000)
            if n == 1:
                out["first"] = rss_mb(proc.pid)
        out["after"] = rss_mb(proc.pid)
        out["anon"], out["file"] = rss_parts_mb(proc.pid)
        out["searcher"] = searcher
        out["p50_ms"] = sorted(latencies)[len(latencies) // 2]
        return out
    finally:
        proc.terminate()
        proc.wait(30)


def table(rows: list[dict[str, Any]]) -> str:
    columns = ("backend", "chunks", "ingest s", "RSS start MB", "after 2 requests MB", "after all MB",
               "of which anonymous / mapped files MB", "ratio to smallest", "p50 ms", "searcher")  # fmt: skip
    lines = ["| " + " | ".join(columns) + " |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    smallest: dict[str, float] = {}
    for r in rows:
        first = smallest.setdefault(r["backend"], r["after"])
        lines.append(
            f"| {r['backend']} | {r['chunks']:,} | {r['ingest_s']:.0f} | {r['start']:.0f} | {r['first']:.0f} | "
            f"{r['after']:.0f} | {r.get('anon', float('nan')):.0f} / {r.get('file', float('nan')):.0f} | "
            f"{r['after'] / first:.2f} | {r['p50_ms']:.0f} | {r['searcher']} |"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", default=["10k", "100k"], choices=list(SIZES))
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--pg-url", default=os.environ.get("EVIDENCEDESK_PG_URL", DEFAULT_PG))
    ap.add_argument("--scifact", type=Path, default=HERE.parents[1] / "shared" / "datasets" / "scifact")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "evidencedesk-bench" / "memory")
    ap.add_argument("--port", type=int, default=8731)
    ap.add_argument("--backends", nargs="+", default=["snapshot", "postgres"], choices=["snapshot", "postgres"])
    ap.add_argument(
        "--scale-cache",
        type=Path,
        default=Path.home() / ".cache" / "evidencedesk-bench" / "scale",
        help="bench/scale.py's data cache: a store of the same size found there is copied, not ingested again",
    )
    ap.add_argument("--no-append", action="store_true", help=f"do not append to {RESULTS.name}")
    args = ap.parse_args()

    args.cache_dir.mkdir(parents=True, exist_ok=True)
    config = args.cache_dir / "evidencedesk.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    queries = claims(args.scifact, 100)
    header = machine()
    rows = []
    for size in args.sizes:
        docs, store, seconds = prepare(size, args.cache_dir, args.scifact, config, args.scale_cache)
        from evidencedesk.store import Store

        with Store(store) as db:
            n_chunks = db.chunk_count()
        if "snapshot" in args.backends:
            got = measure(str(store), config, queries, args.requests, args.port)
            rows.append({"backend": "snapshot", "chunks": n_chunks, "ingest_s": seconds, **got})
            print(table(rows), flush=True)
        if "postgres" not in args.backends:
            continue
        url, seconds = pg_database(args.pg_url, docs, config)
        try:
            got = measure(url, config, queries, args.requests, args.port)
        finally:
            drop_database(args.pg_url, url)
        rows.append({"backend": "postgres", "chunks": n_chunks, "ingest_s": seconds, **got})
        print(table(rows), flush=True)
    rows.sort(key=lambda r: (r["backend"], r["chunks"]))
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = (
        f"\n## Service memory over PostgreSQL and a snapshot ({now})\n\n"
        f"`python bench/service_memory.py {' '.join(sys.argv[1:])}` on {header}; "
        "a shared, loaded 2-core machine, so latencies are only indicative. One `evidencedesk serve` process "
        f"per row, BM25 only, {args.requests} requests alternating `/search` and `/ask` (extractive). "
        "RSS is the server process's resident memory, split into anonymous memory (what the process "
        "holds) and pages of memory-mapped files (snapshot, model; the OS drops and rereads them under "
        "pressure); the ratio divides the final RSS by the smallest corpus's on the same backend. "
        '"ingest s" is the time this run spent making the store and its snapshot (0: made by an earlier '
        "run; a store copied from bench/scale.py's data cache is not ingested again).\n\n" + table(rows) + "\n"
    )
    print(section)
    if not args.no_append:
        with RESULTS.open("a", encoding="utf-8") as f:
            f.write(section)
        print(f"appended to {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
