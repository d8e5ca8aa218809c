"""What a `batch=true` engine does with batches it cannot simply poll, against the fake batch servers
(tests/support/batch_fake.py): a batch whose creation's answer was lost is found at the vendor and adopted, never created
twice; a batch the vendor no longer knows (HTTP 404) fails its requests in one line, never resent behind the
user's back; a replica set's batches are each polled at the server that holds them."""

from __future__ import annotations

import json
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_batch_api import QUESTIONS, VENDORS, asked, echoed, engine, texts
from test_engine_openai import chat

from ragbench._engines.batches.board import BatchBoard
from ragbench._engines.batches.store import BATCHES_DIR, BatchStore
from ragbench._engines.hosted.openai import OpenAIEngine
from ragbench._engines.replicas import endpoint_replicas
from ragbench._values.engine_errors import EngineError
from support.batch_fake import FakeBatchServer, fake, no_ambient_keys  # noqa: F401 (fixtures)


def records(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in sorted((folder / BATCHES_DIR).glob("*.json"))]


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_batch_whose_creation_answer_was_lost_is_found_and_adopted_not_created_again(fake, vendor, tmp_path):
    fake.drop_creates = 1  # the vendor creates the batch; its answer never arrives (the connection closed)
    made = engine(fake, vendor, tmp_path)
    assert texts(made.generate([chat(q) for q in QUESTIONS])) == echoed(vendor, QUESTIONS)
    assert len(fake.created) == 1 and len(fake.sent) == len(QUESTIONS)
    (record,) = records(tmp_path)
    assert record["batch"] == fake.created[0] and record["ended"]
    stats = made.stats()
    assert stats is not None and (stats["batches_submitted"], stats["batches_adopted"]) == (1, 1)


@pytest.mark.parametrize("vendor", VENDORS)
def test_an_intent_the_vendor_holds_no_batch_for_is_forgotten_and_its_requests_sent_once(fake, vendor, tmp_path):
    """What a run killed before the vendor got its creation leaves: an intent without a batch id."""
    made = engine(fake, vendor, tmp_path)
    store = BatchStore(made.engine_id, tmp_path)
    store.load()
    customs = [store.custom(chat(q).cache_key(made.call_identity(chat(q).sampling))) for q in QUESTIONS]
    endpoint = "/v1/chat/completions" if vendor == "openai" else "/v1/messages"
    store.intend(made.base_url, endpoint, customs)
    assert [record["batch"] for record in records(tmp_path)] == [None]
    assert texts(made.generate([chat(q) for q in QUESTIONS])) == echoed(vendor, QUESTIONS)
    assert len(fake.created) == 1 and [record["batch"] for record in records(tmp_path)] == [fake.created[0]]
    assert made.stats()["batches_adopted"] == 0  # type: ignore[index]


def test_the_input_file_of_a_creation_that_never_reached_openai_is_deleted_and_said(fake, tmp_path, caplog):
    """The file is uploaded, the creation's connection closes before the vendor got it: no batch is found for the
    intent, so the file recorded as uploaded for it is deleted (DELETE /v1/files/ID), and the batch made again."""
    fake.lose_creates = 1
    made = engine(fake, "openai", tmp_path)
    with caplog.at_level("WARNING", logger="ragbench._engines.batches.runner"):
        assert texts(made.generate([chat(q) for q in QUESTIONS])) == echoed("openai", QUESTIONS)
    assert fake.deleted == ["file-1"] and list(fake.files) == ["file-2"] and len(fake.created) == 1
    assert made.stats()["batch_input_files_deleted"] == 1  # type: ignore[index]
    assert "deleted input file file-1, uploaded for a batch the vendor never created; its 5 requests" in caplog.text
    (record,) = records(tmp_path)
    assert record["batch"] == fake.created[0] and record["uploaded"] == "file-2"


def test_an_input_file_the_vendor_will_not_delete_is_named_with_the_fix_and_the_requests_still_sent(
    fake, tmp_path, caplog
):
    fake.lose_creates, fake.delete_status = 1, 403
    made = engine(fake, "openai", tmp_path)
    with caplog.at_level("WARNING", logger="ragbench._engines.batches.runner"):
        assert texts(made.generate([chat(q) for q in QUESTIONS])) == echoed("openai", QUESTIONS)
    assert fake.deleted == [] and len(fake.created) == 1
    assert made.stats()["batch_input_files_deleted"] == 0  # type: ignore[index]
    (line,) = [r.getMessage() for r in caplog.records if "file-1" in r.getMessage()]
    assert "could not delete input file file-1" in line and "Files API or dashboard" in line and "\n" not in line


