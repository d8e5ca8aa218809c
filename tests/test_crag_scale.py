"""CRAG Task 3 at scale: the event loop never blocks, and page work is done once across systems.

The data are synthetic Task 3 records in the released `.tar.bz2.part*` format with real-looking
HTML pages (ragbench.tasks.crag.synthetic), small enough for a 2-core CI machine.
"""
from __future__ import annotations

import asyncio
import logging
import re

import pytest
from crag_helpers import tokenizer_dir
from helpers import run

from ragbench.evaluator import Evaluator, RunConfig
from ragbench.tasks.crag import loader
from ragbench.tasks.crag.synthetic import write_task3_archive

EMBEDDER = "crag_helpers:KeywordEmbedder"
SLOW_CALLBACK_SECONDS = 0.05


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """4 questions x 8 pages (log-normal sizes around 20 kB; records of ~300 kB to 1 MB)."""
    return write_task3_archive(tmp_path_factory.mktemp("crag_t3"), questions=4, pages=8, median=20_000)


def config(tmp_path, archive, name, system="vanilla", **task_args) -> RunConfig:
    return RunConfig(tasks=["crag_t3"], system=system, model="scripted:echo", data={"crag_t3": str(archive)},
                     output=str(tmp_path / name), progress=False, bootstrap_iters=50, max_inflight=4,
                     task_args={"tokenizer": tokenizer_dir(), "kg": False, "judge_protocol": "none", **task_args})


# max_inflight=4 (there are 4 examples): in debug mode asyncio records a stack for every task it
# creates, which makes the evaluator's start (64 worker tasks by default) a 60 ms step on a loaded
# 2-core machine by itself; without debug mode that step takes about a millisecond.
class DebugLoopPolicy(asyncio.DefaultEventLoopPolicy):
    """asyncio's debug mode with a 50 ms slow-callback threshold on every loop it makes."""

    def new_event_loop(self):
        loop = super().new_event_loop()
        loop.set_debug(True)
        loop.slow_callback_duration = SLOW_CALLBACK_SECONDS
        return loop


@pytest.mark.parametrize("embedder", [EMBEDDER, pytest.param(None, marks=pytest.mark.model, id="minilm")])
def test_a_task3_run_never_blocks_the_event_loop(tmp_path, archive, caplog, monkeypatch, embedder):
    monkeypatch.setattr(loader, "LARGE_RECORD_BYTES", 64 * 1024)  # every record here is parsed in a worker
    args = {"embedder": embedder} if embedder else {}
    if embedder is None:  # import time holds the GIL in C for long stretches; loading the model does not
        pytest.importorskip("sentence_transformers")
    previous = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(DebugLoopPolicy())
    try:
        with caplog.at_level(logging.WARNING, logger="asyncio"):
            outcome = Evaluator(config(tmp_path, archive, "run", **args)).run()
    finally:
        asyncio.set_event_loop_policy(previous)
    assert outcome.results["counts"]["crag_t3"]["records"] == 4
    assert outcome.results["counts"]["crag_t3"]["failed"] == 0
    slow = [r.getMessage() for r in caplog.records if r.name == "asyncio" and re.search(r"took \d", r.getMessage())]
    assert not slow, "callbacks blocked the event loop:\n" + "\n".join(slow)


def _page_work(outcome_task) -> tuple[int, int]:
    return outcome_task._pages.parsed, outcome_task._embedder.texts_encoded


def test_a_second_system_on_the_same_file_parses_and_embeds_nothing(tmp_path, archive):
    first = Evaluator(config(tmp_path, archive, "first", embedder=EMBEDDER))
    first_results = first.run().results
    parsed, embedded = _page_work(first.planned[0].task)
    assert parsed == 4 * 8 and embedded > 0
    stats = first_results["cost"]["page_cache"]
    assert stats["hits"] == 0 and stats["lookups"] > 0 and stats["bytes"] > 0

    # another system on the same file: the same RAG baseline around another model, then a passage reader
    other_model = config(tmp_path, archive, "second", embedder=EMBEDDER)
    other_model.model_args = {"batch_size": 3}
    second = Evaluator(other_model)
    second_results = second.run().results
    assert _page_work(second.planned[0].task) == (0, 0)
    assert second_results["cost"]["page_cache"]["hit_rate"] == 1.0
    assert [s["prompts"] for s in _samples(tmp_path / "second")] == [s["prompts"] for s in _samples(tmp_path / "first")]

    third = Evaluator(config(tmp_path, archive, "third", system="selfrag", embedder=EMBEDDER))
    third.run()
    assert _page_work(third.planned[0].task)[0] == 0


def test_page_cache_off_parses_again_and_reports_nothing(tmp_path, archive):
    run(tmp_path, "warm", **_kwargs(archive, embedder=EMBEDDER))
    evaluator = Evaluator(config(tmp_path, archive, "off", embedder=EMBEDDER, page_cache="off"))
    results = evaluator.run().results
    assert _page_work(evaluator.planned[0].task)[0] == 4 * 8
    assert "page_cache" not in results["cost"]


def _kwargs(archive, **task_args) -> dict:
    return {"tasks": ["crag_t3"], "system": "vanilla", "model": "scripted:echo", "data": {"crag_t3": str(archive)},
            "task_args": {"tokenizer": tokenizer_dir(), "kg": False, "judge_protocol": "none", **task_args}}


def _samples(run_dir):
    import json

    return [json.loads(line) for line in (run_dir / "samples" / "crag_t3.jsonl").read_text().splitlines()]
