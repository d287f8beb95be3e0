"""Run the code blocks of README.md and docs/*.md, the way a reader would.

Conventions (also described in docs/contributing-docs.md):

* ```python blocks run with ``exec`` in one namespace per page (blocks of a page share it), with the
  page's working directory as the current directory.
* ```bash / ```console / ```sh blocks run line by line through ``bash -c`` with the venv's ``bin`` first
  on PATH. In ``console`` blocks only lines starting with ``$ `` are commands (the rest is shown output);
  in ``bash`` blocks every line that is not blank or a ``#`` comment is one. A trailing ``\\`` continues a
  command. Every command must exit 0 (show another exit code with ``cmd; echo "exit code $?"``).
* A block whose info string has a ``title="NAME"`` (for example ```yaml title="evidencedesk.yaml") is
  written to NAME in the working directory before the next block runs; it is not executed.
* An ``<!-- output -->`` comment right before a ```text block makes that block the expected output of
  the runnable block before it: each of its non-blank lines must appear, in order, inside the output
  (whitespace-collapsed); a line ``...`` is only a visual gap.
* An ``<!-- skip: REASON -->`` comment right before a block, or ``skip`` after the language in its info
  string, leaves the block unrun. Keep these rare.

Each page runs in a fresh temporary directory holding links to the repository's ``examples``, ``bench``,
``scripts`` and ``.venv``, so relative paths in the docs resolve and stores never land in the repository.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

REPO = Path(__file__).resolve().parents[2]  # tests/support -> the project root
SHELL_LANGS = {"bash", "console", "sh", "shell"}
RUNNABLE = SHELL_LANGS | {"python"}
LINKED = ("examples", "bench", "scripts", ".venv", "src", "pyproject.toml")
COMMAND_TIMEOUT_S = 180
_TITLE = re.compile(r'title="([^"]+)"')
_SKIP_COMMENT = re.compile(r"<!--\s*skip:\s*(.+?)\s*-->", re.S)
_OUTPUT_COMMENT = re.compile(r"<!--\s*output\s*-->")


class DocExampleError(AssertionError):
    """A documented example failed: the message names the page, the line and what went wrong."""


@dataclass
class Block:
    lang: str
    info: str
    code: str
    line: int  # 1-based line of the opening fence
    skip: str | None = None
    is_output: bool = False
    title: str | None = None
    expected: str | None = None
    outputs: list[str] = field(default_factory=list)

    @property
    def runnable(self) -> bool:
        return self.lang in RUNNABLE and self.skip is None and not self.is_output and self.title is None


def parse_blocks(text: str) -> list[Block]:
    """Fenced blocks of a Markdown text with the conventions above applied."""
    tokens = MarkdownIt("commonmark").parse(text)
    blocks: list[Block] = []
    pending_skip: str | None = None
    pending_output = False
    for tok in tokens:
        if tok.type == "html_block":
            m = _SKIP_COMMENT.search(tok.content)
            pending_skip = m.group(1) if m else pending_skip
            pending_output = pending_output or bool(_OUTPUT_COMMENT.search(tok.content))
            continue
        if tok.type != "fence":
            if tok.nesting == 1:  # any other block opens: a pending marker does not reach past it
                pending_skip, pending_output = None, False
            continue
        words = tok.info.split()
        lang = words[0].lower() if words else ""
        skip = pending_skip
        if len(words) > 1 and words[1] == "skip":
            skip = " ".join(words[2:]) or "no reason given"
        title = _TITLE.search(tok.info)
        block = Block(
            lang=lang,
            info=tok.info,
            code=tok.content,
            line=(tok.map[0] + 1) if tok.map else 0,
            skip=skip,
            is_output=pending_output,
            title=title.group(1) if title else None,
        )
        if block.is_output:
            previous = next((b for b in reversed(blocks) if b.runnable), None)
            if previous is None:
                raise DocExampleError(f"line {block.line}: an output block with no runnable block before it")
            previous.expected = block.code
        blocks.append(block)
        pending_skip, pending_output = None, False
    return blocks


def shell_commands(block: Block) -> list[str]:
    """The commands of a shell block, continuation lines joined."""
    commands: list[str] = []
    current = ""
    for raw in block.code.splitlines():
        line = raw.rstrip()
        if not current:
            if block.lang == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            elif line.startswith("$ "):
                line = line[2:]
            if not line.strip() or line.lstrip().startswith("#"):
                continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        commands.append((current + line).strip())
        current = ""
    if current:
        commands.append(current.strip())
    return commands


def _normalise(text: str) -> str:
    return " ".join(text.split())


def check_output(expected: str, actual: str, where: str) -> None:
    """Each non-blank expected line must appear, in order, inside the actual output lines."""
    actual_lines = [_normalise(x) for x in actual.splitlines()]
    i = 0
    for want in expected.splitlines():
        want_n = _normalise(want)
        if not want_n or want_n == "...":
            continue
        while i < len(actual_lines) and want_n not in actual_lines[i]:
            i += 1
        if i == len(actual_lines):
            raise DocExampleError(
                f"{where}: expected output line not found (in order): {want.strip()!r}\n--- actual output ---\n{actual}"
            )
        i += 1


def page_environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{REPO / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "120"
    env["NO_COLOR"] = "1"
    env["TERM"] = "dumb"
    return env


def prepare_workdir(workdir: Path) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    for name in LINKED:
        target = workdir / name
        if (REPO / name).exists() and not target.exists():
            target.symlink_to(REPO / name)


def _run_shell(block: Block, where: str, workdir: Path, env: dict[str, str]) -> str:
    outputs = []
    for command in shell_commands(block):
        proc = subprocess.run(
            ["bash", "-c", command],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        )
        if proc.returncode != 0:
            raise DocExampleError(
                f"{where}: `{command}` exited {proc.returncode}\n--- stdout ---\n{proc.stdout[-3000:]}"
                f"\n--- stderr ---\n{proc.stderr[-3000:]}"
            )
        outputs.append(proc.stdout)
    return "".join(outputs)


def _run_python(block: Block, where: str, namespace: dict[str, object], workdir: Path) -> str:
    buffer = io.StringIO()
    previous = Path.cwd()
    os.chdir(workdir)
    try:
        with contextlib.redirect_stdout(buffer):
            exec(compile(block.code, where, "exec"), namespace)  # noqa: S102 - running documented examples
    except Exception as exc:
        raise DocExampleError(f"{where}: {type(exc).__name__}: {exc}\n--- output ---\n{buffer.getvalue()}") from exc
    finally:
        os.chdir(previous)
    return buffer.getvalue()


def run_page(page: Path, workdir: Path, label: str | None = None) -> int:
    """Run every runnable block of ``page`` in ``workdir``; returns how many ran. Raises DocExampleError."""
    prepare_workdir(workdir)
    env = page_environment()
    namespace: dict[str, object] = {"__name__": "__docs__"}
    ran = 0
    name = label or page.name
    for block in parse_blocks(page.read_text(encoding="utf-8")):
        where = f"{name}:{block.line}"
        if block.title is not None and block.skip is None:
            target = workdir / block.title
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code, encoding="utf-8")
            continue
        if not block.runnable:
            continue
        if block.lang == "python":
            out = _run_python(block, where, namespace, workdir)
        else:
            out = _run_shell(block, where, workdir, env)
        if block.expected is not None:
            check_output(block.expected, out, where)
        ran += 1
    return ran


def run_pages_parallel(pages: list[Path], root: Path, workers: int = 3) -> dict[Path, tuple[int, str]]:
    """Run pages concurrently, each in its own process and directory under ``root``.

    Returns, per page, the exit status of ``docs_runner.py PAGE`` (0: every block ran) and its output.
    """
    from concurrent.futures import ThreadPoolExecutor

    def one(index_page: tuple[int, Path]) -> tuple[Path, tuple[int, str]]:
        index, page = index_page
        workdir = root / f"page{index}"
        proc = subprocess.run(
            [sys.executable, __file__, "--workdir", str(workdir), str(page)],
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S * 4,
        )
        # stderr first: a page's background service may still write to it after the last block's output
        return page, (proc.returncode, proc.stderr + proc.stdout)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(pool.map(one, enumerate(pages)))


def main(argv: list[str]) -> int:
    """``python tests/docs/docs_runner.py [--workdir DIR] PAGE...``: run pages by hand.

    Without ``--workdir`` each page runs in a fresh temporary directory. Exit status 1 on a failure.
    """
    import tempfile

    workdir: Path | None = None
    if argv[:1] == ["--workdir"]:
        workdir, argv = Path(argv[1]), argv[2:]
    for arg in argv:
        page = Path(arg)
        label = str(page.resolve().relative_to(REPO)) if page.resolve().is_relative_to(REPO) else page.name
        try:
            if workdir is not None:
                count = run_page(page, workdir / page.stem, label)
            else:
                with tempfile.TemporaryDirectory() as tmp:
                    count = run_page(page, Path(tmp), label)
        except DocExampleError as exc:
            print(str(exc), file=sys.stderr)
            return 1
        print(f"{label}: {count} blocks ran")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
