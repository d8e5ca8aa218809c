"""A page index encoded in shards (`pages.shards`, `index build --retriever colpali|siglip --ray --shards S`): the
one-process build's vectors bit for bit, so its scores and ranking, for any shard count and batch size, with an
encoder whose vectors depend on their batch as colpali-engine's do; a build killed mid-way (SIGKILL) resumes from the
shards it wrote and encodes a damaged part again; `index build` builds the index a run reads, on a 3-node Ray
cluster too; options a page index does not take are one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import TEST_DATA, needs
from ragbench._retrieval.pages.late_interaction import LateInteractionRetriever
from ragbench._retrieval.pages.shards import PageShards, batch_ranges
from ragbench.api import ConfigError
from support.helpers import cli_here
from support.ray_cluster import SHARED

pytestmark = needs("torch", "safetensors", "datasets")

VIDORE = TEST_DATA / "vidore"
QUERIES = ["harbour", "tide at Olm", "census of 1901", "x"]


class PaddedEncoder:
    """Each page a few made-up vectors (by its pixels), its batch's items padded with zero rows to the batch's
    longest, as colpali-engine's batches are: a page's vectors depend on the pages beside it in its batch."""

    def __init__(self, fail_on_call: int | None = None) -> None:
        self.pages, self.calls, self.fail_on_call = 0, 0, fail_on_call

    def identity(self) -> dict:
        return {"path": "padded"}

    def encode_pages(self, images: list) -> list:
        import torch

        self.calls += 1
        if self.calls == self.fail_on_call:
            raise RuntimeError("encoder lost")
        self.pages += len(images)
        pages = []
        for image in images:
            pixels = np.asarray(image.convert("RGB").resize((3, 2)), dtype=np.float32).reshape(6, 3) / 255
            pages.append(torch.from_numpy(pixels[: 2 + int(pixels.sum() * 7) % 5] - 0.5))
        longest = max(page.shape[0] for page in pages)
        return [torch.cat([page, torch.zeros(longest - page.shape[0], 3)]) for page in pages]

    def encode_queries(self, texts: list[str]) -> list:
        import torch

        return [torch.tensor([[len(text) % 3 - 1.0, 0.5, -0.5], [-1.0, -1.0, 0.2]]) for text in texts]


def built(index: Path, batch_size: int, shards: PageShards | None = None, encoder=None) -> LateInteractionRetriever:
    return LateInteractionRetriever(
        pages=str(VIDORE / "v2"), index=str(index), encoder=encoder or PaddedEncoder(), batch_size=batch_size,
        score_batch_size=4, in_shards=shards,
    )  # fmt: skip


def answers(retriever: LateInteractionRetriever) -> list:
    return [[(doc.id, doc.score) for doc in row] for row in retriever.search(QUERIES, 6)]


@given(count=st.integers(1, 40), batch_size=st.integers(1, 9), shards=st.integers(1, 8))
def test_shards_are_whole_batches_covering_every_page_once(count, batch_size, shards):
    batches = -(-count // batch_size)
    if shards > batches:
        with pytest.raises(ConfigError, match=f"make {batches} batches of batch_size={batch_size}"):
            batch_ranges(count, batch_size, shards)
        return
    ranges = batch_ranges(count, batch_size, shards)
    assert len(ranges) == shards and ranges[0][0] == 0 and ranges[-1][1] == count
    assert all(start < stop and start % batch_size == 0 for start, stop in ranges)
    assert all(stop == start for (_, stop), (start, _) in zip(ranges, ranges[1:]))


@pytest.mark.parametrize("batch_size", [1, 2, 3, 4, 5])
def test_an_index_encoded_in_shards_is_the_one_process_builds_bit_for_bit(tmp_path, batch_size):
    one = built(tmp_path / "one", batch_size)
    for shards in range(2, -(-6 // batch_size) + 1):  # every count of shards the 6 pages allow
        sharded = built(tmp_path / f"in_{shards}", batch_size, PageShards(shards))
        written = (tmp_path / f"in_{shards}" / "vectors.safetensors").read_bytes()
        assert written == (tmp_path / "one" / "vectors.safetensors").read_bytes(), shards
        assert answers(sharded) == answers(one)
        assert not (tmp_path / f"in_{shards}.shards-partial").exists()


def test_a_build_failed_mid_way_encodes_a_damaged_part_again(tmp_path):
    with pytest.raises(RuntimeError, match="encoder lost"):
        built(tmp_path / "index", 2, PageShards(3), PaddedEncoder(fail_on_call=3))  # shard 2
    parts = tmp_path / "index.shards-partial"
    damaged = parts / "part-001.safetensors"
    damaged.write_bytes(damaged.read_bytes()[:60])  # a part cut short
    again, shards = PaddedEncoder(), PageShards(3)
    assert answers(built(tmp_path / "index", 2, shards, again)) == answers(built(tmp_path / "one", 2))
    assert (shards.kept, again.pages) == (1, 4)


KILLED = """
import sys
from pathlib import Path
sys.path[:0] = sys.argv[2:4]
from test_retrieval_pages_shards import PaddedEncoder, built
from ragbench._retrieval.pages.shards import PageShards

