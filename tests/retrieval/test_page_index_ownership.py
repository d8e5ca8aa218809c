"""A page index is ragbench's only by ragbench's own mark in its manifest, and `index build --overwrite` removes only
the files that manifest names: another tool's folder with a look-alike manifest.json, or a ragbench index holding a
file of the user's, is refused in one line and left byte for byte. The index records its model's files by content:
weights changed at the same path, with the same config.json, size and modification time, are another model (never
served the old index), while a run whose model files stat as recorded reads none of them again."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA, needs
from ragbench._retrieval.index.removal import empty_named, set_aside
from ragbench._retrieval.pages.build import build_page_index
from ragbench._retrieval.pages.late_interaction import LateInteractionRetriever
from ragbench.api import ConfigError
from ragbench.testing import installed_registry
from support.helpers import cli_here

pytestmark = needs("torch", "safetensors", "datasets")

VIDORE = TEST_DATA / "vidore"
PAGES = str(VIDORE / "v2")


class Encoder:
    """Made-up vectors by the pages' pixels; `during` runs as the pages are encoded (a user at work meanwhile)."""

    def __init__(self, during=None) -> None:
        self.during = during

    def identity(self) -> dict:
        return {"path": "made-up"}

    def encode_pages(self, images: list) -> list:
        import numpy as np
        import torch

        if self.during is not None:
            self.during()
        return [
            torch.from_numpy(np.asarray(i.convert("RGB").resize((2, 2)), dtype=np.float32).reshape(4, 3))
            for i in images
        ]

    def encode_queries(self, texts: list[str]) -> list:
        import torch

        return [torch.ones(1, 3) for _ in texts]


def build(out: Path, encoder: Encoder | None = None, overwrite: bool = True):
    options = {"encoder": encoder or Encoder(), "batch_size": 2}
    return build_page_index("colpali", PAGES, str(out), options, registry=installed_registry(), overwrite=overwrite)


def tree(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


LOOK_ALIKES = [
    {"format": 1, "pages": {"count": 6}},  # the issue's: another tool's manifest
    {"format": 2, "kind": "colpali", "pages": {"count": 6}, "files": {"results_2025.csv": 10}},  # names the file
    {"ragbench": "text index", "format": 2, "files": {}},  # a mark, not a page index's
]


@pytest.mark.parametrize("manifest", LOOK_ALIKES)
def test_overwrite_of_another_tools_folder_with_a_look_alike_manifest_is_refused_and_removes_nothing(
    tmp_path, manifest
):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (mine / "results_2025.csv").write_text("quarter,revenue\nQ1,10\n", encoding="utf-8")
    before = tree(mine)
    with pytest.raises(ConfigError) as refused:
        build(mine)
    assert str(refused.value) == (
        f"--out {mine} holds no page index ragbench built (no manifest.json with ragbench's mark); --overwrite "
        "replaces only such an index: choose another folder"
    )
    assert tree(mine) == before and sorted(path.name for path in tmp_path.iterdir()) == ["mine"]


@needs("transformers")
def test_the_command_refuses_another_tools_folder_in_one_line(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "manifest.json").write_text(json.dumps(LOOK_ALIKES[0]), encoding="utf-8")
    (mine / "results_2025.csv").write_text("quarter,revenue\nQ1,10\n", encoding="utf-8")
    before = tree(mine)
    done = cli_here("index", "build", "--retriever", "siglip", "--corpus", PAGES, "--out", str(mine),
                    "--model", str(VIDORE / "tiny-siglip"), "--overwrite", "--no-progress")  # fmt: skip
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"ragbench: error: --out {mine} holds no page index ragbench built (no manifest.json with ragbench's mark); "
        "--overwrite replaces only such an index: choose another folder"
    ]
    assert tree(mine) == before and sorted(path.name for path in tmp_path.iterdir()) == ["mine"]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["notes.txt", "README", ".ragbench-build", "sub/notes.txt", "vectors.safetensors.bak"]),
    content=st.binary(max_size=30),
)
def test_overwrite_of_a_ragbench_index_holding_a_users_file_is_refused_naming_it(tmp_path, name, content):
    out = tmp_path / f"index-{abs(hash((name, content)))}"
    build(out, overwrite=False)
    (out / name).parent.mkdir(exist_ok=True)
    (out / name).write_bytes(content)
    before = tree(out)
    with pytest.raises(ConfigError) as refused:
        build(out)
    shown = name.split("/")[0]
    assert str(refused.value) == (
        f"--out {out} holds {shown}, which is not one of the files the index's manifest.json names (not ragbench's); "
        "--overwrite removes only the index's own files (manifest.json, vectors.safetensors): move it out, or choose "
        "another folder"
    )
    assert tree(out) == before
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith(out.name)) == [out.name]


