"""A throwaway PostgreSQL streaming replica of the test server, and the server's client tools.

The replica is copied with ``pg_basebackup -R`` (which writes ``standby.signal`` and the
``primary_conninfo``) into a fresh directory under /var/tmp and started on a free loopback port.
When the tests run as root, the server processes run as the ``postgres`` user (PostgreSQL refuses
to run as root), exactly as ``scripts/start-postgres.sh`` starts the primary.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_BIN = "/usr/lib/postgresql/15/bin"


def pg_bin(name: str) -> str | None:
    """The path of a PostgreSQL program: $EVIDENCEDESK_PG_BIN, the Debian location, then $PATH."""
    for folder in (os.environ.get("EVIDENCEDESK_PG_BIN"), DEFAULT_BIN):
        if folder and (Path(folder) / name).is_file():
            return str(Path(folder) / name)
    return shutil.which(name)


def _as_server_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


def run(argv: list[str], server_user: bool = False, timeout: float = 300) -> str:
    cmd = _as_server_user(argv) if server_user else argv
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Replica:
    data: Path
    port: int
    url: str

    def stop(self) -> None:
        """Stop the server (if running) and delete its data directory."""
        pg_ctl = pg_bin("pg_ctl")
        if pg_ctl and (self.data / "postmaster.pid").exists():
            subprocess.run(
                _as_server_user([pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop"]),
                capture_output=True, timeout=60, check=False,
            )  # fmt: skip
        shutil.rmtree(self.data, ignore_errors=True)


def start_replica(primary_url: str) -> Replica:
    """A streaming replica of the server at ``primary_url`` on a free port (stop it with ``Replica.stop``)."""
    basebackup, pg_ctl = pg_bin("pg_basebackup"), pg_bin("pg_ctl")
    if basebackup is None or pg_ctl is None:
        raise FileNotFoundError("pg_basebackup and pg_ctl are needed (set EVIDENCEDESK_PG_BIN to their folder)")
    parts = urlsplit(primary_url)
    data = Path(tempfile.mkdtemp(prefix="evidencedesk-replica-", dir="/var/tmp"))
    port = free_port()
    replica = Replica(data, port, parts._replace(netloc=f"{parts.username}@127.0.0.1:{port}").geturl())
    try:
        if os.geteuid() == 0:
            shutil.chown(data, "postgres", "postgres")
        os.chmod(data, 0o700)
        run(
            [basebackup, "-h", parts.hostname or "127.0.0.1", "-p", str(parts.port or 5432),
             "-U", parts.username or "postgres", "-D", str(data), "-R", "-X", "stream", "-c", "fast"],
            server_user=True,
        )  # fmt: skip
        for copied in ("server.log", "postmaster.opts"):
            (data / copied).unlink(missing_ok=True)
        run(
            [pg_ctl, "-D", str(data), "-l", str(data / "server.log"), "-w", "-t", "60", "start",
             "-o", f"-p {port} -k /tmp -c listen_addresses=127.0.0.1 -c hot_standby=on"],
            server_user=True,
        )  # fmt: skip
    except BaseException:
        replica.stop()
        raise
    return replica
