"""RGB's LLM-judged rates against reject_evalue.py and fact_evalue.py, run unmodified with a scripted judge
(tests/data/parity/rgb.json, `judge`): the prompts they send and the rates they write."""

from __future__ import annotations

import asyncio
import json

import pytest

from conftest import TEST_DATA
from ragbench.api import Prediction
from ragbench.tasks.rgb.judge import RgbFactJudge, RgbRejectionJudge
from ragbench.testing import ScriptedLLM, installed_registry, make_context

PARITY = json.loads((TEST_DATA / "parity" / "rgb.json").read_text(encoding="utf-8"))
JUDGE = PARITY["judge"]


def judge() -> ScriptedLLM:
    """Replies as the scripted judge of the upstream runs: by the output the prompt ends with."""

    def reply(request) -> str:
        [(role, content)] = request.messages
        assert role == "user"
        return next(text for output, text in JUDGE["replies"].items() if content.endswith(f"Answer: {output}\n    "))

    return ScriptedLLM(reply)


def judged(case: dict) -> tuple[ScriptedLLM, list[dict]]:
    dataset = case["dataset"]
    task = installed_registry().load("tasks", f"rgb_{dataset}")(
        TEST_DATA / "rgb" / f"{dataset}.json", noise_rate=case["noise_rate"]
    )
    metric = (RgbFactJudge if "fact" in dataset else RgbRejectionJudge)(strip_spaces=dataset.startswith("zh"))
    llm = judge()
    ctx = make_context(task, judges=[llm])

    async def all_examples():
        return [
            await metric.score(e, Prediction(e.id, answer=PARITY["outputs"][e.question]), ctx) for e in task.examples()
        ]

    return llm, asyncio.run(all_examples())


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values)


@pytest.mark.parametrize("case", JUDGE["cases"], ids=lambda c: f"{c['script']}-{c['dataset']}")
def test_the_judge_is_asked_exactly_what_the_script_asks(case):
    llm, _ = judged(case)
    assert [r.messages[0][1] for r in llm.requests] == [r["messages"][0]["content"] for r in case["requests"]]
    assert {r["model"] for r in case["requests"]} == {"gpt-3.5-turbo"}  # no temperature sent: the API's 1.0
    assert all(r.sampling.temperature == 1.0 for r in llm.requests)


@pytest.mark.parametrize("case", JUDGE["cases"], ids=lambda c: f"{c['script']}-{c['dataset']}")
def test_judged_rates_equal_the_scripts(case):
    _, scores = judged(case)
    if case["script"] == "reject_evalue.py":
        assert mean([s["rejection_judged"] for s in scores]) == pytest.approx(case["scores"]["reject_rate"])
    else:
        assert mean([s["error_detection_judged"] for s in scores]) == pytest.approx(case["scores"]["reject_rate"])
        assert mean([s["error_correction_judged"] for s in scores]) == pytest.approx(case["scores"]["correct_rate"])


def test_without_a_judge_the_metric_fails_naming_the_option():
    task = installed_registry().load("tasks", "rgb_en")(TEST_DATA / "rgb" / "en.json")
    example = next(iter(task.examples()))
    with pytest.raises(ValueError, match="--judge"):
        asyncio.run(RgbRejectionJudge().score(example, Prediction(example.id, answer="x"), make_context(task)))
