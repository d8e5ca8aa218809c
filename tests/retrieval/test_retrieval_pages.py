"""Pages as passages: ViDoRe's offline storages read, MaxSim equal to colpali-engine's score_multi_vector, trec_eval's
order of ties, and the colpali retriever's index built once, reused, and refused where it is another's."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import TEST_DATA, needs
from ragbench._retrieval.pages.corpus import open_pages
from ragbench._retrieval.pages.late_interaction import LateInteractionRetriever
from ragbench._retrieval.pages.maxsim import maxsim_scores
from ragbench._retrieval.pages.page_set import PageSet
from ragbench._retrieval.pages.ranking import trec_order
from ragbench._retrieval.pages.vidore_data import open_vidore
from ragbench.api import ConfigError
from ragbench.testing import load_retriever
from support.helpers import tmpfs

pytestmark = needs("torch", "safetensors", "datasets")  # not imported while the tests are collected

VIDORE = TEST_DATA / "vidore"
RECORD = json.loads((TEST_DATA / "parity" / "vidore_run.json").read_text(encoding="utf-8"))


def page_set(folder: Path | str) -> PageSet:
    """The pages of the ViDoRe dataset (or folder of page images) at `folder`, as a page retriever reads them."""
    return PageSet(open_pages(folder, "test", "--corpus"))


def made_up(count: int, lengths: list[int], dim: int, seed: int, dtype: object) -> list[object]:
    """record_vidore_run.py's embeddings, made again."""
    import torch

    return [
        torch.sin(torch.arange(length * dim, dtype=torch.float64).reshape(length, dim) * (0.37 + 0.11 * i) + seed).to(
            dtype
        )
        for i, length in zip(range(count), lengths)
    ]


def upstream_maxsim(queries: list, pages: list, batch_size: int) -> list | None:
    """colpali-engine's own `score_multi_vector` of the vectors, run here where colpali-engine is installed."""
    try:
        from colpali_engine.utils.processing_utils import BaseVisualRetrieverProcessor
    except ImportError:
        return None
    scores = BaseVisualRetrieverProcessor.score_multi_vector(queries, pages, batch_size=batch_size, device="cpu")
    return list(scores.tolist())


@pytest.mark.parametrize("case", RECORD["maxsim"], ids=lambda case: f"{case['dtype']}-batch{case['batch_size']}")
def test_maxsim_equals_colpali_engines_score_multi_vector(case):
    """To the bit against colpali-engine's `score_multi_vector` run on this machine, where colpali-engine is
    installed (ragbench[vision]). The test environment has none (it pins peft and transformers>=5.3), so elsewhere
    the reference is the scores record_vidore_run.py recorded on another CPU, compared within a few units in the last
    place: float32 sums (einsum's reductions, whose order follows the CPU's vector width) round differently on an
    Intel Xeon than on the AMD EPYC that recorded them, and a bfloat16 product rounds on those sums."""
    import torch

    dtype = getattr(torch, case["dtype"])
    queries, pages = made_up(3, [2, 5, 3], 6, 1, dtype), made_up(5, [4, 1, 7, 2, 3], 6, 2, dtype)
    ours = maxsim_scores(queries, pages, batch_size=case["batch_size"]).tolist()
    here = upstream_maxsim(queries, pages, case["batch_size"])
    if here is not None:
        assert ours == here
    else:
        ulp = float(torch.finfo(dtype).eps)
        assert np.allclose(ours, case["scores"], rtol=4 * ulp, atol=4 * ulp), (ours, case["scores"])


def test_zero_padding_takes_part_as_upstreams_does():
    import torch

    query = [torch.tensor([[-1.0, 0.0]])]
    short, long = torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 0.0], [2.0, 0.0]])
    alone = maxsim_scores(query, [short]).tolist()[0][0]
    beside_a_longer_page = maxsim_scores(query, [short, long]).tolist()[0][0]
    assert (alone, beside_a_longer_page) == (-1.0, 0.0)  # its padding row scores 0, above its own -1


def test_ties_rank_as_trec_eval_ranks_them_id_descending():
    assert trec_order([1.0, 2.0, 2.0, 1.0], ["a", "b", "c", "d"], 4) == [2, 1, 3, 0]
    assert trec_order([0.5, 0.5], ["10", "9"], 1) == [1]  # "9" > "10" as strcmp compares them


