"""FlashRAG's pipelines and ragbench's systems with the same real model and the same BM25 make the same prompts,
generate the same token ids, search the same queries and give the same predictions.

tests/data/flashrag_real_model/expected.json is what record.py there recorded from FlashRAG's own zero-shot, naive,
Iter-RetGen, IRCoT, Self-Ask, SuRe and FLARE pipelines (commit 1ee5249, unchanged) with SmolLM2-135M-Instruct (the
embedded model's weights de-quantized to safetensors) through FlashRAG's HFCausalLMGenerator, greedy on CPU, and
FlashRAG's BM25 (bm25s 0.2.1) over tests/data/flashrag_parity/corpus.jsonl; the library versions are in the file
(transformers 5.24.0, torch 2.13.0+cpu). Here the matching systems run on `hf:embedded` with `--retriever
flashrag_bm25` over an index `ragbench index build` makes from the same corpus. The order of calls across examples is
the scheduler's, so prompts, token ids, searches and FLARE's judgements are compared as multisets, predictions per
example. Each model input is compared with the ids generated for it: FlashRAG's row of `model.generate`'s output up
to its first EOS (record.py), ragbench's `response.token_ids` in the trace; no recorded row goes on past a stop
string (its batch mates stopped at the same step or it ran alone), so they are compared whole.

Each method was recorded on as few questions as show what it does (`questions` in the recording): every call is a
generate over a prompt of up to some 2,000 tokens on CPU, and FlashRAG's HF generator makes them two prompts at a
time. Zero-shot, naive, Iter-RetGen and IRCoT on nq_1 and hotpot_3, a factual and a two-hop question: with one,
FlashRAG's batches would hold one prompt, and the left padding of the shorter prompt, which must not change a token,
would go unchecked. FlashRAG's IRCoT does not finish with this model: its second thought is empty (the model begins
it with a stop string, "." or a newline), and bm25s raises on the empty query, ending FlashRAG's run; the recording
holds the error and the calls made before it. Self-Ask (one prompt a call) on the same two, five calls of up to 100
tokens each: the model never writes a "Follow up: " line nor "So the final answer is: ", so only the question is
searched and both predictions are empty, yet every one of the ten prompts holds all the model's text before it,
token for token. Here Self-Ask runs on nq_1 alone (`RUN_ON`) for its first three rounds (`ROUNDS`: max_iter 3),
compared with the first three of its five recorded calls: its 100-token decodes were most of this file's time, the
second question's five calls are the same rounds over another question (one prompt a call in FlashRAG: no batch
padding for them to check; on the embedded model the prefix cache's parity across batch mates is
tests/engines/test_engine_hf.py's), and rounds four and five repeat rounds two and three (the same two stop strings in
turn, a stripped output appended, nothing searched). Three rounds hold both stop strings, the turn back to the
first, the hf generator's stripped output joined to `res` (the third prompt's "questionsneeded") and the loop
ending at max_iter; FlashRAG's prediction after three rounds is empty too (the fourth recorded prompt holds `res`
after them: no "So the final answer is: "). SuRe on one question, nq_1, the one of the six
where the model writes more than one candidate ("(a)", "(b)" ... six of them, each empty once parsed): the only one
that reaches the pairwise ranking (30 of its 43 calls); with one candidate no pair is ranked, with none only the
candidates are asked. FLARE (one prompt a call) on nq_1, whose first two sentences are unsure and searched for, and
hotpot_3, whose one sentence is sure: both ways of its judge, every judged sentence with its token probabilities
compared with what FlashRAG's judge read (`judges`); after its sentences the model writes nothing more, and the
remaining rounds judge an empty sentence.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import TEST_DATA, needs
from ragbench.testing import build_index, installed_registry
from support.flashrag_parity import CORPUS, QUESTIONS, chat_input, chatml
from support.helpers import run, samples

pytestmark = [pytest.mark.model, needs("transformers")]  # not imported while the tests are collected

RECORDED = json.loads((TEST_DATA / "flashrag_real_model" / "expected.json").read_text(encoding="utf-8"))
# FlashRAG's pipeline: ragbench's system and the system arguments that say FlashRAG's HF generator made its calls
SYSTEMS = {
    "zero_shot": ("closed_book", {}),
    "naive": ("vanilla", {}),
    "iter_retgen": ("iter_retgen", {}),
    "ircot": ("ircot", {"flashrag_generator": "hf"}),
    "self_ask": ("self_ask", {"flashrag_generator": "hf"}),
    "sure": ("sure", {}),
    "flare": ("flare", {}),
}
TASK = "nq_open_flashrag"
# methods run here on fewer of their recorded questions (the module's docstring says why): compared with the
# recorded calls, searches and predictions of those questions
RUN_ON = {"self_ask": ["nq_1"]}
# methods run here for fewer rounds (their max_iter) than recorded: compared with that many first recorded calls
ROUNDS = {"self_ask": 3}


def recording(method: str) -> dict[str, Any]:
    """What FlashRAG recorded for `method`, narrowed to the questions in RUN_ON and their first ROUNDS calls (one
    question's calls are recorded in order: FlashRAG runs it one example at a time): each recorded model input
    and search belongs to the one question whose text it holds (a Self-Ask prompt holds its question, a search is
    the question or a follow-up the prompts after it hold), kept where it was made in a kept round: a kept prompt
    or the one after the last kept holds it."""
    recorded = RECORDED["methods"][method]
    if method not in RUN_ON:
        return recorded
    texts = {
        row["id"]: row["question"]
        for row in map(json.loads, QUESTIONS.read_text(encoding="utf-8").splitlines())
        if row["id"] in recorded["questions"]
    }
    rows = [row for call in recorded["calls"] for row in zip(call["inputs"], call["generated_ids"])]

    def question_of(inputs: list[str]) -> str:
        """The one question whose text the recorded `inputs` hold."""
        [owner] = {id_ for id_, question in texts.items() for text in inputs if question in text}
        return owner

    asked = [(text, ids) for text, ids in rows if question_of([text]) in RUN_ON[method]]
    rounds = ROUNDS.get(method, len(asked))
    kept, shown = asked[:rounds], [text for text, _ in asked[: rounds + 1]]  # a round's search shows in the next
    return {
        **recorded,
        "questions": RUN_ON[method],
        "predictions": {id_: answer for id_, answer in recorded["predictions"].items() if id_ in RUN_ON[method]},
        "calls": [{"inputs": [text], "generated_ids": [ids]} for text, ids in kept],
        "searches": [
            query
            for query in recorded["searches"]
            if question_of([text for text, _ in rows if query in text]) in RUN_ON[method]
            and any(query in text for text in shown)
        ],
    }


@pytest.fixture(scope="module")
def flashrag_bm25_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("index") / "bm25"
    build_index(CORPUS, folder, "flashrag_bm25", {"language": "en"}, progress=False, registry=installed_registry())
    return folder


def recorded_questions(tmp_path: Path, recorded: dict[str, Any]) -> Path:
    """The questions a method was recorded on: all six, or for a multi-step method the few in its `questions`
    (each of its rounds is a generate call over a prompt of up to some 2,000 tokens on CPU)."""
    if "questions" not in recorded:
        return QUESTIONS
    subset = tmp_path / "questions.jsonl"
    subset.write_text(
        "".join(
            line + "\n"
            for line in QUESTIONS.read_text(encoding="utf-8").splitlines()
            if json.loads(line)["id"] in recorded["questions"]
        ),
        encoding="utf-8",
    )
    return subset


def model_input(request: dict[str, Any]) -> str:
    """The string FlashRAG's generator tokenised for a request: the prompt (a pipeline that renders one string
    for a chat model too), or the messages through the chat template (FLARE's kept text, a final assistant
    message, appended to it)."""
    if "prompt" in request:
        return request["prompt"]
    shown = chat_input(request["messages"])
    return shown if isinstance(shown, str) else chatml(shown)


def run_system(tmp_path: Path, index: Path, method: str) -> list[dict[str, Any]]:
    """ragbench's system for FlashRAG's `method` on the embedded model and `flashrag_bm25`: its sample lines."""
    system, system_args = SYSTEMS[method]
    if method in ROUNDS:
        system_args = {**system_args, "max_iter": ROUNDS[method]}
    run(
        tmp_path,
        name=method,
        tasks=[TASK],
        system=system,
        system_args=system_args,
        data={TASK: str(recorded_questions(tmp_path, recording(method)))},
        model="hf:embedded",
        model_args={"chat": True},
        retriever="flashrag_bm25",
        metrics=[],
        bootstrap_iters=10,
        retriever_args={"index": str(index), "corpus": str(CORPUS)},
    )
    return samples(tmp_path / method, TASK)


def calls(records: list[dict[str, Any]]) -> tuple[Counter[tuple[str, tuple[int, ...]]], Counter[str]]:
    """The model inputs with the token ids generated for each, and the search queries, of a run's traces (the
    scheduler orders them across examples)."""
    steps = [step for record in records for step in record["trace"]]
    return (
        Counter(
            (model_input(step["request"]), tuple(step["response"]["token_ids"]))
            for step in steps
            if step["kind"] == "llm"
        ),
        Counter(step["request"]["query"] for step in steps if step["kind"] == "retrieval"),
    )


def recorded_prompts(recorded: dict[str, Any]) -> Counter[tuple[str, tuple[int, ...]]]:
    """FlashRAG's model inputs, each with the token ids its row generated."""
    return Counter(
        (text, tuple(ids)) for call in recorded["calls"] for text, ids in zip(call["inputs"], call["generated_ids"])
    )