def test_overwrite_replaces_a_ragbench_index_whose_files_are_all_its_own(tmp_path):
    out = tmp_path / "index"
    build(out, overwrite=False)
    written = json.loads((out / "manifest.json").read_text())
    assert written["ragbench"] == "page index" and list(written["files"]) == ["vectors.safetensors"]
    (out / "vectors.safetensors").write_bytes(b"damaged")
    assert build(out).pages == 6
    assert sorted(tree(out)) == ["manifest.json", "vectors.safetensors"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["index"]  # no lock, staging or old index left


def test_a_users_file_come_while_the_new_index_is_built_keeps_the_old_index(tmp_path):
    out = tmp_path / "index"
    build(out, overwrite=False)
    old = tree(out)
    with pytest.raises(
        ConfigError, match=r"holds notes\.txt, which is not one of the files the index's manifest\.json names"
    ):
        build(out, Encoder(during=lambda: (out / "notes.txt").write_text("written meanwhile")))
    assert tree(out) == {**old, "notes.txt": b"written meanwhile"}
    (out / "notes.txt").unlink()
    assert build(out).pages == 6  # the same command again: the new index, built in index.building, takes its place
    assert sorted(path.name for path in tmp_path.iterdir()) == ["index"]


def test_removal_of_a_set_aside_index_removes_only_the_files_named_and_keeps_the_rest(tmp_path):
    folder = tmp_path / "index"
    folder.mkdir()
    for name in ("manifest.json", "vectors.safetensors", "notes.txt"):
        (folder / name).write_text(name)
    (folder / "elsewhere").symlink_to(tmp_path)
    away = set_aside(folder)
    assert empty_named(away, ("manifest.json", "vectors.safetensors", "elsewhere")) == ["elsewhere", "notes.txt"]
    assert (away / "notes.txt").read_text() == "notes.txt" and (away / "elsewhere").is_symlink()
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "manifest.json").write_text("{}")
    assert empty_named(set_aside(clean), ("manifest.json",)) == [] and not clean.exists()


