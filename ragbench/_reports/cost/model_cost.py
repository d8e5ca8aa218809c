"""results.json's `model_cost`: what the system's own model calls cost per task, counted from the samples'
traces (every LLM step of `trace`, and of `earlier_trace`: the runs of an example a `--resume` ran again; the
judges' are `judge_cost`): calls, calls the response cache answered,
failed calls, prompt and completion tokens of the calls sent, and their price in US dollars by the model that
answered each (the run's --model, a role's --role-model: ragbench._cost.prices), or why there is none.
"""

from __future__ import annotations

from itertools import chain

from ..._cost.prices import ModelPrices, TokenUsage
from ..._records import SampleRecord
from ..results.schema import TaskSections


class ModelCostTally:
    """A task's `model_cost`, filled sample by sample (every record, failed ones too: their calls were paid)."""

    def __init__(self, prices: ModelPrices) -> None:
        self.prices = prices
        self.usage = TokenUsage()

    def add(self, record: SampleRecord) -> None:
        for step in chain(record.trace, record.earlier_trace):  # the runs it superseded: paid too
            if step.kind == "llm":
                self.usage.add(step, step.role)

    def sections(self) -> TaskSections:
        """{"model_cost": figures}; nothing where the system called no model."""
        return {"model_cost": self.usage.figures(self.prices)} if self.usage.calls else {}
