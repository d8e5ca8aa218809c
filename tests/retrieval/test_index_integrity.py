"""An index is what its build wrote, or the run refuses it in one line: damaged or mixed files, an index
rebuilt between the attempts of a run, two builds of one folder at once, a corpus whose ids repeat."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import needs
from ragbench.api import ConfigError
from ragbench.testing import build_index, installed_registry, load_retriever
from support.helpers import cli_here
from support.retrieval_samples import passages, write_dpr_tsv

pytestmark = needs("bm25s")  # not imported while the tests are collected
MANIFEST_FILE = "manifest.json"  # an index's manifest, written last (docs/running.md)


def built(tmp_path, name="index", n=30, seed=0):
    corpus = write_dpr_tsv(tmp_path / f"{name}.tsv", passages(n, seed))
    build_index(corpus, tmp_path / name, "bm25", chunk_size=8, progress=False, registry=installed_registry())
    return tmp_path / name


def demo_run(tmp_path, index, output, *extra):
    return cli_here(
        "--tasks",
        "demo",
        "--model",
        "scripted:echo",
        "--limit",
        "3",
        "--system",
        "vanilla",
        "--retriever",
        "bm25",
        "--retriever-arg",
        f"index={index}",
        "--output",
        str(output),
        "--no-progress",
        *extra,
    )


@pytest.mark.parametrize(
    "damage, named",
    [
        (
            lambda index: (index / "docs.offsets.npy").write_bytes(b""),
            "docs.offsets.npy: not a readable .npy array",
        ),
        (
            lambda index: (index / "docs.jsonl").write_bytes((index / "docs.jsonl").read_bytes()[:100]),
            "docs.jsonl: holds 100 bytes where docs.offsets.npy says",
        ),
        (
            lambda index: (index / "bm25" / "data.csc.index.npy").write_bytes(b""),
            "bm25/data.csc.index.npy: not a readable .npy array",
        ),
        (
            lambda index: (index / "bm25" / "params.index.json").write_text("{}"),
            "bm25/params.index.json: has no num_docs",
        ),
        (
            lambda index: (index / "bm25" / "vocab.index.json").write_bytes(
                (built(index.parent, "other", n=12) / "bm25" / "vocab.index.json").read_bytes()
            ),
            "bm25/vocab.index.json: ",
        ),
    ],
)
def test_a_damaged_index_file_ends_the_run_in_one_line_naming_it_and_the_rebuild(tmp_path, damage, named):
    index = built(tmp_path)
    damage(index)
    result = demo_run(tmp_path, index, tmp_path / "run")
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"ragbench: error: retriever bm25: index {index}: {named}")
    assert line.endswith(
        f"--retriever bm25 --out {index} --overwrite (and the --build-arg options its manifest.json records)"
    )


def test_files_of_another_build_are_refused_not_searched(tmp_path):
    index, other = built(tmp_path), built(tmp_path, "other", n=50)
    for name in ("docs.jsonl", "docs.offsets.npy"):
        (index / name).write_bytes((other / name).read_bytes())
    with pytest.raises(
        ConfigError,
        match=r"docs.offsets.npy: holds 50 passages where manifest.json says 30 \(damaged, or a "
        r"file of another build\); build it again",
    ):
        load_retriever("bm25", {"index": str(index)}, registry=installed_registry())


def test_dense_embeddings_of_fewer_passages_than_the_manifest_are_refused(tmp_path):
    folder = tmp_path / "dense"
    folder.mkdir()
    bm25_index = built(tmp_path)
    for name in ("docs.jsonl", "docs.offsets.npy"):
        (folder / name).write_bytes((bm25_index / name).read_bytes())
    np.save(folder / "embeddings.npy", np.ones((20, 4), "float16"))  # 20 of the 30 passages: 10 never found
    manifest = {
        "retriever": "dense",
        "doc_count": 30,
        "corpus": {"path": "c.tsv"},
        "format": 1,
        "options": {"model": "embedded", "query_instruction": "", "normalize": True, "dim": 4},
    }
    (folder / MANIFEST_FILE).write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match="embeddings.npy: holds 20 passages where manifest.json says 30"):
        load_retriever("dense", {"index": str(folder)}, registry=installed_registry())


def test_a_manifest_without_its_fields_is_damaged(tmp_path):
    index = built(tmp_path)
    (index / MANIFEST_FILE).write_text('{"format": 1}')
    with pytest.raises(ConfigError, match=r"manifest.json is damaged \(.*missing 4 required"):
        load_retriever("bm25", {"index": str(index)}, registry=installed_registry())


def test_resume_refuses_a_run_whose_index_was_rebuilt_from_another_corpus(tmp_path):
    index, run = built(tmp_path), tmp_path / "run"
    assert demo_run(tmp_path, index, run).returncode == 0
    samples = run / "samples" / "demo.jsonl"
    samples.write_text(samples.read_text().splitlines()[0] + "\n")  # the run stopped after one example
    corpus = write_dpr_tsv(tmp_path / "index.tsv", passages(30, seed=1))
    build_index(corpus, index, "bm25", chunk_size=8, progress=False, overwrite=True, registry=installed_registry())
    refused = demo_run(tmp_path, index, run, "--resume")
    assert refused.returncode == 2
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith(
        f"ragbench: error: --resume: {run}: what the retriever searches (its index or recording) changed since the run started "
        "(corpus: bytes: "
    )
    assert "sha256: " in line and line.endswith("--overwrite runs it again, or choose a new --output")


def test_resume_goes_on_over_an_index_rebuilt_from_the_same_corpus(tmp_path):
    index, run = built(tmp_path), tmp_path / "run"
    assert demo_run(tmp_path, index, run).returncode == 0
    samples = run / "samples" / "demo.jsonl"
    samples.write_text(samples.read_text().splitlines()[0] + "\n")
    build_index(
        tmp_path / "index.tsv",
        index,
        "bm25",
        chunk_size=8,
        progress=False,
        overwrite=True,
        registry=installed_registry(),
    )
    resumed = demo_run(tmp_path, index, run, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert len((run / "samples" / "demo.jsonl").read_text().splitlines()) == 3


def test_a_second_build_of_one_folder_is_refused_while_another_holds_it_and_takes_over_once_it_is_killed(tmp_path):
    corpus = write_dpr_tsv(tmp_path / "c.tsv", passages(30))
    out = tmp_path / "index"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom pathlib import Path\n"
            "from ragbench._retrieval.index.staging import held_staging\n"
            "with held_staging(Path(sys.argv[1])) as staging:\n"
            "    (staging / 'docs.jsonl').write_text('half')\n    print('held', flush=True)\n"
            "    time.sleep(60)\n",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        refused = cli_here(
            "index", "build", "--corpus", str(corpus), "--retriever", "bm25", "--out", str(out), "--no-progress"
        )
        assert refused.returncode == 2
        [line] = refused.stderr.strip().splitlines()
        assert line == (
            f"ragbench: error: --out {out}: another ragbench index build is writing it ({out}.partial is "
            "locked); wait for it to end, or choose another --out"
        )
        assert (tmp_path / "index.partial" / "docs.jsonl").read_text() == "half"
    finally:
        holder.kill()
        holder.wait()
    built = cli_here(
        "index", "build", "--corpus", str(corpus), "--retriever", "bm25", "--out", str(out), "--no-progress"
    )
    assert built.returncode == 0, built.stderr
    assert not (tmp_path / "index.partial").exists()
    assert load_retriever("bm25", {"index": str(out)}, registry=installed_registry()).manifest.doc_count == 30


def tree(folder):
    """What lies under `folder`: each path, a link's target, a file's bytes, a folder as None."""
    return {
        str(path.relative_to(folder)): str(path.readlink())
        if path.is_symlink()
        else (path.read_bytes() if path.is_file() else None)
        for path in sorted(folder.rglob("*"))
    }


@pytest.mark.parametrize("there", ["an empty folder", "a folder of files", "a file", "a link"])
def test_a_page_builds_lock_name_held_by_the_users_own_is_refused_and_left_as_it_is(tmp_path, there):
    """OUT.lock, the lock a page index build holds beside --out, is the build's only where it made it or a killed
    build left it (its mark there): the user's own of that name is refused in one line, never removed."""
    from ragbench._retrieval.index.staging import BUILD_MARK, held_lock

    lock = tmp_path / "index.lock"
    if there == "a link":
        (tmp_path / "elsewhere").mkdir()
        lock.symlink_to(tmp_path / "elsewhere")
    elif there == "a file":
        lock.write_text("mine")
    else:
        lock.mkdir()
        if there == "a folder of files":
            (lock / "notes.txt").write_text("keep")
    before = tree(tmp_path)
    with pytest.raises(ConfigError) as refused, held_lock(lock, tmp_path / "index", "index build"):
        pytest.fail("the block ran")
    assert str(refused.value).startswith(
        f"--out {tmp_path / 'index'}: {lock} is not a folder a ragbench index build made ("
    )
    assert str(refused.value).endswith("); remove it, or choose another --out")
    assert tree(tmp_path) == before
    if there.endswith("folder"):  # a killed build's (its mark there) is taken over, then removed
        (lock / BUILD_MARK).touch()
        with held_lock(lock, tmp_path / "index", "index build"):
            assert sorted(path.name for path in lock.iterdir()) == [BUILD_MARK]
        assert not lock.exists()
    with held_lock(tmp_path / "new.lock", tmp_path / "new", "index build"):  # one it makes: removed after
        assert (tmp_path / "new.lock" / BUILD_MARK).is_file()
    assert not (tmp_path / "new.lock").exists()


