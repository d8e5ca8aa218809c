"""TREC RAG's pre-flight: what its answers need (nltk's sentence splitting) is checked before any example runs,
in one line naming the extra that installs it; a nugget file with a line nested too deeply is one line naming it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_trec_rag import QRELS24, SHARD_00, SHARD_01, TOPICS24, write_corpus

from ragbench.testing import build_index, installed_registry
from support.helpers import cli, cli_here


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("corpus"), SHARD_00, SHARD_01)


@pytest.fixture(scope="module")
def index(tmp_path_factory, corpus) -> Path:
    folder = tmp_path_factory.mktemp("index") / "bm25"
    build_index(corpus, folder, "bm25", progress=False, registry=installed_registry())
    return folder


def check_args(index: Path, output: Path) -> list[str]:
    return [
        "check",
        "--tasks",
        "trec_rag24",
        "--data",
        f"trec_rag24={TOPICS24}",
        "--task-arg",
        f"trec_rag24.qrels={QRELS24}",
        "--model",
        "scripted:echo",
        "--retriever",
        "bm25",
        "--retriever-arg",
        f"index={index}",
        "--output",
        str(output),
    ]


def without(module: str, folder: Path) -> dict[str, str]:
    """An environment in which `import MODULE` fails as it does where it is not installed (a module of that name
    first on the path that raises the same error)."""
    folder.mkdir()
    (folder / f"{module}.py").write_text(f'raise ModuleNotFoundError("No module named {module!r}", name={module!r})\n')
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}


def test_the_check_passes_where_nltk_is_installed(tmp_path, index):
    checked = cli_here(*check_args(index, tmp_path / "run"))  # in this process, where nltk is installed
    assert checked.returncode == 0, checked.stderr


def test_without_nltk_the_pre_flight_fails_in_one_line_naming_the_trec_extra(tmp_path, index):
    checked = cli(*check_args(index, tmp_path / "run"), env=without("nltk", tmp_path / "shadow"))
    assert checked.returncode != 0
    assert "Traceback" not in checked.stderr
    [line] = [line for line in checked.stderr.splitlines() if "nltk" in line]
    assert "task trec_rag24 reads an answer's citations by its sentences" in line
    assert "No module named 'nltk'" in line and "pip install " in line and "[trec]'`" in line  # as installed
    assert not (tmp_path / "run" / "samples").exists()  # no example ran


def test_a_nugget_file_line_nested_100000_deep_is_one_line_naming_it(tmp_path, index, corpus):
    """Round 6's C13 on the nugget file's reader: it said "the check raised RecursionError ... (a bug of the plugin)"."""
    nuggets = tmp_path / "nuggets.jsonl"
    deep = "[" * 100_000 + "]" * 100_000
    nuggets.write_text('{"qid": "1", "nuggets": [{"text": "a"}]}\n{"qid": "2", "nuggets": ' + deep + "}\n")
    metric = ["nuggetizer.passages=pool", f"nuggetizer.corpus={corpus}", f"nuggetizer.nuggets={nuggets}"]
    checked = cli_here(  # in this process: an exception the command did not turn into its one line is raised here
        *check_args(index, tmp_path / "run"),
        *("--metrics", "+nuggetizer", "--judge", "scripted:echo"),
        *(arg for value in metric for arg in ("--metric-arg", value)),
    )
    assert checked.returncode != 0 and "Traceback" not in checked.stderr
    assert "RecursionError" not in checked.stderr and "a bug of the plugin" not in checked.stderr
    [line] = [line for line in checked.stderr.splitlines() if str(nuggets) in line]
    assert f"{nuggets}:2: not a nugget line" in line and "nested too deeply to parse" in line
    assert line.endswith("fix or remove the line")
