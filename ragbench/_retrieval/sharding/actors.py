"""The shards of an index served by Ray actors spread over the cluster's nodes, several shards an actor where the
cluster has fewer CPUs than shards (`placement`).

Each actor (`_ShardActor`, 1 CPU) loads its shards' files where Ray places it (`scheduling_strategy="SPREAD"`:
distinct nodes while there are free ones; on its shards' node where they are on some nodes' own disks, `homes`;
fetched into its node's cache where they are in an object store, `layout.fetched_shard`), so a node holds about
its part of the index. Placing an actor (a free
CPU found, its process started) has a deadline (`placement`); loading its files has none. A batch is sent to every
actor at once (the queries put in Ray's object store once), each searches its shards one after the other, and the
answers are gathered in shard order. An actor that died (its process or node lost: a RayActorError) is started
again from its shards' files, on any node with a free CPU, and its part of the batch sent again; the other actors'
answers are kept. Where the cluster has fewer whole CPUs than that would make actors (a node lost for good), the
live actor serving the fewest shards loads the dead one's too instead. The wait is logged (a warning naming the shards, and every WAIT_NOTE_SECONDS while no node has
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
from .homes import shard_homes
from .layout import Layout, Shard, fetched_shard
from .placement import actor_groups, node_cpus, not_placed, placement_timeout, whole_cpus
from .searcher import ShardOptions, ShardSearcher, TopK

MAX_RESTARTS = 3  # restarts of one actor for one batch before the batch fails
WAIT_NOTE_SECONDS = 30  # an actor not placed after this long is logged, and again after each as long
logger = logging.getLogger(__name__)


class _ShardActor:
    """The actor body: ShardSearchers built inside the Ray worker (`load`), so their files load on its node.
    Damaged files are reported by `load` (one line), not as the actor's death."""

    def __init__(self, search: type[ShardSearcher], options: ShardOptions) -> None:
        self.search, self.options = search, options
        self.searchers: dict[int, ShardSearcher] = {}

    def node(self) -> str:
        """The node's id: the actor is placed and its process started."""
        import ray

        return str(ray.get_runtime_context().get_node_id())

    def load(self, shards: list[Shard]) -> tuple[int, str] | None:
        """Each of `shards`' files loaded; (the number of a damaged shard, the damage found), or None."""
        for shard in shards:
            try:
                self.searchers[shard.number] = self.search(fetched_shard(shard), self.options)
            except (IndexDamage, ConfigError, OSError, ValueError) as exc:
                named = isinstance(exc, (IndexDamage, ConfigError))
                return shard.number, str(exc) if named else f"{type(exc).__name__}: {exc}"
        return None

    def top_k(self, payload: Any, k: int, numbers: list[int]) -> list[TopK]:
        """Shards `numbers`' answers to the batch, in that order."""
        return [self.searchers[number].top_k(payload, k) for number in numbers]


