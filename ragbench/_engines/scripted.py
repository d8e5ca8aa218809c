"""`scripted` engine: answers come from Python code or regex rules; optional simulated batch cost.

Model strings:
  scripted:echo                  the prompt's (or last message's) last line, for harness tests
  scripted:pkg.module:function   function(request) -> str | Response
  scripted:rules.json            [{"pattern": regex, "response": text}, ...]; first match wins,
                                 a rule with no pattern is the default
A script's answer may also be a replay record with per-token data, {"response": text, "tokens": [...],
"logprobs": [{token: logprob, ...}, ...], "cumulative_logprob": x} (see replay.py), so tests script
token-level decisions (Self-RAG's reflection tokens); rules files may hold such dicts as "response". An answer
to a request that offers tools may call them: {"tool_calls": [{"id": "call_1", "name": "search", "arguments":
{"query": "..."}}], "response": optional text}; "arguments" an object, or a string: the text the model wrote,
kept as written (not JSON: a malformed call, kept and counted); finish_reason "tool_calls". A rules file is
checked as it is read (`rule_problem`, ragbench._engines.answer_records): a rule of another shape is refused
before the run, naming the file and the rule's index. A record
whose tokens spell its text is the model's continuation, generated as hf and vllm generate: it ends after
`max_tokens` tokens (finish_reason "length") or at the token that completes a stop string, and its text is cut
at the stop string as a text answer is; a record whose tokens do not spell its text is answered as written.
A plain-text answer to a request with logprobs or logprob_tokens is reported as a certain model's:
the text split into pieces (each requested named token whole, otherwise runs of non-space characters
with their leading space), every piece log-probability 0, a named token reported where it was generated.
Options `overhead`, `per_request` and `per_token` (seconds) make each batch sleep
`overhead + per_request*n + per_token*tokens` (tokens: prompt and completion tokens of the batch's
answers), the cost models of the scheduler and load benchmarks; `batch_size` sets the batch limit.
Option `tokenizer` (a model folder or `embedded`) names the model the script stands for: its prompt tokens are
counted in that model's tokens (else in words), and `ragbench estimate` counts the examples' lengths with it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any

from annotated_types import Ge

from .._errors import ConfigError
from .._imports import load_callable
from .._storage.jsonl import parse_json
from .._values.chat_turns import turn_text
from .._values.engine_errors import EngineError
from .._values.llm_request import Request
from .._values.llm_responses import Response
from .._values.sampling import Sampling, apply_stop
from .answer_records import ANSWER_FIELDS, AnswerRecord, record_problem
from .base import Engine
from .local.content import file_digest
from .local.tokenizers import folder_counter
from .replay import check_token_record, token_response

Script = Callable[[Request], "str | Response | Mapping[str, object]"]  # a mapping: an answer record (AnswerRecord)
Seconds = Annotated[float, Ge(0)]


def last_text(request: Request) -> str:
    """The prompt, or the last message of a chat: what scripts read and rules match."""
    return request.prompt if request.prompt is not None else turn_text((request.messages or (("", ""),))[-1])


def echo(request: Request) -> str:
    return last_text(request).rstrip("\n").rsplit("\n", 1)[-1]


RULES_SHAPE = 'a JSON list of {"pattern": regex, "response": text or answer object} (docs/engines.md#scripted)'


def rules_script(path: Path, data: bytes) -> Script:
    """The rules of a JSON file, from its bytes `data`: each checked now (`rule_problem`), so a rule the engine
    could not answer with is refused before the run, naming the file and the rule."""
    try:
        rules = parse_json(data.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError too
        raise ConfigError(f"scripted rules file {path}: not JSON ({exc}); expected {RULES_SHAPE}") from None
    if not isinstance(rules, list):
        raise ConfigError(f"scripted rules file {path}: {_kind(rules)}, not a list; expected {RULES_SHAPE}")
    for index, rule in enumerate(rules):
        problem = rule_problem(rule)
        if problem is not None:
            raise ConfigError(f"scripted rules file {path}: rule {index}: {problem}; expected {RULES_SHAPE}")
    return rule_script([(rule.get("pattern"), rule["response"]) for rule in rules])


def rule_problem(rule: Any) -> str | None:
    """What makes `rule` (one entry of a rules file) no rule the engine answers with, or None."""
    if not isinstance(rule, dict):
        return f"{_kind(rule)}, not an object"
    unknown = sorted(set(rule) - {"pattern", "response"})
    if unknown:
        return f"unknown key {json.dumps(unknown[0])}"
    pattern = rule.get("pattern")
    if pattern is not None and not isinstance(pattern, str):
        return f'"pattern" is {_kind(pattern)}, not a regex'
    try:
        re.compile(pattern or "")
    except re.error as exc:
        return f'"pattern" {json.dumps(pattern)} is no regex ({exc})'
    if "response" not in rule:
        return 'no "response"'
    answer = rule["response"]
    if isinstance(answer, str):
        return None
    if not isinstance(answer, dict):
        return f'"response" is {_kind(answer)}, not a text or an answer object'
    unknown = sorted(set(answer) - set(ANSWER_FIELDS))
    if unknown:
        return f'"response": unknown key {json.dumps(unknown[0])} (an answer object has {", ".join(ANSWER_FIELDS)})'
    if not isinstance(answer.get("response", ""), str):
        return f'"response": its "response" is {_kind(answer["response"])}, not a text'
    if "response" not in answer and "tool_calls" not in answer:
        return '"response": an answer object has a "response" text or "tool_calls", or both'
    problem = record_problem(answer)
    return None if problem is None else f'"response": {problem}'


def _kind(value: Any) -> str:
    """A JSON value's kind, as a message names it."""
    kinds = {dict: "an object", list: "a list", str: "a text", bool: "true or false", type(None): "null"}
    return kinds.get(type(value), "a number")