def hub_cache(tmp_path: Path, version: str) -> Path:
    folder = tmp_path / f"datasets--vidore--{version}"
    shutil.copytree(VIDORE / version, folder / "snapshots" / "abc123")
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text("abc123", encoding="utf-8")
    return folder


def saved(tmp_path: Path, version: str) -> Path:
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / f"saved_{version}"
    configs = ["corpus", "queries", "qrels"] if version != "v1" else ["data"]
    for config in configs:
        files = [str(path) for path in sorted((VIDORE / version / config).glob("*.parquet"))]
        loaded = datasets.Dataset.from_parquet(files, cache_dir=str(tmp_path / "cache"))
        target = folder / config if version != "v1" else folder
        datasets.DatasetDict({"test": loaded}).save_to_disk(str(target))
    return folder


@pytest.mark.parametrize("version", ["v1", "v2", "v3"])
@pytest.mark.parametrize("storage", ["parquet", "hub_cache", "save_to_disk"])
def test_each_offline_storage_reads_the_same_pages(tmp_path, version, storage):
    folder = {"parquet": lambda: VIDORE / version, "hub_cache": lambda: hub_cache(tmp_path, version),
              "save_to_disk": lambda: saved(tmp_path, version)}[storage]()  # fmt: skip
    corpus = page_set(folder)
    reference = page_set(VIDORE / version)
    rows = 7 if version == "v1" else 6  # v1: page_1.png on two rows, each encoded (as upstream's evaluator does)
    assert corpus.ids == reference.ids and len(corpus.ids) == 6 and len(corpus) == rows
    assert [corpus.image(i).digest for i in range(rows)] == [reference.image(i).digest for i in range(rows)]
    assert corpus.document(2, 1.5).image == reference.image(2) and corpus.document(2).text == ""


def test_v1_pages_are_filenames_each_once_and_v2_pages_corpus_ids():
    assert page_set(VIDORE / "v1").ids == tuple(f"data/pages/page_{n}.png" for n in range(6))
    assert page_set(VIDORE / "v2").ids == ("0", "1", "2", "3", "4", "5")


def test_a_missing_or_foreign_folder_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"task vidore: .*/nowhere not found; download the dataset") as missing:
        open_vidore(tmp_path / "nowhere")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="is no ViDoRe dataset: expected corpus/, queries/ and qrels/") as foreign:
        open_vidore(tmp_path / "other")
    assert "\n" not in str(missing.value) + str(foreign.value)


class FormulaEncoder:
    """Pages and queries to made-up vectors (by the pixels' and the text's content); counts its calls."""

    def __init__(self, name: str = "formula") -> None:
        self.name, self.calls = name, 0

    def identity(self) -> dict:
        return {"path": self.name}

    def encode_pages(self, images: list) -> list:
        import torch

        self.calls += len(images)
        pixels = [np.asarray(image.convert("RGB").resize((2, 2)), dtype=np.float32).reshape(4, 3) for image in images]
        return [torch.from_numpy(page) / 255 for page in pixels]

    def encode_queries(self, texts: list[str]) -> list:
        import torch

        return [torch.tensor([[len(text) % 3, 1.0, -0.5]], dtype=torch.float32) for text in texts]


def test_the_index_is_built_once_then_reused_and_refused_for_another_model(tmp_path):
    index = tmp_path / "index"
    first = FormulaEncoder()
    built = LateInteractionRetriever(pages=str(VIDORE / "v2"), index=str(index), encoder=first)
    assert first.calls == 6 and (index / "manifest.json").is_file() and not (tmp_path / "index.partial").exists()
    again = FormulaEncoder()
    reused = LateInteractionRetriever(pages=str(VIDORE / "v2"), index=str(index), encoder=again)
    assert again.calls == 0  # read from the index
    hits = reused.search(["harbour", "tide at Olm"], 3)
    assert [[doc.score for doc in row] for row in hits] == [
        [doc.score for doc in row] for row in built.search(["harbour", "tide at Olm"], 3)
    ]
    assert all(doc.image is not None and doc.id is not None for row in hits for doc in row)
    with pytest.raises(ConfigError, match="was built for other model; name another index folder"):
        LateInteractionRetriever(pages=str(VIDORE / "v2"), index=str(index), encoder=FormulaEncoder("other"))
    with pytest.raises(ConfigError, match="was built for other pages"):
        LateInteractionRetriever(pages=str(VIDORE / "v3"), index=str(index), encoder=FormulaEncoder())


