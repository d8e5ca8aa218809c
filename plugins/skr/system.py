"""SKR (Wang et al., Findings of EMNLP 2023): retrieve only for the questions the model does not know, as
FlashRAG's `ConditionalPipeline` runs it (flashrag/pipeline/pipeline.py:133-180, commit 1ee5249;
examples/methods/run_exp.py:296-344): the SKR-kNN judger (judger.py) decides per question; a question judged
to need retrieval gets FlashRAG's naive RAG (its top `topk` passages in the default template), the others its
zero-shot prompt (with the 29 spaces its string literal holds, prompts.py). One call per example.

Departures: the judger encodes each question alone (FlashRAG: in batches of 64; padding does not change a
BERT encoder's pooled output beyond float rounding); it runs on the CPU (FlashRAG's hard-codes CUDA).
"""

from __future__ import annotations

from pathlib import Path
from statistics import mean
from typing import Annotated, Any

from annotated_types import Ge

from ragbench.api import (
    ConfigError,
    Context,
    Example,
    Prediction,
    RecordedExtras,
    System,
    Task,
)
from ragbench.api.flashrag import Judger, flashrag_naive_or_zero_shot, flashrag_retrieving, judger_folder

from .prompts import ZERO_SHOT


class Skr(System):
    """SKR as FlashRAG runs it. Options (--system-arg):

    judger_model   a local SimCSE encoder folder (run_exp.py:322: model/sup-simcse-bert-base-uncased)
    training_data  SKR's training questions with their judgements, a JSON list of {"question", "judgement":
                   "ir_better" | "ir_worse" | "same"} (run_exp.py:323: ./sample_data/skr_training.json)
    judgements     instead of the two above: a JSON file of example id -> true (retrieve) | false, decisions
                   made elsewhere
    judger_topk    nearest training questions (5: run_exp.py:328, judger.py:46)
    judger_max_length  encoder input tokens (128: judger.py:49)
    topk           passages retrieved for a question that needs them (5: my_config.yaml retrieval_topk)
    max_tokens     the answer's budget (32: my_config.yaml generation_params.max_tokens)

    Greedy decoding with FlashRAG's vLLM stop list ("<|eot_id|>"); the answer is the output as generated.
    """

    name = "skr"
    declares = flashrag_retrieving(
        recorded=RecordedExtras(
            "skr",
            figures=lambda judged: {"retrieval_rate": round(mean(1.0 if j["retrieve"] else 0.0 for j in judged), 4)},
        )
    )

    def __init__(
        self,
        judger_model: str | None = None,
        training_data: str | None = None,
        judgements: str | None = None,
        judger_topk: Annotated[int, Ge(1)] = 5,
        judger_max_length: Annotated[int, Ge(1)] = 128,
        topk: Annotated[int, Ge(1)] = 5,
        max_tokens: Annotated[int, Ge(1)] = 32,
    ) -> None:
        self.judger_model, self.training_data, self.judgements = judger_model, training_data, judgements
        self.judger_topk, self.judger_max_length = int(judger_topk), int(judger_max_length)
        self.topk, self.max_tokens = int(topk), int(max_tokens)
        self._judger = Judger("skr", (True, False), judgements, self._load_judger)

    def _load_judger(self) -> Any:
        from .judger import SkrJudger

        assert self.training_data is not None  # check() refuses a run without it
        return SkrJudger(
            judger_folder(self.judger_model, "skr judger_model"),
            self.training_data,
            topk=self.judger_topk,
            max_length=self.judger_max_length,
        )

    def check(self, task: Task) -> None:
        if self.judgements is None:
            if not self.judger_model or not self.training_data:
                raise ConfigError(
                    "skr needs its judger: --system-arg judger_model=FOLDER (a local SimCSE encoder, "
                    "e.g. sup-simcse-bert-base-uncased) and training_data=FILE (SKR's training "
                    "questions with their judgements), or judgements=FILE (example id -> true|false)"
                )
            judger_folder(self.judger_model, "skr judger_model")
            if not Path(self.training_data).expanduser().is_file():
                raise ConfigError(
                    f"skr training_data {self.training_data}: no such file; pass SKR's training "
                    'file, a JSON list of {"question", "judgement"}'
                )
        self._judger.check()

    def check_model(self, engine: Any) -> None:
        self._judger.load_model()  # once, before the examples run: a damaged folder is one line

    async def run(self, example: Example, ctx: Context) -> Prediction:
        retrieve = bool((await self._judger.judge(example, ctx))["label"])  # True or False (the judger checks it)
        return await flashrag_naive_or_zero_shot(
            ctx, example, retrieve, self.topk, self.max_tokens, ZERO_SHOT, extras={"skr": {"retrieve": retrieve}}
        )
