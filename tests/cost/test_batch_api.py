"""`--model-arg batch=true` on the `openai` and `anthropic` engines, against fake batch servers on 127.0.0.1
(tests/support/batch_fake.py, driven by request counts): a batch of requests is one vendor batch, recorded in the run folder
before it is polled; what the vendor failed, expired or cancelled is sent again and counted; what it refused fails
once; a batch recorded by an earlier attempt is polled, never submitted again."""

from __future__ import annotations

import json
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_engine_openai import chat

from conftest import needs
from ragbench._engines.batches.board import BatchBoard
from ragbench._engines.batches.store import BATCHES_DIR
from ragbench._engines.hosted.anthropic import AnthropicEngine
from ragbench._engines.hosted.openai import OpenAIEngine
from ragbench._engines.hosted.stainless import StainlessEngine
from ragbench._run.progress import Progress
from ragbench._scheduler import CallStats, Scheduler
from ragbench.api import EngineError
from ragbench.api.engines import Request, RequestError, Response
from support.batch_fake import FakeBatchServer, fake, no_ambient_keys  # noqa: F401 (fixtures)

VENDORS = ["openai", pytest.param("anthropic", marks=needs("anthropic"))]


def engine(
    fake: FakeBatchServer, vendor: str, folder: Path | None = None, board: BatchBoard | None = None, **options: Any
) -> StainlessEngine:
    options = {"batch": True, "batch_poll_s": 0, "backoff_base": 0.001, "backoff_max": 0.01, **options}
    made: StainlessEngine = (
        OpenAIEngine("m", base_url=fake.root + "/v1", **options)
        if vendor == "openai"
        else AnthropicEngine("claude", base_url=fake.root, **options)
    )
    if folder is not None:
        made.keep_batches(folder, board or BatchBoard())
    return made


def texts(answers: list[Response | EngineError]) -> list[str]:
    return [answer.text if isinstance(answer, Response) else f"error: {answer}" for answer in answers]


def echoed(vendor: str, questions: list[str]) -> list[str]:
    return [f"echo0: {q}" if vendor == "openai" else f"echo: {q}" for q in questions]


def asked(line: dict[str, Any]) -> str:
    body = line.get("body") or line["params"]
    return str(body["messages"][-1]["content"])


QUESTIONS = [f"question {n}" for n in range(5)]


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_batch_of_requests_is_one_vendor_batch_recorded_before_its_first_poll(fake, vendor, tmp_path):
    seen_at_poll: list[list[str]] = []
    fake.on_poll = lambda batch: seen_at_poll.append(sorted(p.name for p in (tmp_path / BATCHES_DIR).glob("*.json")))
    made = engine(fake, vendor, tmp_path)
    assert not made.concurrent and made.max_batch_size == 50_000  # the scheduler hands it batches
    answers = made.generate([chat(q) for q in QUESTIONS])
    assert texts(answers) == echoed(vendor, QUESTIONS)
    assert len(fake.created) == 1 and [asked(line) for line in fake.sent] == QUESTIONS
    (record,) = [json.loads(p.read_text()) for p in (tmp_path / BATCHES_DIR).glob("*.json")]
    assert record["batch"] == fake.created[0] and len(record["custom_ids"]) == 5 and record["ended"]
    assert len(seen_at_poll[0]) == 1 and seen_at_poll[0][0].endswith(".json")  # the record, before any poll
    assert made.stats() == {
        "batches_submitted": 1,
        "batches_resumed": 0,
        "batches_adopted": 0,
        "batch_requests_sent": 5,
        "batch_requests_resent": 0,
        "batch_requests_failed": 0,
        "batch_input_files_deleted": 0,
    }


@pytest.mark.parametrize("vendor", VENDORS)
def test_requests_the_vendor_failed_are_sent_again_and_counted_and_refused_ones_fail_once(fake, vendor):
    fake.then({"status": "completed", "fates": {0: 500, 2: 400, 3: 500}})
    made = engine(fake, vendor)
    answers = made.generate([chat(q) for q in QUESTIONS])
    assert isinstance(answers[2], RequestError) and "400" in str(answers[2])
    assert [t for i, t in enumerate(texts(answers)) if i != 2] == echoed(vendor, QUESTIONS[:2] + QUESTIONS[3:])
    assert [asked(line) for line in fake.sent[5:]] == [QUESTIONS[0], QUESTIONS[3]]  # the second batch
    stats = made.stats()
    assert stats is not None
    assert (stats["batches_submitted"], stats["batch_requests_sent"], stats["batch_requests_resent"]) == (2, 7, 2)
    assert stats["batch_requests_failed"] == 1


