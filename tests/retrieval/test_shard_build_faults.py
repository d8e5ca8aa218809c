"""What a shard-parallel build (`index build --ray --shards S`, `shard_build`) says and does with what it is given
or finds: more shards than the corpus has lines refused before any task; relative paths the driver's, whatever
folder a task runs in; a step record of any bytes refused or the step done again, never a traceback; damaged
shards' advice that works (the build again, not a split of an index there is none of); each step's shards counted
on stderr as the one-process build counts passages; a kept shard's file replaced by a link to a user's file ends the
resumed build in one line naming the link, the file and the fix (on Ray too, without Ray's own warnings), the file
untouched."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_shard_build import QUERIES, REGISTRY, WORDS, killed_after_two_shards, shard_search, whole_search

from conftest import needs, write_jsonl
from ragbench._retrieval.sharding.build.driver import build_shards
from ragbench._retrieval.sharding.build.runner import InProcess
from ragbench.api import ConfigError
from ragbench.testing import build_index, load_retriever
from support.helpers import cli_here
from support.object_store import LostAfterOneShard

pytestmark = needs("regex", "bm25s")
KIND = "lucene_bm25"


def passages(count: int) -> list[dict[str, str]]:
    return [{"id": f"d{i:03d}", "text": " ".join(WORDS[i % 9 : i % 9 + 1 + i % 4])} for i in range(count)]


class NeverStarted(InProcess):
    def __init__(self) -> None:
        raise AssertionError("a runner was started: a task would have run")


@pytest.mark.parametrize(("lines", "shards", "last_break"), [(300, 5000, True), (3, 4, False), (1, 2, True)])
def test_more_shards_than_the_corpus_has_lines_is_refused_before_any_task(tmp_path, lines, shards, last_break):
    corpus = write_jsonl(tmp_path / "corpus.jsonl", passages(lines))
    if not last_break:
        corpus.write_bytes(corpus.read_bytes().rstrip(b"\n"))  # a last line without its line break is a line
    with pytest.raises(ConfigError) as refused:
        build_shards(corpus, tmp_path / "out", KIND, {}, shards, registry=REGISTRY, runner=NeverStarted)
    assert str(refused.value) == (
        f"--shards {shards}: corpus {corpus} has {lines} lines and a shard is built from whole lines; "
        f"choose 1 to {lines}"
    )
    assert not (tmp_path / "out").exists()


def test_the_command_refuses_more_shards_than_lines_at_once_in_one_line(tmp_path):
    """The command (its Ray never started: the check comes before) ends in its one line, exit 2."""
    corpus = write_jsonl(tmp_path / "corpus.jsonl", passages(300))
    done = cli_here("index", "build", "--corpus", str(corpus), "--retriever", KIND, "--out", str(tmp_path / "out"),
                    "--ray", "--shards", "5000", "--no-progress")  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"ragbench: error: --shards 5000: corpus {corpus} has 300 lines and a shard is built from whole lines; "
        "choose 1 to 300"
    ]
    assert not (tmp_path / "out").exists()


class Elsewhere(InProcess):
    """Each task run in another working folder than the driver's, as a Ray task runs in its raylet's."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def map(self, function, calls, **options):
        here = Path.cwd()
        os.chdir(self.folder)
        try:
            return super().map(function, calls, **options)
        finally:
            os.chdir(here)


