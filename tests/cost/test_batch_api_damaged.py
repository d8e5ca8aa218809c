"""What a `batch=true` engine does with result lines it cannot take, against the fake batch servers
(tests/support/batch_fake.py): a line unreadable (not JSON, not an object, no custom id, nested past reading) costs only
itself, a custom id on two lines is neither line's answer, and every request without an answer taken is the
vendor's failure: sent again in a new batch, within the run and on `--resume`, while one answered is never sent
again (never paid twice)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_batch_api import QUESTIONS, VENDORS, asked, echoed, engine, texts
from test_engine_openai import chat

from ragbench.api import EngineError
from ragbench.api.engines import RequestError, Response
from support.batch_fake import FakeBatchServer, fake, no_ambient_keys  # noqa: F401 (fixtures)

DEEP = "[" * 5_000 + "]" * 5_000  # past any JSON reader's nesting

# lines no request can be told from (each costs only itself)
JUNK = st.sampled_from(
    ["not json {", "[1, 2]", "null", '"text"', '{"id": "r", "response": null}', '{"custom_id": 7}', DEEP, "\ufeff{}"]
)


def garbled(text: str, how: int) -> str:
    """A request's result line made unreadable, its custom id with it (or, `how` 2, its content alone)."""
    line = json.loads(text)
    if how == 0:
        return text[: len(text) // 2]  # cut short
    if how == 1:
        return f'{{"custom_id": {json.dumps(line["custom_id"])}, "response": {DEEP}}}'  # nested past reading
    return json.dumps({"custom_id": line["custom_id"], "response": "garbled", "result": ["garbled"]})


def twice(text: str) -> list[str]:
    """A request's line, then another line of its custom id with another text."""
    return [text, text.replace("echo", "other")]


def damage(fates: list[str], junk: list[tuple[int, str]]) -> Callable[[list[str]], list[str]]:
    """The result lines (one a request, in order) as `fates` says of each request, with `junk` put among them."""

    def damaged(texts: list[str]) -> list[str]:
        out: list[str] = []
        for text, fate in zip(texts, fates):
            if fate == "ok":
                out.append(text)
            elif fate == "twice":
                out += twice(text)
            elif fate.startswith("garbled"):
                out.append(garbled(text, int(fate[-1])))
        for position, line in junk:
            out.insert(position % (len(out) + 1), line)
        return out

    return damaged


FATES = st.sampled_from(["ok", "twice", "missing", "garbled0", "garbled1", "garbled2"])


@pytest.mark.parametrize("vendor", VENDORS)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    fates=st.lists(FATES, min_size=1, max_size=5),
    junk=st.lists(st.tuples(st.integers(0, 20), JUNK), max_size=3),
)
def test_a_damaged_results_file_answers_the_requests_of_one_good_line_and_resume_resends_the_rest(
    fake, vendor, tmp_path_factory, fates, junk
):
    folder = tmp_path_factory.mktemp("run")
    questions = QUESTIONS[: len(fates)]
    fake.then({"status": "completed", "damage": damage(fates, junk)})
    created = len(fake.created)
    first = engine(fake, vendor, folder, batch_retries=0)
    answers = first.generate([chat(q) for q in questions])  # no exception escapes
    good = [q for q, fate in zip(questions, fates) if fate == "ok"]
    assert [t for t, fate in zip(texts(answers), fates) if fate == "ok"] == echoed(vendor, good)
    for answer, fate in zip(answers, fates):
        if fate != "ok":  # the vendor's failure, named in one line: not the request's
            assert isinstance(answer, EngineError) and not isinstance(answer, RequestError), answer
            assert "batch request not answered" in str(answer) and "\n" not in str(answer)
    assert first.stats()["batch_requests_failed"] == len(questions) - len(good)  # type: ignore[index]
    assert len(fake.created) == created + 1
    # --resume: every request without an answer taken goes in one new batch; none answered is sent again
    sent = len(fake.sent)
    again = engine(fake, vendor, folder, batch_retries=0)
    assert texts(again.generate([chat(q) for q in questions])) == echoed(vendor, questions)
    assert sorted(asked(line) for line in fake.sent[sent:]) == sorted(set(questions) - set(good))
    assert len(fake.created) == created + 1 + (len(good) < len(questions))


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_custom_id_on_two_result_lines_takes_neither_and_is_sent_again(fake, vendor, tmp_path):
    fake.then({"status": "completed", "damage": damage(["twice", "ok"], [])})
    made = engine(fake, vendor, tmp_path, batch_retries=0)
    first, second = made.generate([chat(q) for q in QUESTIONS[:2]])
    assert isinstance(first, EngineError) and "\n" not in str(first)
    assert "results hold 2 lines of its custom id: neither is taken" in str(first)
    assert isinstance(second, Response) and second.text == echoed(vendor, QUESTIONS[1:2])[0]
    sent = len(fake.sent)
    assert texts(engine(fake, vendor, tmp_path).generate([chat(q) for q in QUESTIONS[:2]])) == echoed(
        vendor, QUESTIONS[:2]
    )
    assert [asked(line) for line in fake.sent[sent:]] == QUESTIONS[:1]  # resumed: sent again, once
    # and within a run, with a try left, it is sent again at once
    fake.then({"status": "completed", "damage": damage(["twice"], [])})
    made = engine(fake, vendor)
    assert texts(made.generate([chat("alone")])) == echoed(vendor, ["alone"])
    assert made.stats()["batch_requests_resent"] == 1  # type: ignore[index]


