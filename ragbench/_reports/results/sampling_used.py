"""How the system's LLM calls were decoded, read from the requests its traces recorded (results.json `sampling`):
per kind of call (the step's name: "answer", "thought"), each distinct setting of the calls, every default
resolved, and how many calls used it. A system's options name its sampling in its own words or not at all
(vanilla's `sampling.temperature`, IRCoT's `max_tokens` alone); what was sent is what runs compare on.

The seed is left out (a sampled call without its own is seeded per call: results.json `seed_policy`), and so are
the log-probabilities a call asks to see, which change no output. A setting an API engine leaves to its server
(`left_to_server`: temperature, top_p) reads SERVER_DEFAULT: the server decides it, not the value sent."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import cast

from ..._records import SampleRecord
from .config_diff import Difference
from .schema import Results, SamplingUsed, TaskSections

DECODING = ("max_tokens", "temperature", "top_p", "stop", "n", "keep_stop", "skip_special_tokens", "json_mode", "lora")
PENALTIES = ("frequency_penalty", "presence_penalty")  # in a setting only where its calls set them
SERVER_DEFAULT = "the server's default"
SHOWN = ("temperature", "top_p", "max_tokens")  # the settings `decoding_line` shows whether they differ or not
NOT_RECORDED = "not recorded (outputs made elsewhere, or a run of an older ragbench)"


class SamplingTally:
    """`sampling` of a task, filled sample by sample; only scored examples count (as the budget's)."""

    def __init__(self) -> None:
        self.settings: dict[str, Counter[str]] = {}  # step name -> the settings' JSON -> calls

    def add(self, record: SampleRecord) -> None:
        if record.error is not None or record.bad_record:
            return
        for step in record.trace:
            sent = step.request.get("sampling") if step.kind == "llm" else None
            if isinstance(sent, dict):  # a trace of a recorded or older run may hold no sampling
                kind = str(step.name or "generate")
                self.settings.setdefault(kind, Counter())[json.dumps(effective(sent), sort_keys=True)] += 1

    def sections(self) -> TaskSections:
        """{"sampling": {step name: [{"calls": n, setting: value ...}, ...]}}, the most used setting of a step
        first; nothing where no call recorded its sampling."""
        if not self.settings:
            return {}
        return {
            "sampling": {  # each setting as `effective` made it: `SamplingUsed`'s keys
                kind: [
                    cast(SamplingUsed, {"calls": calls, **json.loads(text)}) for text, calls in counted.most_common()
                ]
                for kind, counted in sorted(self.settings.items())
            }
        }


def effective(sampling: Mapping[str, object]) -> dict[str, object]:
    """The decoding settings of a request's recorded sampling (ragbench._values.llm_request.Request.to_dict)."""
    named = sampling.get("left_to_server")
    left = set(named) if isinstance(named, (list, tuple)) else set()
    out = {name: SERVER_DEFAULT if name in left else sampling.get(name) for name in DECODING}
    return out | {name: sampling[name] for name in PENALTIES if sampling.get(name) is not None}


def used(results: Results, task: str) -> dict[str, dict[str, list[str]]] | None:
    """Each decoding setting's values over the task's calls as JSON, each with the kinds of call that used it
    ({"temperature": {"0.0": ["answer", "thought"]}}); None where the run recorded no sampling for the task."""
    kinds = (results.sampling or {}).get(task)
    if not kinds:
        return None
    out: dict[str, dict[str, list[str]]] = {name: {} for name in DECODING + PENALTIES}
    for kind, settings in kinds.items():
        for setting in settings:
            for name in DECODING + PENALTIES:
                value = json.dumps(setting.get(name), sort_keys=True)
                if kind not in out[name].setdefault(value, []):
                    out[name][value].append(kind)
    return out


def sampling_differences(task: str, a: Results, b: Results) -> list[Difference]:
    """The decoding settings whose values over the task's calls differ between runs `a` and `b`, each run's
    values with the kinds of call that used them where a run used more than one ("[] (answer)"); a run that
    recorded none (an older run, outputs made elsewhere) is one difference."""
    used_a, used_b = used(a, task), used(b, task)
    if used_a is None and used_b is None:
        return []
    if used_a is None or used_b is None:
        said = ["recorded", NOT_RECORDED]
        return [Difference(f"sampling.{task}", *(said if used_b is None else said[::-1]))]
    return [
        Difference(f"sampling.{task}.{name}", _values(used_a[name]), _values(used_b[name]))
        for name in DECODING + PENALTIES
        if set(used_a[name]) != set(used_b[name])
    ]


def _values(values: dict[str, list[str]]) -> str:
    if len(values) == 1:
        return next(iter(values))
    return ", ".join(f"{value} ({', '.join(kinds)})" for value, kinds in values.items())


def decoding_line(task: str, a: Results, b: Results) -> str | None:
    """Both runs' temperature, top_p and max_tokens over the task's calls as sent, in a line (what a system's
    options leave unnamed, `(not set)` among its settings, is here as it was sent); None unless both recorded it."""
    used_a, used_b = used(a, task), used(b, task)
    if used_a is None or used_b is None:
        return None
    values = [f"{name} {', '.join(used_a[name])} vs {', '.join(used_b[name])}" for name in SHOWN]
    return f"Decoding as sent on {task}, over every call (results.json `sampling`): " + "; ".join(values) + "."
