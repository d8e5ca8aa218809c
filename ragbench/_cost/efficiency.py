"""results.json's `efficiency`: what each correct answer cost, per task and metric key, counted exactly from the
samples' traces (every record, failed ones too: their calls were made, and they count as not correct).

- tokens: the prompt and completion tokens of every LLM call of the system (`trace`, not the judges'), those the
  response cache answered included at their recorded counts (the system's use, whichever cache served it);
- correct answers of a key whose every value is an end of its declared range (right or wrong: exact match,
  accuracy): the values at its top. A failed example, one the metric failed on or a value of None adds 0. A key
  with a value inside its range (a graded one: token F1, nDCG, a 0-100 score), without a bounded declared range,
  or whose lower values are better, has no correct answers to count: no row;
- tokens per correct answer (TPC, as OverSearchQA, arXiv 2601.05503, defines it): tokens / correct answers;
  dollars per correct answer: those tokens priced by the model that answered each call (`prices`),
  absent where a model has no price (`usd_note` says why), never 0 for an unknown price. No correct answer: null;
  LLM calls whose engine reported no token counts: both null (`usd_note`); no record with a trace (outputs made
  elsewhere): no `efficiency` for the task;
- LLM calls and searches (retrieval steps) per example (every record), and the latency in seconds of each call
  kind at its 50th and 95th percentiles (nearest rank: a latency some call took) over the calls sent (an LLM call
  the response cache answered took no model time and is left out).
"""

from __future__ import annotations

from .._metric import Metric, key_spec, reported_keys, saved_value
from .._records import SampleRecord
from .budget import NO_TOKENS
from .cost_schema import CostSections, Efficiency, KeyEfficiency, Latency
from .prices import PER, ModelPrices

KINDS = {"llm": "llm", "retrieval": "search"}  # a step's kind -> the call kind `latency_seconds` names


def percentile(values: list[float], q: int) -> float:
    """The `q`-th percentile by nearest rank: the smallest value with at least q% of the values at or below it
    (the rank in whole numbers, so no rounding moves it)."""
    ordered = sorted(values)
    return ordered[max(0, -(-q * len(ordered) // 100) - 1)]


def latency(values: list[float]) -> Latency:
    return {
        "calls": len(values),
        "p50": percentile(values, 50) if values else None,
        "p95": percentile(values, 95) if values else None,
    }


def counted_keys(metrics: list[Metric]) -> dict[str, tuple[Metric, str, float, float]]:
    """Reported key -> (metric, own key, low, high) of every per-example key whose correct answers count."""
    out = {}
    for metric in metrics:
        for reported, key in reported_keys(metric).items():
            spec = key_spec(metric, key)
            low, high = spec.range or (None, None)
            if spec.higher_is_better is True and low is not None and high is not None and high > low:
                out[reported] = (metric, key, float(low), float(high))
    return out


class EfficiencyTally:
    """A task's `efficiency`, filled sample by sample (records read with their traces' token counts and timing)."""

    def __init__(self, metrics: list[Metric], prices: ModelPrices) -> None:
        self.prices = prices
        self.keys = counted_keys(metrics)
        self.examples = self.traced = self.llm_calls = self.searches = 0
        self.tokens: dict[str | None, list[int]] = {}  # role -> [prompt, completion]
        self.seconds: dict[str, list[float]] = {kind: [] for kind in KINDS.values()}
        self.correct = dict.fromkeys(self.keys, 0.0)
        self.graded: set[str] = set()  # keys a value of which lay inside their range: no answers right or wrong

    def add(self, record: SampleRecord) -> None:
        self.examples += 1
        self.traced += bool(record.trace)
        for step in record.trace:
            if step.kind == "llm":
                self.llm_calls += 1
                used = self.tokens.setdefault(step.role, [0, 0])
                used[0] += step.prompt_tokens
                used[1] += step.completion_tokens
            self.searches += step.kind == "retrieval"
            if step.kind in KINDS and not step.cached:
                self.seconds[KINDS[step.kind]].append(float(step.seconds))
        if record.error is not None or record.bad_record:
            return
        for reported, (metric, key, low, high) in self.keys.items():
            if metric.name in record.score_errors:
                continue
            value, _ = saved_value(metric, key, record.scores.get(reported))
            if value is not None:
                self.correct[reported] += (value - low) / (high - low)
                if low < value < high:
                    self.graded.add(reported)

    def usd(self) -> tuple[float | None, str | None]:
        """The price of every token counted, or None and why (a model that answered has no price)."""
        total, notes = 0.0, []
        for role, (prompt, completion) in self.tokens.items():
            model = self.prices.of(role)
            if model.price is None:
                notes.append(model.note or f"{model.model} has no price")
            else:
                total += (prompt * model.price["prompt"] + completion * model.price["completion"]) / PER
        return (None, "; ".join(dict.fromkeys(notes))) if notes else (total, None)

    def sections(self) -> CostSections:
        """{"efficiency": figures}; nothing where no record carries a trace (outputs made elsewhere: what they cost is
        not known, not 0)."""
        if not self.traced:
            return {}
        tokens = sum(prompt + completion for prompt, completion in self.tokens.values())
        usd, note = self.usd()
        if self.llm_calls and not tokens:  # calls whose engine reported no token counts: not known, not 0
            usd, note = None, NO_TOKENS
        out: Efficiency = {
            "examples": self.examples,
            "tokens": tokens,
            "usd": usd,
            "llm_calls_per_example": self.llm_calls / self.examples,
            "searches_per_example": self.searches / self.examples,
            "latency_seconds": {kind: latency(values) for kind, values in self.seconds.items()},
            "per_correct": {
                key: per_correct(correct, tokens if tokens or not self.llm_calls else None, usd)
                for key, correct in self.correct.items()
                if key not in self.graded
            },
        }
        if note is not None:
            out["usd_note"] = note
        if self.graded:
            out["graded_keys"] = sorted(self.graded)  # `compare` leaves them out of every run's cost table
        return {"efficiency": out}


def per_correct(correct: float, tokens: int | None, usd: float | None) -> KeyEfficiency:
    """One key's correct answers and what each cost (null with no correct answer or no token counts; no dollars
    without a price)."""
    out: KeyEfficiency = {
        "correct": correct,
        "tokens_per_correct": tokens / correct if tokens is not None and correct > 0 else None,
    }
    if usd is not None:
        out["usd_per_correct"] = usd / correct if correct > 0 else None
    return out