class Held(PaddedEncoder):
    def encode_pages(self, images):
        if self.calls == 1:  # shard 1's one batch (3 shards of a batch of 2 pages): held there
            print("shard 1", flush=True)
            sys.stdin.readline()
        return super().encode_pages(images)

built(Path(sys.argv[1]), 2, PageShards(3), Held())
"""


def test_a_build_killed_mid_way_resumes_from_the_shards_it_finished(tmp_path):
    here = Path(__file__).parent
    command = [sys.executable, "-c", KILLED, str(tmp_path / "index"), str(here.parent), str(here)]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as held:
        assert held.stdout is not None and held.stdout.readline() == "shard 1\n", held.communicate()[1]
        held.send_signal(signal.SIGKILL)
        held.communicate()
    assert sorted(path.name for path in (tmp_path / "index.shards-partial").iterdir()) == [
        "key.json",
        "part-000.safetensors",
    ]
    again, shards = PaddedEncoder(), PageShards(3)
    assert answers(built(tmp_path / "index", 2, shards, again)) == answers(built(tmp_path / "one", 2))
    assert (shards.kept, again.pages) == (1, 4)


def test_parts_of_another_build_are_not_taken(tmp_path):
    with pytest.raises(RuntimeError):
        built(tmp_path / "index", 2, PageShards(3), PaddedEncoder(fail_on_call=2))
    again, shards = PaddedEncoder(), PageShards(2)  # other shards: other parts
    assert answers(built(tmp_path / "index", 2, shards, again)) == answers(built(tmp_path / "one", 2))
    assert (shards.kept, again.pages) == (0, 6)


@needs("transformers")
def test_index_build_writes_the_index_a_run_reads_and_refuses_text_options_in_one_line(tmp_path):
    from ragbench._retrieval.pages.single_vector import ImageDenseRetriever

    model, pages, out = str(VIDORE / "tiny-siglip"), str(VIDORE / "v2"), tmp_path / "index"
    done = cli_here("index", "build", "--retriever", "clip", "--corpus", pages, "--out", str(out), "--model", model,
                    "--build-arg", "batch_size=2", "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"siglip index of 6 pages in {out} (" in done.stdout
    modified = (out / "vectors.safetensors").stat().st_mtime_ns
    run = ImageDenseRetriever(pages=pages, index=str(out), model=model, batch_size=2)  # reads it
    assert (out / "vectors.safetensors").stat().st_mtime_ns == modified and len(run.pages) == 6
    for target, extra, says in [
        (out, ["--no-title"], "--no-title is an option of text indexes; a siglip index's pages are images"),
        (tmp_path / "new", ["--ray", "--shards", "4"], "--shards 4: the 6 pages make 3 batches of batch_size=2"),
        (out, ["--ray"], "--ray builds a siglip index in shards: pass --shards S too"),
        (out, [], "exists and is not empty; pass --overwrite"),
    ]:
        refused = cli_here("index", "build", "--retriever", "siglip", "--corpus", pages, "--out", str(target),
                           "--model", model, "--build-arg", "batch_size=2", *extra)  # fmt: skip
        assert refused.returncode != 0 and says in refused.stderr and "Traceback" not in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert not (tmp_path / "new").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep", encoding="utf-8")
    refused = cli_here("index", "build", "--retriever", "siglip", "--corpus", pages, "--out", str(mine),
                       "--model", model, "--overwrite")  # fmt: skip
    assert "holds no page index ragbench built" in refused.stderr and (mine / "notes.txt").is_file()


def test_overwrite_keeps_the_old_index_until_the_new_one_is_built(tmp_path):
    out, pages = tmp_path / "index", str(VIDORE / "v2")
    built(out, 2)
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    (tmp_path / "no-model").mkdir()  # a model folder that fails to load
    refused = cli_here("index", "build", "--retriever", "colpali", "--corpus", pages, "--out", str(out),
                       "--model", str(tmp_path / "no-model"), "--overwrite")  # fmt: skip
    assert refused.returncode != 0 and "Traceback" not in refused.stderr, refused.stderr
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["index", "no-model"]


def test_a_second_build_of_one_out_is_refused_while_the_first_holds_it(tmp_path):
    """Two page builds of one --out at once: the second is refused in one line before it touches anything (it
    would swap its index over the first's, or remove the first's staging folders); once the first is gone, the
    next build goes on (here to the model that does not load) and leaves no lock behind."""
    out, pages = tmp_path / "index", str(VIDORE / "v2")
    built(out, 2)
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    (tmp_path / "no-model").mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom pathlib import Path\n"
            "from ragbench._retrieval.index.staging import held_lock\n"
            "with held_lock(Path(sys.argv[1] + '.lock'), sys.argv[1], 'index build'):\n"
            "    print('held', flush=True)\n    time.sleep(60)\n",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    build = ["index", "build", "--retriever", "colpali", "--corpus", pages, "--out", str(out),
             "--model", str(tmp_path / "no-model"), "--overwrite", "--no-progress"]  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        refused = cli_here(*build)
        assert refused.returncode == 2
        assert refused.stderr.strip().splitlines() == [
            f"ragbench: error: --out {out}: another ragbench index build is writing it ({out}.lock is locked); "
            "wait for it to end, or choose another --out"
        ]
        assert {path.name: path.read_bytes() for path in out.iterdir()} == before
    finally:
        holder.kill()
        holder.wait()
    failed = cli_here(*build)
    assert failed.returncode != 0 and "is locked" not in failed.stderr and "Traceback" not in failed.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["index", "no-model"]  # the killed one's lock taken over
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


@needs("ray", "transformers")
def test_siglip_encoded_in_2_shards_on_a_3_node_ray_is_the_one_process_index(ray_cluster, tmp_path, monkeypatch):
    """Given relative paths from another folder than the tasks' (their raylet's): nothing written there. (Two
    shards, each task a process loading the model: more than one is what is promised.)"""
    from ragbench._retrieval.pages.single_vector import ImageDenseRetriever

    model, pages = str(VIDORE / "tiny-siglip"), str(VIDORE / "v2")
    monkeypatch.chdir(tmp_path)
    before = set(os.listdir(SHARED.folder))
    assert SHARED.folder != tmp_path
    done = cli_here("index", "build", "--retriever", "siglip", "--corpus", os.path.relpath(pages), "--out", "sharded",
                    "--model", os.path.relpath(model), "--build-arg", "batch_size=2", "--ray", ray_cluster.address,
                    "--shards", "2", "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "encoded in 2 shards" in done.stdout and set(os.listdir(SHARED.folder)) == before
    one = ImageDenseRetriever(pages=pages, index=str(tmp_path / "one"), model=model, batch_size=2)
    sharded = ImageDenseRetriever(pages=pages, index=str(tmp_path / "sharded"), model=model, batch_size=2)
    assert (tmp_path / "one" / "vectors.safetensors").read_bytes() == (
        tmp_path / "sharded" / "vectors.safetensors"
    ).read_bytes()
    assert answers(sharded) == answers(one)
    manifest = json.loads((tmp_path / "sharded" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["pages"]["count"] == 6 and not (tmp_path / "sharded.shards-partial").exists()
