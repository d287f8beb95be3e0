"""A bounded load test of the HTTP service on loopback: mixed searches and questions, zero errors expected.

Starts ``evidencedesk serve`` in a subprocess over a store (by default the example corpus, ingested
into a temporary folder), warms it up, then sends ``--requests`` requests from ``--concurrency``
concurrent workers (httpx async client): ``POST /search`` and, for a ``--ask-share`` of them,
``POST /ask``, with the labelled questions of the example corpus as queries. Prints errors,
throughput and p50/p99 latency per kind, plus the service's own ``/metrics`` (stage latencies,
stale-context share), and appends a section to ``bench/RESULTS.md``. Exits 1 if any request failed.

    python bench/load_test.py --requests 2000 --concurrency 8
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from rich.console import Console
from rich.table import Table

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.evaluation.labels import load_labels
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import Store

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "examples" / "kestrel" / "docs"
LABELS = ROOT / "examples" / "kestrel" / "labels.jsonl"
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
console = Console()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(store: Path, port: int) -> subprocess.Popen[bytes]:
    code = "from evidencedesk.cli import main; main()"
    cmd = [sys.executable, "-c", code, "serve", "--store", str(store), "--port", str(port), "--log-level", "warning"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise SystemExit("server did not become ready")


def plan(n: int, ask_share: float, questions: list[str], seed: int, method: str, ask_method: str) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        q = rng.choice(questions)
        if rng.random() < ask_share:
            out.append({"kind": "ask", "path": "/ask", "json": {"question": q, "method": ask_method}})
        else:
            out.append({"kind": "search", "path": "/search", "json": {"query": q, "k": 5, "method": method}})
    return out


async def run_load(url: str, requests: list[dict], concurrency: int) -> tuple[list[tuple[str, int, float]], float]:
    results: list[tuple[str, int, float]] = []
    queue: asyncio.Queue[dict] = asyncio.Queue()
    for r in requests:
        queue.put_nowait(r)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)

    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

        async def worker() -> None:
            while True:
                try:
                    req = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                start = time.perf_counter()
                try:
                    resp = await client.post(req["path"], json=req["json"])
                    status = resp.status_code
                except httpx.HTTPError:
                    status = 0
                results.append((req["kind"], status, (time.perf_counter() - start) * 1000))

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
    return results, elapsed


def summarise(results: list[tuple[str, int, float]], elapsed: float) -> list[dict[str, Any]]:
    rows = []
    for kind in ("search", "ask", "all"):
        picked = [r for r in results if kind == "all" or r[0] == kind]
        if not picked:
            continue
        ms = np.array([r[2] for r in picked])
        rows.append(
            {
                "kind": kind,
                "requests": len(picked),
                "errors": sum(r[1] != 200 for r in picked),
                "rps": len(picked) / elapsed,
                "p50": float(np.percentile(ms, 50)),
                "p99": float(np.percentile(ms, 99)),
                "mean": float(ms.mean()),
            }
        )
    return rows


def markdown(rows: list[dict[str, Any]], metrics: dict[str, Any], args: argparse.Namespace, elapsed: float) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    cpu = platform.processor() or platform.machine()
    lines = [
        f"## HTTP service load test ({now})",
        "",
        f"Machine: {os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}, "
        f"load average {load:.1f} at start; client and server on the same machine, loopback, one uvicorn worker.  ",
        f"Command: `python bench/load_test.py --requests {args.requests} --concurrency {args.concurrency} "
        f"--ask-share {args.ask_share} --method {args.method} --ask-method {args.ask_method}`",
        "",
        "| kind | requests | errors | throughput (req/s) | p50 ms | p99 ms | mean ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['kind']} | {r['requests']:,} | {r['errors']} | {r['rps']:.1f} | {r['p50']:.1f} | {r['p99']:.1f} "
            f"| {r['mean']:.1f} |"
        )
    stages = ", ".join(f"{k} {v['p50']:.2f}/{v['p95']:.2f}" for k, v in metrics.get("latency_ms", {}).items())
    lines += [
        "",
        f"Wall time {elapsed:.1f} s. Service metrics after the run: stale-context share "
        f"{metrics.get('stale_context_rate')}, citation validity {metrics.get('citation_validity')}, "
        f"abstention rate {_pct(metrics.get('abstention_rate'))}, zero-hit rate {_pct(metrics.get('zero_hit_rate'))}; "
        f"server-side ms p50/p95 per stage: {stages}.",
        "",
    ]
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--store", type=Path, help="A store folder (default: the example corpus, ingested to a temp dir)."
    )
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--ask-share", type=float, default=0.3, help="Share of requests that are POST /ask.")
    parser.add_argument("--method", default="bm25", help="Search method for POST /search.")
    parser.add_argument("--ask-method", default="bm25", help="Retrieval method for POST /ask.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-append", action="store_true", help=f"Do not append to {RESULTS.name}.")
    args = parser.parse_args()
    if args.requests < 1 or args.concurrency < 1 or not 0 <= args.ask_share <= 1:
        parser.error("--requests and --concurrency must be >= 1 and --ask-share in [0, 1]")

    with tempfile.TemporaryDirectory(prefix="evidencedesk-load-") as tmp:
        store = args.store
        if store is None:
            store = Path(tmp) / "store"
            with Store(store) as db:
                ingest_folder(db, DOCS, ChunkingConfig())
        questions = [x.question for x in load_labels(LABELS)]
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start_server(store, port)
        try:
            wait_ready(url, proc)
            for path, body in (("/search", {"query": questions[0], "method": args.method}),
                               ("/ask", {"question": questions[0], "method": args.ask_method})):  # fmt: skip
                httpx.post(url + path, json=body, timeout=120).raise_for_status()  # warm-up: index build, tokenizer
            requests = plan(args.requests, args.ask_share, questions, args.seed, args.method, args.ask_method)
            results, elapsed = asyncio.run(run_load(url, requests, args.concurrency))
            metrics = httpx.get(f"{url}/metrics", timeout=30).json()
        finally:
            proc.terminate()
            proc.wait(timeout=30)

    rows = summarise(results, elapsed)
    table = Table(title=f"{args.requests} requests, concurrency {args.concurrency}, {elapsed:.1f} s")
    for col in ("kind", "requests", "errors", "req/s", "p50 ms", "p99 ms", "mean ms"):
        table.add_column(col, justify="left" if col == "kind" else "right")
    for r in rows:
        table.add_row(r["kind"], f"{r['requests']:,}", str(r["errors"]), f"{r['rps']:.1f}", f"{r['p50']:.1f}",
                      f"{r['p99']:.1f}", f"{r['mean']:.1f}")  # fmt: skip
    console.print(table)
    section = markdown(rows, metrics, args, elapsed)
    console.print(section, markup=False, highlight=False)
    if not args.no_append:
        with RESULTS.open("a", encoding="utf-8") as fh:
            fh.write(("\n" if RESULTS.exists() and RESULTS.stat().st_size else "# Benchmark results\n\n") + section)
        console.print(f"appended to {RESULTS}", highlight=False)
    errors = sum(r[1] != 200 for r in results)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
