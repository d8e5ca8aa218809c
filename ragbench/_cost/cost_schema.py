"""The typed shape of what a run cost, as results.json (`Results.cost`, `model_cost`, `judge_cost`) holds it: the
run's, every attempt added up (`Cost`; one attempt's figures, `AttemptCost`, are run.json's record:
ragbench._storage.run_record), the traced calls' tokens and price (`TokenCost`), a task's cost per correct answer
(`Efficiency`) and its work per example (`Budget`, `RepeatedWork`). Each is a `TypedDict`: a dict at
run time, as the files read. What the cost room counts and reads back of results.json is typed here too
(`CostSections`, `CostFigures`, `CostedRun`), so that it never names the results room above it that holds them."""

from __future__ import annotations

from typing import Protocol, TypedDict

from .._storage.page_cache import PageCachesStats, PageCacheStats
from .._storage.run_record import AttemptCost, CallCounts
from .._storage.store_checks import StoreStats
from .._values.json_values import JsonObject


class RescoringCost(AttemptCost, total=False):
    """`ragbench rescore`'s own cost (results.json's `cost.rescoring`), with the NLI model's figures."""

    nli: dict[str, int]  # the NLI model's calls (its scheduler's counts)
    other_engines: dict[str, JsonObject]  # the judges' own figures (a batch=true judge's batches), by place


class _PromptCache(TypedDict):
    read_tokens: int
    write_tokens: int
    write_1h_tokens: int


class PromptCache(_PromptCache, total=False):
    """The tokens a vendor's prompt cache served (read) and stored (written; 1-hour: of those written), and the
    dollars it saved against the same calls uncached (null where a model has no price; absent in one model's share
    without a price)."""

    usd_saved: float | None


class _ModelTokens(TypedDict):
    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    usd: float | None


class ModelTokens(_ModelTokens, total=False):
    """One model's share of a `TokenCost`: its engine:model, the calls sent to it, their tokens and price."""

    usd_note: str
    prompt_cache: PromptCache
    price_note: str


class _TokenCost(TypedDict):
    calls: int
    cached: int
    errors: int
    prompt_tokens: int
    completion_tokens: int
    usd: float | None


class BilledNoAnswer(TypedDict):
    """The failed calls whose vendor billed answers that ragbench did not take (refused, or retried until the call
    failed), and those answers' tokens: part of the `TokenCost` they are in."""

    calls: int
    prompt_tokens: int
    completion_tokens: int


class TokenCost(_TokenCost, total=False):
    """Traced LLM calls (`judge_cost`: a judged metric's; `model_cost`: the system's), those the cache answered and
    those that failed among them, the tokens of the calls sent, and their price in US dollars (null: `usd_note`
    says why; ragbench._cost.prices): the one model's engine:model and price, or with several models each one's
    share (`by_model`, by its label: `model`, a system role, `judge N`)."""

    usd_note: str
    model: str
    price_per_million: dict[str, float]
    prompt_cache: PromptCache
    price_note: str
    by_model: dict[str, ModelTokens]
    billed_no_answer: BilledNoAnswer


class _Cost(CallCounts):
    wall_seconds: float
    examples_per_second: float
    attempts: int
    interrupted_attempts: int


class Cost(_Cost, total=False):
    """What the run cost, every attempt added up (`this_attempt`: the last one's own; None for results rebuilt
    from the samples), with the caches' reports, pooled searches, the NLI model's figures and a rescoring's
    cost where there are any."""

    examples: int
    this_attempt: AttemptCost | None
    response_cache: StoreStats
    page_cache: PageCacheStats | PageCachesStats
    retrieval: dict[str, float]  # queries, searches, errors; start_seconds: this attempt's retriever opening
    nli: dict[str, int]  # the NLI model's calls (its scheduler's counts)
    engine: JsonObject  # the model engine's own figures (Engine.stats), this attempt's
    other_engines: dict[str, JsonObject]  # the role models' and judges' (by place: "judge 1"), this attempt's
    rescoring: RescoringCost


class Latency(TypedDict):
    """One call kind's latency in seconds over the calls sent: their number, 50th and 95th percentiles (nearest
    rank; null with no call)."""

    calls: int
    p50: float | None
    p95: float | None


class _KeyEfficiency(TypedDict):
    correct: float
    tokens_per_correct: float | None


class KeyEfficiency(_KeyEfficiency, total=False):
    """A metric key's correct answers (its values scaled to its range, summed) and the tokens and, where every
    model is priced, the dollars each cost (null: no correct answer)."""

    usd_per_correct: float | None


class _Efficiency(TypedDict):
    examples: int
    tokens: int
    usd: float | None
    llm_calls_per_example: float
    searches_per_example: float
    latency_seconds: dict[str, Latency]
    per_correct: dict[str, KeyEfficiency]


class Efficiency(_Efficiency, total=False):
    """A task's cost beside its numbers (ragbench._cost.efficiency): the system's tokens and their price (null:
    `usd_note` says why), calls and searches per example, latency by call kind ("llm", "search") and per key
    the cost of a correct answer."""

    usd_note: str
    graded_keys: list[str]  # keys with a value inside their range: no answer right or wrong, no `per_correct`


class Budget(TypedDict):
    """What the system spent per scored example, measured from the traces (ragbench._cost.budget): each a
    mean, or null where the traces cannot tell (`not_measured`: quantity -> why)."""

    examples: int
    llm_calls: float | None
    prompt_tokens: float | None
    output_tokens: float | None
    searches: float | None
    passages_retrieved: float | None
    passages_shown: float | None
    not_measured: dict[str, str]


class RepeatedWorkCounts(TypedDict):
    """Work of the scored examples that bought nothing: searches whose results repeat the search before them in
    the example, empty or whitespace queries, LLM calls repeating an earlier request of the example."""

    searches: int
    repeated_searches: int
    empty_queries: int
    llm_calls: int
    repeated_llm_calls: int


class RepeatedWork(RepeatedWorkCounts, total=False):
    """`RepeatedWorkCounts`, and where searches found no passage, how many; where the model made tool calls, how many, how many had arguments that are not
    JSON, and how many had JSON arguments that do not fit the parameters of the tool they name."""

    empty_results: int
    tool_calls: int
    malformed_tool_calls: int
    invalid_tool_calls: int


class CostSections(TypedDict, total=False):
    """A task's sections of results.json that the cost room counts (each of its tallies' `sections()`); the
    results' `TaskSections` holds them among its others."""

    budget: Budget
    repeated_work: RepeatedWork
    judge_cost: dict[str, TokenCost]
    model_cost: TokenCost
    efficiency: Efficiency


class CostFigures(Protocol):
    """results.json as the cost room's lines and tables read it (the results' `Results` is one): the run's config,
    each task's values and the cost sections, by task."""

    @property
    def config(self) -> JsonObject: ...
    @property
    def results(self) -> dict[str, dict[str, float | None]]: ...
    @property
    def repeated_work(self) -> dict[str, RepeatedWork] | None: ...
    @property
    def model_cost(self) -> dict[str, TokenCost] | None: ...
    @property
    def judge_cost(self) -> dict[str, dict[str, TokenCost]] | None: ...
    @property
    def efficiency(self) -> dict[str, Efficiency] | None: ...


class CostedRun(Protocol):
    """A run of `ragbench compare`'s cost table (compare's `Run` is one): its label and its results.json."""

    @property
    def label(self) -> str: ...
    @property
    def results(self) -> CostFigures: ...
