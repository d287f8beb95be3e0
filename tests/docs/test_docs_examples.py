"""Every code block of README.md and docs/*.md runs, and its shown output matches."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.docs_runner import REPO, DocExampleError, parse_blocks, run_page, run_pages_parallel, shell_commands

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@pytest.fixture(scope="module")
def page_results(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, tuple[int, str]]:
    """Every page run once, several at a time (each in its own process and directory)."""
    workers = max(1, (os.cpu_count() or 2) // 2)  # the CLI start-up is CPU-bound: one page per two cores
    return run_pages_parallel(PAGES, tmp_path_factory.mktemp("pages"), workers=workers)


def _runnable(page: Path) -> int:
    return sum(b.runnable for b in parse_blocks(page.read_text(encoding="utf-8")))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_examples_run(page: Path, page_results: dict[Path, tuple[int, str]]) -> None:
    status, output = page_results[page]
    if status != 0:
        raise DocExampleError(output)
    assert output.strip().endswith(f"{page.relative_to(REPO)}: {_runnable(page)} blocks ran")


def test_every_page_has_runnable_examples() -> None:
    # cli.md is generated reference; reliability.md's one command runs the reliability suite itself
    reference_only = {"cli.md", "reliability.md"}
    without = [p.name for p in PAGES if p.name not in reference_only and _runnable(p) == 0]
    assert without == []


def test_skips_are_rare_and_give_a_reason() -> None:
    skipped = [(p.name, b.line, b.skip) for p in PAGES for b in parse_blocks(p.read_text(encoding="utf-8")) if b.skip]
    assert all(reason and reason.strip() for _, _, reason in skipped)
    assert len(skipped) <= 8, skipped


def test_renamed_api_name_fails_the_page(tmp_path: Path) -> None:
    page = REPO / "docs" / "concepts.md"
    text = page.read_text(encoding="utf-8")
    assert "from evidencedesk import rrf" in text
    broken = tmp_path / "concepts.md"
    renamed = text.replace("from evidencedesk import rrf", "from evidencedesk import rrf_fuse")
    broken.write_text(renamed, encoding="utf-8")
    with pytest.raises(DocExampleError, match="rrf_fuse"):
        run_page(broken, tmp_path / "work")


def test_changed_cli_option_fails_the_page(tmp_path: Path) -> None:
    broken = tmp_path / "page.md"
    broken.write_text("```console\n$ evidencedesk config show --jsn\n```\n", encoding="utf-8")
    with pytest.raises(DocExampleError, match="exited 2"):
        run_page(broken, tmp_path / "work")


def test_wrong_shown_output_fails(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```python\nprint(sum([1, 2, 3]))\n```\n\n<!-- output -->\n```text\n7\n```\n", encoding="utf-8")
    with pytest.raises(DocExampleError, match="expected output line not found"):
        run_page(page, tmp_path / "work")
    page.write_text(page.read_text(encoding="utf-8").replace("\n7\n", "\n6\n"), encoding="utf-8")
    assert run_page(page, tmp_path / "work2") == 1


def test_parser_conventions() -> None:
    text = (
        "<!-- skip: needs a server -->\n```bash\nrm -rf /\n```\n\n"
        "```bash skip installs things\npip install x\n```\n\n"
        '```yaml title="conf/a.yaml"\nk: 1\n```\n\n'
        "```console\n$ echo one \\\n  two\nshown output\n# comment\n$ true\n```\n\n"
        "<!-- output -->\n```text\none two\n```\n\n"
        "A paragraph.\n\n```yaml\nnot: run\n```\n"
    )
    blocks = parse_blocks(text)
    assert [b.skip for b in blocks[:2]] == ["needs a server", "installs things"]
    assert blocks[2].title == "conf/a.yaml" and not blocks[2].runnable
    console = blocks[3]
    assert console.runnable and console.expected == "one two\n"
    assert shell_commands(console) == ["echo one    two", "true"]
    assert blocks[4].is_output and not blocks[4].runnable
    assert not blocks[5].runnable and blocks[5].skip is None


def test_titled_blocks_become_files(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        '```yaml title="sub/evidencedesk.yaml"\nretrieval:\n  k: 7\n```\n\n'
        "```python\nfrom evidencedesk import load_settings\n"
        "print(load_settings('sub/evidencedesk.yaml').retrieval.k)\n```\n"
        "\n<!-- output -->\n```text\n7\n```\n",
        encoding="utf-8",
    )
    assert run_page(page, tmp_path / "work") == 1
    assert (tmp_path / "work" / "sub" / "evidencedesk.yaml").is_file()


def test_configuration_example_validates() -> None:
    from evidencedesk.config import parse_settings

    blocks = parse_blocks((REPO / "docs" / "configuration.md").read_text(encoding="utf-8"))
    example = next(b for b in blocks if b.title == "evidencedesk.yaml")
    import yaml

    data = yaml.safe_load(example.code)
    settings = parse_settings(data, "docs/configuration.md")
    # the example spells out every section of the model, so the reference cannot drift silently
    assert set(data) == set(type(settings).model_fields)
    assert settings.retrieval.method == "hybrid"
