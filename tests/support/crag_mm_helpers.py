"""Shared pieces of the CRAG-MM tests: the parity fixture, a judge answering from it, a metric's context, and small
datasets in the hub's v0.1.2 layout with generated PNG images."""

from __future__ import annotations

import asyncio
import io
import json
import tempfile
from pathlib import Path

from conftest import TEST_DATA
from ragbench.api import EngineError, Example, Message, Prediction
from ragbench.tasks.crag_mm.synthetic import standin_llama32_tokenizer
from ragbench.tasks.crag_mm.task import CragMMSingle
from ragbench.testing import ScriptedLLM, make_context

FAILED = "__error__"


def parity_fixture() -> dict:
    return json.loads((TEST_DATA / "parity" / "crag_mm.json").read_text(encoding="utf-8"))


def turn_dicts(messages: list[Message]) -> list[dict]:
    """Typed turns as the OpenAI dicts the parity fixtures are compared in: a turn's text as its content, a turn of
    parts as a list of `{"type": "text", "text": ...}` and `{"type": "image", "image": Image}` parts."""
    return [
        {
            "role": m.role,
            "content": [
                {"type": "text", "text": p} if isinstance(p, str) else {"type": "image", "image": p} for p in m.parts
            ]
            if m.parts
            else m.content,
        }
        for m in messages
    ]


def tokenizer_dir() -> str:
    """The Llama-3.2 stand-in (tasks/crag_mm/synthetic.py) the parity fixture's truncation was recorded with."""
    return str(standin_llama32_tokenizer(Path(tempfile.gettempdir()) / "ragbench-test-llama32-standin-tokenizer"))


def fixture_judge(rows: list[dict]) -> ScriptedLLM:
    """A judge answering each row's prediction with the row's `judge` reply; '__error__' fails as a model call."""
    replies = {row["agent_response"]: row["judge"] for row in rows if row["judge"] is not None}

    def reply(request) -> str:
        user = request.messages[1][1]
        prediction = user.split("\nPrediction: ", 1)[1].rsplit("\nGive your output below:\n", 1)[0]
        if replies[prediction] == FAILED:
            raise EngineError("connection refused")
        return replies[prediction]

    return ScriptedLLM(reply)


def example_of(row: dict) -> Example:
    return Example(
        id=f"{row['session_id']}-{row['turn_idx']}",
        question=row["query"],
        gold={"answers": [row["ground_truth"]]},
        meta={
            "image_source": "ego" if row["is_ego"] else "normal",
            "session_id": row["session_id"],
            "turn": row["turn_idx"],
        },
    )


def metric_ctx(*judges: ScriptedLLM):
    return make_context(CragMMSingle(tokenizer=tokenizer_dir()), judges=judges)


def score_rows(metric, rows: list[dict]):
    """Each row scored in order by `metric` with the fixture judge: (scores, judge, counts)."""
    judge = fixture_judge(rows)

    async def all_rows():
        out = []
        for row in rows:
            ctx = metric_ctx(judge)
            scores = await metric.score(
                example_of(row), Prediction(example_of(row).id, answer=row["agent_response"]), ctx
            )
            out.append((scores, dict(ctx.counts)))
        return out

    return asyncio.run(all_rows()), judge


def png(color: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def loader_cases() -> dict:
    return json.loads((TEST_DATA / "parity" / "crag_mm_loader_cases.json").read_text(encoding="utf-8"))


def case_rows(rows: list[dict]) -> list[dict]:
    """The cases' rows with their generated PNGs."""
    return [
        {
            **r,
            "image": None
            if r["image"] is None
            else {"bytes": png(tuple(r["image"][0]), tuple(r["image"][1])), "path": None},
        }
        for r in rows
    ]


def fill_image_cache(cache: Path, cached: dict) -> Path:
    """Upstream's download cache holding the cases' web images (md5 of the URL + its extension)."""
    from ragbench.tasks.crag_mm.records import cached_image_path

    cache.mkdir(parents=True, exist_ok=True)
    for url, (color, size) in cached.items():
        cached_image_path(url, cache).write_bytes(png(tuple(color), tuple(size)))
    return cache


# What the reproduction test's scripted model answers on seeing each picture (tests/tasks/crag_mm/
# test_crag_mm_reproduction.py): by the picture's colour, not the question, so an answer says the image reached it.
ANSWER_BY_COLOUR = {(200, 0, 0): "A mango.", (0, 200, 0): "It is Paris, France.", (0, 0, 200): "A Toyota."}


def answer_by_picture(request) -> str:
    """`scripted:support.crag_mm_helpers:answer_by_picture`: the answer for the colour of the one picture sent, "I
    don't know" for a picture of another colour; a request without exactly one picture fails the run."""
    from PIL import Image as PILImage

    (image,) = request.sent_images
    colour = PILImage.open(io.BytesIO(image.data)).convert("RGB").getpixel((0, 0))
    return ANSWER_BY_COLOUR.get(colour, "I don't know")


def search_contexts() -> dict[str, str]:
    """get_rag_context's image and web blocks (recorded from the released code over tests/data/crag_mm_search's
    indexes, image search of the picture then web search of the question), by the question asked."""
    layout = json.loads((TEST_DATA / "parity" / "cragmm_search.json").read_text(encoding="utf-8"))["layouts"]["mixed"]
    return {
        case["query"]: case["context"] for case in layout["contexts"] if case["image_search"] and case["web_search"]
    }


def answer_by_search(request) -> str:
    """`scripted:support.crag_mm_helpers:answer_by_search`: "Searched as upstream." when the request holds
    get_rag_context's image and web blocks for its question (its last message), else "I don't know"."""
    from ragbench._values.chat_turns import turn_text

    context = search_contexts().get(turn_text(request.messages[-1]), "\0")
    return "Searched as upstream." if any(context in turn_text(m) for m in request.messages) else "I don't know"
