"""The blocks of a parallel index build analysed by a pool of Ray Data workers (`RayFeeder`, the `feeder` of
`index.build_index`).

The driver reads the corpus as a one-process build does (the docs store, bad records and the passage count stay
its work) and cuts it into blocks of `--chunk-size` passages. They go to Ray Data in waves of WAVE_BLOCKS blocks a
worker (`ray.data.from_items`, so the workers need no view of the driver's disk and the driver holds one wave's
texts at a time); `map_batches` hands each block to one of `workers` Ray tasks (`analysis.analyse_blocks`, the BM25
kinds) or actors (`analysis.BlockAnalyser`, dense: each holds its encoder, one GPU each where the cluster has GPUs). Each block's file is written into the
build state (`state`) as it arrives, then every block of the wave is given to the builder in corpus order
(`absorb`). A block whose file a killed build already wrote is read, not analysed again.
"""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Iterable
from itertools import chain
from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from .absorb import absorb, worker_settings
from .analysis import FIELDS, BlockAnalyser, analyse_blocks
from .state import BuildState, texts_digest

WAVE_BLOCKS = 4  # blocks a worker per wave


class RayFeeder:
    """Feeds a builder of `kind` through Ray Data (module docstring) on the Ray at `address` ("" or None: the
    RAY_ADDRESS variable's, else a Ray of its own; one this process already joined is used as it is), with
    `workers` actors (default: one a CPU of the cluster, for dense one a GPU where it has GPUs). The build state of
    `out` for `key` is opened when the build starts feeding (`index.build_index` then holds `out`'s lock); `reused`
    and `analysed` count the blocks read from an earlier build's state and those the workers made."""

    def __init__(
        self, kind: str, out: Path, key: dict[str, Any], address: str | None, workers: int | None, registry: Any
    ) -> None:
        self.kind, self.out, self.key, self.address, self.workers = kind, out, key, address, workers
        self.registry = registry  # the run's, for a dense encoder's query style
        self.reused = self.analysed = 0
        self.own_ray = False
        self.gpus = 0.0
        self.pool_size = 1

    def __call__(self, builder: Any, texts: Iterable[list[str]]) -> None:
        chunks = iter(texts)
        first = next(chunks, None)
        if first is None:
            return
        self.start_ray()
        state = BuildState(self.out, self.key)
        settings = worker_settings(builder, first[0], self.registry)
        wave: list[tuple[int, list[str]]] = []
        for number, block in enumerate(chain([first], chunks)):
            wave.append((number, block))
            if len(wave) == WAVE_BLOCKS * self.pool_size:
                self.run_wave(builder, state, wave, settings)
                wave = []
        if wave:
            self.run_wave(builder, state, wave, settings)

    def start_ray(self) -> None:
        import ray.data

        if not ray.is_initialized():
            address = self.address or os.environ.get("RAY_ADDRESS") or "local"
            try:
                ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ConfigError(
                    f"--ray {address}: no Ray cluster to join there ({str(exc).splitlines()[0]}); start one with "
                    "`ray start --head`, or pass --ray alone for a Ray of this machine"
                ) from None
            self.own_ray = True
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = context.print_on_execution_start = context.enable_auto_log_stats = False
        logging.getLogger("ray.data").setLevel(logging.ERROR)  # its notes on progress bars and its API
        resources = ray.cluster_resources()
        self.gpus = 1.0 if self.kind == "dense" and resources.get("GPU", 0) >= 1 else 0.0
        unit = "GPU" if self.gpus else "CPU"
        self.pool_size = self.workers or max(1, int(resources.get(unit, 1)))
        if self.kind == "dense" and self.pool_size > resources.get(unit, 0):  # actors no node can hold: a wait forever
            raise ConfigError(
                f"--workers {self.pool_size}: the Ray cluster has {resources.get(unit, 0):g} {unit}s and an encoder "
                f"actor takes one; pass --workers {int(resources.get(unit, 0)) or 1} or fewer"
            )

    def close(self) -> None:
        """Shut down the Ray this build started (one it joined stays)."""
        if self.own_ray:
            import ray

            ray.shutdown()
            self.own_ray = False

    def run_wave(
        self, builder: Any, state: BuildState, wave: list[tuple[int, list[str]]], settings: dict[str, Any]
    ) -> None:
        digests = {number: texts_digest(block) for number, block in wave}
        fields = FIELDS[self.kind]
        found = {number: state.read(number, digests[number], fields) for number, _ in wave}
        missing = [(number, block) for number, block in wave if found[number] is None]
        self.reused += len(wave) - len(missing)
        if missing:
            for row in self.analysed_rows(missing, digests, settings):
                state.write(int(row["block"]), bytes(row["payload"]))
            self.analysed += len(missing)
        for number, _ in wave:
            arrays = found[number] or state.read(number, digests[number], fields)
            if arrays is None:  # written a moment ago, whole: only a disk that lost it gets here
                raise ConfigError(f"parallel index build: block file {state.path(number)} was lost or damaged")
            absorb(builder, arrays)

    def analysed_rows(
        self, missing: list[tuple[int, list[str]]], digests: dict[int, str], settings: dict[str, Any]
    ) -> Iterable[dict[str, Any]]:
        import ray.data

        items = [{"block": n, "digest": digests[n], "texts": pickle.dumps(block)} for n, block in missing]
        dataset = ray.data.from_items(items, override_num_blocks=len(items))
        common: dict[str, Any] = {"batch_size": 1, "batch_format": "numpy", "num_cpus": 1, "num_gpus": self.gpus}
        pool = min(self.pool_size, len(items))
        if self.kind == "dense":  # actors, each holding its encoder
            analysed = dataset.map_batches(
                BlockAnalyser,
                fn_constructor_kwargs={"kind": self.kind, "settings": settings},
                compute=ray.data.ActorPoolStrategy(size=pool),
                **common,
            )
        else:  # tasks: Ray reuses their worker processes from wave to wave
            task: Any = analyse_blocks  # its further arguments come as fn_kwargs
            analysed = dataset.map_batches(
                task,
                fn_kwargs={"kind": self.kind, "settings": settings},
                compute=ray.data.TaskPoolStrategy(size=pool),
                **common,
            )
        return analysed.iter_rows()