def test_relative_paths_are_the_drivers_whatever_folder_a_task_runs_in(tmp_path, monkeypatch):
    """`--corpus corpus.jsonl --out built` from the driver's folder, the tasks run in another: the index is built
    in the driver's `built` from its corpus, and nothing is written in the tasks' folder (a corpus.jsonl there,
    another one, is never read)."""
    driver, tasks = tmp_path / "driver", tmp_path / "raylet"
    driver.mkdir(), tasks.mkdir()
    write_jsonl(driver / "corpus.jsonl", passages(60))
    write_jsonl(tasks / "corpus.jsonl", [{"id": "other", "text": "river"}] * 60)
    monkeypatch.chdir(driver)
    build_shards("corpus.jsonl", "built", KIND, {}, 3, registry=REGISTRY, runner=lambda: Elsewhere(tasks))
    assert sorted(path.name for path in tasks.iterdir()) == ["corpus.jsonl"]
    assert sorted(path.name for path in (driver / "built").iterdir()) == ["shards-3"]
    build_index(driver / "corpus.jsonl", tmp_path / "one", KIND, {}, progress=False, registry=REGISTRY)
    assert shard_search(driver / "built", 3, QUERIES, 10) == whole_search(tmp_path / "one", QUERIES, 10)


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """(a corpus, the building folder of its 3-shard build lost once shard 0 was written, the one-process answers)."""
    folder = tmp_path_factory.mktemp("stopped")
    corpus = write_jsonl(folder / "corpus.jsonl", passages(60))
    with pytest.raises(ConfigError, match="the driver's node was lost"):
        build_shards(corpus, folder / "built", KIND, {}, 3, registry=REGISTRY, runner=LostAfterOneShard)
    build_index(corpus, folder / "one", KIND, {}, progress=False, registry=REGISTRY)
    return corpus, folder / "built" / "shards-3.building", whole_search(folder / "one", QUERIES, 10)


RECORDS = ["000.analysed.json", "002.analysed.json", "000.finished.json", "terms/001.merged.json"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=20)
@given(record=st.sampled_from(RECORDS), damage=st.sampled_from(["value", "nested", "cut", "other", "edited"]),
       data=st.data())  # fmt: skip
@example(record="000.analysed.json", damage="nested", data=None)  # 100,000 deep: RecursionError in json
def test_a_step_record_of_any_bytes_is_done_again_never_a_traceback(stopped, tmp_path_factory, record, damage, data):
    """A step record of a resumed local build replaced by any JSON value, a nesting 100,000 deep, its bytes cut
    short, another step's record, or its own with a value edited: its step is done again (its record is the
    build's own, in a folder only ragbench writes) and the shards answer as the one-process index."""
    corpus, building, answers = stopped
    out = tmp_path_factory.mktemp("resumed")
    shutil.copytree(building, out / "shards-3.building")
    path = out / "shards-3.building" / record
    held = path.read_bytes()
    if damage == "value":
        path.write_text(json.dumps(data.draw(json_values)), encoding="utf-8")
    elif damage == "nested":
        depth = 100_000 if data is None else data.draw(st.integers(1, 200_000))
        path.write_bytes(b"[" * depth + b"]" * depth)
    elif damage == "cut":
        path.write_bytes(held[: data.draw(st.integers(0, len(held) - 1))])
    elif damage == "other":
        other = data.draw(st.sampled_from(["001.analysed.json", "terms/000.merged.json"]))
        path.write_bytes((out / "shards-3.building" / other).read_bytes())
    else:
        sealed = json.loads(held)
        sealed["record"] = sealed["record"].replace("0", "1", 1)
        path.write_text(json.dumps(sealed), encoding="utf-8")
    build_shards(corpus, out, KIND, {}, 3, registry=REGISTRY)
    assert shard_search(out, 3, QUERIES, 10) == answers
    assert sorted(p.name for p in out.iterdir()) == ["shards-3"]


def test_damaged_shards_of_a_shard_parallel_build_advise_that_build_again(tmp_path):
    """A shard's docs store changed: the line names the build that made the shards, with --overwrite (which
    replaces them), never a split of an index there is none of; that build then serves them again. shards.json
    damaged: the folder is not provably ragbench's, so it is moved away first, then built again."""
    corpus = write_jsonl(tmp_path / "corpus.jsonl", passages(20))
    out = tmp_path / "built"
    build_shards(corpus, out, KIND, {}, 2, registry=REGISTRY)
    store = out / "shards-2" / "001" / "docs.jsonl"
    store.write_bytes(store.read_bytes().replace(b"d019", b"d091"))  # the same size, another content
    fix = (
        f"build it again: ragbench index build --corpus {corpus} --retriever {KIND} --out {out} --ray --shards 2 "
        "--overwrite (and the --build-arg options its manifest.json records)"
    )
    with pytest.raises(ConfigError) as refused:
        load_retriever(KIND, {"index": str(out), "shards": 2}, registry=REGISTRY)
    line = str(refused.value)
    assert "\n" not in line and "001/docs.jsonl" in line and line.endswith(f"(damaged); {fix}"), line
    build_shards(corpus, out, KIND, {}, 2, registry=REGISTRY, overwrite=True)  # the command it names
    assert shard_search(out, 2, QUERIES, 5) == shard_search(out, 2, QUERIES, 5)  # served again
    (out / "shards-2" / "shards.json").write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_retriever(KIND, {"index": str(out), "shards": 2}, registry=REGISTRY)
    line = str(refused.value)
    assert "\n" not in line and line.endswith(f": move it away, then {fix}") and "index shard" not in line, line


