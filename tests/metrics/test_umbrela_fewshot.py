"""The `umbrela` metric's few-shot prompts against castorini's umbrela 0.0.7 run unmodified
(tests/data/umbrela/umbrela_fewshot.json, recorded by record_umbrela_fewshot.py there): with the same qrels, topics
and passages and umbrela's draw after `random.seed(seed)`, the same examples text, the same chats in the same order
with the same sampling and the same grades and values per query; bing's few-shot prompt with its own examples."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_umbrela import answer, example_of, expected_values

from conftest import TEST_DATA
from ragbench.api import ConfigError
from ragbench.metrics.umbrela.examples import drawn
from ragbench.metrics.umbrela.metric import Umbrela
from ragbench.testing import ScriptedLLM, make_context

FIXTURE = json.loads((TEST_DATA / "umbrela" / "umbrela_fewshot.json").read_text(encoding="utf-8"))
RUNS = {f"{run['name']}-{run['qid']}": run for run in FIXTURE["runs"]}


@pytest.fixture
def sources(tmp_path: Path) -> dict[str, str]:
    """The recorder's qrels, its topics as `id<TAB>text` and its passages as pyserini's JSONL."""
    qrels, topics, corpus = tmp_path / "qrels.txt", tmp_path / "topics.tsv", tmp_path / "corpus.jsonl"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in FIXTURE["qrels"]), encoding="utf-8")
    topics.write_text("".join(f"{q}\t{t}\n" for q, t in FIXTURE["topics"].items()), encoding="utf-8")
    lines = (json.dumps({"id": d, "contents": t}) + "\n" for d, t in FIXTURE["passages"].items())
    corpus.write_text("".join(lines), encoding="utf-8")
    return {"few_shot_qrels": str(qrels), "few_shot_topics": str(topics), "few_shot_corpus": str(corpus)}


def metric_of(run: dict, sources: dict[str, str]) -> Umbrela:
    drawn_from = sources if run["prompt_type"] == "basic" else {}
    return Umbrela(run["prompt_type"], few_shot_count=run["few_shot_count"], few_shot_seed=run["seed"], **drawn_from)


@pytest.mark.parametrize("name", RUNS)
def test_few_shot_prompts_are_umbrelas_call_for_call(name, sources):
    run = RUNS[name]
    metric = metric_of(run, sources)
    if run["prompt_type"] == "basic":
        assert metric.examples == run["prompt_examples"]
    judge = ScriptedLLM(answer)
    judge.engine.model = "gpt-4o-mini"
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[judge])
    ctx.count = lambda event: counted.update([event])
    example, prediction = example_of(run["qid"])
    scores = asyncio.run(metric.score(example, prediction, ctx))
    bodies = [call["body"] for call in run["calls"]]
    assert [r.message_dicts() for r in judge.requests] == [body["messages"] for body in bodies]
    assert all(r.sampling.temperature == 0.0 and r.sampling.max_tokens == 100 for r in judge.requests)
    assert scores == expected_values(run)
    assert counted["umbrela_invalid"] == sum(not j["result_status"] for j in run["judgments"])


def test_too_few_pairs_of_a_grade_is_refused_before_the_run_as_umbrela_asserts(sources):
    assert FIXTURE["too_many"]["assertion"] == "Count of judgments available for category 0 is lesser than 7."
    with pytest.raises(ConfigError, match="few_shot_count=7 but the qrels judge 6 pair"):
        Umbrela("basic", few_shot_count=7, **sources)


def test_few_shot_sources_go_with_the_basic_few_shot_prompt_only(sources, tmp_path):
    with pytest.raises(ConfigError, match="go with few_shot_count > 0 and prompt_type=basic"):
        Umbrela("bing", few_shot_count=2, **sources)
    with pytest.raises(ConfigError, match="go with few_shot_count > 0 and prompt_type=basic"):
        Umbrela("basic", few_shot_count=1, few_shot_qrels=sources["few_shot_qrels"])
    with pytest.raises(ConfigError, match="few_shot_count must be 0 or more"):
        Umbrela(few_shot_count=-1)
    (tmp_path / "topics.tsv").write_text("1030303 no tab\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="topics.tsv:1: expected topic_id<TAB>text"):
        Umbrela("basic", few_shot_count=1, **sources)
    assert Umbrela().config() == {"name": "umbrela", "prompt_type": "bing", "k": None, "max_tokens": 100}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("uvwxyz"), st.integers(0, 3)), min_size=1, max_size=30),
    st.integers(1, 3),
    st.integers(0, 2**32),
)
def test_the_draw_is_umbrelas_after_random_seed(judged, count, seed):
    """umbrela's get_catwise_data after random.seed(seed): per grade 0-3 the pairs in qrels order, one sample each
    from the global generator (a pair judged twice keeps its first place and its last grade)."""
    qrels: dict[str, dict[str, int]] = {}
    for topic, docid, grade in judged:
        qrels.setdefault(topic, {})[docid] = grade
    random.seed(seed)
    upstream = []
    for grade in range(4):
        pairs = [(t, d) for t in qrels for d in qrels[t] if qrels[t][d] == grade]
        if len(pairs) < count:
            with pytest.raises(ConfigError):
                drawn(qrels, count, seed)
            return
        upstream += [(t, d, grade) for t, d in random.sample(pairs, count)]
    assert drawn(qrels, count, seed) == upstream
