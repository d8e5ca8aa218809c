"""moto's S3 server on 127.0.0.1 for the tests of files in an object store (`s3_server`): started and stopped by
the test module that asks, this process's environment pointed at it while it runs; what the tests of shards built
into a store compare (`store_listing`, `shard_files`) and how they cut a build short (`LostAfterOneShard`,
`cut_build`)."""

from __future__ import annotations

import json
import logging
import re
import shutil
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from ragbench._retrieval.sharding.build.runner import InProcess
from ragbench.api import ConfigError
from support.ray_cluster import SHARED


@contextmanager
def s3_server(folder: Path) -> Iterator[Any]:
    """The s3fs file system of a moto server on 127.0.0.1 holding the bucket `bench`; meanwhile the environment
    names its endpoint, dummy credentials and a cache folder under `folder`, and so does that of the workers of the
    shared Ray cluster this process's `ray_cluster` joins it with (`SHARED.workers_environment`)."""
    from moto import backends
    from moto.core import serialize
    from moto.server import ThreadedMotoServer
    from s3fs import S3FileSystem

    with pytest.MonkeyPatch.context() as env:
        # moto's server reads back each timestamp it writes into a reply (an object's LastModified in a listing,
        # written by moto as ISO 8601) through dateutil's parser: nine tenths of a listing's CPU here. Read by
        # Python's own ISO parser first, to the same aware datetime.
        env.setattr(serialize, "parse_to_aware_datetime", partial(iso_datetime, serialize.parse_to_aware_datetime))
        # its request log (werkzeug's, one line a request, at INFO) kept to what `served_requests` asks for
        env.setattr(logging.getLogger("werkzeug"), "level", logging.WARNING)
        # moto's server lists its package's folders on disk for each request it routes (`get_backend_for_host`,
        # ~190 stat calls): a quarter of an S3 request's CPU here, the client's and the server's together. They
        # do not change while it runs: listed once.
        listed = tuple(backends.list_of_moto_modules())
        env.setattr(backends, "list_of_moto_modules", lambda: iter(listed))
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        # moto's servers in one process share its in-memory backends: an earlier module's buckets would still be there
        urllib.request.urlopen(urllib.request.Request(f"http://{host}:{port}/moto-api/reset", method="POST")).close()
        variables = {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": f"http://{host}:{port}",
            "RAGBENCH_CACHE_DIR": str(folder / "cache"),
        }
        try:
            with SHARED.workers_environment(variables):
                for variable, value in variables.items():
                    env.setenv(variable, value)
                fs = S3FileSystem(skip_instance_cache=True)
                fs.mkdir("bench")
                yield fs
        finally:
            server.stop()


def iso_datetime(parsed: Callable[[object], datetime], value: object) -> datetime:
    """`value` (a timestamp moto wrote) as `parsed` reads it, an ISO 8601 string read by `datetime.fromisoformat`
    (UTC where it names no zone, as botocore's parser takes it)."""
    if isinstance(value, str):
        try:
            found = datetime.fromisoformat(value)
        except ValueError:
            return parsed(value)
        return found if found.tzinfo is not None else found.replace(tzinfo=timezone.utc)
    return parsed(value)


@contextmanager
def served_requests() -> Iterator[list[tuple[str, str]]]:
    """The requests moto's server served while the block ran: (method, path and query), from its request log
    (werkzeug's, one line a request, written before the response is sent: every request the block made is there
    once it returns)."""
    served: list[tuple[str, str]] = []

    class Logged(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            line = re.sub(r"\x1b\[[0-9;]*m", "", record.getMessage())  # the colours of a reply other than 200
            if found := re.search(r'"([A-Z]+) (\S+) HTTP', line):
                served.append((found[1], found[2]))

    log, handler = logging.getLogger("werkzeug"), Logged()
    level = log.level
    log.setLevel(logging.INFO)
    log.addHandler(handler)
    try:
        yield served
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


def store_listing(folder):
    """The names a store lists under an index whose local shards are `folder` (INDEX/shards-S): theirs alone."""
    return {f"{folder.name}/{path.relative_to(folder).as_posix()}" for path in folder.rglob("*") if path.is_file()}


def shard_files(folder):
    """Each shard's files (size and content digest) and the manifest but for where the corpus was and the times."""
    layout = json.loads((folder / "shards.json").read_text())
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["corpus"]["path"], manifest["build_seconds"], manifest["built_at"]
    return [shard["files"] for shard in layout["shards"]], [[s["start"], s["stop"]] for s in layout["shards"]], manifest


class LostOnceFinished(InProcess):
    """Runs every step of every shard here, then the build is lost before the driver publishes the shards."""

    def map(self, function, calls, **options):
        done = super().map(function, calls, **options)
        if function.__name__ == "finish_part":
            raise ConfigError("the driver's node was lost")
        return done


class LostAfterOneShard(InProcess):
    """Runs the steps here, but step 2 of only the first shard: the build is lost once that shard is in the store."""

    def map(self, function, calls, **options):
        if function.__name__ == "finish_part":
            super().map(function, calls[:1], **options)
            raise ConfigError("the driver's node was lost")
        return super().map(function, calls, **options)


def cut_build(corpus: Path, url: str, kind: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The 3-shard build of `corpus` into `url` lost once shard 0 is in the store, on a machine whose cache folder
    is then gone (the environment then names another's)."""
    from ragbench.testing import build_shards, installed_registry

    monkeypatch.setenv("RAGBENCH_CACHE_DIR", str(tmp_path / "first-machine"))
    with pytest.raises(ConfigError, match="the driver's node was lost"):
        build_shards(corpus, url, kind, {}, 3, registry=installed_registry(), runner=LostAfterOneShard)
    shutil.rmtree(tmp_path / "first-machine")
    monkeypatch.setenv("RAGBENCH_CACHE_DIR", str(tmp_path / "second-machine"))