@pytest.mark.parametrize("held", [True, False])
def test_a_resumed_run_deletes_the_file_an_earlier_attempt_uploaded_for_a_batch_never_created(
    fake, tmp_path, caplog, held
):
    """What a run killed between the upload and the creation leaves: an intent with its uploaded file recorded and
    no batch. The resumed run finds none, deletes the file (or says the vendor no longer holds it) and sends its
    requests once."""
    made = engine(fake, "openai", tmp_path)
    store = BatchStore(made.engine_id, tmp_path)
    store.load()
    customs = [store.custom(chat(q).cache_key(made.call_identity(chat(q).sampling))) for q in QUESTIONS]
    if held:
        fake.files["file-left"] = b"{}\n"
    store.upload(store.intend(made.base_url, "/v1/chat/completions", customs), "file-left")
    assert [record["uploaded"] for record in records(tmp_path)] == ["file-left"]
    with caplog.at_level("WARNING", logger="ragbench._engines.batches.runner"):
        assert texts(made.generate([chat(q) for q in QUESTIONS])) == echoed("openai", QUESTIONS)
    assert fake.deleted == (["file-left"] if held else []) and len(fake.created) == 1
    assert made.stats()["batch_input_files_deleted"] == int(held)  # type: ignore[index]
    said = "deleted" if held else "the vendor no longer holds"
    assert f"{said} input file file-left, uploaded for a batch the vendor never created" in caplog.text
    assert [record["batch"] for record in records(tmp_path)] == [fake.created[0]]


def foreign_batch(fake: FakeBatchServer, vendor: str, size: int, number: int) -> None:
    """A batch of `size` requests another client of the same workspace created (OpenAI: another ragbench run)."""
    body = {"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": "elsewhere"}]}
    if vendor == "anthropic":
        fake.create(vendor, [{"custom_id": f"other-{number}-{i}", "params": body} for i in range(size)])
        return
    url = "/v1/chat/completions"
    lines = [{"custom_id": f"other-{number}-{i}", "method": "POST", "url": url, "body": body} for i in range(size)]
    fake.create(vendor, lines, url, {"made_by": "ragbench", "ragbench_intent": f"rbi-other{number}"})


@pytest.mark.parametrize("vendor", VENDORS)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=st.integers(0, 2), after=st.integers(0, 2), size=st.integers(1, 4))
def test_the_lost_batch_is_told_from_other_batches_of_its_size_created_around_it(
    fake, vendor, tmp_path_factory, before, after, size
):
    """Anthropic's batches carry no tag: its own batch is the one whose results hold exactly its requests (the same
    requests asked in another run folder have other custom ids); OpenAI's carry the intent in their metadata."""
    folder = tmp_path_factory.mktemp("run")
    for number in range(before):
        foreign_batch(fake, vendor, size, number)

    def others_after(batch: dict[str, Any]) -> None:
        fake.on_create = None
        for number in range(after):
            foreign_batch(fake, vendor, size, 10 + number)

    fake.on_create = others_after
    fake.drop_creates = 1
    questions = QUESTIONS[:size]
    board = BatchBoard()
    made = engine(fake, vendor, folder, board)
    created = len(fake.created)
    answers = made.generate([chat(q) for q in questions])
    assert texts(answers) == echoed(vendor, questions)
    ours = [b for b in fake.created[created:] if not fake.batches[b]["lines"][0]["custom_id"].startswith("other")]
    assert len(ours) == 1 and [record["batch"] for record in records(folder)] == ours
    assert board.line() == ""  # no batch left on the progress bar (an adopted one that had ended was shown out)


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_batch_the_vendor_does_not_know_fails_its_requests_in_one_line_and_is_not_resent(fake, vendor, tmp_path):
    fake.on_poll = lambda batch: fake.forget(batch["id"])  # deleted, or polled with another organisation's key
    answers = engine(fake, vendor, tmp_path).generate([chat(q) for q in QUESTIONS])
    (record,) = (tmp_path / BATCHES_DIR).glob("*.json")
    for answer in answers:
        assert isinstance(answer, EngineError) and "\n" not in str(answer)
        assert f"batch {fake.created[0]} is unknown to the vendor (HTTP 404" in str(answer)
        assert f"resume with that key, or move {record} away to send its 5 requests again" in str(answer)
    again = engine(fake, vendor, tmp_path)
    assert all(isinstance(answer, EngineError) for answer in again.generate([chat(q) for q in QUESTIONS]))
    assert len(fake.created) == 1  # never resent behind the user's back: the batch may run under another key
    assert again.stats()["batch_requests_failed"] == 5  # type: ignore[index]


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_batch_whose_results_file_alone_is_not_found_is_the_vendors_failure_and_sent_again(fake, vendor, tmp_path):
    fake.lose_results = 1  # the vendor knows the batch; its results file answers HTTP 404
    made = engine(fake, vendor, tmp_path)
    assert texts(made.generate([chat(q) for q in QUESTIONS])) == echoed(vendor, QUESTIONS)
    assert len(fake.created) == 2 and made.stats()["batch_requests_resent"] == 5  # type: ignore[index]
    # no try left: each fails as not answered, never as a batch unknown to the vendor, and --resume sends it again
    fake.lose_results = 1
    folder = tmp_path / "again"
    folder.mkdir()
    answers = engine(fake, vendor, folder, batch_retries=0).generate([chat(q) for q in QUESTIONS])
    for answer in answers:
        assert isinstance(answer, EngineError) and "batch request not answered" in str(answer), answer
        assert "unknown to the vendor" not in str(answer)
    assert texts(engine(fake, vendor, folder).generate([chat(q) for q in QUESTIONS])) == echoed(vendor, QUESTIONS)
    assert len(fake.created) == 4


