"""Shared pieces of the CRAG tests: parity fixtures, a judge answering from them, a metric's context, small records."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from conftest import SHARED, TEST_DATA, shared_reference, write_jsonl
from ragbench.api import Context, EngineError, Example
from ragbench.tasks.crag.synthetic import standin_tokenizer
from ragbench.tasks.crag.task import CragTask1
from ragbench.testing import ScriptedLLM, make_context
from support.helpers import run

FAILURES = {"__connection_error__": "connection error on every attempt", "__other_error__": "non-retryable error"}


def parity_fixture(protocol: str) -> dict:
    return json.loads((TEST_DATA / "parity" / f"crag_{protocol}.json").read_text(encoding="utf-8"))


def llama2_tokenizer_dir() -> str:
    """The real Llama-2 tokenizer (../shared/reference, which CI has): the parity tests need exactly
    where its 75-token cut falls. It is not shipped with ragbench (Llama 2 licence)."""
    return str(shared_reference() / "crag" / "llama2_tokenizer")


def tokenizer_dir() -> str:
    """The Llama-2 tokenizer when ../shared is there, else a stand-in written for the tests (one token
    per byte after a BOS, saved as tokenizer.json), for tests whose outcome does not depend on where
    the 75-token cut falls: a fresh clone runs the whole CRAG suite but the parity checks. The stand-in
    carries Llama-2's vocabulary size and the ids the pre-flight recognises it by (fillers pad it)."""
    if (SHARED / "reference" / "crag" / "llama2_tokenizer" / "tokenizer.json").is_file():
        return llama2_tokenizer_dir()
    return str(standin_tokenizer(Path(tempfile.gettempdir()) / "ragbench-test-llama2-standin-tokenizer"))


def replay_lines(fixture: dict) -> list[dict]:
    """The upstream judge exchanges as `replay` engine records (failed calls replay as errors)."""
    system = fixture["judge_calls"]["system"]
    out = []
    for call in fixture["judge_calls"]["calls"]:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": call["user"]}]
        reply = call["reply"]
        out.append(
            {"messages": messages, "error": FAILURES[reply]}
            if reply in FAILURES
            else {"messages": messages, "response": reply}
        )
    return out


def fixture_judge(fixture: dict) -> ScriptedLLM:
    """A judge answering from a parity fixture (its `requests`: what it was asked); a call the fixture
    holds as failed fails as a model call does."""
    replies = {call["user"]: call["reply"] for call in fixture["judge_calls"]["calls"]}
    system = fixture["judge_calls"]["system"]

    def reply(request) -> str:
        (_, asked_system), (_, user) = request.messages
        assert asked_system == system
        if replies[user] in FAILURES:
            raise EngineError(FAILURES[replies[user]])
        return replies[user]

    return ScriptedLLM(reply)


def example_of(row: dict) -> Example:
    return Example(id=row["id"], question=row["query"], gold={"answer": row["answer"], "alt_ans": row["alt_ans"]})


def metric_ctx(*judges: ScriptedLLM) -> Context:
    """A CRAG metric's context: Task 1 reading the real Llama-2 tokenizer, and the judges."""
    return make_context(CragTask1(tokenizer=llama2_tokenizer_dir()), judges=judges)


def crag_record(index: int, **overrides) -> dict:
    """A Task 1&2 record in the released (v4/v5) schema."""
    record = {
        "interaction_id": f"id-{index}",
        "query_time": "03/01/2024, 10:00:00 PT",
        "domain": "movie",
        "question_type": "simple",
        "static_or_dynamic": "static",
        "query": f"question {index}?",
        "answer": f"answer {index}",
        "alt_ans": [],
        "split": index % 2,
        "search_results": [
            {
                "page_name": f"Page {index}",
                "page_url": f"https://example.org/{index}",
                "page_snippet": f"snippet <strong>{index}</strong>",
                "page_result": f"<html><body><p>The answer is answer {index}. Other text.</p></body></html>",
                "page_last_modified": "",
            }
        ],
    }
    record.update(overrides)
    return record


class KeywordEmbedder:
    """A fast stand-in for MiniLM: bag of hashed lower-cased words, unit length."""

    def encode(self, texts):
        import zlib

        import numpy as np

        vectors = np.zeros((len(texts), 64))
        for row, text in enumerate(texts):
            for word in text.lower().replace("?", " ").replace(".", " ").split():
                vectors[row, zlib.crc32(word.encode()) % 64] += 1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)


def crag_t2_run(tmp_path: Path, queries: list[str], entity_reply: str, **task_args) -> dict:
    """A vanilla run of crag_t2 on records of `queries` (ids 1, 2 ...) whose scripted model and judge reply
    `entity_reply` to the entity extraction and "tallahassee" to every other prompt; `task_args` add to the
    task's options (a stand-in tokenizer and embedder, pages read in threads, every split)."""
    data = write_jsonl(tmp_path / "d.jsonl", [crag_record(i, query=query) for i, query in enumerate(queries, 1)])
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"pattern": "Query Time:", "response": entity_reply}, {"response": "tallahassee"}]))
    return run(
        tmp_path,
        tasks=["crag_t2"],
        system="vanilla",
        model=f"scripted:{rules}",
        judges=[f"scripted:{rules}"],
        data={"crag_t2": str(data)},
        task_args={
            "tokenizer": tokenizer_dir(),
            "embedder": "support.crag_helpers:KeywordEmbedder",
            "page_executor": "thread",
            "split": "all",
            **task_args,
        },
    )
