"""Run the standard benchmark set, each script appending its tables to bench/RESULTS.md.

    .venv/bin/python bench/run_all.py [--scifact ../shared/datasets/scifact] [--skip NAME ...]

The PostgreSQL comparison needs a server (scripts/start-postgres.sh; EVIDENCEDESK_PG_URL) and is
skipped with a note when none answers. The scale benchmark runs at 10k and 100k chunks here; the
million-chunk run takes about 30 minutes on its own (`make bench-1m`).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scifact", type=Path, default=HERE.parent.parent / "shared" / "datasets" / "scifact")
    ap.add_argument("--skip", nargs="*", default=[], help="scripts to skip, e.g. backends load_test")
    ap.add_argument(
        "--scale-sizes",
        nargs="+",
        default=["10k", "100k"],
        help="sizes for bench/scale.py (1m adds about 25 minutes: `make bench-1m` runs it alone)",
    )
    args = ap.parse_args()
    if not (args.scifact / "queries.jsonl").is_file():
        print(f"SciFact not found at {args.scifact}; pass --scifact DIR", file=sys.stderr)
        return 1
    runs = [
        ("scifact_quality", ["--scifact", str(args.scifact)]),
        ("bm25_speed", ["--scifact", str(args.scifact)]),
        ("load_test", []),
        ("backends", ["--scifact", str(args.scifact)]),
        ("scale", ["--scifact", str(args.scifact), "--sizes", *args.scale_sizes]),
        ("refresh", ["--scifact", str(args.scifact), "--sizes", *args.scale_sizes]),
    ]
    failed = []
    for name, extra in runs:
        if name in args.skip:
            continue
        start = time.perf_counter()
        print(f"== bench/{name}.py", flush=True)
        code = subprocess.call([sys.executable, str(HERE / f"{name}.py"), *extra])
        print(f"== bench/{name}.py exit {code} after {time.perf_counter() - start:.0f} s", flush=True)
        if code:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