@pytest.mark.parametrize("named", [".", "nothing/.."])
def test_an_index_named_by_dot_or_dot_dot_is_built_in_the_folder_it_names(tmp_path, monkeypatch, named):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    retriever = LateInteractionRetriever(pages=str(VIDORE / "v2"), index=named, encoder=FormulaEncoder())
    assert retriever.folder == work and (work / "manifest.json").is_file()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["work"]


def test_a_damaged_or_foreign_index_folder_is_one_line_and_left_as_it_is(tmp_path):
    index = tmp_path / "index"
    LateInteractionRetriever(pages=str(VIDORE / "v2"), index=str(index), encoder=FormulaEncoder())
    vectors = index / "vectors.safetensors"
    vectors.write_bytes(vectors.read_bytes()[:100])
    with pytest.raises(ConfigError, match="vectors.safetensors missing or damaged"):
        LateInteractionRetriever(pages=str(VIDORE / "v2"), index=str(index), encoder=FormulaEncoder())
    manifest = index / "manifest.json"
    cut = manifest.read_bytes()[:20]
    manifest.write_bytes(cut)
    with pytest.raises(ConfigError, match=r"^index .*: manifest.json unreadable \(.*\); remove the folder to build"):
        LateInteractionRetriever(pages=str(VIDORE / "v2"), index=str(index), encoder=FormulaEncoder())
    assert manifest.read_bytes() == cut
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(ConfigError, match="holds no manifest.json"):
        LateInteractionRetriever(pages=str(VIDORE / "v2"), index=str(mine), encoder=FormulaEncoder())
    assert [path.name for path in mine.iterdir()] == ["notes.txt"]


@needs("transformers")
def test_siglip_scores_equal_vidore_benchmarks_siglip_retriever(tmp_path):
    """Against the scores vidore-benchmark's SigLIPRetriever gave in its own venv (record_vidore_metrics.py): it
    cannot run here (under transformers 5 its `get_text_features` returns an output object its `torch.unbind`
    refuses), so its scores are recorded, on another CPU: a float32 forward pass rounds differently on another
    CPU (its matrix products' reduction order), so they are compared within float32 rounding, not to the bit."""
    from ragbench._retrieval.pages.single_vector import ImageDenseRetriever

    recorded = RECORD["siglip"]
    retriever = ImageDenseRetriever(
        pages=str(VIDORE / "v2"), index=str(tmp_path / "index"), model=str(VIDORE / "tiny-siglip"), page_scores="raw"
    )
    hits = retriever.search(recorded["queries"], 6)
    ours = [[{doc.id: doc.score for doc in row}[str(page)] for page in range(6)] for row in hits]
    assert np.allclose(ours, recorded["scores"], rtol=1e-5, atol=1e-6), (ours, recorded["scores"])
    assert json.loads((tmp_path / "index" / "manifest.json").read_text())["tokens"] == 6  # one vector a page


SIGLIP_OPTIONS = (
    "pages=<str/null, default None>, index=<str/null, default None>, model=<str/null, default None>, "
    "split=<str, default 'test'>, batch_size=<int, default 4>, query_batch_size=<int, default 4>, "
    "device=<str, default 'cpu'>, page_scores=<vidore|raw, default 'vidore'>, encoder=<value, default None>, "
    "in_shards=<value, default None>, corpus=<value, default None>"
)


@pytest.mark.parametrize("option", ["score_batch_size", "pool_factor", "dtype"])
def test_siglip_declares_only_the_options_it_honours_not_maxsims_poolings_or_the_dtype(tmp_path, option):
    with pytest.raises(ConfigError) as refused:
        load_retriever("siglip", {option: 2})
    refusal = str(refused.value)  # a close name (batch_size) may be suggested between the two
    assert refusal.startswith(f"--retriever-arg {option}=2: retriever siglip has no option '{option}'")
    assert refusal.endswith(f"(accepted: {SIGLIP_OPTIONS})")
    with pytest.raises(ConfigError, match=r"^retriever siglip: pass --retriever-arg model=FOLDER \(a SigLIP or CLIP"):
        load_retriever("siglip", {"pages": str(VIDORE / "v2"), "index": str(tmp_path / "i")})


