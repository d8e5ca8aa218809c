"""How many shard actors a cluster gets, which shards each serves, and how long placing them may take.

A shard actor takes 1 CPU (it searches on one core). S shards are served by A = min(S, the cluster's whole CPUs:
each live node's CPUs rounded down, summed) actors, each serving a contiguous run of shards (sizes within one), so
any number of shards is searchable on any cluster with a CPU, a laptop included; on a cluster with S free CPUs it is
one actor a shard. The answers do not depend on the packing: each shard is searched alone and the exact
merge (`merge`) sees the same S answers.

Placing an actor waits for a free CPU (one held by other work: replicas, another run) within a deadline,
$RAGBENCH_RAY_PLACEMENT_TIMEOUT seconds (default 300: an autoscaler's new node has time to join); a cluster with
no CPU at all is refused at once. Either is one line naming what the cluster has and what was asked.
"""

from __future__ import annotations

from ..._errors import ConfigError
from ..._values.environment import seconds_in_environment

PLACEMENT_VARIABLE = "RAGBENCH_RAY_PLACEMENT_TIMEOUT"
DEFAULT_PLACEMENT_SECONDS = 300.0


def packed(shards: int, slots: int) -> list[list[int]]:
    """The shard numbers each of min(shards, slots) actors serves: contiguous runs, in order, sizes within one."""
    actors = max(1, min(shards, slots))
    return [list(range(a * shards // actors, (a + 1) * shards // actors)) for a in range(actors)]


def node_cpus() -> list[float]:
    """The CPUs of each live node of the cluster this process is connected to."""
    import ray

    return [float(node["Resources"].get("CPU", 0)) for node in ray.nodes() if node.get("Alive")]


def whole_cpus(cpus: list[float]) -> int:
    """The 1-CPU actors `cpus` (each node's) can hold at once."""
    return sum(int(count) for count in cpus)


def cluster_line(cpus: list[float]) -> str:
    """What the cluster has, as a refusal names it: `2 nodes with 3 CPUs (1 free now)`."""
    import ray

    free = float(ray.available_resources().get("CPU", 0))
    return f"{len(cpus)} node(s) with {sum(cpus):g} CPU(s) ({free:g} free now)"


def actor_groups(shards: int) -> list[list[int]]:
    """`packed` for the connected cluster; a ConfigError where it has no whole CPU for any actor."""
    cpus = node_cpus()
    if whole_cpus(cpus) < 1:
        raise ConfigError(
            f"--retriever-arg shards={shards}: the Ray cluster has {cluster_line(cpus)}, and each shard actor needs "
            "1 CPU; add a node with CPUs (`ray start --address=HEAD:6379 --num-cpus N`)"
        )
    return packed(shards, whole_cpus(cpus))


def placement_timeout() -> float:
    """$RAGBENCH_RAY_PLACEMENT_TIMEOUT's seconds, else the default."""
    return seconds_in_environment(PLACEMENT_VARIABLE, DEFAULT_PLACEMENT_SECONDS)


def not_placed(what: str, actors: int, shards: int, seconds: float) -> ConfigError:
    """The line for an actor (`what`: its shards) that no node took within `seconds`."""
    return ConfigError(
        f"{what}: not placed on Ray within {seconds:g} s: the cluster has {cluster_line(node_cpus())}, asked for "
        f"{actors} shard actor(s) of 1 CPU serving {shards} shard(s); free CPUs held by other work (replicas, "
        f"another run), add a node, or wait longer (${PLACEMENT_VARIABLE}, seconds)"
    )
