"""The example plugin's own tests, written with ragbench.testing (no model, no network): the task reads
its data and reports bad lines, the system's majority wins, the metric reads the first verdict word, and
whole runs through the plugin's catalogue score as expected."""

from __future__ import annotations

import json

import pytest

from ragbench.api import Example, Prediction, RecordError
from ragbench.testing import ScriptedLLM, assert_steps, make_context, prompts, run_eval
from ragbench_plugin_example import plugin
from ragbench_plugin_example.metric import VerdictAccuracy, parse_verdict
from ragbench_plugin_example.system import MajorityVote
from ragbench_plugin_example.task import TriviaTF


def shipped_examples() -> tuple[TriviaTF, list[Example]]:
    task = TriviaTF()
    task.prepare()
    return task, list(task.examples())


def test_the_shipped_data_is_eight_statements_with_their_evidence():
    _, examples = shipped_examples()
    assert len(examples) == 8 and all(isinstance(e, Example) for e in examples)
    first = examples[0]
    assert (first.id, first.gold, len(first.docs)) == ("tf-001", {"truth": True, "answers": ["true"]}, 2)


def test_a_bad_line_is_yielded_as_a_record_error_and_reading_goes_on(tmp_path):
    good = {"qid": "a", "statement": "Water is wet.", "truth": True}
    path = tmp_path / "data.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(good),
                "not json",
                json.dumps({"qid": "b", "statement": "No truth."}),
                json.dumps({**good, "qid": "c"}),
            ]
        )
        + "\n"
    )
    items = list(TriviaTF(path).examples())
    assert [item.id if isinstance(item, Example) else "error" for item in items] == ["a", "error", "error", "c"]
    assert isinstance(items[2], RecordError) and "truth" in str(items[2])


async def test_the_majority_of_the_votes_wins_whatever_its_spelling():
    task, examples = shipped_examples()
    by_seed = {0: "false", 1: " True.", 2: "TRUE\nbecause ..."}  # each vote has its own seed
    ctx = make_context(task, ScriptedLLM(lambda request: by_seed[request.sampling.seed]))
    prediction = await MajorityVote().run(examples[0], ctx)
    assert prediction.answer == "True." and prediction.extras["votes"] == ["false", "True.", "TRUE"]
    assert_steps(ctx, ["llm:vote_0", "llm:vote_1", "llm:vote_2"])
    assert all(examples[0].question in prompt and "Evidence" not in prompt for prompt in prompts(ctx))


async def test_top_n_shows_the_first_documents_and_records_them():
    task, examples = shipped_examples()
    ctx = make_context(task, ScriptedLLM("true"))
    prediction = await MajorityVote(votes=1, top_n=1).run(examples[0], ctx)
    assert prediction.docs == examples[0].docs[:1]
    assert f"[1] {examples[0].docs[0].title}" in prompts(ctx)[0] and examples[0].docs[1].title not in prompts(ctx)[0]


def test_verdict_accuracy_reads_the_first_true_or_false_word():
    _, examples = shipped_examples()
    false_statement = examples[1]
    assert parse_verdict("It is FALSE, not true") is False and parse_verdict("maybe") is None
    scores = [
        VerdictAccuracy().score(false_statement, Prediction(false_statement.id, answer=answer))
        for answer in ("False.", "true", "no idea")
    ]
    assert scores == [1.0, 0.0, 0.0]


def test_a_whole_run_through_the_catalogue_scores_every_statement():
    _, examples = shipped_examples()
    right = {e.question: "true" if e.gold["truth"] else "false" for e in examples[:6]}  # the last two wrong
    model = ScriptedLLM({**right, "": "true"})
    run = run_eval("trivia_tf", "majority_vote", model, plugins=[plugin])
    assert run.complete and run.scores["trivia_tf"]["verdict_accuracy"] == pytest.approx(7 / 8)  # tf-008 is true
    sample = run.samples["trivia_tf"][1]
    assert (sample.id, sample.answer, sample.scores["verdict_accuracy"]) == ("tf-002", "false", 1.0)
    assert_steps(sample, ["llm:vote_0", "llm:vote_1", "llm:vote_2"])
    assert run.results["config"]["system_config"]["trivia_tf"]["sampling"]["max_tokens"] == 8  # the task's default


def test_the_mentions_family_and_built_in_metrics_score_the_same_run():
    metrics = ["verdict_accuracy", "match_normalized", "mentions:true"]
    run = run_eval("trivia_tf", "closed_book", ScriptedLLM("True"), metrics=metrics, plugins=[plugin], limit=4)
    assert run.scores["trivia_tf"] == {"verdict_accuracy": 0.5, "match_normalized": 0.5, "mentions:true": 1.0}
