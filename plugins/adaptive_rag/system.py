"""Adaptive-RAG (Jeong et al., NAACL 2024): a classifier of query complexity routes each question, as
FlashRAG's `AdaptivePipeline` runs it (flashrag/pipeline/pipeline.py:183-254, commit 1ee5249;
examples/methods/run_exp.py:543-563):

    A  no retrieval: FlashRAG's zero-shot prompt, one call
    B  single-step: FlashRAG's naive RAG, the top `topk` passages in its default template, one call
    C  multi-step: IRCoT with its defaults (FlashRAG's IRCOTPipeline, max_iter 5), here the registered
       system named by `multi_hop` (default `ircot`), run on the example as it runs alone

Departures: FlashRAG runs the groups one after another in `set(labels)` order (which changes with Python's
string hashing); here every example runs at once and the scheduler batches their calls, which changes no call.
The classifier reads the label from one decoder step on the CPU (FlashRAG: `generate` on CUDA, its first step's
scores; greedy decoding applies no other processing to them).
"""

from __future__ import annotations

from typing import Annotated, Any

from annotated_types import Ge

from ragbench.api import (
    ConfigError,
    Context,
    Example,
    Prediction,
    Preflight,
    RecordedExtras,
    System,
    Task,
)
from ragbench.api.engines import EngineNeeds
from ragbench.api.flashrag import (
    Judger,
    flashrag_naive_or_zero_shot,
    flashrag_retrieving,
    judger_folder,
)

from .judger import LABELS

ROUTES = {"A": "no retrieval", "B": "single-step", "C": "multi-step"}


class AdaptiveRag(System):
    """Adaptive-RAG as FlashRAG runs it. Options (--system-arg):

    judger_model  a local folder of Adaptive-RAG's T5 classifier (run_exp.py:544:
                  illuminoplanet/adaptive-rag-classifier)
    judgements    instead: a JSON file of example id -> "A" | "B" | "C", decisions made elsewhere
    judger_max_length  the classifier's input tokens (512: judger.py:142)
    multi_hop     the registered system that answers a "C" question with its own defaults (ircot:
                  pipeline.py:218-220, IRCOTPipeline with max_iter 5)
    topk          passages for a "B" question (5: my_config.yaml retrieval_topk)
    max_tokens    the budget of an "A" or "B" answer (32: my_config.yaml generation_params.max_tokens)

    Greedy decoding with FlashRAG's vLLM stop list ("<|eot_id|>"); an A or B answer is the output as generated.
    """

    name = "adaptive_rag"
    declares = flashrag_retrieving(
        searches_own_queries=True,
        recorded=RecordedExtras(
            "adaptive_rag",
            figures=lambda runs: {f"route_{label}": sum(run["label"] == label for run in runs) for label in LABELS},
        ),
    )

    def __init__(
        self,
        judger_model: str | None = None,
        judgements: str | None = None,
        judger_max_length: Annotated[int, Ge(1)] = 512,
        multi_hop: str = "ircot",
        topk: Annotated[int, Ge(1)] = 5,
        max_tokens: Annotated[int, Ge(1)] = 32,
        registry: Any = None,
    ) -> None:
        self.judger_model, self.judgements, self.judger_max_length = judger_model, judgements, int(judger_max_length)
        self.multi_hop, self.topk, self.max_tokens = multi_hop, int(topk), int(max_tokens)
        self._judger = Judger("adaptive_rag", LABELS, judgements, self._load_judger)
        self._registry = registry  # the run's, to build the multi-hop system
        self._multi_hop: System | None = None

    def _load_judger(self) -> Any:
        from .judger import ComplexityClassifier

        return ComplexityClassifier(
            judger_folder(self.judger_model, "adaptive_rag judger_model"), max_length=self.judger_max_length
        )

    def multi_hop_system(self) -> System:
        """The system a "C" question goes to, built once from the run's registry with its defaults."""
        if self._multi_hop is None:
            if self._registry is None:
                raise ConfigError(
                    "adaptive_rag builds its multi-hop system from the run's registry: run it "
                    "through ragbench (it was built without one)"
                )
            system = self._registry.load("systems", self.multi_hop)()
            if not isinstance(system, System) or isinstance(system, AdaptiveRag):
                raise ConfigError(
                    f"adaptive_rag multi_hop={self.multi_hop}: not a system that answers a question "
                    "on its own; pass one, e.g. ircot"
                )
            self._multi_hop = system
        return self._multi_hop

    def preflight(self, check: Preflight, task: Task) -> None:
        super().preflight(check, task)
        with check.step(f"adaptive_rag multi_hop={self.multi_hop}"):
            self.multi_hop_system()
        if self._multi_hop is not None:
            self._multi_hop.preflight(check, task)

    def check(self, task: Task) -> None:
        if self.judgements is None:
            if not self.judger_model:
                raise ConfigError(
                    "adaptive_rag needs its classifier: --system-arg judger_model=FOLDER (a local copy "
                    "of Adaptive-RAG's T5 classifier, illuminoplanet/adaptive-rag-classifier), or "
                    "judgements=FILE (example id -> A|B|C)"
                )
            judger_folder(self.judger_model, "adaptive_rag judger_model")
        self._judger.check()

    def engine_needs(self, task: Task) -> EngineNeeds | None:
        try:
            return self.multi_hop_system().engine_needs(task)
        except ConfigError:  # the pre-flight says why
            return None

    def check_model(self, engine: Any) -> None:
        self._judger.load_model()  # once, before the examples run: a damaged folder is one line
        self.multi_hop_system().check_model(engine)

    async def run(self, example: Example, ctx: Context) -> Prediction:
        label = str((await self._judger.judge(example, ctx))["label"])  # one of LABELS (the judger checks it)
        with ctx.group(f"{label}: {ROUTES[label]}"):
            if label == "C":
                prediction = await self.multi_hop_system().run(example, ctx)
                prediction.extras["adaptive_rag"] = {"label": label}
                return prediction
            return await flashrag_naive_or_zero_shot(
                ctx, example, label == "B", self.topk, self.max_tokens, extras={"adaptive_rag": {"label": label}}
            )
