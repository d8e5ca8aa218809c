"""One local multi-node Ray cluster for the whole test session (`ray_cluster`), shared by the tests that need it:
three nodes of one CPU each, so actors of one CPU land on distinct nodes."""

from __future__ import annotations

import pytest

NODES = 3


@pytest.fixture(scope="session")
def ray_cluster():
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    for _ in range(NODES - 1):
        cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    cluster.wait_for_nodes()
    yield cluster
    ray.shutdown()
    cluster.shutdown()