@pytest.mark.parametrize("vendor", VENDORS)
def test_the_tokens_billed_for_two_lines_of_one_custom_id_are_counted_in_the_answer_sent_again(fake, vendor):
    alone = engine(fake, vendor).generate([chat("alone")])[0]
    assert isinstance(alone, Response) and alone.prompt_tokens > 0
    fake.then({"status": "completed", "damage": damage(["twice"], [])})  # both lines billed, neither taken
    [again] = engine(fake, vendor).generate([chat("alone")])
    assert isinstance(again, Response) and again.text == alone.text
    assert (again.prompt_tokens, again.completion_tokens) == (3 * alone.prompt_tokens, 3 * alone.completion_tokens)


def no_answer(text: str) -> str:
    """A request's result line whose answer reads as none (no choices; content no list) but whose usage reads."""
    line = json.loads(text)
    if "response" in line:
        line["response"]["body"]["choices"] = []
    else:
        line["result"]["message"]["content"] = 3
    return json.dumps(line)


@pytest.mark.parametrize("vendor", VENDORS)
def test_the_tokens_billed_for_a_line_not_read_are_counted_in_the_answer_or_the_failure(fake, vendor):
    alone = engine(fake, vendor).generate([chat("alone")])[0]
    assert isinstance(alone, Response)
    tokens = (alone.prompt_tokens, alone.completion_tokens)
    fake.then({"status": "completed", "damage": lambda texts: [no_answer(texts[0])]})  # billed, not taken
    [again] = engine(fake, vendor).generate([chat("alone")])
    assert isinstance(again, Response) and (again.prompt_tokens, again.completion_tokens) == (
        2 * tokens[0],
        2 * tokens[1],
    )
    # with no try left, the request's failure carries what its lines were billed (two lines of its custom id)
    fake.then({"status": "completed", "damage": damage(["twice"], [])})
    [failed] = engine(fake, vendor, batch_retries=0).generate([chat("alone")])
    assert isinstance(failed, EngineError) and failed.billed is not None
    assert (failed.billed.answers, failed.billed.prompt_tokens, failed.billed.completion_tokens) == (
        2,
        2 * tokens[0],
        2 * tokens[1],
    )


@pytest.mark.parametrize("vendor", VENDORS)
def test_result_lines_not_taken_are_said_in_one_warning_naming_the_batch(fake, vendor, caplog):
    fake.then({"status": "completed", "damage": damage(["ok", "garbled0", "twice"], [(0, "not json {")])})
    with caplog.at_level("WARNING", logger="ragbench._engines.batches.runner"):
        answers = engine(fake, vendor).generate([chat(q) for q in QUESTIONS[:3]])
    assert texts(answers) == echoed(vendor, QUESTIONS[:3])
    (said,) = [r.getMessage() for r in caplog.records if fake.created[0] in r.getMessage()]
    assert "2 of its 5 result lines unreadable (line 1: not JSON" in said and "\n" not in said
    assert "1 custom ids on more than one line: the requests no line answered are sent again" in said


ENDINGS: list[dict[str, Any]] = [
    {"status": "expired", "answered": 2},
    {"status": "completed", "fates": {0: 500, 3: 500}},
    {"status": "failed"},
]


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("ending", ENDINGS, ids=["expired", "vendor-500", "batch-failed"])
def test_requests_the_vendor_failed_in_every_try_are_sent_again_on_resume_and_answered_ones_are_not(
    fake: FakeBatchServer, vendor: str, ending: dict[str, Any], tmp_path: Any
) -> None:
    if vendor == "anthropic" and ending["status"] == "failed":
        pytest.skip("Anthropic's batches do not fail as a whole")
    fake.then(ending)
    first = engine(fake, vendor, tmp_path, batch_retries=0).generate([chat(q) for q in QUESTIONS])
    failed = [q for q, answer in zip(QUESTIONS, first) if isinstance(answer, EngineError)]
    assert failed and len(failed) < len(QUESTIONS) or ending["status"] == "failed"
    sent = len(fake.sent)
    again = engine(fake, vendor, tmp_path, batch_retries=0)
    assert texts(again.generate([chat(q) for q in QUESTIONS])) == echoed(vendor, QUESTIONS)
    assert [asked(line) for line in fake.sent[sent:]] == failed and len(fake.created) == 2
    stats = again.stats()
    assert stats is not None and (stats["batch_requests_resent"], stats["batch_requests_failed"]) == (len(failed), 0)


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_lost_creations_batch_with_damaged_results_is_still_adopted_and_only_the_unanswered_resent(
    fake, vendor, tmp_path
):
    """The creation's answer is lost; Anthropic's batch is told by its results, which lack one line and hold one
    unreadable: still ours (none but our custom ids), adopted, not paid twice."""
    fake.drop_creates = 1
    fake.then({"status": "completed", "damage": damage(["ok", "missing", "ok", "garbled0", "ok"], [])})
    made = engine(fake, vendor, tmp_path)
    assert texts(made.generate([chat(q) for q in QUESTIONS])) == echoed(vendor, QUESTIONS)
    assert len(fake.created) == 2 and [asked(line) for line in fake.sent[5:]] == [QUESTIONS[1], QUESTIONS[3]]
    stats = made.stats()
    assert stats is not None and (stats["batches_adopted"], stats["batch_requests_resent"]) == (1, 2)
