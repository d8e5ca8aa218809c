"""What a run's results check its judges against and price them at (`--human-labels`, `--price-table`), read
once when results.json is made. The files were read when the command started (a bad one stopped it then); one
that can no longer be read at the end (moved, edited) does not keep the run from its results.json: the run
warns, naming the file and the fix, and results.json says what is missing (no `human_agreement`; `usd` null
with the reason)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..._config.judging import RunJudging
from ..._config.models import RunModels
from ..._cost.prices import ModelPrices, recorded_urls, results_prices
from ..._errors import ConfigError
from ..._reports.judging.human_labels import HumanLabels, read_human_labels
from ..._values.json_values import JsonObject

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Judging:
    labels: HumanLabels | None
    prices: ModelPrices  # of the system's model and the judges


def judging_of(models: RunModels, judging: RunJudging, recorded: JsonObject) -> Judging:
    """The run's `--human-labels` and `--price-table` files read, the prices looked up for its models and
    judges (ragbench._cost.prices.results_prices), each sent where the run's config (`recorded`, run.json's) says
    it was (`model_urls`)."""
    sent_to = recorded_urls(recorded)
    labels = None
    if judging.human_labels:
        try:
            labels = read_human_labels(judging.human_labels)
        except ConfigError as exc:
            log.warning("%s; results.json has no human_agreement (fix the file, then `ragbench rescore`)", exc)
    return Judging(labels, results_prices(models, judging, sent_to))