@pytest.mark.parametrize("vendor", VENDORS)
def test_an_expired_batch_sends_what_it_did_not_answer_again(fake, vendor):
    fake.then({"status": "expired", "answered": 2})
    made = engine(fake, vendor)
    assert texts(made.generate([chat(q) for q in QUESTIONS])) == echoed(vendor, QUESTIONS)
    assert [asked(line) for line in fake.sent[5:]] == QUESTIONS[2:]
    assert made.stats()["batch_requests_resent"] == 3  # type: ignore[index]


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_batch_cancelled_while_it_ran_sends_what_it_did_not_answer_again(fake, vendor, tmp_path):
    """Someone cancels the batch (the vendor's console, another client) while the engine polls it."""
    fake.hold.set()
    fake.then({"status": "completed", "answered": 1})
    made = engine(fake, vendor, tmp_path)
    with ThreadPoolExecutor(1) as pool:
        answered = pool.submit(made.generate, [chat(q) for q in QUESTIONS])
        polled = threading.Event()
        fake.on_poll = lambda batch: polled.set()
        assert polled.wait(60)  # the batch exists and is being polled
        cancel(fake, vendor, fake.created[0])
        fake.on_poll = None
        fake.hold.clear()
        answers = answered.result(timeout=120)
    assert fake.batches[fake.created[0]]["status"] == "cancelled"
    assert texts(answers) == echoed(vendor, QUESTIONS)
    assert [asked(line) for line in fake.sent[5:]] == QUESTIONS[1:]


def cancel(fake: FakeBatchServer, vendor: str, batch_id: str) -> None:
    if vendor == "openai":
        openai.OpenAI(api_key="x", base_url=fake.root + "/v1").batches.cancel(batch_id)
    else:
        import anthropic

        anthropic.Anthropic(api_key="x", base_url=fake.root).messages.batches.cancel(batch_id)


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_request_failed_in_every_try_fails_after_batch_retries_more_counted(fake, vendor):
    fake.then(*[{"status": "expired", "answered": 0}] * 3)
    made = engine(fake, vendor, batch_retries=1)
    (answer,) = made.generate([chat("lost")])
    assert isinstance(answer, EngineError) and "(2 attempts)" in str(answer) and "\n" not in str(answer)
    assert len(fake.created) == 2
    assert made.stats()["batch_requests_failed"] == 1  # type: ignore[index]


def test_a_batch_the_vendor_failed_as_a_whole_fails_its_requests_naming_why(fake):
    fake.then({"status": "failed"})
    answers = engine(fake, "openai").generate([chat("a"), chat("b")])
    assert all(isinstance(a, EngineError) and "refused" in str(a) and "batch_1 failed" in str(a) for a in answers)
    assert len(fake.created) == 1  # not sent again: it would fail the same way


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_batch_recorded_by_an_earlier_attempt_is_polled_again_never_submitted(fake, vendor, tmp_path):
    fake.hold.set()
    first = engine(fake, vendor, tmp_path / "first")
    (tmp_path / "first").mkdir()
    with ThreadPoolExecutor(1) as pool:
        polled = threading.Event()
        fake.on_poll = lambda batch: polled.set()
        answered = pool.submit(first.generate, [chat(q) for q in QUESTIONS])
        assert polled.wait(60)
        fake.on_poll = None
        # the folder as an attempt killed while it polled left it (this one goes on, in the other folder)
        shutil.copytree(tmp_path / "first", tmp_path / "run")
        fake.hold.clear()
        answered.result(timeout=120)
    tmp_path = tmp_path / "run"
    again = engine(fake, vendor, tmp_path)
    # asked in another order and with one more request: the new one alone goes in a new batch
    answers = again.generate([chat(q) for q in [*QUESTIONS[::-1], "new"]])
    assert texts(answers) == echoed(vendor, [*QUESTIONS[::-1], "new"])
    assert len(fake.created) == 2 and [asked(line) for line in fake.sent[5:]] == ["new"]
    stats = again.stats()
    assert stats is not None and stats["batches_resumed"] == 1 and stats["batches_submitted"] == 1
    # and a third attempt answers every one of them from the recorded results, sending nothing
    third = engine(fake, vendor, tmp_path)
    assert texts(third.generate([chat(q) for q in QUESTIONS])) == echoed(vendor, QUESTIONS)
    assert len(fake.created) == 2