class ShardPool:
    """The actors of `layout`'s shards (module docstring), each shard searched by `search` (its kind's
    `ShardedKind.search`) with `options`. `groups[a]`: the
    shard numbers slot `a` serves (contiguous, in order), `actors[a]` the actor serving them (one a slot, unless a
    restart found no room: `_restart`); `nodes` and `restarts`: per shard."""

    def __init__(
        self, layout: Layout, search: type[ShardSearcher], options: ShardOptions, ray_address: str | None = None
    ) -> None:
        try:
            import ray  # noqa: F401  (installed, or the line below)
        except ImportError as exc:
            raise ConfigError("--retriever-arg shards=S serves shards on Ray: pip install 'ragbench[ray]'") from exc
        self.own_ray = join_ray(ray_address, "--retriever-arg ray_address=")  # shut down with the pool
        self.layout, self.search, self.options = layout, search, options
        self.actors: list[Any] = []
        self.nodes = [""] * len(layout.shards)
        self.restarts = [0] * len(layout.shards)  # over the pool's life (tests, logs)
        try:
            self.groups = actor_groups(len(layout.shards))
            self.homes = shard_homes(layout, self.groups)
            self.actors = [self._started(slot) for slot in range(len(self.groups))]
            deadline = time.monotonic() + placement_timeout()
            for slot in range(len(self.actors)):
                self._placed(slot, deadline)
            loads = [(slot, self._load(slot)) for slot in range(len(self.actors))]
            for slot, load in loads:
                self._loaded(slot, load)
        except BaseException:
            self.close()
            raise

    def _started(self, slot: int) -> Any:
        """A new actor for slot `slot`: on its shards' node where they are on nodes' own disks (`homes`), else
        on distinct nodes while there are free ones."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        home = self.homes[slot]
        strategy = "SPREAD" if home is None else NodeAffinitySchedulingStrategy(home, soft=False)
        actor = ray.remote(_ShardActor).options(num_cpus=1, scheduling_strategy=strategy)
        return actor.remote(self.search, self.options)

    def describe(self, slot: int) -> str:
        return "; ".join(self.layout.shards[number].describe() for number in self.groups[slot])

    def _placed(self, slot: int, deadline: float) -> None:
        """Wait for slot `slot`'s actor to be placed (by `deadline`: else a ConfigError, one line)."""
        import ray

        placed = self.actors[slot].node.remote()
        while True:
            left = deadline - time.monotonic()
            if ray.wait([placed], timeout=max(0.0, min(WAIT_NOTE_SECONDS, left)))[0]:
                node = str(self._got(slot, placed))
                for number in self.groups[slot]:
                    self.nodes[number] = node
                return
            if left <= WAIT_NOTE_SECONDS:
                seconds = placement_timeout()
                raise not_placed(self.describe(slot), len(self.actors), len(self.layout.shards), seconds)
            logger.warning(
                "ragbench: waiting for %s to start on Ray (it needs 1 free CPU on a node that sees its folder; "
                "%.0f s left)",
                self.describe(slot),
                left - WAIT_NOTE_SECONDS,
            )

    def _load(self, slot: int) -> Any:
        return self.actors[slot].load.remote([self.layout.shards[number] for number in self.groups[slot]])

    def _got(self, slot: int, ref: Any) -> Any:
        import ray

        try:
            return ray.get(ref)
        except ray.exceptions.RayError as exc:
            cause = (str(exc).strip().splitlines() or [""])[0]
            raise ConfigError(f"{self.describe(slot)} failed to start on Ray: {type(exc).__name__}: {cause}") from None

    def _loaded(self, slot: int, load: Any) -> None:
        """Wait for slot `slot`'s shards to load; a ConfigError (one line) where their files are damaged."""
        damaged = self._got(slot, load)
        if damaged is not None:
            number, problem = damaged
            raise ConfigError(f"{self.layout.shards[number].describe()}: {problem} (damaged); {self.layout.remedy()}")

    def top_k(self, payload: Any, k: int) -> list[TopK]:
        """Each shard's answer to the batch `payload`, in shard order, dead actors restarted (module docstring)."""
        import ray

        sent = ray.put(payload)
        pending = [actor.top_k.remote(sent, k, group) for actor, group in zip(self.actors, self.groups)]
        answers: list[TopK] = []
        for slot, ref in enumerate(pending):
            for attempt in range(MAX_RESTARTS + 1):
                try:
                    answers.extend(ray.get(ref))
                    break
                except ray.exceptions.RayActorError as exc:
                    if attempt == MAX_RESTARTS:
                        raise RetrievalError(
                            f"{self.describe(slot)}: its Ray actor died {attempt + 1} time(s) in a row while "
                            f"searching ({type(exc).__name__})"
                        ) from None
                    try:
                        ref = self._restart(slot, exc).top_k.remote(sent, k, self.groups[slot])
                    except ConfigError as problem:  # not placed again, or its files damaged since: this batch fails
                        raise RetrievalError(str(problem)) from None
        return answers

    def _restart(self, slot: int, cause: Exception) -> Any:
        """Slot `slot`'s shards served again from their files, waited for (logged): by a new actor, or where the
        cluster has fewer whole CPUs than the pool would have actors (a node lost for good), by the live actor of
        the fewest shards, which loads them too."""
        import ray

        logger.warning(
            "ragbench: warning: %s: its Ray actor died (%s); starting it again from its files and sending its "
            "queries again",
            self.describe(slot),
            type(cause).__name__,
        )
        dead = self.actors[slot]
        try:
            ray.kill(dead, no_restart=True)
        except Exception:  # already gone
            pass
        others = [
            other
            for other, actor in enumerate(self.actors)
            if actor is not dead and self.homes[slot] in (None, self.nodes[self.groups[other][0]])
        ]
        if others and whole_cpus(node_cpus()) < len({id(self.actors[other]) for other in others}) + 1:
            host = min(others, key=lambda other: self.served(self.actors[other]))
            self.actors[slot] = self.actors[host]
            for number in self.groups[slot]:
                self.nodes[number] = self.nodes[self.groups[host][0]]
        else:
            self.actors[slot] = self._started(slot)
            self._placed(slot, time.monotonic() + placement_timeout())
        self._loaded(slot, self._load(slot))
        for number in self.groups[slot]:
            self.restarts[number] += 1
        logger.warning(
            "ragbench: %s: serving again on node %s", self.describe(slot), self.nodes[self.groups[slot][0]][:12]
        )
        return self.actors[slot]

    def served(self, actor: Any) -> int:
        """How many shards `actor` serves."""
        return sum(len(group) for other, group in zip(self.actors, self.groups) if other is actor)

    def close(self) -> None:
        import ray

        for actor in self.actors:
            try:
                ray.kill(actor)
            except Exception:  # already gone
                pass
        if self.own_ray and ray.is_initialized():
            ray.shutdown()
