"""Server-side paths a request names: they must resolve inside the allowed root, symlinks included.

``inside_root`` resolves the path (following every symlink) and refuses anything that lands outside
the root; ``check_files`` then refuses a folder holding a file that is a symlink to the outside.
``upload_name`` keeps an uploaded file's base name only and refuses names that try to climb.
"""

from __future__ import annotations

from pathlib import Path

from evidencedesk.desk import file_types, files_in
from evidencedesk.errors import PathRefused


def inside_root(root: Path | None, requested: str, what: str = "path") -> Path:
    """``requested`` (relative to ``root``, or absolute) resolved; refused unless it lies inside ``root``."""
    if root is None:
        raise PathRefused(403, f"{what}: server-side paths are disabled (no ingest_root in the service settings)")
    if not requested.strip() or "\x00" in requested:
        raise PathRefused(400, f"{what}: must be a non-empty path without NUL characters")
    base = root.resolve()
    raw = Path(requested)
    resolved = (raw if raw.is_absolute() else base / raw).resolve()
    if not resolved.is_relative_to(base):
        raise PathRefused(403, f"{what}: {requested!r} resolves outside the allowed root")
    if not resolved.exists():
        raise PathRefused(404, f"{what}: {requested!r} does not exist inside the allowed root")
    return resolved


def check_files(root: Path, folder: Path) -> None:
    """Refuse (403) a folder holding a file whose real location is outside ``root``."""
    base = root.resolve()
    for path, rel in files_in(folder):
        if not path.resolve().is_relative_to(base):
            raise PathRefused(403, f"path: {rel!r} is a link to a file outside the allowed root")


MAX_NAME_BYTES = 200  # well under the 255 bytes most file systems allow for one name


def upload_name(name: str | None) -> str:
    """A safe file name for an upload: a plain base name with a supported extension, at most
    ``MAX_NAME_BYTES`` long in UTF-8, without control characters."""
    if not name or "\x00" in name:
        raise PathRefused(400, "upload: every file needs a name")
    size = len(name.encode("utf-8", errors="surrogatepass"))
    if size > MAX_NAME_BYTES:
        raise PathRefused(400, f"upload: file name {name[:40]!r}... is {size} bytes long; at most {MAX_NAME_BYTES}")
    if any(ord(c) < 32 or ord(c) == 127 or 0xD800 <= ord(c) <= 0xDFFF for c in name):
        raise PathRefused(400, f"upload: file name {name!r} holds control characters")
    if "/" in name or "\\" in name or name in (".", "..") or name.startswith("."):
        raise PathRefused(400, f"upload: file name {name!r} must be a plain name (no folders, not hidden)")
    suffix = Path(name).suffix.lower()
    types = file_types()
    if suffix not in types:
        raise PathRefused(400, f"upload: {name!r} is not a supported type ({', '.join(types)})")
    return name


def without_paths(message: str, *paths: Path | None) -> str:
    """``message`` with every server-side ``paths`` (as given and resolved) taken out, for an error body."""
    for path in paths:
        if path is None:
            continue
        for form in sorted({str(path), str(path.resolve())}, key=len, reverse=True):
            message = message.replace(form + "/", "").replace(form, "(server folder)")
    return message


__all__ = ["MAX_NAME_BYTES", "PathRefused", "without_paths", "check_files", "inside_root", "upload_name"]