def test_an_index_of_an_earlier_ragbench_or_another_tools_manifest_is_refused_by_a_run(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "manifest.json").write_text(json.dumps({"format": 1, "pages": {"count": 6}}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"its manifest.json is not a page index's ragbench built .*; choose a new"):
        LateInteractionRetriever(pages=PAGES, index=str(mine), encoder=Encoder())


# --- the model's files -----------------------------------------------------------------------------------------


@pytest.fixture
def model(tmp_path) -> Path:
    copy = tmp_path / "siglip"
    shutil.copytree(VIDORE / "tiny-siglip", copy)
    return copy


def siglip(model: Path, index: Path):
    from ragbench._retrieval.pages.single_vector import ImageDenseRetriever

    return ImageDenseRetriever(pages=PAGES, index=str(index), model=str(model))


def rewritten_in_place(path: Path, change) -> None:
    """`path`'s bytes changed where they are (same size, same inode), its modification time put back (`cp -p`)."""
    stat = path.stat()
    data = bytearray(path.read_bytes())
    change(data)
    with path.open("r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


@needs("transformers")
def test_weights_changed_at_the_same_path_with_the_same_config_are_another_model(tmp_path, model):
    index = tmp_path / "index"
    siglip(model, index)
    config = (model / "config.json").read_bytes()
    weights = model / "model.safetensors"
    size, modified = weights.stat().st_size, weights.stat().st_mtime_ns

    def flipped(data: bytearray) -> None:  # the last tensor's bytes, past the header: other weights, same shapes
        data[-64:] = bytes(255 - byte for byte in data[-64:])

    rewritten_in_place(weights, flipped)
    assert (weights.stat().st_size, weights.stat().st_mtime_ns) == (size, modified)
    assert (model / "config.json").read_bytes() == config
    with pytest.raises(ConfigError, match=r"was built for other model; name another index folder"):
        siglip(model, index)


@needs("transformers")
def test_model_files_that_stat_as_recorded_are_not_read_again_and_a_copy_is_compared_by_content(
    tmp_path, model, monkeypatch
):
    from ragbench._retrieval.pages import model_files

    index = tmp_path / "index"
    siglip(model, index)
    recorded = json.loads((index / "manifest.json").read_text())["model_files"]
    assert sorted(recorded) == sorted(path.name for path in model.iterdir())
    read: list[str] = []
    real = model_files.file_sha256
    monkeypatch.setattr(model_files, "file_sha256", lambda path: read.append(path.name) or real(path))
    siglip(model, index)
    assert read == []  # each file stats as the index recorded it
    moved = tmp_path / "moved"
    shutil.copytree(model, moved)  # other inodes, other times: each file read, the same digests
    shutil.rmtree(model)
    moved.rename(model)
    siglip(model, index)
    assert sorted(read) == sorted(recorded)


# --- a damaged index: one line naming the file and the command that builds it again ----------------------------


def damaged(index: Path, how: str) -> None:
    vectors = index / "vectors.safetensors"
    if how == "cut short":
        vectors.write_bytes(vectors.read_bytes()[:200])
    elif how == "a FIFO":
        vectors.unlink()
        os.mkfifo(vectors)
    elif how == "a folder":
        vectors.unlink()
        vectors.mkdir()
    elif how == "missing":
        vectors.unlink()
    else:  # another build's: fewer rows
        from ragbench._retrieval.pages.index import read_vectors, write_vectors

        write_vectors(vectors, read_vectors(vectors)[:3])


@pytest.mark.parametrize("how", ["cut short", "a FIFO", "a folder", "missing", "another build's"])
def test_a_damaged_vectors_file_is_one_line_naming_it_and_the_command_that_builds_it_again(tmp_path, how):
    index = tmp_path / "index"
    LateInteractionRetriever(pages=PAGES, index=str(index), encoder=Encoder(), batch_size=2)
    damaged(index, how)
    with pytest.raises(ConfigError) as refused:
        LateInteractionRetriever(pages=PAGES, index=str(index), encoder=Encoder(), batch_size=2)
    said = str(refused.value)
    assert "\n" not in said and said.startswith(f"index {index}: vectors.safetensors ")
    assert said.endswith(
        f"; build it again: ragbench index build --retriever colpali --corpus {Path(PAGES).resolve()} --model made-up "
        f"--out {index} --build-arg batch_size=2 --overwrite"
    )
    if how == "a FIFO":
        assert "(a FIFO (named pipe) is there, not a file)" in said


@needs("transformers")
def test_the_command_a_damaged_index_names_builds_it_again(tmp_path):
    from ragbench._retrieval.pages.single_vector import ImageDenseRetriever

    index, model = tmp_path / "index", str(VIDORE / "tiny-siglip")
    ImageDenseRetriever(pages=PAGES, index=str(index), model=model)
    damaged(index, "cut short")
    with pytest.raises(ConfigError) as refused:
        ImageDenseRetriever(pages=PAGES, index=str(index), model=model)
    command = str(refused.value).split("; build it again: ragbench ")[1].split()
    done = cli_here(*command, "--no-progress")
    assert done.returncode == 0, done.stderr
    assert len(ImageDenseRetriever(pages=PAGES, index=str(index), model=model).pages) == 6
