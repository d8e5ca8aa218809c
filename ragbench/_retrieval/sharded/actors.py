"""The shards of an index served by Ray actors spread over the cluster's nodes, several shards an actor where the
cluster has fewer CPUs than shards (`placement`).

Each actor (`_ShardActor`, 1 CPU) loads its shards' files where Ray places it (`scheduling_strategy="SPREAD"`:
distinct nodes while there are free ones), so a node holds about its part of the index. Placing an actor (a free
CPU found, its process started) has a deadline (`placement`); loading its files has none. A batch is sent to every
actor at once (the queries put in Ray's object store once), each searches its shards one after the other, and the
answers are gathered in shard order. An actor that died (its process or node lost: a RayActorError) is started
again from its shards' files, on any node with a free CPU, and its part of the batch sent again; the other actors'
answers are kept. The wait is logged (a warning naming the shards, and every WAIT_NOTE_SECONDS while no node has
room) and a batch fails (a RetrievalError) only when one actor died MAX_RESTARTS + 1 times in a row, or was not
placed again within the deadline.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ..._errors import ConfigError
from ..._ray_connect import join_ray
from ..base import RetrievalError
from ..index.damage import IndexDamage
from .layout import Layout, Shard, split_from
from .placement import actor_groups, not_placed, placement_timeout
from .searcher import ShardOptions, ShardSearcher, TopK

MAX_RESTARTS = 3  # restarts of one actor for one batch before the batch fails
WAIT_NOTE_SECONDS = 30  # an actor not placed after this long is logged, and again after each as long
logger = logging.getLogger(__name__)


class _ShardActor:
    """The actor body: ShardSearchers built inside the Ray worker (`load`), so their files load on its node.
    Damaged files are reported by `load` (one line), not as the actor's death."""

    def __init__(self, kind: str, shards: list[Shard], options: ShardOptions) -> None:
        self.kind, self.shards, self.options = kind, shards, options
        self.searchers: list[ShardSearcher] = []

    def node(self) -> str:
        """The node's id: the actor is placed and its process started."""
        import ray

        return str(ray.get_runtime_context().get_node_id())

    def load(self) -> tuple[int, str] | None:
        """Each shard's files loaded; (the number of a damaged shard, the damage found), or None."""
        for shard in self.shards:
            try:
                self.searchers.append(ShardSearcher(self.kind, shard, self.options))
            except (IndexDamage, ConfigError, OSError, ValueError) as exc:
                named = isinstance(exc, (IndexDamage, ConfigError))
                return shard.number, str(exc) if named else f"{type(exc).__name__}: {exc}"
        return None

    def top_k(self, payload: Any, k: int) -> list[TopK]:
        """Each of its shards' answer to the batch, in shard order."""
        return [searcher.top_k(payload, k) for searcher in self.searchers]


