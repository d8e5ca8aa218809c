"""The shards of an index served by Ray actors, one a shard, spread over the cluster's nodes.

Each actor (`_ShardActor`, 1 CPU) loads its shard's files where Ray places it (`scheduling_strategy="SPREAD"`:
distinct nodes while there are free ones), so a node holds about 1/S of the index. A batch is sent to every shard
at once (the queries put in Ray's object store once) and gathered in shard order. A shard whose actor died (its
process or node lost: a RayActorError) is started again from its files, on any node with a free CPU, and its
part of the batch sent again; the other shards' answers are kept. The wait is logged (a warning naming the shard,
and every WAIT_NOTE_SECONDS while no node has room for it)
and a batch fails (a RetrievalError) only when one shard's actor died MAX_RESTARTS + 1 times in a row.
"""

from __future__ import annotations

import logging
from typing import Any

from ..._errors import ConfigError
from ..._ray_connect import join_ray
from ..base import RetrievalError
from ..index.damage import IndexDamage
from .layout import Layout, Shard, split_from
from .searcher import ShardOptions, ShardSearcher, TopK

MAX_RESTARTS = 3  # restarts of one shard for one batch before the batch fails
WAIT_NOTE_SECONDS = 30  # a shard actor not started after this long is logged, and again after each as long
logger = logging.getLogger(__name__)


class _ShardActor:
    """The actor body: a ShardSearcher built inside the Ray worker, so its files load on its node. Damaged files
    are reported by `ready` (one line), not as the actor's death."""

    def __init__(self, kind: str, shard: Shard, options: ShardOptions) -> None:
        self.problem: str | None = None
        try:
            self.searcher = ShardSearcher(kind, shard, options)
        except (IndexDamage, ConfigError, OSError, ValueError) as exc:
            named = isinstance(exc, (IndexDamage, ConfigError))
            self.problem = str(exc) if named else f"{type(exc).__name__}: {exc}"

    def ready(self) -> tuple[str | None, str]:
        """(the damage found, or None; the node's id)."""
        import ray

        return self.problem, ray.get_runtime_context().get_node_id()

    def top_k(self, payload: Any, k: int) -> TopK:
        return self.searcher.top_k(payload, k)


class ShardPool:
    """The actors of `layout`'s shards (module docstring); `options` go to each ShardSearcher."""

    def __init__(self, layout: Layout, options: ShardOptions, ray_address: str | None = None) -> None:
        try:
            import ray
        except ImportError as exc:
            raise ConfigError("--retriever-arg shards=S serves shards on Ray: pip install 'ragbench[ray]'") from exc
        self.own_ray = join_ray(ray_address, "--retriever-arg ray_address=")  # shut down with the pool
        self.layout, self.options = layout, options
        self.actor_class = ray.remote(_ShardActor).options(num_cpus=1, scheduling_strategy="SPREAD")
        self.actors: list[Any] = [self.actor_class.remote(layout.retriever, shard, options) for shard in layout.shards]
        self.nodes: list[str] = []
        try:
            for shard, actor in zip(layout.shards, self.actors):
                self.nodes.append(self._ready(shard, actor))
        except BaseException:
            self.close()
            raise
        self.restarts = [0] * len(self.actors)  # per shard, over the pool's life (tests, logs)

    def _ready(self, shard: Shard, actor: Any) -> str:
        import ray

        ready = actor.ready.remote()
        while not ray.wait([ready], timeout=WAIT_NOTE_SECONDS)[0]:  # no free CPU yet: say so, keep waiting
            logger.warning(
                "ragbench: waiting for %s to start on Ray (it needs 1 free CPU on a node that sees its folder)",
                shard.describe(),
            )
        try:
            problem, node = ray.get(ready)
        except ray.exceptions.RayError as exc:
            cause = (str(exc).strip().splitlines() or [""])[0]
            raise ConfigError(f"{shard.describe()} failed to start on Ray: {type(exc).__name__}: {cause}") from None
        if problem is not None:
            fix = self.layout.fix or (
                f"split the index again: ragbench index shard --index {split_from(self.layout.folder)} "
                f"--shards {len(self.layout.shards)} --overwrite"
            )
            raise ConfigError(f"{shard.describe()}: {problem} (damaged); {fix}")
        return str(node)

    def top_k(self, payload: Any, k: int) -> list[TopK]:
        """Each shard's answer to the batch `payload`, in shard order, dead shards restarted (module docstring)."""
        import ray

        sent = ray.put(payload)
        pending = [actor.top_k.remote(sent, k) for actor in self.actors]
        answers: list[TopK] = []
        for number, ref in enumerate(pending):
            for attempt in range(MAX_RESTARTS + 1):
                try:
                    answers.append(ray.get(ref))
                    break
                except ray.exceptions.RayActorError as exc:
                    if attempt == MAX_RESTARTS:
                        shard = self.layout.shards[number]
                        raise RetrievalError(
                            f"{shard.describe()}: its Ray actor died {attempt + 1} time(s) in a row while "
                            f"searching ({type(exc).__name__})"
                        ) from None
                    try:
                        ref = self._restart(number, exc).top_k.remote(sent, k)
                    except ConfigError as problem:  # its files damaged since: this batch fails, the run goes on
                        raise RetrievalError(str(problem)) from None
        return answers

    def _restart(self, number: int, cause: Exception) -> Any:
        """A new actor for shard `number` from its files, waited for (logged)."""
        import ray

        shard = self.layout.shards[number]
        logger.warning(
            "ragbench: warning: %s: its Ray actor died (%s); starting it again from its files and sending its "
            "queries again",
            shard.describe(),
            type(cause).__name__,
        )
        try:
            ray.kill(self.actors[number], no_restart=True)
        except Exception:  # already gone
            pass
        self.actors[number] = self.actor_class.remote(self.layout.retriever, shard, self.options)
        self.nodes[number] = self._ready(shard, self.actors[number])
        self.restarts[number] += 1
        logger.warning("ragbench: %s: serving again on node %s", shard.describe(), self.nodes[number][:12])
        return self.actors[number]

    def close(self) -> None:
        import ray

        for actor in self.actors:
            try:
                ray.kill(actor)
            except Exception:  # already gone
                pass
        if self.own_ray and ray.is_initialized():
            ray.shutdown()
