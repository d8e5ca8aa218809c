"""results.json's `model_cost` and `judge_cost`: what a task's model calls cost, counted from its samples (every
record, failed ones too: their calls were paid): calls, calls the response cache answered, failed calls, prompt and
completion tokens of the calls sent, and their price in US dollars by the model that answered each (ragbench._cost.prices),
or why there is none.

- `model_cost`: the system's own calls, every LLM step of `trace` and of `earlier_trace` (the runs of an example a
  `--resume` ran again), each priced by the model that answered it (the run's --model, a role's --role-model);
- `judge_cost`: by judged metric, the judges' calls (`judge_trace`, each step named `judge:<metric or its
  protocol>`), each judge's calls priced at its own price.
"""

from __future__ import annotations

from itertools import chain

from .._records import SampleRecord
from .cost_schema import CostSections
from .prices import SOME_JUDGE, ModelPrices
from .token_usage import TokenUsage


class ModelCostTally:
    """A task's `model_cost`, filled sample by sample."""

    def __init__(self, prices: ModelPrices) -> None:
        self.prices = prices
        self.usage = TokenUsage()

    def add(self, record: SampleRecord) -> None:
        for step in chain(record.trace, record.earlier_trace):  # the runs it superseded: paid too
            if step.kind == "llm":
                self.usage.add(step, step.role)

    def sections(self) -> CostSections:
        """{"model_cost": figures}; nothing where the system called no model."""
        return {"model_cost": self.usage.figures(self.prices)} if self.usage.calls else {}


class JudgeCostTally:
    """A task's `judge_cost`, filled sample by sample."""

    def __init__(self, prices: ModelPrices) -> None:
        self.prices = prices
        self.by_metric: dict[str, TokenUsage] = {}

    def add(self, record: SampleRecord) -> None:
        for step in record.judge_trace:
            if step.kind != "llm":  # a step a metric recorded of its own (ctx.record_step): no call
                continue
            name = step.name.removeprefix("judge:") or "judge"
            self.by_metric.setdefault(name, TokenUsage()).add(step, step.role or SOME_JUDGE)

    def sections(self) -> CostSections:
        """{"judge_cost": {metric: figures}}; nothing where no judge was called."""
        out = {name: usage.figures(self.prices) for name, usage in sorted(self.by_metric.items())}
        return {"judge_cost": out} if out else {}
