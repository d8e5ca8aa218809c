"""One local multi-node Ray cluster a test process shares among the tests that need it (`ray_cluster`): three nodes
of one CPU each, so actors of one CPU land on distinct nodes. A test of another module that shuts its own Ray down
(test_replicas's `local_ray`) disconnects this process: each module that asks connects again.

The cluster lives while this process's tests need it, not to the session's end: started by the first test that asks,
stopped after a test whose next one (`nextitem`, xdist's worker knows it too) is in a module that does not ask
(`stop_when_not_needed_next`). Idle, its raylets and GCS cost ~2.7 s of CPU a minute, and the Ray tests sit at one
point of the suite: kept to the end, a worker paid more for it idle than a second start (~9 s of CPU) costs."""

from __future__ import annotations

from typing import Any

import pytest

NODES = 3


class SharedCluster:
    """The cluster (`ray.cluster_utils.Cluster`) while it runs, None while it does not."""

    def __init__(self) -> None:
        self.cluster: Any = None

    def started(self) -> Any:
        if self.cluster is None:
            import ray
            from ray.cluster_utils import Cluster

            if ray.is_initialized():
                ray.shutdown()
            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
            for _ in range(NODES - 1):
                cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
            self.cluster = cluster
        return self.cluster

    def stop(self) -> None:
        if self.cluster is None:
            return
        import ray

        if ray.is_initialized() and ray.get_runtime_context().gcs_address == self.cluster.address:
            ray.shutdown()  # this process's connection to it (not another module's own Ray)
        self.cluster.shutdown()
        self.cluster = None


SHARED = SharedCluster()


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    cluster = SHARED.started()
    if ray.is_initialized() and ray.get_runtime_context().gcs_address != cluster.address:
        ray.shutdown()  # another module's local Ray
    if not ray.is_initialized():
        ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    return cluster


def stop_when_not_needed_next(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After `item`: the shared cluster stopped unless the next test is of the same module (its `ray_cluster` is
    module-scoped) or asks for it; at the session's end (no next test) stopped."""
    if SHARED.cluster is None:
        return
    if nextitem is None or (nextitem.path != item.path and "ray_cluster" not in getattr(nextitem, "fixturenames", ())):
        SHARED.stop()
