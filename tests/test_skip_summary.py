"""Without a PostgreSQL server the backend tests skip and the run ends by saying so; under CI they fail."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.support.paths import ROOT

NO_SERVER = "postgresql://postgres@127.0.0.1:9/nothing_listens_here"


def _run(ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["EVIDENCEDESK_PG_URL"] = NO_SERVER
    if ci:
        env["CI"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/backends/test_pg_contract.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_a_missing_server_skips_and_the_summary_counts_why() -> None:
    proc = _run(ci=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # every contract test skips for the one reason, and the summary counts them under it
    skipped = re.search(r"= (\d+) skipped =", proc.stdout)
    assert skipped is not None and int(skipped.group(1)) > 1, proc.stdout
    n = skipped.group(1)
    assert f"{n.rjust(5)}  PostgreSQL backend tests need a server: none reachable at " + NO_SERVER in proc.stdout


def test_under_ci_a_missing_server_fails() -> None:
    proc = _run(ci=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "CI is set, so the server must be running" in proc.stdout
    assert "skipped" not in proc.stdout.splitlines()[-1]
