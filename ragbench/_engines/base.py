"""The one engine interface: a batch of requests in, responses (or per-request errors) out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .._values.engine_errors import EngineError
from .._values.engine_needs import EngineNeeds as EngineNeeds  # re-exported: what an engine's `needs` are
from .._values.llm_request import Request
from .._values.llm_responses import Response
from .._values.sampling import Sampling


def one_line(exc: BaseException) -> str:
    """An engine's exception as one line of a message: its kind and its first 300 characters."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


class Engine:
    """Base class for LLM engines.

    Batch engines implement `generate` (blocking; the scheduler runs it in a worker thread).
    Engines that batch by themselves (HTTP servers) set `concurrent = True` and implement
    `agenerate_one`; the scheduler then sends requests as they come, up to `max_concurrency`.
    A failed request is returned as an `EngineError` in its slot; other requests are unaffected.
    """

    kind: ClassVar[str] = "base"
    concurrent: bool = False  # per engine: a hosted engine with `batch=true` takes batches (batches/runner.py)
    max_batch_size: int = 16
    max_concurrency: int = 16
    # --model-arg chat=true|false, accepted by every engine (ragbench._engines.load_engine): whether the model is
    # a chat (instruction-tuned) model, for prompt formats that differ for one (FlashRAG's PromptTemplate
    # sends [system, user] messages to a chat model, one string to a plain one). None: the engine's own rule.
    declared_chat: bool | None = None
    # Whether `generate` decodes an ensemble request (`Request.ensemble`, REPLUG): it needs every input's
    # next-token logits at every step, which only an engine running the model's forward pass itself has.
    decodes_ensembles: ClassVar[bool] = False
    # Whether `generate` / `agenerate_one` sends a request's tools (`Request.tools`) and reads the model's tool
    # calls; an engine that cannot refuses a tool request rather than dropping its tools.
    calls_tools: ClassVar[bool] = False
    # Whether `generate` / `agenerate_one` sends a request's images (`Request.sent_images`) in the engine's own form;
    # an engine that cannot refuses a request with images rather than dropping them (`images_problem`).
    takes_images: ClassVar[bool] = False
    # it sends a remote MCP server (`Tool.remote_mcp`) for the API's servers to call its tools (anthropic; openai
    # with api=responses, set per engine)
    connects_mcp: bool = False
    # Whether a text cut at a stop string can be told from one the model ended: with `Sampling.keep_stop` the stop
    # string that fired ends the text and nothing else does. An API that does not say which stop string fired
    # (the openai engine) cannot tell.
    says_which_stop: ClassVar[bool] = True
    # Whether the engine may start processes (a model server, its workers) that a killed run must end: the run
    # starts its reaper (ragbench._run.models.reaper) before such an engine. One that only computes in this process
    # or calls a service says False, and a run of such engines starts no process for it.
    starts_processes: ClassVar[bool] = True
    _content: str | None = None  # `content_id`

    def __init__(self, model: str, **options: Any) -> None:
        self.model = model
        self.options = options

    @property
    def served_model(self) -> str:
        """The model's name as its requests carry it, for a system that decides by it (BrowseComp-Plus's
        openai_client sends no temperature to a model named "o..."): `model`; a replay engine's, the recorded one's."""
        return self.model

    @classmethod
    def preflight(cls, model: str, options: Mapping[str, object]) -> list[str]:
        """Problems with `engine:model` and its options found without loading anything (an engine
        that talks to a server checks it answers), one line each. Default: every option is one
        `__init__` names, of the type (and within the `Annotated` bounds) its hint gives."""
        from .._values.options import engine_option_problems

        return engine_option_problems(cls, dict(options))

    @classmethod
    def meet_needs(
        cls, model: str, options: Mapping[str, object], needs: Sequence[EngineNeeds]
    ) -> tuple[dict[str, object], list[str]]:
        """The options that set this engine up for what the systems it serves need, and (one line each)
        what no option can give; called by the pre-flight and again by the engine loader, so both see the
        same options. Default: the options as given, nothing refused."""
        return dict(options), []

    @classmethod
    def missing_vocabulary(cls, model: str, options: Mapping[str, object], names: Sequence[str]) -> list[str] | None:
        """Of `names`, those that are not single vocabulary entries, found without loading the model (its
        tokenizer only); None when the engine cannot tell before it loads (`missing_tokens` tells after)."""
        return None

    @classmethod
    def tools_problem(cls, model: str, options: Mapping[str, object]) -> str | None:
        """Why this engine cannot offer `model` tools, found without loading it; None where it can or cannot
        tell before it loads."""
        return None

    @classmethod
    def images_problem(cls, model: str, options: Mapping[str, object]) -> str | None:
        """Why `model` on this engine takes no images, found without loading it; None where it takes them or
        where that cannot be told before it loads (a vendor's model: the API refuses the request)."""
        if cls.takes_images:
            return None
        return (
            f"the {cls.kind} engine sends no images; run an image-text model with --model openai:, anthropic:, "
            "gemini:, vllm: or hf:"
        )

    @property
    def engine_id(self) -> str:
        """Identity for the cache: engine kind, model and the options that change outputs."""
        return f"{self.kind}:{self.model}"

    def call_identity(self, sampling: Sampling) -> str:
        """What identifies this engine's answers to requests of `sampling`, beside the request itself: the
        response cache's key. Default: `engine_id`; an engine that reads files a sampling field names adds
        their digest (vllm: a LoRA adapter folder), so a changed file never gets the old answers."""
        return self.engine_id

    @property
    def content_id(self) -> str | None:
        """A digest of the model's local files (a model folder, a rules or replay file), when it has
        some: a resumed run refuses a model whose files changed under the same name. Part of
        `engine_id`, so a shared cache never answers from the old files. Set as `_content` by an engine
        that reads such files."""
        return self._content

    @classmethod
    def content_of(cls, model: str) -> str | None:
        """The `content_id` an engine of `model` would have, found without loading it (the --resume of a
        finished run compares it with the one recorded); None when it cannot be told before loading."""
        return None

    @classmethod
    def sends_to(cls, options: Mapping[str, object]) -> list[str]:
        """The addresses (base URLs, their user info and query left out) an engine of `options` sends its requests
        to, found without loading it: none for an engine that runs here. run.json records them, and a vendor's
        list price applies only to a model sent to the vendor's own host (ragbench._cost.prices)."""
        return []

    @property
    def chat_model(self) -> bool:
        """Whether the model is a chat model: `--model-arg chat=true|false`, else `detects_chat_model`."""
        return self.declared_chat if self.declared_chat is not None else self.detects_chat_model()

    def detects_chat_model(self) -> bool:
        """The engine's own rule when no `chat` option is given. Default False (scripted, replay: a test
        declares a chat model with --model-arg chat=true)."""
        return False

    def generate(self, requests: list[Request]) -> list[Response | EngineError]:
        raise NotImplementedError

    async def agenerate_one(self, request: Request) -> Response:
        raise NotImplementedError

    def missing_tokens(self, names: Sequence[str]) -> list[str] | None:
        """Of `names`, those that are not single entries of the model's vocabulary (what
        `Sampling.logprob_tokens` needs); None when the engine cannot tell (an API server)."""
        return None

    def stats(self) -> dict[str, int] | None:
        """Figures of the engine's own work for results.json's `cost.engine` (the hf engine's prefix cache: prompt
        tokens sent and computed); None: none."""
        return None

    def close(self) -> None:
        """Free resources (models, connections)."""
