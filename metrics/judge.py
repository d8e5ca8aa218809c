"""`llm_judge`: a general LLM-as-judge metric - a prompt template, a parser, one or several judges.

    --metrics +llm_judge --judge openai:gpt-4o-mini [--judge vllm:/models/llama-70b --judge-arg 1.base_url=...]
    --metric-arg llm_judge.preset=correctness|faithfulness|rubric   (default correctness)
    --metric-arg llm_judge.prompt=FILE          your template ({question} {answer} {reference} {documents})
    --metric-arg llm_judge.labels=correct:1,incorrect:0 | llm_judge.score_range=1-5 | llm_judge.json_field=score
    --metric-arg "llm_judge.after=Decision:"    labels read after the reply's last "Decision:" (preset frames)

The parser is one of: a label set (the first label word in the reply decides, or with `after` the first after
the reply's last occurrence of that text, none there: not parsed; values as given), a score
range (the first number in the reply, normalised to [0, 1]), or a JSON field (of the first top-level JSON
object holding it, normalised with `score_range` when given). Several judges are averaged per example (the CRAG paper's
GPT-4 + Llama-3-70B pair), each with its own engine options (`--judge-arg N.key=value`). A reply that
does not parse is counted in `llm_judge_unparsed` and left out of the average, never scored 0; an
example no judge could score is not scorable (None). Every exchange is in the sample's `judge_trace`,
the run's calls/llm.jsonl and a ready replay file per judge, `judgeN_calls.jsonl` in the run folder:
`ragbench score ... --judge replay:runs/X/judge0_calls.jsonl [--judge replay:runs/X/judge1_calls.jsonl]`
reproduces the scores offline.

The presets (judge_prompts/: presets.yaml and a template file each, a starting point for `prompt=FILE`)
are worded by ragbench, not taken from a paper. CRAG's judges keep their exact prompts in tasks/crag/metrics.py.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import yaml

from ragbench.api import ConfigError, EngineError, Example, KeySpec, Metric, MetricDeclaration, Prediction, Scores, Task
from ragbench.api.data import JsonObject

PROMPTS_DIR = Path(__file__).with_name("judge_prompts")  # presets.yaml and the presets' template files


def load_presets(folder: Path = PROMPTS_DIR) -> dict[str, dict[str, Any]]:
    """The built-in presets (judge_prompts/presets.yaml), each with its template text read in."""
    presets = yaml.safe_load((folder / "presets.yaml").read_text(encoding="utf-8"))
    return {
        name: {
            **spec,
            "template": read_template(folder / spec["template"]),
            **({"score_range": tuple(spec["score_range"])} if "score_range" in spec else {}),
        }
        for name, spec in presets.items()
    }


def read_template(path: str | Path) -> str:
    """A template file's text without the final newline editors add."""
    return Path(path).read_text(encoding="utf-8").removesuffix("\n")


PRESETS = load_presets()

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _parse_pair(text: str) -> tuple[float, float]:
    low, _, high = str(text).partition("-")
    try:
        return float(low), float(high)
    except ValueError:
        raise ConfigError(f"metric llm_judge: score_range '{text}' is not LOW-HIGH, e.g. 1-5") from None


def _parse_labels(text: str) -> dict[str, float]:
    try:
        labels = {
            name.strip().lower(): float(value)
            for name, _, value in (item.partition(":") for item in str(text).split(",") if item.strip())
        }
    except ValueError:
        labels = {}
    if not labels or "" in labels:
        raise ConfigError(f"metric llm_judge: labels '{text}' is not NAME:VALUE,..., e.g. correct:1,incorrect:0")
    return labels