@pytest.mark.parametrize(
    ("retriever", "given", "asked"),
    [
        ("siglip", {}, "model=FOLDER (a SigLIP or CLIP model saved locally)"),
        ("siglip", {"model": "m"}, "index=FOLDER (where the pages' vectors are saved, then reused)"),
        ("colpali", {}, "index=FOLDER (where the pages' vectors are saved, then reused)"),
        ("colpali", {"index": "i"}, "model=FOLDER (a colpali-engine model saved locally)"),
    ],
)
def test_each_page_retriever_asks_first_for_the_option_it_always_asked_for_first(retriever, given, asked):
    with pytest.raises(ConfigError) as refused:
        load_retriever(retriever, given)
    assert str(refused.value) == f"retriever {retriever}: pass --retriever-arg {asked}"


def test_missing_options_and_a_model_it_cannot_load_are_one_line(tmp_path):
    pages = str(VIDORE / "v2")
    with pytest.raises(ConfigError, match="pass --retriever-arg index=FOLDER"):
        LateInteractionRetriever(pages=pages, model="m")
    with pytest.raises(ConfigError, match="pass --retriever-arg model=FOLDER"):
        LateInteractionRetriever(pages=pages, index=str(tmp_path / "i"))
    with pytest.raises(ConfigError, match="pool_factor=0: must be at least 1"):
        LateInteractionRetriever(pages=pages, index=str(tmp_path / "i"), encoder=FormulaEncoder(), pool_factor=0)
    # without colpali-engine: how to install it; with it: the folder holds no model
    with pytest.raises(ConfigError, match=r"ragbench\[vision\]|no readable config.json") as refused:
        LateInteractionRetriever(pages=pages, index=str(tmp_path / "i"), model=str(tmp_path))
    assert "\n" not in str(refused.value) and not (tmp_path / "i").exists()


@needs("transformers")
def test_siglip_searches_by_picture_by_the_cosine_of_image_features(tmp_path):
    import torch

    from ragbench._retrieval.pages.single_vector import ImageDenseRetriever
    from ragbench.api import Image
    from ragbench.api.retrieval import RetrievalError

    retriever = ImageDenseRetriever(
        pages=str(VIDORE / "v2"), index=str(tmp_path / "index"), model=str(VIDORE / "tiny-siglip")
    )
    pages = [retriever.corpus.image(i) for i in range(len(retriever.corpus))]
    found = retriever.search_images([*pages, Image.of(b"\x89PNG\r\n\x1a\nnot a picture")], 4)
    vectors = torch.nn.functional.normalize(torch.cat(retriever.pages), dim=-1)
    cosines = (vectors @ vectors.T).tolist()
    for page, hits in enumerate(found[:-1]):
        assert not isinstance(hits, RetrievalError)
        assert hits[0].id == retriever.corpus.ids[page] and hits[0].score == pytest.approx(1.0, abs=1e-5)
        assert [doc.score for doc in hits] == pytest.approx(sorted(cosines[page], reverse=True)[:4], abs=1e-5)
    assert isinstance(found[-1], RetrievalError) and "retriever siglip: a query picture could not be read" in str(
        found[-1]
    )


@needs("transformers")
def test_flashrag_mm_searches_by_picture_with_siglip(tmp_path):
    from ragbench._retrieval.pages.single_vector import ImageDenseRetriever
    from support.picture_search import picture_questions, run_flashrag_mm, searched_by_picture

    options = {"pages": str(VIDORE / "v2"), "index": str(tmp_path / "index"), "model": str(VIDORE / "tiny-siglip")}
    own = ImageDenseRetriever(**options)  # builds the index the run reuses
    pictures = {f"page{i}": own.corpus.image(i) for i in (0, 3)}
    run_flashrag_mm(picture_questions(pictures, "a chart"), "siglip", options, tmp_path / "run", image_topk=2)
    assert searched_by_picture(tmp_path / "run") == {
        f"image sha256:{image.digest}": [doc.id for doc in own.search_images([image], 2)[0]]  # type: ignore[union-attr]
        for image in pictures.values()
    }


# --- the index built on first use (in a run): its staging folder `<index>.partial`, held by one build -------------