COMPLETED = sorted(method for method in SYSTEMS if "error" not in RECORDED["methods"][method])
RAISED = sorted(method for method in SYSTEMS if "error" in RECORDED["methods"][method])


@pytest.mark.parametrize("method", COMPLETED)
def test_the_system_on_the_embedded_model_prompts_searches_and_answers_as_flashrags_pipeline(
    tmp_path, flashrag_bm25_index, method
):
    recorded = recording(method)
    records = run_system(tmp_path, flashrag_bm25_index, method)
    assert {record["id"]: record["prediction"]["answer"] for record in records} == recorded["predictions"]
    assert calls(records) == (recorded_prompts(recorded), Counter(recorded["searches"]))
    if "judges" in recorded:
        assert_judged_as_flashrag(records, recorded["judges"])


def assert_judged_as_flashrag(records: list[dict[str, Any]], recorded: list[dict[str, Any]]) -> None:
    """FLARE: every round's first sentence, whether it was confident, the query it made, and the probabilities of
    its tokens that the judgement read (FlashRAG: softmax of the generation's scores; ragbench: the exp of the hf
    engine's log-probabilities, equal up to float rounding, which other rows of a batch move by up to ~1e-4)."""
    judged = [
        step["response"]
        for record in records
        for step in record["trace"]
        if step["kind"] == "custom" and step["name"] == "judge"
    ]
    assert Counter((j["sentence"], j["confident"], j["query"]) for j in judged) == Counter(
        (j["sentence"], j["confident"], j["query"]) for j in recorded
    )
    for mine in judged:
        theirs = [j["scores"] for j in recorded if (j["sentence"], j["query"]) == (mine["sentence"], mine["query"])]
        assert any(mine["probabilities"] == pytest.approx(scores, abs=1e-3) for scores in theirs), mine


