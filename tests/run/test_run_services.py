"""A run's services (ragbench._run.services): planning a run (`Evaluator.__init__`) loads no retriever and
no component model; they load when the run starts, and every one is closed however the run ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench._run.example import StoppedAtFailure
from ragbench.api import ConfigError, Document, hookimpl
from ragbench.api.retrieval import Reranker, Retriever
from ragbench.testing import Registry


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


def evaluator(tmp_path: Path, log: Path, model: str = "scripted:echo", **config) -> Evaluator:
    registry = Registry.discover(plugins=[("noted_plugin", "ragbench-noted-test", NotedPlugin())])
    config.setdefault("retriever_args", {"log": str(log)})
    return Evaluator(
        RunConfig.of(
            tasks=["demo"],
            system="vanilla",
            model=model,
            retriever="noted",
            reranker="noted",
            reranker_args={"log": str(log)},
            limit=2,
            progress=False,
            bootstrap_iters=0,
            output=str(tmp_path / "run"),
            **config,
        ),
        registry,
    )


def test_planning_a_run_opens_no_index_and_loads_no_model_until_it_runs(tmp_path):
    log = tmp_path / "events.txt"
    planned = evaluator(tmp_path, log)
    assert events(log) == []
    assert planned.run().complete
    assert events(log) == ["retriever opened", "reranker loaded", "reranker closed", "retriever closed"]


def test_a_retriever_that_fails_to_open_fails_the_run_not_its_planning_and_nothing_is_written(tmp_path):
    planned = evaluator(tmp_path, tmp_path / "events.txt", retriever_args={"log": "-", "fail": True})
    with pytest.raises(Exception, match="the index is damaged"):
        planned.run()
    assert not (tmp_path / "run" / "run.json").exists()


def failing_answer(request) -> str:
    raise RuntimeError("the model is down")


def test_every_service_is_closed_when_the_run_stops_at_a_failure(tmp_path):
    log = tmp_path / "events.txt"
    planned = evaluator(tmp_path, log, model=f"scripted:{__name__}:failing_answer", fail_fast=True)
    with pytest.raises(StoppedAtFailure):
        planned.run()
    assert events(log) == ["retriever opened", "reranker loaded", "reranker closed", "retriever closed"]


def test_every_service_opened_is_closed_when_the_model_fails_to_load(tmp_path):
    log = tmp_path / "events.txt"
    planned = evaluator(tmp_path, log, model="scripted:no_such_module_xyz:answer")
    with pytest.raises(ConfigError, match="cannot load 'no_such_module_xyz:answer'"):
        planned.run()
    assert events(log) == ["retriever opened", "reranker loaded", "reranker closed", "retriever closed"]
    assert not (tmp_path / "run" / "run.json").exists()


def test_ragbench_check_opens_the_retriever_and_closes_what_it_opened(tmp_path):
    log = tmp_path / "events.txt"
    evaluator(tmp_path, log).check_services(models=False)
    assert events(log) == ["retriever opened", "reranker loaded", "reranker closed", "retriever closed"]
    broken = evaluator(tmp_path, tmp_path / "other.txt", retriever_args={"log": "-", "fail": True})
    with pytest.raises(Exception, match="the index is damaged"):
        broken.check_services(models=False)
    assert not (tmp_path / "run").exists()