def test_a_corpus_whose_passage_ids_repeat_is_refused_without_an_index(tmp_path):
    corpus = tmp_path / "wiki.jsonl"  # FlashRAG's {"id", "contents"}; 2 and "2" are one id, as metrics compare them
    corpus.write_text(
        "".join(
            json.dumps(line) + "\n"
            for line in [
                {"id": "1", "contents": "Olm\nOlm is a town."},
                {"id": 2, "contents": "Evermouth\nThe capital."},
                {"id": "3", "contents": "Trask\nA village."},
                {"id": "2", "contents": "Varn\nA country."},
            ]
        )
    )
    result = cli_here(
        "index",
        "build",
        "--corpus",
        str(corpus),
        "--retriever",
        "bm25",
        "--out",
        str(tmp_path / "index"),
        "--no-progress",
    )
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line == (
        f"ragbench: error: corpus {corpus}: 1 passage id(s) repeat: '2' (2 passages); retrieval metrics "
        "match documents by id, so each passage needs its own: make the ids unique, then build again"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["wiki.jsonl"]


def test_resume_refuses_a_replayed_run_whose_recording_changed_since_it_started(tmp_path):
    index, recorded = built(tmp_path), tmp_path / "recorded"
    assert demo_run(tmp_path, index, recorded).returncode == 0
    recording, run = recorded / "calls" / "retrieval.jsonl", tmp_path / "replayed"
    args = [
        "--tasks",
        "demo",
        "--model",
        "scripted:echo",
        "--limit",
        "3",
        "--system",
        "vanilla",
        "--retriever",
        "replay",
        "--retriever-arg",
        f"file={recording}",
        "--output",
        str(run),
        "--no-progress",
    ]
    assert cli_here(*args).returncode == 0
    samples = run / "samples" / "demo.jsonl"
    samples.write_text(samples.read_text().splitlines()[0] + "\n")
    lines = recording.read_text()
    first = json.loads(lines.splitlines()[0])  # now answered with no document: the line before it is the first match
    recording.write_text(json.dumps({**first, "ids": [], "scores": [], "docs": []}) + "\n" + lines)
    refused = cli_here(*args, "--resume")
    assert refused.returncode == 2
    assert refused.stderr.startswith(
        f"ragbench: error: --resume: {run}: what the retriever searches (its index or "
        "recording) changed since the run started (file_sha256: "
    )


def test_a_corpus_still_being_written_while_it_is_indexed_leaves_no_index(tmp_path, monkeypatch):
    corpus = write_dpr_tsv(tmp_path / "c.tsv", passages(30))
    builder = installed_registry().load("retrievers", "bm25").builder  # what `index build --kind bm25` builds with
    original = builder.add

    def add_while_a_download_appends(self, texts):
        with open(corpus, "a", encoding="utf-8") as handle:
            handle.write(f"{1000 + self.n_docs}\tmore text\tMore\n")
        original(self, texts)

    monkeypatch.setattr(builder, "add", add_while_a_download_appends)
    with pytest.raises(
        ConfigError,
        match=r"corpus .*c.tsv changed while it was indexed \(\d+ bytes, now \d+\): the index "
        r"would hold neither version; build again once the file is complete",
    ):
        build_index(corpus, tmp_path / "index", "bm25", chunk_size=8, progress=False, registry=installed_registry())
    assert sorted(path.name for path in tmp_path.iterdir()) == ["c.tsv"]


def test_a_failed_page_build_leaves_no_folder_it_made_for_its_lock(tmp_path):
    """The folders above --out that the lock beside it needed are removed with the lock when the build left them
    empty (a bad option, a model that does not load), kept when the index is in them."""
    from ragbench._retrieval.index.staging import held_lock

    out = tmp_path / "a" / "b" / "index"
    with pytest.raises(ConfigError, match="a bad option"), held_lock(out.with_name("index.lock"), out, "index build"):
        raise ConfigError("a bad option")
    assert list(tmp_path.iterdir()) == []
    with held_lock(out.with_name("index.lock"), out, "index build"):
        out.mkdir()
    assert [path.relative_to(tmp_path).as_posix() for path in sorted(tmp_path.rglob("*"))] == ["a", "a/b", "a/b/index"]
