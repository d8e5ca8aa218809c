"""results.json's `judge_cost`: what judging cost per task and judged metric, counted from the samples' judge
calls (`judge_trace`, each step named `judge:<metric or its protocol>`): calls, calls the response cache
answered, failed calls, prompt and completion tokens of the calls sent, and for a priced model the money (USD),
each judge's calls priced at its own price (ragbench._cost.prices).
"""

from __future__ import annotations

from ..._cost.prices import SOME_JUDGE, ModelPrices, TokenUsage
from ..._records import SampleRecord
from ..results.schema import TaskSections


class JudgeCostTally:
    """A task's `judge_cost`, filled sample by sample (every record, failed ones too: their calls were paid)."""

    def __init__(self, prices: ModelPrices) -> None:
        self.prices = prices
        self.by_metric: dict[str, TokenUsage] = {}

    def add(self, record: SampleRecord) -> None:
        for step in record.judge_trace:
            if step.kind != "llm":  # a step a metric recorded of its own (ctx.record_step): no call
                continue
            name = step.name.removeprefix("judge:") or "judge"
            self.by_metric.setdefault(name, TokenUsage()).add(step, step.role or SOME_JUDGE)

    def sections(self) -> TaskSections:
        """{"judge_cost": {metric: figures}}; nothing where no judge was called."""
        out = {name: usage.figures(self.prices) for name, usage in sorted(self.by_metric.items())}
        return {"judge_cost": out} if out else {}