def test_each_step_counts_its_shards_on_stderr_as_the_one_process_build_counts_passages(tmp_path, capsys):
    corpus = write_jsonl(tmp_path / "corpus.jsonl", passages(30))
    build_shards(corpus, tmp_path / "built", KIND, {}, 3, registry=REGISTRY, progress=True)
    shown = capsys.readouterr()
    assert shown.out == ""
    for step in ("step 1 of 2, parts read", "terms merged", "step 2 of 2, shards written"):
        assert f"indexing corpus.jsonl ({KIND}), {step}: 100%" in shown.err and "3/3 [" in shown.err
    build_shards(corpus, tmp_path / "quiet", KIND, {}, 3, registry=REGISTRY)
    assert capsys.readouterr().err == ""


def linked_build(tmp_path: Path) -> tuple[Path, Path, Path, bytes]:
    """(corpus, --out, the user's file, its bytes): a 3-shard build killed once shards 0 and 1 were finished, shard
    0's docs.jsonl then replaced by a link to a user's file."""
    corpus = write_jsonl(tmp_path / "corpus.jsonl", passages(60))
    out = tmp_path / "built"
    building = killed_after_two_shards(corpus, out)
    mine = tmp_path / "results_2025.csv"
    mine.write_bytes(b"year,score\n2025,0.71\n")
    docs = building / "000" / "docs.jsonl"
    docs.unlink()
    docs.symlink_to(mine)
    return corpus, out, mine, mine.read_bytes()


def test_a_kept_shards_file_replaced_by_a_link_is_named_with_the_fix_and_the_file_left_alone(tmp_path):
    corpus, out, mine, before = linked_build(tmp_path)
    link = out / "shards-3.building" / "000" / "docs.jsonl"
    with pytest.raises(OSError) as refused:
        build_shards(corpus, out, KIND, {}, 3, registry=REGISTRY)
    assert refused.value.filename == str(link) and mine.read_bytes() == before and link.is_symlink()
    assert f"a symbolic link to {mine} in {link.parent}" in refused.value.strerror
    assert refused.value.fix == "move the link out of that folder (the file it names is left as it is)"
    link.rename(tmp_path / "moved.jsonl")  # the fix: the build then completes
    assert build_shards(corpus, out, KIND, {}, 3, registry=REGISTRY).kept == 1
    assert mine.read_bytes() == before
    build_index(corpus, tmp_path / "one", KIND, {}, progress=False, registry=REGISTRY)
    assert shard_search(out, 3, QUERIES, 10) == whole_search(tmp_path / "one", QUERIES, 10)


@needs("ray")
def test_on_ray_it_is_the_same_one_line_and_ray_prints_no_warning_of_its_own(tmp_path, ray_cluster):
    """It said "RayTaskError(OSError): a file ragbench was writing; fix what the error names": the tasks' OSError,
    on the tests' shared cluster, is the one line of the build in this process. (Ray's own timestamped "Token
    authentication is enabled" warning, printed where ragbench starts a local Ray, is test_sharded_ray_run's
    command-line run on a local Ray of its own.)"""
    corpus, out, mine, before = linked_build(tmp_path)
    link = out / "shards-3.building" / "000" / "docs.jsonl"
    done = cli_here("index", "build", "--corpus", str(corpus), "--retriever", KIND, "--out", str(out),
                    "--ray", ray_cluster.address, "--shards", "3", "--no-progress")  # fmt: skip
    assert done.returncode == 1 and mine.read_bytes() == before
    assert done.stderr.strip().splitlines() == [
        f"ragbench: error: a symbolic link to {mine} in {link.parent}, a folder of ragbench's own that it empties "
        f"(it removes no link and writes through none): {link}; move the link out of that folder (the file it names "
        "is left as it is), then run it again"
    ]
