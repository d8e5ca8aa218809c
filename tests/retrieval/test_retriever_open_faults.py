"""A plugin retriever that raises as it opens (its index server down: a RuntimeError from its `__init__`) is one
line naming the retriever, its provider and the error, exit 2 as the pre-flight's other problems, in `ragbench
check` and in a run alike; no traceback, and the run writes nothing."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ragbench.api.retrieval import Retriever
from ragbench.testing import Registry, cli


class RefusedRetriever(Retriever):
    """Its server refuses it: it cannot open."""

    name = "refused"

    def __init__(self, url: str = "http://localhost:9") -> None:
        raise RuntimeError(f"index server at {url} refused the connection")


LINE = (
    "ragbench: error: --retriever refused (from a_search_plugin) failed to open: RuntimeError: index server at "
    "http://localhost:9 refused the connection; fix what it names (its index, its server, its --retriever-arg "
    "options) or tell its provider"
)


@pytest.mark.parametrize("command", [["check", "--no-model"], ["--no-progress"]])
def test_a_plugin_retriever_raising_as_it_opens_is_one_line_and_exit_2(tmp_path, command):
    registry = Registry.discover()
    registry.add_catalog({"retrievers": {"refused": {"target": f"{__name__}:RefusedRetriever"}}}, "a_search_plugin")
    args = ["--tasks", "demo", "--system", "vanilla", "--retriever", "refused", "--limit", "2"]
    done = CliRunner().invoke(cli, [*command, *args, "--output", str(tmp_path / "run")], obj=registry)
    assert done.exit_code == 2, done.output
    assert done.stderr.splitlines() == [LINE]
    assert not (tmp_path / "run" / "run.json").exists()
