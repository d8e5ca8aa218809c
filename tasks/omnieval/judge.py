"""OmniEval's model-based metrics (RUC-NLPIR/OmniEval evaluator/judgement/judger.py): ACC, COM, UTL,
NAC from the ModelEvaluator LoRA and HAL from the HallucinationEvaluator LoRA, both on
Qwen2.5-7B-Instruct.

Each call is a completion prompt: the verbatim (system, user) pair rendered with Qwen2.5's chat
template as upstream's `tokenizer.apply_chat_template(..., add_generation_prompt=True)` renders
it, sent with temperature 0 (= upstream's top_k 1), seed 0 and 16 new tokens (upstream sends no
max_tokens: the completions endpoint's default). A `replay:` judge file therefore holds
`{"prompt": ..., "response": ...}` lines.

Judges: with one `--judge`, every metric goes to it, with the adapter named by the metric args
`model_adapter` / `hallucination_adapter` (Sampling.lora: a vLLM adapter folder, or the served
LoRA name on an OpenAI-compatible server); with two, the second judges HAL.
Value -1 (not applicable, or a reply that does not parse), as any negative value, is not scored; a failed call is
counted in `judge_failures`, its metric left unscored."""

from __future__ import annotations

import asyncio
from functools import lru_cache
from typing import Any

from ragbench.api import (
    ConfigError,
    Document,
    EngineError,
    Example,
    KeySpec,
    Metric,
    MetricDeclaration,
    Prediction,
    Scores,
)
from ragbench.api.data import JsonObject

from .catalog import data_file
from .metrics import searched

MODEL_METRICS = ("accuracy", "completeness", "utilization", "numerical_accuracy")
HALVED = ("accuracy", "completeness", "utilization")  # graded 0/1/2, reported /2
NEEDS_DOCS = (
    "utilization",
    "hallucination",
)  # dropped for closed-book systems (asked after a search that found nothing)
SAMPLING = {"temperature": 0.0, "seed": 0, "max_tokens": 16}


def qwen25_prompt(system: str, user: str) -> str:
    """Qwen2.5-Instruct's chat template for a system + user turn, generation prompt added."""
    return f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"


@lru_cache(maxsize=1)
def _json_repair() -> Any:
    try:
        import json_repair
    except ImportError as exc:
        raise ConfigError(
            f"OmniEval judge parsing needs json-repair ({exc}); run `pip install ragbench[omnieval]`"
        ) from exc
    return json_repair


def parse_value(text: str, metric: str) -> int:
    """upstream judger's batch parsing: json_repair, then `prediction` or the metric's own key,
    then int(); anything else is -1."""
    try:
        data = _json_repair().loads(text)
    except Exception:  # upstream: any repair failure means "" (then -1)
        data = ""
    if not isinstance(data, dict) or not data:
        return -1
    value: Any = data.get("prediction", data.get(metric, -1))
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


def metric_score(metric: str, value: int) -> float | None:
    """-1, or any other negative value, -> not scored: upstream's mean leaves out every negative value, so
    the example is not in n either (and `ragbench compare` pairs what the mean holds). ACC/COM/UTL halved;
    values above the scale pass unclipped, as upstream."""
    if value < 0:
        return None
    return value / 2 if metric in HALVED else float(value)


def doc_str(docs: list[Document]) -> str:
    """`Title: {title}\\nContent: {contents}` per document (the corpus title field), "\\n"-joined."""
    return "\n".join(f"Title: {d.title}\nContent: {d.metadata.get('contents', d.text)}" for d in docs)


def judge_prompt(metric: str, example: Example, prediction: Prediction) -> str:
    system, user = data_file("evaluator_prompts.json")["generation_prompt_map"][metric]
    answers = "\n".join(str(a) for a in example.gold["answers"])
    # str.format ignores unused fields, as upstream fills every template with all four
    return qwen25_prompt(
        system,
        user.format(
            question=example.question, answers=answers, prediction=prediction.answer, doc_str=doc_str(prediction.docs)
        ),
    )


class OmniEvalJudge(Metric):
    name = "omnieval_judge"
    declares = MetricDeclaration(
        keys=(*MODEL_METRICS, "hallucination", "judge_failures"),
        # no ranges: the evaluator's values pass unclipped, as upstream (a negative one is not scored: metric_score)
        key_specs={
            "hallucination": KeySpec(False),  # 1 = the answer hallucinates
            "judge_failures": KeySpec(False, (0, None)),
        },
        gold_needs=("answers",),
        needs=("judge",),
        judge_roles=("ModelEvaluator", "HallucinationEvaluator"),  # one judge: both, with its two adapters
    )

    def __init__(
        self,
        model_adapter: str | None = None,
        hallucination_adapter: str | None = None,
        metrics: str | list[str] | None = None,
    ) -> None:
        self.model_adapter, self.hallucination_adapter = model_adapter, hallucination_adapter
        chosen = metrics.split(",") if isinstance(metrics, str) else list(metrics or self.declares.keys[:-1])
        unknown = set(chosen) - set(self.declares.keys[:-1])
        if unknown:
            raise ConfigError(
                f"metric {self.name}: metrics={','.join(sorted(unknown))} is not one of {', '.join(self.declares.keys[:-1])}"
            )
        self.metrics = tuple(chosen)

    def config(self) -> JsonObject:
        return {
            "name": self.name,
            "model_adapter": self.model_adapter,
            "metrics": list(self.metrics),
            "hallucination_adapter": self.hallucination_adapter,
            "sampling": dict(SAMPLING),
        }

    def route(self, metric: str, judges: list[Any]) -> tuple[Any, str | None]:
        """The evaluator of `metric` among `judges` (one per role) and its LoRA adapter."""
        if metric == "hallucination":
            return judges[1], self.hallucination_adapter
        return judges[0], self.model_adapter

    async def ask(
        self, metric: str, example: Example, prediction: Prediction, judges: list[Any]
    ) -> float | None | EngineError:
        judge, adapter = self.route(metric, judges)
        sampling = {**SAMPLING, **({"lora": adapter} if adapter else {})}
        try:
            response = await judge.generate(
                judge_prompt(metric, example, prediction), step=f"judge:omnieval:{metric}", **sampling
            )
        except EngineError as err:
            return err
        return metric_score(metric, parse_value(response.text.strip(), metric))

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        judges = ctx.judges_for(self)
        asked = [m for m in self.metrics if prediction.docs or searched(prediction) or m not in NEEDS_DOCS]
        values = await asyncio.gather(*(self.ask(m, example, prediction, judges) for m in asked))
        out: Scores = {m: None for m in self.declares.keys[:-1]}
        failures = 0
        for metric, value in zip(asked, values):
            if isinstance(value, EngineError):
                failures += 1
            else:
                out[metric] = value
        out["judge_failures"] = float(failures)
        return out

    def aggregate(self, key: str, values: list[float]) -> float:
        return float(sum(values)) if key == "judge_failures" else super().aggregate(key, values)