def rule_script(rules: list[tuple[str | None, str | Response | Mapping[str, object]]]) -> Script:
    """(regex, answer) rules: the first whose regex is found in the request's text answers; an empty
    or missing regex matches anything (the default)."""
    compiled = [(re.compile(pattern, re.S) if pattern else None, response) for pattern, response in rules]

    def answer(request: Request) -> str | Response | Mapping[str, object]:
        text = last_text(request)
        for pattern, response in compiled:
            if pattern is None or pattern.search(text):
                return response
        raise EngineError(f"no scripted rule matches: {text[:120]!r}")

    return answer


def load_script(spec: str) -> tuple[Script, str | None]:
    """The script, and for a rules file the sha256 of its content (its answers' identity)."""
    if spec == "echo":
        return echo, None
    if spec.endswith(".json"):
        try:
            data = Path(spec).read_bytes()
        except OSError as exc:
            raise ConfigError(
                f"scripted rules file {spec}: {exc.strerror or exc}; expected a JSON list of "
                '{"pattern": regex, "response": text}'
            ) from exc
        return rules_script(Path(spec), data), hashlib.sha256(data).hexdigest()[:16]
    return load_callable(
        spec, "scripted engine", "use scripted:echo, scripted:rules.json or scripted:package.module:function"
    ), None


