"""The FlashRAG methods in the viewer: the example page of a parity run (tests/support/flashrag_parity.py: FlashRAG's
recorded answers and searches) shows the method's stages (its iterations), the query of each search in its
stage, what each iteration kept (the system's own step) and the final answer, FlashRAG's prediction, in the
last stage. The two-hop question hotpot_1 is shown."""

import json

import pytest

from ragbench.plugins.corag.prompts import MULTI_HOP_TASK_DESC
from support.flashrag_parity import expected_calls, expected_predictions, recording_tokenizer, run_parity
from support.helpers import viewed

EXAMPLE = "hotpot_1"
FAKE_MODEL = "scripted:support.flashrag_parity:fake_model"


def iterations(count):
    return [f"iteration {k}" for k in range(1, count + 1)]


# method: form, system args, model, the page's stages, the system's step that says what an iteration kept
CASES = {
    "ircot": ("plain", {}, FAKE_MODEL, ["retrieval", *iterations(3)], "next"),
    "self_ask": ("plain", {}, FAKE_MODEL, ["retrieval", *iterations(4)], "parse"),
    "flare": (
        "plain",
        {"tokenizer": "embedded"},
        "scripted:support.flashrag_parity:fake_flare_model",
        iterations(5),
        "keep",
    ),
    "search_r1": ("plain", {}, FAKE_MODEL, iterations(3), "read output"),
    "corag": ("chat", {"task_desc": MULTI_HOP_TASK_DESC}, FAKE_MODEL, [*iterations(4), "final answer"], "sub-query"),
    "rearag": ("chat", {}, FAKE_MODEL, iterations(3), "read action"),
    "sure": ("plain", {}, FAKE_MODEL, ["retrieval", "candidates", "summaries", "validation", "ranking"], "choice"),
}


def example_page(tmp_path, method):
    form, system_args, model, _, _ = CASES[method]
    run_parity(tmp_path, method, form, method, system_args=system_args, model=model)
    pages = viewed(tmp_path, out=tmp_path / "site")
    examples = [page for key, page in pages.items() if key.startswith("example/") and "/nq_open_flashrag/" in key]
    return next(page for page in examples if page["id"] == EXAMPLE)


@pytest.mark.parametrize("method", list(CASES))
def test_the_example_page_shows_the_stages_searches_and_what_was_kept(tmp_path, method):
    if method == "flare" and recording_tokenizer() is None:
        pytest.skip("needs the embedded model's tokenizer on disk (ragbench's smollm2-safetensors)")
    form, _, _, stages, kept = CASES[method]
    page = example_page(tmp_path, method)
    steps, groups = page["steps"], [item for item in page["outline"] if "group" in item]
    assert [group["group"] for group in groups] == stages
    searches = [step for step in steps if step["kind"] == "retrieval"]
    assert [json.loads(step["prompt"])["query"] for step in searches] == [
        call[1] for call in expected_calls(method, form)[EXAMPLE] if call[0] == "retrieve"
    ]
    assert all(step["group"] for step in searches)  # each search in the stage that made it
    assert kept in {step["name"] for step in steps if step["kind"] == "custom"}
    for group in groups:
        if group["group"].startswith("iteration "):
            assert kept in {steps[item["step"]]["name"] for item in group["items"]}, group["group"]
    answer = expected_predictions(method, form)[EXAMPLE]
    assert page["answer"] == answer
    assert any(answer.strip() in steps[item["step"]]["reply"] for item in groups[-1]["items"])
