"""FlashRAG's `bleu` and `input_tokens` as ragbench computes them (bleu, input_tokens) against values from
running FlashRAG's flashrag/evaluator/metrics.py and _bleu.py (tests/data/parity/flashrag_bleu_tokens.json
records the commit and how each value was obtained)."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import TEST_DATA
from ragbench.api import ConfigError, Example, Prediction, SampleRecord, Step
from ragbench.metrics.flashrag_bleu import EMPTY_OUTPUT, FlashRagBleu, tokenizer_13a
from ragbench.metrics.flashrag_tokens import InputTokens
from support.helpers import run, samples

UPSTREAM = json.loads((TEST_DATA / "parity" / "flashrag_bleu_tokens.json").read_text(encoding="utf-8"))
BLEU_CASES = {case["id"]: case for case in UPSTREAM["bleu_cases"]}
COMPLETED = [case for case in BLEU_CASES.values() if "expected" in case]
EMPTY_OUTPUTS = ["empty_output", "whitespace_output_smooth", "corpus_with_empty_output", "corpus_all_outputs_empty"]
GOLDS_LEFT_OUT = ["gold_without_tokens", "corpus_with_gold_without_tokens", "no_gold", "corpus_with_no_gold"]
PROMPTS = UPSTREAM["input_tokens_prompts"]
COUNTS = UPSTREAM["input_tokens_cases"]


class Counts:
    """The events a metric counts (`ctx.count`)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def count(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1


def scored(case: dict, ctx=None) -> tuple[list, object]:
    """The case through ragbench's bleu: each example's sentence_bleu, and the corpus value over their records."""
    metric = FlashRagBleu(max_order=case["max_order"], smooth=case["smooth"])
    records = []
    for i, (pred, golds) in enumerate(zip(case["preds"], case["golden_answers"])):
        example = Example(id=str(i), question="q", gold={"answers": golds})
        scores = metric.score(example, Prediction(example_id=str(i), answer=pred), ctx)
        records.append(SampleRecord(id=example.id, gold=example.gold, answer=pred, scores=scores).read_only())
    return [r.scores["sentence_bleu"] for r in records], metric.corpus(records, seed=0)["bleu"]


@pytest.mark.parametrize("case", UPSTREAM["tokenizer_13a_cases"], ids=lambda c: repr(c["text"])[:40])
def test_sacrebleu_13a_tokens_equal_flashrags_copy(case):
    assert tokenizer_13a()(case["text"]) == case["tokens"]


@pytest.mark.parametrize("case", COMPLETED, ids=lambda c: c["id"])
def test_bleu_equals_flashrag_corpus_and_per_example(case):
    per_example, corpus = scored(case)
    assert per_example == pytest.approx(case["expected"]["per_example"], abs=1e-12)
    assert corpus.value == pytest.approx(case["expected"]["bleu"], abs=1e-12) and corpus.n == len(case["preds"])


def test_corpus_bleu_is_not_the_mean_of_sentence_bleu():
    per_example, corpus = scored(BLEU_CASES["corpus_three"])
    assert corpus.value == pytest.approx(0.4697698451116114, abs=1e-12) and sum(per_example) / 3 == pytest.approx(1 / 3)


@pytest.mark.parametrize("case_id", EMPTY_OUTPUTS)
def test_output_without_tokens_scores_0_is_counted_and_stays_in_the_corpus(case_id):
    """FlashRAG's per-example step divides by zero on it; its corpus step (compute_bleu over every example)
    gives the corpus value where another output has tokens, and 0 is the limit where none has."""
    case, counts = BLEU_CASES[case_id], Counts()
    per_example, corpus = scored(case, counts)
    upstream = case["per_example_compute_bleu"]
    assert per_example == pytest.approx([0.0 if isinstance(v, dict) else v for v in upstream], abs=1e-12)
    corpus_upstream = case["corpus_compute_bleu"]
    assert corpus.value == pytest.approx(0.0 if isinstance(corpus_upstream, dict) else corpus_upstream, abs=1e-12)
    assert corpus.n == len(case["preds"])
    assert counts.counts == {EMPTY_OUTPUT: sum(isinstance(v, dict) for v in upstream)}


@pytest.mark.parametrize("case_id", GOLDS_LEFT_OUT)
def test_golds_without_tokens_are_left_out_and_an_example_without_gold_is_not_scorable(case_id):
    """FlashRAG divides by zero on a gold without 13a tokens and stops on an example without gold; ragbench's
    values are FlashRAG's on the case without them (`reduced`), the examples left without gold not scorable."""
    case = BLEU_CASES[case_id]
    per_example, corpus = scored(case)
    reduced = case["reduced"]
    if reduced is None:
        assert per_example == [None] and corpus.value is None and corpus.n == 0
        return
    expected = [
        reduced["expected"]["per_example"][reduced["preds"].index(pred)] if pred in reduced["preds"] else None
        for pred in case["preds"]
    ]
    assert per_example == pytest.approx(expected, abs=1e-12)
    assert corpus.value == pytest.approx(reduced["expected"]["bleu"], abs=1e-12) and corpus.n == len(reduced["preds"])


def test_bleu_options():
    assert FlashRagBleu().config() == {"name": "bleu", "max_order": 4, "smooth": False}
    with pytest.raises(ConfigError, match="max_order must be a whole number from 1, got 0"):
        FlashRagBleu(max_order=0)
    with pytest.raises(ConfigError, match="smooth must be true or false, got 'yes'"):
        FlashRagBleu(smooth="yes")


def test_bleu_without_sacrebleu_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "sacrebleu.tokenizers.tokenizer_13a", None)
    with pytest.raises(ConfigError, match=r"needs sacrebleu .*pip install ragbench\[flashrag\]"):
        FlashRagBleu()


