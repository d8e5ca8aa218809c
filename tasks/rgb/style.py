"""RGB's passage sampling as prompt styles of YAML tasks (`prompt.style: rgb`, `rgb_int`, `rgb_fact`): each
example carries the passages evalue.py shows for the task's `noise_rate` and `passage_num` (sampling.py).
The prompts themselves (config/instruction.yaml's system message and instruction) are the YAML files'."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from ragbench.api import ConfigError, Document, Example
from ragbench.api.yaml_tasks import RecordPlace, YamlTask

from .metrics import ANSWER, NOISE_RATE
from .sampling import sample_passages


def _rate(task: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ConfigError(f"task {task}: {name} must be a number from 0 to 1, got {value!r}")
    return float(value)


def _answer_items(answer: Any) -> bool:
    """Whether `answer` is as evalue.py's checkanswer reads it: a string, or a list of strings and alias lists."""
    if isinstance(answer, str):
        return True
    return isinstance(answer, list) and all(
        isinstance(item, str) or (isinstance(item, list) and all(isinstance(alias, str) for alias in item))
        for item in answer
    )


class RgbPassages(YamlTask):
    """The noise-robustness and negative-rejection sets (en.json, zh.json): `passage_num` passages, of which
    ceil(passage_num x noise_rate) are negatives; noise_rate 1: negatives only."""

    setting: ClassVar[str] = "plain"

    def __init__(self, data_path: str | Path | None = None, noise_rate: float = 0.0, passage_num: int = 5) -> None:
        super().__init__(data_path)
        if isinstance(passage_num, bool) or not isinstance(passage_num, int) or passage_num < 1:
            raise ConfigError(
                f"task {self.name}: passage_num must be a whole number of at least 1, got "
                f"{passage_num!r} (closed book: --system closed_book)"
            )
        self.noise_rate = _rate(self.name, "noise_rate", noise_rate)
        self.passage_num = passage_num
        self.args.update(noise_rate=self.noise_rate, passage_num=passage_num)
        self.own_documents = True

    def sampled(self, record: dict[str, Any]) -> list[str]:
        """The passages evalue.py shows for one record (not the contract's `passages`, which systems call)."""
        return sample_passages(record, self.setting, self.noise_rate, self.passage_num)

    def system_defaults(self) -> dict[str, object]:
        """evalue.py shows every passage it samples: a system that takes top_n shows passage_num."""
        return {"top_n": self.passage_num}

    def parse(self, record: Any, place: RecordPlace) -> Example:
        example = super().parse(record, place)
        if ANSWER not in example.gold:  # extra_gold is optional to the YAML reader; evalue.py reads it
            raise place.error("missing field", "answer")
        if not _answer_items(example.gold[ANSWER]):
            raise place.error("expected a string, or a list of strings and lists of aliases", "answer")
        try:
            texts = self.sampled(record)
        except KeyError as exc:
            raise place.error("missing field", str(exc.args[0])) from exc
        except (TypeError, ValueError, IndexError) as exc:
            raise place.error(f"cannot sample its passages as evalue.py does ({exc})", "positive") from exc
        if not all(isinstance(text, str) for text in texts):
            raise place.error("a passage that is not text", "positive")
        example.docs = [Document(id=f"{example.id}:{n}", title="", text=text) for n, text in enumerate(texts)]
        example.meta[NOISE_RATE] = self.noise_rate
        return example

    def gold_references(self, gold: Mapping[str, object]) -> list[str]:
        """The answer as one reference text: every item (an alias list: its first alias), joined."""
        answer = gold[ANSWER]
        items = answer if isinstance(answer, list) else [answer]
        return [", ".join(str(item[0] if isinstance(item, list) and item else item) for item in items)]


class RgbIntegration(RgbPassages):
    """The information-integration sets (en_int.json, zh_int.json): `positive` holds one group of passages per
    answer item; each group's first (shuffled) passage, then further ones in turn."""

    setting = "int"


class RgbCounterfactualTask(RgbPassages):
    """The counterfactual sets (en_fact.json, zh_fact.json): the `positive_wrong` passages, with
    ceil(passage_num x correct_rate) true ones (`correct_rate`, default 0 as evalue.py's) and the negatives
    of `noise_rate`."""

    setting = "fact"

    def __init__(
        self,
        data_path: str | Path | None = None,
        noise_rate: float = 0.0,
        passage_num: int = 5,
        correct_rate: float = 0.0,
    ) -> None:
        super().__init__(data_path, noise_rate, passage_num)
        self.correct_rate = self.args["correct_rate"] = _rate(self.name, "correct_rate", correct_rate)
        negatives, true_ones = math.ceil(passage_num * self.noise_rate), math.ceil(passage_num * self.correct_rate)
        if negatives + true_ones > passage_num:  # evalue.py's random.sample of a negative count stops it
            raise ConfigError(
                f"task {self.name}: noise_rate {self.noise_rate} and correct_rate {self.correct_rate} ask "
                f"{negatives} negative and {true_ones} true of {passage_num} passages; lower one of them"
            )

    def sampled(self, record: dict[str, Any]) -> list[str]:
        return sample_passages(record, self.setting, self.noise_rate, self.passage_num, self.correct_rate)