class ShardPool:
    """The actors of `layout`'s shards (module docstring); `options` go to each ShardSearcher. `groups[a]`: the
    shard numbers actor `a` serves (contiguous, in order); `nodes` and `restarts`: per shard."""

    def __init__(self, layout: Layout, options: ShardOptions, ray_address: str | None = None) -> None:
        try:
            import ray
        except ImportError as exc:
            raise ConfigError("--retriever-arg shards=S serves shards on Ray: pip install 'ragbench[ray]'") from exc
        self.own_ray = join_ray(ray_address, "--retriever-arg ray_address=")  # shut down with the pool
        self.layout, self.options = layout, options
        self.actors: list[Any] = []
        self.nodes = [""] * len(layout.shards)
        self.restarts = [0] * len(layout.shards)  # over the pool's life (tests, logs)
        try:
            self.groups = actor_groups(len(layout.shards))
            self.actor_class = ray.remote(_ShardActor).options(num_cpus=1, scheduling_strategy="SPREAD")
            self.actors = [self._started(group) for group in self.groups]
            self._serve(list(range(len(self.actors))), time.monotonic() + placement_timeout())
        except BaseException:
            self.close()
            raise

    def _started(self, group: list[int]) -> Any:
        return self.actor_class.remote(self.layout.retriever, [self.layout.shards[n] for n in group], self.options)

    def describe(self, actor: int) -> str:
        return "; ".join(self.layout.shards[number].describe() for number in self.groups[actor])

    def _serve(self, actors: list[int], deadline: float) -> None:
        """Wait for `actors` to be placed (by `deadline`), then for their shards to load; a ConfigError (one line)
        where one is not placed in time, fails to start or finds its files damaged."""
        for actor in actors:
            node = self._placed(actor, deadline)
            for number in self.groups[actor]:
                self.nodes[number] = node
        loads = [(actor, self.actors[actor].load.remote()) for actor in actors]
        for actor, load in loads:
            self._loaded(actor, load)

    def _placed(self, actor: int, deadline: float) -> str:
        import ray

        placed = self.actors[actor].node.remote()
        while True:
            left = deadline - time.monotonic()
            if ray.wait([placed], timeout=max(0.0, min(WAIT_NOTE_SECONDS, left)))[0]:
                return str(self._got(actor, placed))
            if left <= WAIT_NOTE_SECONDS:
                seconds = placement_timeout()
                raise not_placed(self.describe(actor), len(self.actors), len(self.layout.shards), seconds)
            logger.warning(
                "ragbench: waiting for %s to start on Ray (it needs 1 free CPU on a node that sees its folder; "
                "%.0f s left)",
                self.describe(actor),
                left - WAIT_NOTE_SECONDS,
            )

    def _got(self, actor: int, ref: Any) -> Any:
        import ray

        try:
            return ray.get(ref)
        except ray.exceptions.RayError as exc:
            cause = (str(exc).strip().splitlines() or [""])[0]
            raise ConfigError(f"{self.describe(actor)} failed to start on Ray: {type(exc).__name__}: {cause}") from None

    def _loaded(self, actor: int, load: Any) -> None:
        damaged = self._got(actor, load)
        if damaged is not None:
            number, problem = damaged
            fix = self.layout.fix or (
                f"split the index again: ragbench index shard --index {split_from(self.layout.folder)} "
                f"--shards {len(self.layout.shards)} --overwrite"
            )
            raise ConfigError(f"{self.layout.shards[number].describe()}: {problem} (damaged); {fix}")

    def top_k(self, payload: Any, k: int) -> list[TopK]:
        """Each shard's answer to the batch `payload`, in shard order, dead actors restarted (module docstring)."""
        import ray

        sent = ray.put(payload)
        pending = [actor.top_k.remote(sent, k) for actor in self.actors]
        answers: list[TopK] = []
        for number, ref in enumerate(pending):
            for attempt in range(MAX_RESTARTS + 1):
                try:
                    answers.extend(ray.get(ref))
                    break
                except ray.exceptions.RayActorError as exc:
                    if attempt == MAX_RESTARTS:
                        raise RetrievalError(
                            f"{self.describe(number)}: its Ray actor died {attempt + 1} time(s) in a row while "
                            f"searching ({type(exc).__name__})"
                        ) from None
                    try:
                        ref = self._restart(number, exc).top_k.remote(sent, k)
                    except ConfigError as problem:  # not placed again, or its files damaged since: this batch fails
                        raise RetrievalError(str(problem)) from None
        return answers

    def _restart(self, actor: int, cause: Exception) -> Any:
        """A new actor for actor `actor`'s shards from their files, waited for (logged)."""
        import ray

        logger.warning(
            "ragbench: warning: %s: its Ray actor died (%s); starting it again from its files and sending its "
            "queries again",
            self.describe(actor),
            type(cause).__name__,
        )
        try:
            ray.kill(self.actors[actor], no_restart=True)
        except Exception:  # already gone
            pass
        self.actors[actor] = self._started(self.groups[actor])
        self._serve([actor], time.monotonic() + placement_timeout())
        for number in self.groups[actor]:
            self.restarts[number] += 1
        node = self.nodes[self.groups[actor][0]]
        logger.warning("ragbench: %s: serving again on node %s", self.describe(actor), node[:12])
        return self.actors[actor]

    def close(self) -> None:
        import ray

        for actor in self.actors:
            try:
                ray.kill(actor)
            except Exception:  # already gone
                pass
        if self.own_ray and ray.is_initialized():
            ray.shutdown()
