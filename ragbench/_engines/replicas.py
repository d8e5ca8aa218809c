"""Data parallelism: several replicas of one model behind one engine.

Replicas come from existing engines, not a home-made cluster:
- several OpenAI-compatible endpoints (`--base-url` repeated): one `openai` engine per URL;
- Ray (`--model-arg replicas=N`, optional `ray_address=ray://host:10001` or `auto` for a running
  cluster): one engine per replica inside a Ray actor, placed by Ray on the cluster's GPUs
  (`gpus_per_replica`, default tensor_parallel_size x pipeline_parallel_size when the cluster has
  GPUs) or CPUs, so a multi-node run is `ray start` on each node and `ray_address=auto` here.

The scheduler runs up to `parallel_batches` (= the number of replicas) batches at once; each batch
(or request, for engines that batch by themselves) goes to the least-loaded live replica (fewest
requests outstanding). A replica fault - a call that fails as a whole because of the replica (a
dead actor, an unreachable server, timeouts, HTTP 5xx/429, an endpoint answering 401/403/404: any
error but a `RequestError`) - sets the replica aside (it is tried after the healthy ones until it
answers again) and the call is retried on another; it fails only when every replica has failed it.
A request fault (`RequestError`: HTTP 400/422, a prompt longer than the context) would fail alike
everywhere: it fails that request once, is re-sent nowhere and demotes no one. Per-request errors
inside a batch's answer (`generate` returning an EngineError in a slot) are passed on as they are.

Throughput model: with R replicas and a batch cost `overhead + per_request x n`, a run of C calls
takes about `ceil(C / (B x R)) x (overhead + per_request x B)` once every replica is kept busy.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypedDict

from annotated_types import Ge

from .._errors import ConfigError
from .._ray_connect import join_ray
from .._values.billed import Billed
from .._values.engine_errors import EngineError, request_fault
from .._values.llm_request import Request
from .._values.llm_responses import Response
from .._values.urls import redact_url
from .base import Engine
from .batches.board import BatchBoard

# the options of Ray replicas, taken before the engine's own (each replica builds the engine with the rest)
RAY_OPTION_TYPES = {"replicas": Annotated[int, Ge(1)], "ray_address": str, "gpus_per_replica": Annotated[float, Ge(0)]}


class ReplicaSet(Engine):
    kind = "replicas"

    def __init__(self, replicas: list[Any], describe: list[str] | None = None) -> None:
        if not replicas:
            raise ConfigError("a replica set needs at least one replica")
        first = replicas[0]
        super().__init__(getattr(first, "model", "replicas"))
        self.replicas = replicas
        self.names = describe or [f"replica {i}" for i in range(len(replicas))]
        self.concurrent = bool(first.concurrent)
        self.calls_tools = bool(getattr(first, "calls_tools", False))  # type: ignore[misc]
        self.takes_images = bool(getattr(first, "takes_images", False))  # type: ignore[misc]
        self.max_batch_size = first.max_batch_size
        self.max_concurrency = sum(r.max_concurrency for r in replicas)
        self.parallel_batches = len(replicas)
        self.cacheable = getattr(first, "cacheable", True)
        self._engine_id: str = first.engine_id  # replicas serve one model: one cache identity
        self._content_id = getattr(first, "content_id", None)
        self._outstanding = [0] * len(replicas)
        self.failures = [0] * len(replicas)  # replica faults in a row per replica (0: healthy)
        self.served = [0] * len(replicas)  # requests answered per replica (tests, benchmarks)
        self._lock = threading.Lock()
        if hasattr(first, "share_batches"):  # endpoints sending batches: one record, each batch polled where it is
            first.share_batches(replicas)

    @property
    def engine_id(self) -> str:
        return self._engine_id

    def keep_batches(self, folder: Path, board: BatchBoard) -> None:
        """The replicas' batches (`batch=true`) recorded in run folder `folder`, shown on `board`
        (hosted/stainless.py)."""
        if hasattr(self.replicas[0], "keep_batches"):
            self.replicas[0].keep_batches(folder, board)

    def stats(self) -> dict[str, int] | None:
        """The figures the replicas share (their batches', kept by the first), where they have any."""
        first = self.replicas[0]
        return first.stats() if hasattr(first, "share_batches") else None

    @property
    def content_id(self) -> str | None:
        return self._content_id

    def detects_chat_model(self) -> bool:
        """The first replica's rule (False for a Ray actor, which cannot be asked: pass --model-arg chat=)."""
        return bool(getattr(self.replicas[0], "chat_model", False))

    def call_identity(self, sampling: Any) -> str:
        identity = getattr(self.replicas[0], "call_identity", None)  # a Ray actor's engine: its engine_id
        if identity is None:
            return self._engine_id
        called: str = identity(sampling)
        return called

    def _order(self) -> list[int]:
        """Replicas to try, best first: never-failed before failed, then fewest requests outstanding."""
        with self._lock:
            return sorted(range(len(self.replicas)), key=lambda i: (self.failures[i], self._outstanding[i], i))

    @contextmanager
    def _serving(self, index: int, requests: int) -> Iterator[None]:
        """Book `requests` on replica `index` while it works; a replica fault sets it aside."""
        with self._lock:
            self._outstanding[index] += requests
        try:
            yield
        except Exception as exc:
            if request_fault(exc) is None:
                with self._lock:
                    self.failures[index] += 1
            raise
        else:
            with self._lock:
                self.failures[index] = 0
                self.served[index] += requests
        finally:
            with self._lock:
                self._outstanding[index] -= requests

    def _all_failed(self, errors: list[str]) -> EngineError:
        return EngineError("every replica failed: " + "; ".join(errors))

    def _next_or_raise(self, index: int, exc: Exception, errors: list[str], billed: Billed | None = None) -> None:
        """After replica `index` failed a call: raise a request fault as it is (with the tokens `billed` for the
        call by the replicas tried before it), else note the cause."""
        fault = request_fault(exc)
        if fault is not None:
            raise (billed.onto(fault) if billed else fault) from None
        errors.append(f"{self.names[index]}: {type(exc).__name__}: {exc}")

    def generate(self, requests: list[Request]) -> list[Response | EngineError]:
        errors: list[str] = []
        for index in self._order():
            try:
                with self._serving(index, len(requests)):
                    results: list[Response | EngineError] = self.replicas[index].generate(requests)
                    return results
            except Exception as exc:  # the replica failed as a whole: try the next
                self._next_or_raise(index, exc, errors)
        raise self._all_failed(errors)

    async def agenerate_one(self, request: Request) -> Response:
        """The first replica's answer that is one; the tokens billed for the call by replicas that failed it are
        its cost too."""
        errors: list[str] = []
        billed = Billed()
        for index in self._order():
            try:
                with self._serving(index, 1):
                    response: Response = await self.replicas[index].agenerate_one(request)
                    return billed.onto(response)
            except Exception as exc:
                self._next_or_raise(index, exc, errors, billed)
                billed.add(getattr(exc, "billed", None) or Billed())
        raise billed.onto(self._all_failed(errors))

    async def aclose(self) -> None:
        for replica in self.replicas:
            if hasattr(replica, "aclose"):
                await replica.aclose()

    def close(self) -> None:
        for replica in self.replicas:
            replica.close()


# --- Ray ----------------------------------------------------------------------------------------------


class ReplicaInfo(TypedDict):
    """What the engine in a Ray actor tells of itself (`_EngineActor.describe`)."""

    engine_id: str
    content_id: str | None
    concurrent: bool
    max_batch_size: int
    max_concurrency: int
    calls_tools: bool
    takes_images: bool


class RayReplica:
    """An engine living in a Ray actor, called like a local one (`generate` blocks on the actor)."""

    def __init__(self, actor: Any, model: str, info: ReplicaInfo) -> None:
        self.actor, self.model = actor, model
        self.engine_id = info["engine_id"]
        self.content_id = info.get("content_id")
        self.concurrent = info["concurrent"]
        self.max_batch_size = info["max_batch_size"]
        self.max_concurrency = info["max_concurrency"]
        self.calls_tools = bool(info.get("calls_tools"))
        self.takes_images = bool(info.get("takes_images"))

    def generate(self, requests: list[Request]) -> list[Response | EngineError]:
        import ray

        results: list[Response | EngineError] = ray.get(self.actor.generate.remote(requests))  # _EngineActor's
        return results

    async def agenerate_one(self, request: Request) -> Response:
        response: Response = await self.actor.agenerate_one.remote(request)  # _EngineActor's
        return response

    def close(self) -> None:
        import ray

        try:
            ray.get(self.actor.close.remote(), timeout=30)
        except Exception:  # a dead actor has nothing left to close
            pass
        ray.kill(self.actor)


class _EngineActor:
    """The actor body: builds the engine inside the Ray worker (so weights load where it runs)."""

    def __init__(self, engine_class: type, name: str, options: Mapping[str, object]) -> None:
        self.engine: Engine = engine_class(name, **options)

    def describe(self) -> ReplicaInfo:
        engine = self.engine
        return {
            "engine_id": engine.engine_id,
            "content_id": engine.content_id,
            "concurrent": engine.concurrent,
            "max_batch_size": engine.max_batch_size,
            "max_concurrency": engine.max_concurrency,
            "calls_tools": engine.calls_tools,
            "takes_images": engine.takes_images,
        }

    def generate(self, requests: list[Request]) -> list[Response | EngineError]:
        return self.engine.generate(requests)

    async def agenerate_one(self, request: Request) -> Response:
        return await self.engine.agenerate_one(request)

    def close(self) -> None:
        self.engine.close()


def ray_replicas(engine_class: type, model: str, options: dict[str, Any]) -> ReplicaSet:
    """`replicas` copies of `model` as Ray actors (a local Ray instance unless `ray_address` is given),
    each building `engine_class` (resolved by the run's registry; Ray ships it by reference)."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("--model-arg replicas=N runs replicas on Ray: pip install 'ragbench[ray]'") from exc
    count = int(options.pop("replicas"))
    address = options.pop("ray_address", None)
    gpus = options.pop("gpus_per_replica", None)
    if count < 1:
        raise ConfigError("--model-arg replicas must be >= 1")
    join_ray(address, "--model-arg ray_address=")
    if gpus is None:
        parallel = int(options.get("tensor_parallel_size", 1)) * int(options.get("pipeline_parallel_size", 1))
        gpus = parallel if ray.cluster_resources().get("GPU", 0) > 0 else 0
    actor_class = ray.remote(num_gpus=float(gpus), num_cpus=0 if gpus else 1)(_EngineActor)
    actors: list[Any] = [actor_class.remote(engine_class, model.partition(":")[2], dict(options)) for _ in range(count)]
    try:
        descriptions = ray.get([actor.describe.remote() for actor in actors])
    except Exception as exc:
        for actor in actors:
            ray.kill(actor)
        raise ConfigError(f"replicas of {model} failed to start on Ray: {type(exc).__name__}: {exc}") from exc
    replicas = [RayReplica(actor, model.partition(":")[2], info) for actor, info in zip(actors, descriptions)]
    return ReplicaSet(replicas, [f"ray replica {i}" for i in range(count)])


def endpoint_replicas(engine_class: type, name: str, urls: list[str], options: Mapping[str, object]) -> Engine:
    """One engine per OpenAI-compatible endpoint (`--base-url` repeated)."""
    engines = [engine_class(name, base_url=url, **options) for url in urls]
    return engines[0] if len(engines) == 1 else ReplicaSet(engines, [redact_url(url) for url in urls])


def wants_ray(options: Mapping[str, object]) -> bool:
    return any(key in options for key in RAY_OPTION_TYPES)
