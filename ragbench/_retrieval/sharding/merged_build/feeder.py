"""The blocks of a parallel index build analysed by a fixed pool of Ray actors (`RayFeeder`, the `feeder` of
`index.build_index`).

The driver reads the corpus as a one-process build does (the docs store, bad records and the passage count stay
its work) and cuts it into blocks of `--chunk-size` passages. Each block goes, with its texts (so the workers need
no view of the driver's disk), to an idle actor of a pool of `workers` (`ray.util.ActorPool`): each actor
(`analysis.BlockAnalyser`: its kind's worker, `BuildsBlocks.worker`: the BM25 kinds' tokenizer settings, or the dense
encoder, one GPU each where the cluster has GPUs) is made once, so a dense actor loads its model once for the whole build. At most WINDOW_BLOCKS blocks a
worker are held (sent, or done and not yet given to the builder), so the driver holds a window of the corpus's
texts, not all of them. Each block's file is written into the build state (`state`) as it arrives; the blocks are
given to the builder in corpus order (the kind's `absorb`). A block whose file a killed build already wrote is read, not
analysed again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...._errors import ConfigError
from ...._ray_connect import join_ray
from ..kind import BuildsBlocks
from .analysis import BlockAnalyser, WorkerSettings
from .state import BuildState, texts_digest

if TYPE_CHECKING:
    from ...._registry import Registry


WINDOW_BLOCKS = 4  # blocks held a worker: sent to it or waiting for their turn in corpus order


class RayFeeder:
    """Feeds a builder of `kind` through a pool of Ray actors (module docstring) on the Ray at `address` ("" or
    None: the RAY_ADDRESS variable's, else a Ray of its own; one this process already joined is used as it is),
    with `workers` actors (default: one a CPU of the cluster, for dense one a GPU where it has GPUs). The build
    state of `out` for `key` is opened when the build starts feeding (`index.build_index` then holds `out`'s lock);
    `reused` and `analysed` count the blocks read from an earlier build's state and those the workers made."""

    def __init__(
        self,
        kind: BuildsBlocks,
        out: Path,
        key: dict[str, Any],
        address: str | None,
        workers: int | None,
        registry: Registry,
    ) -> None:
        self.kind, self.out, self.key, self.address, self.workers = kind, out, key, address, workers
        self.registry = registry  # the run's, for a dense encoder's query style
        self.reused = self.analysed = 0
        self.actors: list[Any] = []  # the pool's actors, made as blocks need them (a dense one loads the model once)
        self.pool: Any = None  # ray.util.ActorPool
        self.written: set[int] = set()  # blocks whose files were written and not yet given to the builder
        self.own_ray = False
        self.gpus = 0.0
        self.pool_size = 1

    def __call__(self, builder: Any, texts: Iterable[list[str]]) -> None:
        from ray.util import ActorPool

        chunks = iter(texts)
        first = next(chunks, None)
        if first is None:
            return
        self.start_ray()
        state = BuildState(self.out, self.key)
        settings = self.kind.settings(builder, first[0], self.registry)
        self.pool = ActorPool([])
        held: deque[tuple[int, str, Any]] = deque()  # (block, digest, arrays or None while analysed), corpus order
        for number, block in enumerate(chain([first], chunks)):
            digest = texts_digest(block)
            arrays = state.read(number, digest, self.kind.fields)
            if arrays is None:
                if not self.pool.has_free() and len(self.actors) < self.pool_size:  # made as blocks need them
                    self.actors.append(self.new_actor(settings))
                    self.pool.push(self.actors[-1])
                self.pool.submit(lambda actor, item: actor.analyse.remote(*item), (number, digest, block))
            else:
                self.reused += 1
            held.append((number, digest, arrays))
            self.write_done(state, wait=False)
            while len(held) > WINDOW_BLOCKS * self.pool_size:
                self.absorb_first(builder, state, held)
        while held:
            self.absorb_first(builder, state, held)

    def write_done(self, state: BuildState, wait: bool) -> None:
        """Write the file of each block the actors have finished (waiting for one with `wait`): its actor is then
        free for the next block."""
        while self.pool.has_next():
            try:
                number, payload = self.pool.get_next_unordered(timeout=None if wait else 0)
            except TimeoutError:
                return
            state.write(number, payload)
            self.written.add(number)
            self.analysed += 1
            wait = False

    def absorb_first(self, builder: Any, state: BuildState, held: deque[tuple[int, str, Any]]) -> None:
        """Give the builder the first held block, once its file is written."""
        number, digest, arrays = held.popleft()
        if arrays is None:
            while number not in self.written:
                self.write_done(state, wait=True)
            self.written.discard(number)
            arrays = state.read(number, digest, self.kind.fields)
            if arrays is None:  # written a moment ago, whole: only a disk that lost it gets here
                raise ConfigError(f"parallel index build: block file {state.path(number)} was lost or damaged")
        self.kind.absorb(builder, arrays)

    def new_actor(self, settings: WorkerSettings) -> Any:
        """An actor of the pool; one whose process or node is lost is made again and its block sent again."""
        import ray

        remote: Any = ray.remote(BlockAnalyser)
        return remote.options(
            num_cpus=1, num_gpus=self.gpus, max_restarts=-1, max_task_retries=-1, scheduling_strategy="SPREAD"
        ).remote(self.kind, settings)

    def start_ray(self) -> None:
        import ray

        self.own_ray = join_ray(self.address, "--ray ")
        resources = ray.cluster_resources()
        self.gpus = 1.0 if self.kind.gpu and resources.get("GPU", 0) >= 1 else 0.0
        unit = "GPU" if self.gpus else "CPU"
        self.pool_size = self.workers or max(1, int(resources.get(unit, 1)))
        if self.pool_size > resources.get(unit, 0):  # actors no node can hold: their blocks would wait forever
            raise ConfigError(
                f"--workers {self.pool_size}: the Ray cluster has {resources.get(unit, 0):g} {unit}s and a worker "
                f"actor takes one; pass --workers {int(resources.get(unit, 0)) or 1} or fewer"
            )

    def close(self) -> None:
        """End the pool's actors (their CPUs and GPUs free again) and shut down the Ray this build started (one it
        joined stays)."""
        if self.actors or self.own_ray:
            import ray

            for actor in self.actors:
                ray.kill(actor)
            self.actors = []
        if self.own_ray:
            ray.shutdown()
            self.own_ray = False