def replica_set(fakes: list[FakeBatchServer], folder: Path) -> Any:
    options = {"batch": True, "batch_poll_s": 0, "backoff_base": 0.001, "backoff_max": 0.01}
    made = endpoint_replicas(OpenAIEngine, "m", [fake.root + "/v1" for fake in fakes], options)
    folder.mkdir(exist_ok=True)
    made.keep_batches(folder, BatchBoard())
    return made


def test_a_resumed_replica_set_polls_each_batch_at_the_server_that_holds_it(tmp_path):
    fakes = [FakeBatchServer(), FakeBatchServer()]
    try:
        halves = [QUESTIONS[:2], QUESTIONS[2:]]
        first = replica_set(fakes, tmp_path / "first")
        polled = [threading.Event(), threading.Event()]
        for fake, seen in zip(fakes, polled):
            fake.hold.set()
            fake.on_poll = lambda batch, seen=seen: seen.set()
        with ThreadPoolExecutor(2) as pool:  # each replica sends its half, and the run is killed while both poll
            answered = [
                pool.submit(replica.generate, [chat(q) for q in half]) for replica, half in zip(first.replicas, halves)
            ]
            assert all(seen.wait(60) for seen in polled)
            shutil.copytree(tmp_path / "first", tmp_path / "run")
            for fake in fakes:
                fake.on_poll = None
                fake.hold.clear()
            for future in answered:
                future.result(timeout=120)
        assert [asked(line) for line in fakes[1].sent] == halves[1]
        calls_before = len(fakes[1].calls)
        again = replica_set(fakes, tmp_path / "run")
        answers = again.generate([chat(q) for q in QUESTIONS])  # one scheduler batch, to the first replica
        assert texts(answers) == echoed("openai", QUESTIONS)
        assert [len(fake.created) for fake in fakes] == [1, 1]  # nothing submitted again, at either server
        assert ("GET", "/v1/batches/batch_1") in fakes[1].calls[calls_before:]  # polled where it is
        assert {record["base_url"] for record in records(tmp_path / "run")} == {f.root + "/v1" for f in fakes}
        stats = again.stats()
        assert stats is not None and (stats["batches_resumed"], stats["batches_submitted"]) == (2, 0)
    finally:
        for fake in fakes:
            fake.hold.clear()
            fake.stop()


def test_a_batch_held_at_a_server_the_resumed_run_does_not_name_fails_in_one_line_naming_it(fake, tmp_path):
    """An attempt with replicas at two servers left a batch at the second; the run resumes with the first alone."""
    made = engine(fake, "openai", tmp_path)
    store = BatchStore(made.engine_id, tmp_path)
    store.load()
    gone = "http://127.0.0.1:9/v1"  # never asked: nothing may be sent there, nor the batch's requests elsewhere
    held = store.intend(
        gone, "/v1/chat/completions", [store.custom(chat("q").cache_key(made.call_identity(chat("q").sampling)))]
    )
    store.created(held, "batch_elsewhere")
    (answer,) = made.generate([chat("q")])
    assert isinstance(answer, EngineError) and "\n" not in str(answer)
    assert f"held at {gone}, which this run does not name: give it among the --base-url values" in str(answer)
    assert fake.created == []