def test_a_damaged_batch_record_stops_the_batch_in_one_line_naming_it(fake, tmp_path):
    (tmp_path / BATCHES_DIR).mkdir()
    damaged = tmp_path / BATCHES_DIR / "0123.json"
    whole = json.dumps({"engine": "x", "batch": "b", "endpoint": "/v1/chat/completions", "custom_ids": [], "at": 1})
    damaged.write_text(whole[: len(whole) // 2])  # truncated
    with pytest.raises(EngineError) as raised:
        engine(fake, "openai", tmp_path).generate([chat("a")])
    assert str(damaged) in str(raised.value) and "\n" not in str(raised.value)
    assert fake.created == []


@needs("anthropic")
def test_a_remote_mcp_request_is_not_sent_in_an_anthropic_batch(fake):
    mcp = {"type": "mcp", "server_label": "s", "server_url": "https://mcp.example/mcp"}
    request = Request.chat([{"role": "user", "content": "q"}], tools=[mcp])
    (answer,) = engine(fake, "anthropic").generate([request])
    assert isinstance(answer, RequestError) and "MCP" in str(answer)
    assert fake.created == []


@pytest.mark.parametrize("vendor", VENDORS)
def test_the_progress_bar_shows_each_batch_state_and_what_waits(fake, vendor, tmp_path):
    """The run's board, handed to its engines and its bar: no board of the process's."""
    fake.hold.set()
    board = BatchBoard()
    made = engine(fake, vendor, tmp_path, board)
    with ThreadPoolExecutor(1) as pool:
        # at the batch's second poll the engine has shown what the first said: in progress
        polled = threading.Event()
        fake.on_poll = lambda batch: polled.set() if batch["polls"] >= 1 else None
        answered = pool.submit(made.generate, [chat(q) for q in QUESTIONS])
        assert polled.wait(60)
        fake.on_poll = None
        line = Progress(CallStats(), None, enabled=False, batches=board).beside()
        assert "batches:" not in Progress(CallStats(), None, enabled=False, batches=BatchBoard()).beside()
        fake.hold.clear()
        answered.result(timeout=120)
    assert f"batches: {fake.created[0]} in_progress 0/5; waiting 5" in line
    assert board.line() == ""  # an ended batch leaves the bar


async def two_rounds(scheduler: Scheduler, made: StainlessEngine, question: str) -> str:
    first = await scheduler.submit(made, chat(question))
    return (await scheduler.submit(made, chat(f"again {first.text}"))).text


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_multi_step_systems_rounds_go_as_successive_batches(fake, vendor):
    import asyncio

    made = engine(fake, vendor)

    async def run() -> list[str]:
        scheduler = Scheduler()
        try:
            return list(await asyncio.gather(*(two_rounds(scheduler, made, q) for q in QUESTIONS)))
        finally:
            await scheduler.close()

    answers = asyncio.run(run())
    assert len(fake.created) == 2
    assert [len(fake.batches[b]["lines"]) for b in fake.created] == [5, 5]
    assert answers == echoed(vendor, [f"again {a}" for a in echoed(vendor, QUESTIONS)])


@pytest.mark.parametrize("vendor", VENDORS)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(questions=st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=6, unique=True))
def test_any_texts_come_back_each_to_its_own_request_and_from_the_record(fake, vendor, tmp_path_factory, questions):
    folder = tmp_path_factory.mktemp("run")
    fake.then({"status": "expired", "answered": len(questions) // 2})
    answers = engine(fake, vendor, folder).generate([chat(q) for q in questions])
    assert texts(answers) == echoed(vendor, questions)
    created = len(fake.created)
    again = engine(fake, vendor, folder).generate([chat(q) for q in questions[::-1]])
    assert texts(again) == echoed(vendor, questions[::-1]) and len(fake.created) == created


def test_batch_options_are_the_engines_own_checked_before_the_run_and_not_sent_or_keyed(fake, tmp_path):
    from support.helpers import preflight_problems

    model_args = {"base_url": fake.root + "/v1", "batch": True, "batch_poll_s": -1}
    problems = preflight_problems(
        tmp_path, tasks=["demo"], system="closed_book", model="openai:m", model_args=model_args
    )
    assert len(problems) == 1 and "batch_poll_s" in problems[0]
    assert engine(fake, "openai").engine_id == OpenAIEngine("m", base_url=fake.root + "/v1").engine_id  # one cache
    engine(fake, "openai").generate([chat("q")])
    assert not {key for key in fake.sent[0]["body"] if key.startswith("batch")}  # no batch option in the body