class ScriptedEngine(Engine):
    kind = "scripted"
    starts_processes = False
    calls_tools = True  # an answer {"tool_calls": [...]} (see the module docstring)
    takes_images = True  # rules read the text; a test's engine takes what a real one would

    def __init__(
        self,
        model: str = "echo",
        script: Script | None = None,
        overhead: Seconds = 0.0,
        per_request: Seconds = 0.0,
        per_token: Seconds = 0.0,
        batch_size: Annotated[int, Ge(1)] = 16,
        tokenizer: str | None = None,
    ) -> None:
        super().__init__(model)
        self.counter = folder_counter(tokenizer) if tokenizer else None
        if tokenizer and self.counter is None:
            raise ConfigError(
                f"scripted engine: tokenizer {tokenizer!r} is not on disk (a model folder with its tokenizer, a hub "
                "name in the local cache, or `embedded` once installed)"
            )
        self.script, self._content = (script, None) if script else load_script(model)
        self.overhead = float(overhead)
        self.per_request = float(per_request)
        self.per_token = float(per_token)
        self.max_batch_size = int(batch_size)
        self.batch_sizes: list[int] = []  # what the scheduler sent, for tests and benchmarks

    @property
    def early_batch(self) -> int | None:
        """With a simulated cost per request, the fewest requests worth a batch sent early
        (ragbench._scheduler): as many as cost the batch's fixed `overhead` at `per_request` each. None
        (the scheduler's default) without one."""
        if not self.per_request:
            return None
        return max(1, math.ceil(min(self.max_batch_size, self.overhead / self.per_request)))  # inf: the limit

    @classmethod
    def content_of(cls, model: str) -> str | None:
        return file_digest(model) if model.endswith(".json") else None

    @property
    def engine_id(self) -> str:
        """A rules file's answers are keyed by its content, not its name: an edited file, or another
        folder's file of the same name, never gets the old answers from a shared cache."""
        return super().engine_id + (f";sha256={self._content}" if self._content else "")

    def generate(self, requests: list[Request]) -> list[Response | EngineError]:
        self.batch_sizes.append(len(requests))
        answers = [self._answer(request) for request in requests]
        tokens = sum(a.prompt_tokens + a.completion_tokens for a in answers if isinstance(a, Response))
        if self.overhead or self.per_request or self.per_token:
            time.sleep(self.overhead + self.per_request * len(requests) + self.per_token * tokens)
        return answers

    def _answer(self, request: Request) -> Response | EngineError:
        try:
            out = self.script(request)
        except EngineError as exc:
            return exc
        except Exception as exc:
            return EngineError(f"scripted engine raised {type(exc).__name__}: {exc}")
        if isinstance(out, Response):
            return out
        sampling = request.sampling
        asked = sampling.logprobs is not None or sampling.logprob_tokens
        if isinstance(out, dict):
            try:
                record = generated(check_token_record(out), sampling)
                if asked and "tokens" not in record:  # log-probs of a certain model, as for a text
                    record = {**record, **certain_tokens(_text(record.get("response", "")), sampling)}
                response = token_response(record, sampling)
            except (KeyError, ValueError, TypeError) as exc:
                return EngineError(f"scripted engine: bad per-token answer ({exc})")
        else:
            text, _ = apply_stop(str(out), sampling.stop, sampling.keep_stop)
            response = token_response(certain_tokens(text, sampling) if asked else {"response": text}, sampling)
            response.completion_tokens = len(text.split())
        if len(response.texts) == 1:  # the one answer, for each of the `n` asked
            response.texts *= sampling.n
            if response.choice_tool_calls is not None:
                response.choice_tool_calls *= sampling.n
        prompt = last_text(request)
        response.prompt_tokens = self.counter.count([prompt])[0] if self.counter else len(prompt.split())
        response.completion_tokens = response.completion_tokens or len(response.text.split())
        return response


def generated(record: AnswerRecord, sampling: Sampling) -> AnswerRecord:
    """A per-token record whose tokens spell its text, as far as a model generates it (see the module docstring)."""
    tokens = record.get("tokens")
    if not isinstance(tokens, list) or "".join(tokens) != record.get("response", ""):  # "": calls alone
        return record
    count, text = 0, ""
    for count, token in enumerate(tokens[: sampling.max_tokens], 1):  # noqa: B007 (`count` is read after the loop)
        text += token
        if any(stop and stop in text for stop in sampling.stop):
            break
    cut, stopped = apply_stop(text, sampling.stop, sampling.keep_stop)
    out: AnswerRecord = {**record, "response": cut}
    if not stopped and count < len(tokens):  # the token limit ended it
        out["finish_reason"] = "length"
    if count < len(tokens):  # the later tokens were never generated; the log-probabilities are summed again
        out["tokens"] = tokens[:count]
        if "logprobs" in record:
            out["logprobs"] = record["logprobs"][:count]
        if (ids := record.get("token_ids")) is not None:
            out["token_ids"] = ids[:count]
        if (ranks := record.get("ranks")) is not None:
            out["ranks"] = ranks[:count]
        out.pop("cumulative_logprob", None)
    return out


def certain_tokens(text: str, sampling: Sampling) -> AnswerRecord:
    """`text` as a record of a model certain of every token (see the module docstring)."""
    named = sorted(sampling.logprob_tokens, key=len, reverse=True)
    pattern = "|".join([re.escape(t) for t in named if t] + [r"\s*[^\s\[<]+|\s+|[\[<]"])
    tokens = re.findall(pattern, text)
    return {"response": text, "tokens": tokens, "logprobs": [{t: 0.0} for t in tokens]}


def _text(response: str | list[str]) -> str:
    """An answer's one text; n texts have no one token list (TypeError, as `re` raises for a list)."""
    if not isinstance(response, str):
        raise TypeError(f"expected string or bytes-like object, got '{type(response).__name__}'")
    return response