@pytest.mark.parametrize("method", RAISED)
def test_where_flashrags_bm25_raised_on_a_wordless_query_the_system_counts_a_retrieval_failure_naming_it(
    tmp_path, flashrag_bm25_index, method
):
    """The model's thought was empty (it began with a stop string), FlashRAG searched it and bm25s raised,
    ending the whole run; here the same calls come before it and each example that searched it fails alone,
    counted, its error naming the query (the departure docs/systems.md names for `flashrag_bm25`)."""
    recorded = RECORDED["methods"][method]
    assert recorded["error"].startswith("ValueError: The query_tokens must be a list of list of tokens")
    records = run_system(tmp_path, flashrag_bm25_index, method)
    assert calls(records) == (
        recorded_prompts(recorded),
        Counter(recorded["searches"]) + Counter(recorded["failed_searches"]),
    )
    failed = Counter(
        step["request"]["query"]
        for record in records
        for step in record["trace"]
        if step["kind"] == "retrieval" and step["error"]
    )
    assert failed == Counter(recorded["failed_searches"])
    assert sorted(record["error"] for record in records if record["error"]) == sorted(
        f"RetrievalError: retriever flashrag_bm25: query {json.dumps(query)} has no word once lower-cased and "
        "stopwords dropped; FlashRAG's BM25 raises on it"
        for query in recorded["failed_searches"]
    )