def built_at(index: Path, encoder: object | None = None) -> LateInteractionRetriever:
    return LateInteractionRetriever(pages=str(VIDORE / "v2"), index=str(index), encoder=encoder or FormulaEncoder())


def tree(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_a_staging_folder_that_is_the_users_is_refused_in_one_line_and_left_as_it_is(tmp_path):
    staging = tmp_path / "index.partial"
    staging.mkdir()
    (staging / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        built_at(tmp_path / "index")
    assert str(refused.value) == (
        f"index {tmp_path / 'index'}: {staging} is not a folder a ragbench index build made (it holds files, and no "
        ".ragbench-build); remove it, or choose another index"
    )
    assert tree(staging) == {"notes.txt": b"mine"} and not (tmp_path / "index").exists()


def test_a_staging_folder_that_is_a_link_is_refused_and_what_it_points_at_kept(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("x", encoding="utf-8")
    (tmp_path / "index.partial").symlink_to(elsewhere)
    with pytest.raises(
        ConfigError, match=r"index\.partial is not a folder a ragbench index build made \(it is a symbolic"
    ):
        built_at(tmp_path / "index")
    assert tree(elsewhere) == {"keep.txt": b"x"} and (tmp_path / "index.partial").is_symlink()


def test_a_killed_builds_staging_folder_is_taken_over(tmp_path):
    staging = tmp_path / "index.partial"
    staging.mkdir()
    (staging / ".ragbench-build").touch()
    (staging / "vectors.safetensors").write_bytes(b"half written")
    retriever = built_at(tmp_path / "index")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["index"]
    assert sorted(tree(tmp_path / "index")) == ["manifest.json", "vectors.safetensors"]
    assert len(retriever.search(["harbour"], 3)[0]) == 3


def test_a_failed_build_leaves_no_staging_folder(tmp_path):
    class Failing(FormulaEncoder):
        def encode_pages(self, images: list) -> list:
            raise RuntimeError("out of memory")

    with pytest.raises(RuntimeError, match="out of memory"):
        built_at(tmp_path / "index", Failing())
    assert not (tmp_path / "index.partial").exists()


HOLDER = """
import fcntl, os, sys
handle = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("held", flush=True)
sys.stdin.read()
"""


def test_a_second_build_of_the_index_is_refused_while_one_holds_it_and_builds_once_that_one_is_killed(tmp_path):
    """Another run building the same index (a process holding its staging folder's lock, as a build does, then
    killed): refused at once in one line, its files left; once the holder is gone, its folder is taken over."""
    staging = tmp_path / "index.partial"
    staging.mkdir()
    (staging / ".ragbench-build").touch()
    (staging / "vectors.safetensors").write_bytes(b"the other build's")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(staging)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        encoder = FormulaEncoder()
        with pytest.raises(ConfigError) as refused:
            built_at(tmp_path / "index", encoder)
        assert str(refused.value) == (
            f"index {tmp_path / 'index'}: another ragbench index build is writing it ({staging} is locked); wait for "
            "it to end, or choose another index"
        )
        assert encoder.calls == 0 and (staging / "vectors.safetensors").read_bytes() == b"the other build's"
    finally:
        holder.kill()
        holder.wait()
    built_at(tmp_path / "index")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["index"]


def test_a_full_disk_while_the_index_is_saved_is_an_oserror_naming_the_file_and_leaves_nothing(tmp_path, monkeypatch):
    """A real full disk (a small tmpfs; where mounting is not allowed, the writer's own error injected): the
    OSError it is, its errno and the file, which the command line says in one line with the fix; no staging left."""
    import errno

    with tmpfs(tmp_path / "disk", "64k") as disk:
        if disk is None:
            from safetensors import SafetensorError

            def full(*args: object, **kwargs: object) -> None:
                raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

            monkeypatch.setattr("safetensors.torch.save_file", full)
            disk = tmp_path / "disk"
        else:
            with (disk / "filler").open("wb") as filler, contextlib.suppress(OSError):
                filler.write(b"x" * (1 << 20))
        with pytest.raises(OSError) as full_disk:
            built_at(disk / "index")
        assert full_disk.value.errno == errno.ENOSPC
        assert full_disk.value.filename == str(disk / "index.partial" / "vectors.safetensors")
        assert sorted(path.name for path in disk.iterdir()) == (["filler"] if (disk / "filler").exists() else [])
