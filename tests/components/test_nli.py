"""The NLI judge of the metrics that need "nli" (`--nli`, `ctx.nli`), as a run gives it them: its two request formats,
one computation per distinct pair batched with the other examples' (results.json `cost.nli`), its decisions logged as
a replay file, a failed call retried by the next asker, and the TRUE model on the hf engine (seq2seq) against eval.py's
own call."""

from __future__ import annotations

import json

import pytest

from conftest import write_jsonl
from ragbench.api import ConfigError, EngineError, Metric, MetricDeclaration
from ragbench.api.engines import Request, Sampling
from ragbench.testing import ScriptedLLM, preflight, run_eval
from support.tiny_models import tiny_t5


class Entailed(Metric):
    """Whether the question (the premise) entails the answer (the hypothesis), as the run's NLI judge decides."""

    name = "entailed"
    declares = MetricDeclaration(needs=("nli",), value_range=(0, 1))

    async def score(self, example, prediction, ctx):
        return await ctx.nli.entails(example.question, prediction.answer)


def questions(tmp_path, premises) -> str:
    rows = [{"id": i, "question": p, "answers": ["h"], "prop": "x", "ctxs": []} for i, p in enumerate(premises)]
    return str(write_jsonl(tmp_path / "questions.jsonl", rows))


def entailed(tmp_path, premises, nli, answer="h", **options):
    """The run of `Entailed` over one question per premise, each answered `answer` (a reply or a ScriptedLLM): each
    example's score and the run."""
    done = run_eval(
        "demo",
        "closed_book",
        answer if isinstance(answer, ScriptedLLM) else ScriptedLLM(answer),
        metrics=[Entailed],
        data=questions(tmp_path, premises),
        nli=nli,
        bootstrap_iters=0,
        **options,
    )
    return [sample.scores.get("entailed") for sample in done.samples["demo"]], done


def test_true_format_prompt_and_exact_one_rule(tmp_path):
    nli = ScriptedLLM(lambda request: {"p1": "1", "p2": " 1", "p3": "1.0"}[request.prompt.split()[1]])
    scores, _ = entailed(tmp_path, ["p1", "p2", "p3"], nli)
    assert scores == [1, 0, 0]  # only exactly "1" entails, as eval.py
    assert sorted(request.prompt for request in nli.requests)[0] == "premise: p1 hypothesis: h"
    assert {(r.sampling.max_tokens, r.sampling.temperature) for r in nli.requests} == {(10, 0.0)}


def test_prompt_format_reads_yes_and_counts_unparsed_replies(tmp_path):
    replies = {"a": "Yes.", "b": "no", "c": "Maybe"}
    nli = ScriptedLLM(lambda request: replies[request.message_dicts()[-1]["content"].split("\n")[0].split()[-1]])
    scores, done = entailed(tmp_path, "abc", nli, answer="H", nli_format="prompt")
    assert scores == [1, 0, 0]
    assert done.results["cost"]["nli"] == {"requests": 3, "computed": 3, "unparsed": 1}
    contents = [request.message_dicts()[-1]["content"] for request in nli.requests]
    [content] = [text for text in contents if text.startswith("Premise: a\n")]
    assert content.startswith("Premise: a\n\nHypothesis: H\n\n") and content.endswith('"yes" or "no".')


def test_identical_pairs_are_computed_once_and_all_pairs_are_batched(tmp_path):
    nli = ScriptedLLM("1", batch_size=64)
    scores, done = entailed(tmp_path, [f"p{i % 10}" for i in range(50)], nli, max_inflight=50)
    assert scores == [1] * 50
    assert done.results["cost"]["nli"] == {"requests": 50, "computed": 10, "unparsed": 0}
    assert nli.batch_sizes == [10]


def test_decisions_are_logged_as_a_replay_file(tmp_path):
    nli = ScriptedLLM(lambda request: "1" if "yes" in request.prompt else "0")
    scores, _ = entailed(tmp_path, ["yes doc", "other doc"], nli, output=tmp_path / "run", max_inflight=1)
    assert scores == [1, 0]
    log = tmp_path / "run" / "nli_calls.jsonl"
    sampling = Request(prompt="x", sampling=Sampling(max_tokens=10, temperature=0.0)).to_dict()["sampling"]
    assert [json.loads(line) for line in log.open()] == [
        {"prompt": "premise: yes doc hypothesis: h", "sampling": sampling, "response": "1"},
        {"prompt": "premise: other doc hypothesis: h", "sampling": sampling, "response": "0"},
    ]
    (tmp_path / "again").mkdir()
    replayed, _ = entailed(tmp_path / "again", ["yes doc", "other doc"], f"replay:{log}")
    assert replayed == [1, 0]


def test_a_failed_call_is_raised_and_retried_by_the_next_asker(tmp_path):
    """One example at a time: the first one's call fails (its metric fails there), the second asks the same pair
    again and is answered."""
    calls = []

    def script(request):
        calls.append(1)
        if len(calls) == 1:
            raise EngineError("down")
        return "1"

    scores, done = entailed(tmp_path, ["p", "p"], ScriptedLLM(script), max_inflight=1)
    first, second = done.samples["demo"]
    assert "down" in str(first.score_errors["entailed"]) and second.scores == {"entailed": 1}
    assert len(calls) == 2 and done.results["cost"]["nli"]["computed"] == 2


def test_unknown_format_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="--nli-format"):
        preflight("demo", metrics=[Entailed], nli=ScriptedLLM("1"), nli_format="xnli")


@pytest.fixture(scope="module")
def t5_folder(tmp_path_factory):
    return tiny_t5(tmp_path_factory.mktemp("t5"))


def test_hf_engine_runs_seq2seq_nli_like_eval_py(t5_folder, tmp_path):
    """eval.py `_run_nli_autoais` (tokenize, generate(max_new_tokens=10), decode skipping special
    tokens), one request at a time, against a run's NLI on the hf engine, its requests in batches of 4."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(t5_folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(t5_folder).eval()
    pairs = {
        "the rain in india": "rain is in india",
        "food": "the city of food loans answer",
        "record month": "1",
        "a place on earth is colombia": "yes",
    }
    expected = {}
    for premise, hypothesis in pairs.items():
        input_ids = tokenizer(f"premise: {premise} hypothesis: {hypothesis}", return_tensors="pt").input_ids
        with torch.inference_mode():
            outputs = model.generate(input_ids, max_new_tokens=10)
        expected[premise] = tokenizer.decode(outputs[0], skip_special_tokens=True)

    answers = ScriptedLLM(lambda request: next(h for p, h in pairs.items() if p in str(request.message_dicts())))
    entailed(
        tmp_path, list(pairs), f"hf:{t5_folder}", answer=answers, nli_args={"batch_size": 4}, output=tmp_path / "run"
    )
    logged = [json.loads(line) for line in (tmp_path / "run" / "nli_calls.jsonl").open()]
    assert {line["prompt"]: line["response"] for line in logged} == {
        f"premise: {p} hypothesis: {h}": expected[p] for p, h in pairs.items()
    }
