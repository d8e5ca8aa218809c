"""The NLI judge that citation and claim metrics ask "does this premise entail this hypothesis?".

`NLI` wraps an `LLM` handle, so every request goes through the scheduler and is batched with the
requests of every other example being scored; identical (premise, hypothesis) pairs are computed
once per run. Two request formats:

  true    ALCE eval.py `_run_nli_autoais` (TRUE, google/t5_xxl_true_nli_mixture): the prompt
          "premise: {premise} hypothesis: {hypothesis}", greedy, at most 10 new tokens; entailed
          iff the decoded output is exactly "1". Any engine: hf (seq2seq), vllm, openai, replay.
  prompt  LLM-as-NLI for chat models: the chat message PROMPT_TEMPLATE below, greedy, at most 5
          new tokens; entailed iff the reply's first word, lowercased and stripped of
          punctuation, is "yes". Any other reply counts as not entailed and is counted in
          `stats.unparsed`.

Each decision can be appended to a JSONL log ({"prompt" | "messages", "sampling", "response"}), which is a
replay file: `--nli replay:runs/<run>/nli_calls.jsonl` re-scores a run offline.
"""

from __future__ import annotations

import asyncio
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ._errors import ConfigError
from ._in_flight import waiting_for
from ._llm import LLM
from ._replay.exchange_log import ExchangeLog, exchange_line
from ._values.llm_request import Request
from ._values.sampling import Sampling

PROMPT_TEMPLATE = (
    "Premise: {premise}\n\n"
    "Hypothesis: {hypothesis}\n\n"
    "Does the premise entail the hypothesis, that is, is the hypothesis fully supported by the premise? "
    'Answer with one word: "yes" or "no".'
)


@dataclass
class NliStats:
    requests: int = 0  # entailment questions asked by metrics
    computed: int = 0  # distinct (premise, hypothesis) pairs sent to the engine
    unparsed: int = 0  # `prompt` format replies that were neither yes nor no

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


class NliFormat:
    name: ClassVar[str] = ""

    def request(self, premise: str, hypothesis: str) -> Request:
        raise NotImplementedError

    def decide(self, text: str, stats: NliStats) -> int:
        raise NotImplementedError


class TrueFormat(NliFormat):
    name = "true"
    sampling = Sampling(max_tokens=10, temperature=0.0)

    def request(self, premise: str, hypothesis: str) -> Request:
        return Request(prompt=f"premise: {premise} hypothesis: {hypothesis}", sampling=self.sampling)

    def decide(self, text: str, stats: NliStats) -> int:
        return 1 if text == "1" else 0  # as eval.py: exactly "1", no stripping


class PromptFormat(NliFormat):
    name = "prompt"
    sampling = Sampling(max_tokens=5, temperature=0.0)

    def request(self, premise: str, hypothesis: str) -> Request:
        content = PROMPT_TEMPLATE.format(premise=premise, hypothesis=hypothesis)
        return Request.chat([{"role": "user", "content": content}], self.sampling)

    def decide(self, text: str, stats: NliStats) -> int:
        words = text.strip().split()
        first = words[0].lower().strip(string.punctuation) if words else ""
        if first not in ("yes", "no"):
            stats.unparsed += 1
        return 1 if first == "yes" else 0


FORMATS: dict[str, type[NliFormat]] = {cls.name: cls for cls in (TrueFormat, PromptFormat)}


def nli_format(name: str) -> NliFormat:
    if name not in FORMATS:
        raise ConfigError(f"--nli-format {name}: not one of {', '.join(FORMATS)}")
    return FORMATS[name]()


class NLI:
    """`await nli.entails(premise, hypothesis)` -> 1 or 0."""

    def __init__(self, llm: LLM, fmt: NliFormat | str = "true", log_path: str | Path | None = None) -> None:
        self.llm = llm
        self.format = nli_format(fmt) if isinstance(fmt, str) else fmt
        self.stats = NliStats()
        self._decisions: dict[tuple[str, str], asyncio.Future[Any]] = {}
        self._log = ExchangeLog(log_path) if log_path is not None else None

    async def entails(self, premise: str, hypothesis: str) -> int:
        self.stats.requests += 1
        key = (premise, hypothesis)
        decision = self._decisions.get(key)
        if decision is None:
            decision = self._decisions[key] = asyncio.ensure_future(self._compute(premise, hypothesis))
        try:
            with waiting_for(decision):  # maybe another example's call: this one waits on it, not working
                return await asyncio.shield(decision)
        except Exception:
            self._decisions.pop(key, None)  # a failed call may be retried by a later example
            raise

    async def _compute(self, premise: str, hypothesis: str) -> int:
        request = self.format.request(premise, hypothesis)
        self.stats.computed += 1
        response = await self.llm.send(request, step="nli")
        if self._log is not None:
            self._log.write(exchange_line(request.to_dict(), response.text))
        return self.format.decide(response.text, self.stats)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
