"""A run's services (ragbench._run.services): planning a run (its pre-flight) loads no retriever and no component
model; they load when the run starts, and every one is closed however the run ends."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ragbench.api import ConfigError, Document, hookimpl
from ragbench.api.retrieval import Reranker, Retriever
from ragbench.testing import Registry, cli, preflight, run_eval


def noted(log: str, event: str) -> None:
    with open(log, "a", encoding="utf-8") as out:
        out.write(event + "\n")


def events(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


class NotedRetriever(Retriever):
    """Notes in the file `log` when it is built (its index opened) and closed; `fail`: building it fails."""

    name = "noted"

    def __init__(self, log: str, fail: bool = False) -> None:
        if fail:
            raise RuntimeError("the index is damaged")
        self.log = log
        noted(log, "retriever opened")

    def search(self, queries, k):
        return [[Document(id="d1", title="Only", text=f"About {query}")] for query in queries]

    def close(self) -> None:
        noted(self.log, "retriever closed")


class NotedReranker(Reranker):
    """Notes in the file `log` when its model loads and when it is freed."""

    name = "noted"

    def __init__(self, log: str) -> None:
        self.log = log

    def load(self) -> None:
        noted(self.log, "reranker loaded")

    def score_pairs(self, pairs):
        return [float(len(passage)) for _, passage in pairs]

    def close(self) -> None:
        noted(self.log, "reranker closed")


class NotedPlugin:
    @hookimpl
    def ragbench_catalog(self):
        return {
            "retrievers": {"noted": {"target": f"{__name__}:NotedRetriever"}},
            "rerankers": {"noted": {"target": f"{__name__}:NotedReranker"}},
        }


def registry() -> Registry:
    return Registry.discover(plugins=[("noted_plugin", "ragbench-noted-test", NotedPlugin())])


def options(tmp_path: Path, log: Path, model: str = "scripted:echo", **config) -> dict:
    """run_eval's (and preflight's) arguments of a run of the demo with the noted retriever and reranker."""
    config.setdefault("retriever_args", {"log": str(log)})
    return dict(
        task="demo",
        system="vanilla",
        model=model,
        retriever="noted",
        reranker="noted",
        reranker_args={"log": str(log)},
        limit=2,
        bootstrap_iters=0,
        output=tmp_path / "run",
        registry=registry(),
        **config,
    )


def test_planning_a_run_opens_no_index_and_loads_no_model_until_it_runs(tmp_path):
    log = tmp_path / "events.txt"
    preflight(**options(tmp_path, log))
    assert events(log) == []
    assert run_eval(**options(tmp_path, log)).complete
    assert events(log) == ["retriever opened", "reranker loaded", "reranker closed", "retriever closed"]


def test_a_retriever_that_fails_to_open_fails_the_run_not_its_planning_and_nothing_is_written(tmp_path):
    config = options(tmp_path, tmp_path / "events.txt", retriever_args={"log": "-", "fail": True})
    preflight(**config)
    with pytest.raises(Exception, match="the index is damaged"):
        run_eval(**config)
    assert not (tmp_path / "run" / "run.json").exists()


def failing_answer(request) -> str:
    raise RuntimeError("the model is down")


def test_every_service_is_closed_when_the_run_stops_at_a_failure(tmp_path):
    log = tmp_path / "events.txt"
    with pytest.raises(Exception) as stopped:
        run_eval(**options(tmp_path, log, model=f"scripted:{__name__}:failing_answer", fail_fast=True))
    assert type(stopped.value).__name__ == "StoppedAtFailure"  # --fail-fast's stop
    assert events(log) == ["retriever opened", "reranker loaded", "reranker closed", "retriever closed"]


def test_every_service_opened_is_closed_when_the_model_fails_to_load(tmp_path):
    log = tmp_path / "events.txt"
    with pytest.raises(ConfigError, match="cannot load 'no_such_module_xyz:answer'"):
        run_eval(**options(tmp_path, log, model="scripted:no_such_module_xyz:answer"))
    assert events(log) == ["retriever opened", "reranker loaded", "reranker closed", "retriever closed"]
    assert not (tmp_path / "run" / "run.json").exists()


def check(tmp_path: Path, log: str, *extra: str):
    """`ragbench check` of a run of the demo with the noted retriever and reranker."""
    args = ["check", "--tasks", "demo", "--system", "vanilla", "--model", "scripted:echo", "--limit", "2"]
    args += ["--retriever", "noted", "--retriever-arg", f"log={log}", *extra]
    args += ["--reranker", "noted", "--reranker-arg", f"log={log}", "--output", str(tmp_path / "run")]
    return CliRunner().invoke(cli, args, obj=registry())


def test_ragbench_check_opens_the_retriever_and_closes_what_it_opened(tmp_path):
    log = tmp_path / "events.txt"
    checked = check(tmp_path, str(log))
    assert checked.exit_code == 0, checked.output
    assert events(log) == ["retriever opened", "reranker loaded", "reranker closed", "retriever closed"]
    broken = check(tmp_path, "-", "--retriever-arg", "fail=true")
    assert broken.exit_code == 2 and "the index is damaged" in broken.output  # the retriever's own error, one line
    assert not (tmp_path / "run").exists()
