"""Small RAG applications the apps tests run as a user's own (`--system python --system-arg
callable=support.rag_apps:NAME`, tests/ being on the Python path): a word-overlap search over a few passages, traced
as OpenInference's RETRIEVER span, and an answer from a model, either a chat model served by a fake OpenAI server
(`FakeOpenAI`, the `openai` SDK instrumented by openinference-instrumentation-openai) or the search's top passage.

Each misbehaves in one way where its name says so (raises, answers in the wrong shape, changes what it is given,
blocks the event loop, leaves a thread that ends a span outside its example's trace)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry import trace

CORPUS = [
    {"id": "p1", "title": "Varn", "text": "Varn is an island whose capital is Olm."},
    {"id": "p2", "title": "Olm", "text": "Olm was founded by Ansgar Pell in 1802."},
    {"id": "p3", "title": "Ansgar Pell", "text": "Ansgar Pell was born in Trask."},
]
OPENAI_URL = "RAG_APPS_OPENAI_URL"  # where `answer_openai` finds the fake OpenAI server
tracer = trace.get_tracer("rag_apps")


def words(text: str) -> set[str]:
    return {word.strip("?.,").lower() for word in text.split()}


def search(query: str, k: int = 2) -> list[dict[str, Any]]:
    """The k passages sharing most words with `query`, traced as an OpenInference RETRIEVER span."""
    with tracer.start_as_current_span("search") as span:
        span.set_attribute("openinference.span.kind", "RETRIEVER")
        span.set_attribute("input.value", query)
        ranked = sorted(CORPUS, key=lambda p: (-len(words(query) & words(p["text"])), p["id"]))[:k]
        found = [{**passage, "score": float(len(words(query) & words(passage["text"])))} for passage in ranked]
        for n, passage in enumerate(found):
            span.set_attribute(f"retrieval.documents.{n}.document.id", passage["id"])
            span.set_attribute(f"retrieval.documents.{n}.document.content", passage["text"])
            span.set_attribute(f"retrieval.documents.{n}.document.score", passage["score"])
        return found


def answer_sync(question: str) -> dict[str, Any]:
    """The top passage's first word as the answer, run in a thread of its own (a sync function)."""
    with tracer.start_as_current_span("rag") as span:
        span.set_attribute("openinference.span.kind", "CHAIN")
        span.set_attribute("input.value", question)
        span.set_attribute("app.thread", threading.current_thread().name)
        passages = search(question)
        return {"answer": passages[0]["text"].split()[0], "passages": passages}


async def answer_async(question: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    """`answer_sync`'s answer from async code that gives the loop back between its steps (concurrent examples
    interleave: their spans must not mix)."""
    with tracer.start_as_current_span("rag") as span:
        span.set_attribute("openinference.span.kind", "CHAIN")
        span.set_attribute("input.value", question)
        await asyncio.sleep(0)
        passages = search(question)
        await asyncio.sleep(0.01)
        with tracer.start_as_current_span("generate") as llm:
            llm.set_attribute("openinference.span.kind", "LLM")
            llm.set_attribute("llm.model_name", "toy-model")
            llm.set_attribute("llm.token_count.prompt", len(question))
            llm.set_attribute("llm.token_count.completion", 1)
            llm.set_attribute("llm.input_messages.0.message.role", "user")
            llm.set_attribute("llm.input_messages.0.message.content", question)
            await asyncio.sleep(0)
        return {"answer": passages[0]["text"].split()[0], "passages": passages}


def answer_openai(question: str) -> dict[str, Any]:
    """The answer of a chat model (the fake OpenAI server at $RAG_APPS_OPENAI_URL) shown the search's passages."""
    import openai

    passages = search(question)
    client = openai.OpenAI(base_url=os.environ[OPENAI_URL], api_key="sk-test", max_retries=0)
    context = "\n".join(p["text"] for p in passages)
    reply = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": f"{context}\n\nQuestion: {question}"}]
    )
    return {"answer": reply.choices[0].message.content or "", "passages": passages}


def raises(question: str) -> str:
    with tracer.start_as_current_span("rag"):
        search(question)
        raise ValueError("the index is not loaded")


def wrong_shape(question: str) -> list[str]:
    return ["Olm"]


def mutates(question: str, history: list[Any], meta: dict[str, Any], extras: dict[str, Any]) -> str:
    """Changes everything it is given (its copies)."""
    history.append({"role": "assistant", "content": "changed"})
    meta.clear()
    extras["changed"] = True
    return "Olm"


async def blocks_loop(question: str) -> str:
    time.sleep(0.3)  # a blocking call inside async code: every other example waits
    return "Olm"


async def blocks_in_a_task(question: str) -> str:
    """Makes its blocking call in a task it starts, as a framework runs a user's async code (LangChain's ainvoke)."""

    async def work() -> str:
        time.sleep(0.3)
        return "Olm"

    (answer,) = await asyncio.gather(work())
    return answer


def leaves_a_thread(question: str) -> str:
    """Ends a span in a thread it starts without the caller's context: a trace of its own, joined to no example."""
    worker = threading.Thread(target=lambda: tracer.start_span("orphan").end())
    worker.start()
    worker.join()
    return "Olm"


class _FakeOpenAI(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = request["messages"][-1]["content"]
        answer = "Olm" if "capital" in prompt else "Trask"
        body = json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": "gpt-4o-mini-2024-07-18",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 1, "total_tokens": 0},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def fake_openai() -> Iterator[str]:
    """A fake OpenAI chat-completions server on 127.0.0.1; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeOpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


QUESTIONS = [
    ("q1", "What is the capital of Varn?", "Olm"),
    ("q2", "Where was Ansgar Pell born?", "Trask"),
    ("q3", "Who founded Olm?", "Ansgar Pell"),
    ("q4", "Which island has Olm as its capital?", "Varn"),
]


def varn_task(folder: Any, questions: list[tuple[str, str, str]] | None = None) -> str:
    """A YAML task of questions about Varn (FlashRAG's record format, EM and F1), written in `folder`; its path."""
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "varn_qa.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": qid, "question": q, "golden_answers": [a]}) + "\n" for qid, q, a in questions or QUESTIONS
        )
    )
    task = folder / "varn_qa.yaml"
    task.write_text(
        "task: varn_qa\ndescription: questions about Varn\ndata:\n  path: varn_qa.jsonl\n  format: flashrag\n"
        "metrics: [em, f1]\n"
    )
    return str(task)


CALLS_FILE = "RAG_APPS_CALLS"  # where `counted` appends the id of each question it is asked
JUDGE_FLAG = "RAG_APPS_JUDGE_FLAG"  # `judge_when_flagged` answers once this file exists


def counted(question: str, id: str) -> dict[str, Any]:
    """`answer_sync`, each call's example id appended to the file $RAG_APPS_CALLS names (how often it was called)."""
    with open(os.environ[CALLS_FILE], "a") as calls:
        calls.write(id + "\n")
    return answer_sync(question)


def judge_when_flagged(request: Any) -> str:
    """A scripted judge (`--judge scripted:support.rag_apps:judge_when_flagged`) that answers "correct" once the file
    $RAG_APPS_JUDGE_FLAG exists: until then the examples wait on their metric, their samples unwritten."""
    while not os.path.exists(os.environ[JUDGE_FLAG]):
        time.sleep(0.02)
    return "correct"