def traced(prompts: list) -> Prediction:
    """A prediction whose trace holds one LLM call per prompt (a string or chat messages), and a retrieval."""
    steps = [Step(kind="retrieval", name="bm25", request={"query": "q"})]
    steps += [
        Step(kind="llm", name="answer", request={"prompt": p} if isinstance(p, str) else {"messages": p})
        for p in prompts
    ]
    return Prediction(example_id="x", answer="a", trace=steps)


def upstream_count(value):
    """An upstream count; where upstream raised (tiktoken on special-token text) ragbench's is not scorable."""
    return None if isinstance(value, dict) else value


@pytest.mark.parametrize("index", range(len(PROMPTS)))
def test_gpt4_counts_equal_flashrag_count_token(index):
    metric, example = InputTokens(), Example(id="x", question="q")
    assert metric.score(example, traced(["an earlier call", PROMPTS[index]])) == upstream_count(
        COUNTS["gpt-4"]["prompts"][index]
    )


def test_gpt4_mean_is_flashrags_avg_input_tokens_and_chat_counts_its_contents():
    metric, example = InputTokens(), Example(id="x", question="q")
    counts = [metric.score(example, traced([prompt])) for prompt in PROMPTS[:-1]]
    assert metric.aggregate("input_tokens", counts) == pytest.approx(
        COUNTS["gpt-4"]["corpus"]["avg_input_tokens"], abs=1e-12
    )
    # FlashRAG cannot count an OpenAI message list; the contents joined by blank lines are its prompt without chat
    messages = COUNTS["hf_smollm2_chat"]["messages"][0]
    joined = "\n\n".join(m["content"] for m in messages)
    assert metric.score(example, traced([messages])) == metric.score(example, traced([joined])) > 0
    assert metric.score(example, Prediction(example_id="x", answer="a")) is None  # no LLM call
    assert metric.config() == {"name": "input_tokens", "tokenizer": "gpt-4"}


def test_unknown_tokenizer_is_one_config_error(tmp_path):
    with pytest.raises(
        ConfigError, match="is neither an OpenAI model name tiktoken knows nor a Hugging Face tokenizer"
    ):
        InputTokens(tokenizer=str(tmp_path / "no-such-folder"))


@pytest.fixture(scope="module")
def smollm2_tokenizer():
    """The embedded SmolLM2's tokenizer saved as a folder, as the parity values were counted with: the folder of
    its converted copy (the GGUF's tokenizer, `save_pretrained`), made once for the session's tests, where a
    tokenizer read from the GGUF again parsed the whole file (~5 s of CPU)."""
    from ragbench.testing import embedded_model

    return str(embedded_model())


@pytest.mark.model
def test_hf_tokenizer_counts_equal_flashrag_count_token(smollm2_tokenizer):
    metric, example = InputTokens(tokenizer=smollm2_tokenizer), Example(id="x", question="q")
    assert [metric.score(example, traced([p])) for p in PROMPTS] == COUNTS["hf_smollm2"]["prompts"]
    chat = COUNTS["hf_smollm2_chat"]
    assert [metric.rendered(messages) for messages in chat["messages"]] == chat["templated"]
    assert [metric.score(example, traced([messages])) for messages in chat["messages"]] == chat["counts"]


def test_run_reports_corpus_bleu_and_the_last_calls_tokens(tmp_path):
    """A FlashRAG task run with --metrics bleu,input_tokens and bleu's options: the task's `bleu` is FlashRAG's
    corpus value of the case, `sentence_bleu` the mean of its per-example values, `input_tokens` the mean of
    the counts of each example's prompt."""
    case = BLEU_CASES["corpus_five_smooth_order_2"]
    records = [
        {"id": str(i), "question": f"question {i}?", "golden_answers": golds, "metadata": {}}
        for i, golds in enumerate(case["golden_answers"])
    ]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps([{"pattern": f"question {i}\\?", "response": pred} for i, pred in enumerate(case["preds"])]),
        encoding="utf-8",
    )
    results = run(
        tmp_path,
        tasks=["eli5_flashrag"],
        data={"eli5_flashrag": str(data)},
        system="closed_book",
        model=f"scripted:{rules}",
        metrics=["bleu", "input_tokens"],
        metric_args={"bleu.max_order": 2, "bleu.smooth": True},
    )
    values, details = results["results"]["eli5_flashrag"], results["details"]["eli5_flashrag"]
    assert values["bleu"] == pytest.approx(case["expected"]["bleu"], abs=1e-12) and details["bleu"]["n"] == 5
    assert values["sentence_bleu"] == pytest.approx(sum(case["expected"]["per_example"]) / 5, abs=1e-12)
    counted = InputTokens()
    prompts = [s["trace"][-1]["request"]["prompt"] for s in samples(tmp_path / "run", "eli5_flashrag")]
    assert values["input_tokens"] == pytest.approx(sum(counted.count(p) for p in prompts) / 5)
