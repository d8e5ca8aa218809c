"""The report tasks' offline examples (docs/benchmarks/*.md, "Offline, with a scripted judge"): each command run as
written, from a folder whose `tests/` is the repository's (the sample data they score), prints the very table the
page shows under it."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_docs_commands import Block, blocks, environment, run_block

from conftest import ROOT

MARKER = "tested-by tests/project/test_docs_report_offline.py"
PAGES = ["argue.md", "dragun.md", "deep-research-bench.md", "trec-rag.md"]


def examples(page: Path) -> list[tuple[Block, list[str]]]:
    """Each marked block and the table rows of the ```text block that follows it."""
    found = blocks(page)
    out = []
    for index, block in enumerate(found):
        if block.marker == MARKER:
            shown = found[index + 1]
            assert shown.language == "text", f"{block.where()}: no ```text block of its output after it"
            out.append((block, [line for line in shown.body.splitlines() if line.startswith("| ")]))
    return out


def table_rows(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("| ")]


@pytest.mark.parametrize("name", PAGES)
def test_a_report_tasks_offline_example_prints_what_its_page_shows(name, tmp_path, ragbench_zygote):
    page = ROOT / "docs" / "benchmarks" / name
    found = examples(page)
    assert found, f"{page}: no example marked {MARKER!r}"
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    env = ragbench_zygote.environment(environment(tmp_path))  # `ragbench` forked by the test process's zygote
    for block, rows in found:
        assert table_rows(run_block(block, tmp_path, env).stdout) == rows, block.where()
