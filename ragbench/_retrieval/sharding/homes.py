"""Which node a shard actor is placed on where its shards' folders are on some nodes' own disks only.

Where the run's process holds every shard's folder (a shared file system) or they are in an object store, which any
node fetches, the actors go anywhere (`SPREAD`), unprobed. Where it lacks some, one probe a node (a Ray task of no
CPU pinned to each live node with a CPU, within the placement deadline) says which of the layout's shards that node
holds: every file the split wrote there, at its recorded size (the actor checks the content digests where it loads
them). Where every node holds every shard the actors go anywhere; otherwise each actor is pinned to a node that
holds all its shards (Ray's NodeAffinitySchedulingStrategy, not soft: it waits for that node, within the placement
deadline): the actors with the fewest such nodes first, each on the one of them with the fewest actors; a shard that no node holds, or an actor's shards that no one node
holds, is a ConfigError of one line naming them.
"""

from __future__ import annotations

from collections.abc import Callable

from ..._errors import ConfigError
from .layout import Layout, Shard
from .placement import placement_timeout


def holds(shard: Shard) -> bool:
    """Whether this node holds `shard`: fetched here from its object store, or each of its files at its size."""
    if shard.source:
        return True
    for name, size, _ in shard.written:
        path = shard.folder / name
        if not path.is_file() or path.stat().st_size != size:
            return False
    return True


def held_here(shards: list[Shard]) -> list[int]:
    """The numbers of `shards` this node holds (the probe's body)."""
    return [shard.number for shard in shards if holds(shard)]


def homes(
    held: dict[str, set[int]], groups: list[list[int]], describe: Callable[[int], str], fix: str
) -> list[str | None]:
    """The node each group's actor is pinned to (None: any node), given the shards each node holds (`held`); a
    ConfigError where a shard (`fix`: how to make it again), or a group's shards together, are held by no node."""
    every = {number for group in groups for number in group}
    if all(every <= shards for shards in held.values()):
        return [None] * len(groups)
    candidates = [sorted(node for node, shards in held.items() if set(group) <= shards) for group in groups]
    for group, nodes in zip(groups, candidates):
        if not nodes:
            lost = [number for number in group if not any(number in shards for shards in held.values())]
            if lost:
                raise ConfigError(
                    f"{describe(lost[0])}: its folder is on no node of the cluster ({len(held)} node(s) with a CPU "
                    f"looked); copy the shard's folder to a node at that path, or {fix}"
                )
            raise ConfigError(
                f"{'; '.join(describe(number) for number in group)}: served by one actor (the cluster has fewer "
                "CPUs than shards), but no node holds all of them; add CPUs to the nodes that hold them, or put "
                "these shards' folders on one node"
            )
    pinned: list[str | None] = [None] * len(groups)
    for slot in sorted(range(len(groups)), key=lambda slot: len(candidates[slot])):  # the fewest choices first
        pinned[slot] = min(candidates[slot], key=pinned.count)
    return pinned


def shard_homes(layout: Layout, groups: list[list[int]]) -> list[str | None]:
    """`homes` for the connected cluster: where this process holds every shard (a shared file system, an object
    store's shards) any node (no probe); else each live node with a CPU asked which it holds."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    if all(holds(shard) for shard in layout.shards):
        return [None] * len(groups)

    nodes = [
        str(node["NodeID"]) for node in ray.nodes() if node.get("Alive") and float(node["Resources"].get("CPU", 0)) >= 1
    ]
    probe = ray.remote(held_here)
    asked = [
        probe.options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(
            layout.shards
        )
        for node in nodes
    ]
    try:
        answers = ray.get(asked, timeout=placement_timeout())
    except ray.exceptions.RayError as exc:
        cause = (str(exc).strip().splitlines() or [""])[0]
        raise ConfigError(f"{layout.folder}: asking the nodes which shards they hold failed: {cause}") from None
    held = dict(zip(nodes, map(set, answers)))
    return homes(held, groups, lambda number: layout.shards[number].describe(), layout.remedy())
