"""The Example page shows any trace step a record holds: the viewer reads a step's request and reply as the open
JSON they are (a chat turn's content in parts, a reply's fields of another shape) and shows each as text, never
failing the page (nor the static export) on a value of a shape it did not expect."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api import Step
from ragbench.testing import installed_registry
from support.viewer_pages import viewer_page

PARTS = [{"type": "text", "text": "Who is person 0?"}, {"type": "image_url", "image_url": {"url": "data:,"}}]

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2),
    max_leaves=4,
)
FIELDS = ("role", "content", "tool_call_id", "tool_calls", "function", "name", "arguments", "id", "server_label")
OBJECTS = st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=3)  # a chat turn, a tool, a tool call ...
PARTS_OF = JSON | st.lists(OBJECTS | st.lists(OBJECTS, max_size=2), max_size=2)
REQUESTS = st.fixed_dictionaries(
    {}, optional={key: PARTS_OF for key in ("messages", "prompt", "tools", "tool_choice", "sampling", "other")}
)
RESPONSES = st.none() | st.fixed_dictionaries(
    {}, optional={key: PARTS_OF for key in ("texts", "tool_calls", "logprobs", "other")}
)


def write_run(folder: Path, trace: list[Step], judge_trace: list[Step]) -> Path:
    (folder / "samples").mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"config": {"tasks": ["t"]}}))
    line = {  # a line of samples/TASK.jsonl as docs/outputs.md lays it out
        "schema_version": 2,
        "index": 0,
        "id": "a",
        "question": "q?",
        "answer": "x",
        "trace": [step.to_dict() for step in trace],
        "judge_trace": [step.to_dict() for step in judge_trace],
    }
    (folder / "samples" / "t.jsonl").write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    return folder


REGISTRY = installed_registry()


def example(folder: Path) -> dict:
    """The Example page of the run's one sample, as `ragbench view RUN --export DIR` writes it."""
    return viewer_page([folder], "example/{rid}/t/0", REGISTRY)


def test_a_chat_turn_with_content_in_parts_is_shown_as_its_json(tmp_path):
    request = {"messages": [{"role": "system", "content": "Answer."}, {"role": "user", "content": PARTS}]}
    step = Step(kind="llm", name="answer", request=request, response={"texts": ["person 0"]})
    judged = Step(kind="llm", name="judge", request=request, response={"texts": ["yes"]})
    page = example(write_run(tmp_path / "run", [step], [judged]))
    shown = "[system]\nAnswer.\n\n[user]\n" + json.dumps(PARTS, ensure_ascii=False, indent=1)
    assert page["steps"][0]["prompt"] == shown and page["steps"][0]["reply"] == "person 0"
    assert page["reasons"] == [{"source": "judge call judge", "prompt": shown, "reply": "yes"}]


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["llm", "retrieval", "custom"]), REQUESTS, RESPONSES), min_size=1, max_size=3
    )
)
def test_any_recorded_step_is_shown_as_text(steps):
    trace = [
        Step(kind=kind, name=f"s{k}", request=request, response=response)
        for k, (kind, request, response) in enumerate(steps)
    ]
    with tempfile.TemporaryDirectory() as folder:
        page = example(write_run(Path(folder) / "run", trace, trace))
    assert len(page["steps"]) == len(trace)
    for view, (kind, request, _) in zip(page["steps"], steps):
        assert all(isinstance(view[key], str) for key in ("prompt", "reply", "details"))
        if kind == "llm" and isinstance(request.get("prompt"), str) and not isinstance(request.get("messages"), list):
            assert view["prompt"] == request["prompt"]  # a prompt as text is shown as it is
    assert all(isinstance(reason[key], str) for reason in page["reasons"] for key in ("prompt", "reply"))
