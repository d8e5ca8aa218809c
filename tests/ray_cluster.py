"""One local multi-node Ray cluster for the whole test session, shared by the tests that need it (`ray_cluster`):
three nodes of one CPU each, so actors of one CPU land on distinct nodes. A test of another module that shuts its
own Ray down (test_replicas's `local_ray`) disconnects this process: each use connects again."""

from __future__ import annotations

import pytest

NODES = 3


@pytest.fixture(scope="session")
def ray_cluster_session():
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    for _ in range(NODES - 1):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    yield cluster
    ray.shutdown()
    cluster.shutdown()


@pytest.fixture(scope="module")
def ray_cluster(ray_cluster_session):
    import ray

    if ray.is_initialized() and ray.get_runtime_context().gcs_address != ray_cluster_session.address:
        ray.shutdown()  # another module's local Ray
    if not ray.is_initialized():
        ray.init(address=ray_cluster_session.address, include_dashboard=False, log_to_driver=False)
    return ray_cluster_session