class LlmJudge(Metric):
    name = "llm_judge"
    declares = MetricDeclaration(
        keys=("llm_judge", "llm_judge_unparsed"),
        needs=("judge",),
    )

    def __init__(
        self,
        preset: str = "correctness",
        prompt: str | None = None,
        labels: str | None = None,
        score_range: str | None = None,
        json_field: str | None = None,
        after: str | None = None,
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> None:
        if preset not in PRESETS:
            raise ConfigError(f"metric llm_judge: preset '{preset}' is not one of {', '.join(PRESETS)}")
        base = PRESETS[preset]
        self.preset = preset
        self.template: str = base["template"]
        if prompt is not None:
            try:
                self.template = read_template(prompt)
            except OSError as exc:
                raise ConfigError(f"metric llm_judge: prompt {prompt}: {exc.strerror or exc}") from exc
        self.labels: dict[str, float] | None = dict(base.get("labels") or {}) or None
        self.score_range = base.get("score_range")
        self.json_field = base.get("json_field")
        if labels is not None:
            self.labels = _parse_labels(labels)
            self.score_range, self.json_field = None, None
        if score_range is not None:
            self.score_range = _parse_pair(score_range)
            if json_field is None and labels is None:
                self.labels = None
        if json_field is not None:
            self.json_field, self.labels = json_field, None
        self.after: str | None = (after if after is not None else base.get("after")) if self.labels else None
        if not (self.labels or self.score_range or self.json_field):
            raise ConfigError(
                "metric llm_judge: give a parser: labels=NAME:VALUE,..., score_range=LOW-HIGH or json_field=NAME"
            )
        verdicts = (
            (min(self.labels.values()), max(self.labels.values()))
            if self.labels
            else (0.0, 1.0)
            if self.score_range
            else None
        )  # a JSON field without a range: as the judge gives it
        key_specs = {
            "llm_judge": KeySpec(range=verdicts),
            "llm_judge_unparsed": KeySpec(False, (0, None)),
        }  # replies that did not parse
        self.declares = dataclasses.replace(self.declares, key_specs=key_specs)
        self.sampling = {"max_tokens": int(max_tokens or base.get("max_tokens", 16)), "temperature": float(temperature)}
        try:
            self.template.format(question="", answer="", reference="", documents="")
        except (KeyError, IndexError, ValueError) as exc:
            raise ConfigError(
                f"metric llm_judge: the template has an unknown or bad field ({exc}); use "
                "{question} {answer} {reference} {documents} (double other braces)"
            ) from exc

    def config(self) -> JsonObject:
        return {
            "name": self.name,
            "preset": self.preset,
            "template": self.template,
            "labels": dict(self.labels) if self.labels else None,
            "score_range": self.score_range,
            "json_field": self.json_field,
            "after": self.after,
            "sampling": dict(self.sampling),
        }

    def prompt(self, example: Example, prediction: Prediction, task: Task) -> str:
        """The judge's prompt; {reference} is every gold answer as the task reads them (Task.gold_references)."""
        if not prediction.docs and "{documents}" in self.template:
            raise ValueError(
                "the judge prompt shows the documents the answer was given, and this prediction has "
                "none (a closed-book system, or a predictions file without docs)"
            )
        documents = "\n".join(f"[{i}] {d.title}\n{d.text}" for i, d in enumerate(prediction.docs, 1))
        return self.template.format(
            question=example.question,
            answer=prediction.answer,
            reference=" | ".join(task.gold_references(example.gold)),
            documents=documents,
        )

    def parse(self, reply: str) -> float | None:
        """The judge's verdict in [0, 1] (labels: their values), or None when the reply does not parse."""
        text = reply.strip()
        if self.json_field:
            return self._json_value(text)
        if self.labels:
            lowered = text.lower()
            if self.after:
                marker = lowered.rfind(self.after.lower())
                if marker < 0:
                    return None
                lowered = lowered[marker + len(self.after) :]
            found = [
                (m.start(), label)
                for label in self.labels
                for m in re.finditer(rf"(?<![a-z]){re.escape(label)}(?![a-z])", lowered)
            ]
            return self.labels[min(found)[1]] if found else None
        match = _NUMBER.search(text)
        return self._normalise(float(match.group())) if match else None

    def _json_value(self, text: str) -> float | None:
        """The field of the first top-level JSON object in the reply that has it (text around objects,
        such as a code fence, is skipped; a field of a nested object does not count)."""
        decoder = json.JSONDecoder()
        start = text.find("{")
        while start != -1:
            try:
                found, end = decoder.raw_decode(text, start)
            except ValueError:
                start = text.find("{", start + 1)
                continue
            if isinstance(found, dict) and self.json_field in found:
                try:
                    return self._normalise(float(found[self.json_field]))
                except (TypeError, ValueError):
                    return None
            start = text.find("{", end)
        return None

    def _normalise(self, value: float) -> float | None:
        if not self.score_range:
            return value
        low, high = self.score_range
        return (value - low) / (high - low) if low <= value <= high else None

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        messages = [{"role": "user", "content": self.prompt(example, prediction, ctx.task)}]
        replies = await ctx.ask_judges(self, messages, return_exceptions=True, **self.sampling)
        failed = [r for r in replies if isinstance(r, BaseException)]
        if len(failed) == len(replies):
            raise EngineError(f"every judge call failed: {failed[0]}")
        verdicts = [self.parse(r.text) for r in replies if not isinstance(r, BaseException)]
        parsed = [v for v in verdicts if v is not None]
        return {
            "llm_judge": sum(parsed) / len(parsed) if parsed else None,
            "llm_judge_unparsed": float(len(verdicts) - len(parsed)),
        }

    def aggregate(self, key: str, values: list[float]) -> float:
        return sum(values) if key == "llm_judge_unparsed" else super().aggregate(key, values)
