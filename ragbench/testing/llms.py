"""The LLMs of plugin tests: `ScriptedLLM` (answered by a script) and `ReplayLLM` (by a recording), each
call sent straight to its engine unless a run (`run_examples`, `run_eval`) puts it behind a scheduler."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._engines.base import Engine
from .._engines.replay import ReplayEngine
from .._engines.scripted import ScriptedEngine, last_text, rule_script
from .._llm import LLM
from .._values.engine_errors import EngineError
from .._values.llm_request import Request
from .._values.llm_responses import Response

Script = Callable[[Request], "str | Response | Mapping[str, object]"]


class _Unbatched:
    """The scheduler of a unit test: each call goes straight to the engine, on the caller's event loop."""

    async def submit(self, engine: Engine, request: Request) -> Response:
        [result] = engine.generate([request])
        if isinstance(result, Exception):
            raise result
        return result


def _in_order(replies: Sequence[Any]) -> Script:
    pending, lock = list(replies), threading.Lock()

    def answer(request: Request) -> Any:
        with lock:
            if not pending:
                raise EngineError(
                    f"ScriptedLLM: all {len(replies)} scripted replies were used; one more call: "
                    f"{last_text(request)[:120]!r}"
                )
            return pending.pop(0)

    return answer


def _as_script(script: Any) -> Script:
    if isinstance(script, str):
        return lambda request: script
    if isinstance(script, dict):
        return rule_script(list(script.items()))
    if isinstance(script, (list, tuple)):
        return _in_order(script)
    if callable(script):
        function: Script = script  # a function(request) -> reply, as the docstring of ScriptedLLM says
        return function
    raise TypeError(
        f"ScriptedLLM: a script is a reply, a list of replies, a dict of rules or a function, "
        f"not a {type(script).__name__}"
    )


class ScriptedLLM(LLM):
    """An LLM answered by a script instead of a model; `script` is

    - a string: the reply to every call;
    - a list: the replies in the order the calls are made (for one example in `make_context`; in
      `run_eval` calls of several examples interleave, so use rules or a function there);
    - a dict {regex: reply}: the first regex found in the prompt (a chat's last message) answers, ""
      matches anything; a call no rule matches fails with the prompt named;
    - a function(request) -> reply, given the `ragbench.api.engines.Request` (its prompt or messages and sampling).

    A reply is text (cut at the call's stop strings; log-probabilities, when asked, are those of a
    model certain of every token) or a dict with per-token data (`{"response": text, "tokens": [...],
    "logprobs": [{token: logprob}, ...]}`), as the `scripted` engine takes (docs/engines.md); a script
    that raises `EngineError` fails the call with its message, as a failed model call.

    `requests` holds every request answered, in order; `batch_sizes` the size of each batch the script
    was given: one call at a time in `make_context`, at most `batch_size` calls of several examples at
    once in `run_examples` and `run_eval`.
    """

    def __init__(self, script: Any, batch_size: int = 16) -> None:
        self.requests: list[Request] = []
        self.script = _logged(_as_script(script), self.requests)
        super().__init__(
            _Unbatched(),  # type: ignore[arg-type]
            ScriptedEngine(
                "script",
                script=self.script,
                batch_size=batch_size,
            ),
        )

    @property
    def batch_sizes(self) -> list[int]:
        engine = self.engine
        assert isinstance(engine, ScriptedEngine)  # what __init__ made
        return engine.batch_sizes


def _logged(script: Script, log: list[Request]) -> Script:
    def answer(request: Request) -> Any:
        log.append(request)
        return script(request)

    return answer


class ReplayLLM(LLM):
    """An LLM answered from a recording: a run's `calls/llm.jsonl`, or a file of `{"prompt" or "messages",
    "response"}` lines as the `replay` engine reads them (docs/engines.md#replay); a call it does not
    hold fails, naming it."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(_Unbatched(), ReplayEngine(str(path)))  # type: ignore[arg-type]
