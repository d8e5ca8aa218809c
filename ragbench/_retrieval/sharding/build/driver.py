"""`ragbench index build --ray --shards S`: an index built as S shards, each by a worker that reads its own part of
the corpus (`corpus.parts`) and writes its shard's files straight into INDEX/shards-S/NNN; no merged index.

The driver cuts the corpus into parts (byte offsets or file names), runs step 1 of every shard (`worker`), gets
back each part's small statistics (passage and line counts, bad records, its kind's small statistics: lengths'
totals; never postings), merges them (the kind's `merge`) and runs step 2 of every shard with what it made: each
shard then scores exactly as the one index. A kind's per-term statistics (lucene_bm25's document frequencies) never
reach the driver: step 1 writes them beside its shard, a middle step of one task a bucket of terms merges them by
term (`terms`), and step 2 reads the merged buckets; the driver gets each bucket's counts. It writes the manifest
(INDEX/shards-S/manifest.json: the one index's fields, the corpus's parts' sha256 for its sha256) and shards.json
(each file's size and content digest, from the workers) and renames the building folder into place (`state`; for
--out s3://..., the state lives in the store and the shards are put there, `store`). One driver at a time builds
into an --out: a local build holds its building folder's OS lock (`state`), one into a store a lock object there
(`store_lock`). Passage numbers are the one-process build's: shard i holds a contiguous run of them, from the
passages of the shards before it. A build killed mid-way is resumed by the same command: a shard's step whose files
still match its record is kept, the others done again.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...._errors import ConfigError
from ...._storage.locations import absolute_path, is_remote
from ...corpus.identity import corpus_bytes
from ...corpus.parts import (
    CorpusPart,
    PartReading,
    corpus_location,
    corpus_parts,
    part_corpus_state,
    part_form,
    read_part,
    renumbered,
)
from ...corpus.readers import SEGMENTED, passage_text
from ...index.building import KEPT_ERRORS
from ...index.built import Manifest
from ...index.progress import build_progress
from ..kind import BuildsShards
from ..kind_lookup import sharded_kind
from ..layout import foreign_entry, layout_record, shards_folder
from .kind import Stats, TermOrder, TextSettings
from .repeated_ids import repeated_across
from .runner import InProcess, RayTasks, Runner
from .state import BuildFolder, ShardBuildState
from .state_files import STEPS_FORMAT, bucket_name, shard_name
from .store import StoreFolder, StoreTarget
from .store_lock import LOCK_SUFFIX, held_lock
from .terms import merge_bucket
from .worker import analyse_part, finish_part

if TYPE_CHECKING:
    from ...._registry import Registry


@dataclass
class ShardBuild:
    manifest: Manifest
    folder: Path | str  # INDEX/shards-S (its URL in an object store)
    kept: int  # shards whose steps a killed build had done (kept)


def build_shards(
    corpus: str | Path,
    out: str | Path,
    kind: str,
    options: dict[str, Any],
    shards: int,
    *,
    registry: Registry,
    text: TextSettings | None = None,
    overwrite: bool = False,
    runner: Callable[[], Runner] = InProcess,
    progress: bool = False,
) -> ShardBuild:
    """The `kind` index of `corpus` built as `shards` shards into `out`/shards-S (module docstring), on the runner
    `runner()` starts once the request is checked (default: this process), closed at the end; with `progress`,
    each step's shards done counted on stderr (`Shown`)."""
    text = text or TextSettings()
    name, sharded = shard_build_kind(registry, kind, shards, text)
    corpus = corpus if is_remote(corpus) else absolute_path(corpus)  # an object of a store: its URL
    store = StoreTarget(str(out), shards) if is_remote(out) else None
    parts = corpus_parts(corpus, shards)  # each task reads its part at the driver's path, wherever it runs
    local = absolute_path(out)  # only where the index is built here (no `store`); the tasks write there
    target = shards_folder(local, shards)
    if store is None:
        check_local_target(out, local, target, overwrite)
    started = time.perf_counter()
    before = part_corpus_state(corpus)
    key: Stats = {
        "retriever": name,
        "options": options,
        "corpus": corpus_location(corpus),
        "corpus_files": [list(entry) for entry in before],
        "shards": shards,
        "text": [text.title, text.split, text.split_header, text.chunk_size],
        "steps_format": STEPS_FORMAT,
    }
    builder = sharded.for_build(options, registry, text)
    builder.prepare(first_text(parts[0], text))  # a kind's own checks (dense: its model loads) before any state
    with held_lock(store.folder + LOCK_SUFFIX, str(out)) if store is not None else nullcontext() as lease:
        if store is not None:
            store.check(overwrite, name)  # with --overwrite, the old shards no longer whole from here on
        state: ShardBuildState = (
            StoreFolder(store, key, lease) if store is not None and lease is not None else BuildFolder(target, key, out)
        )
        try:
            on = runner()
            try:
                steps = Shown(on, corpus_name(corpus), name, shards, progress)
                return built(corpus, builder, parts, state, text, steps, before, started, overwrite, store)
            finally:
                on.close()
        finally:
            state.close()  # a local build's folder lock; the driver's scratch folder of a build into a store


def shard_build_kind(registry: Registry, kind: str, shards: int, text: TextSettings) -> tuple[str, BuildsShards]:
    """The retriever `kind`'s name and its shard build; a ConfigError where it has none, or the counts are not."""
    name = registry.entry("retrievers", kind).name
    sharded = sharded_kind(registry, name)
    if not isinstance(sharded, BuildsShards):
        raise ConfigError(f"--ray --shards builds no {name} index in shards yet; add --merged (the one index, split)")
    if shards < 1:
        raise ConfigError(f"--shards {shards}: must be at least 1")
    if text.chunk_size < 1:
        raise ConfigError(f"--chunk-size {text.chunk_size}: must be at least 1")
    return name, sharded


def check_local_target(out: str | Path, local: Path, target: Path, overwrite: bool) -> None:
    """A ConfigError where --out is a file, or its shards folder `target` is there without --overwrite or is not
    ragbench's."""
    if local.exists() and not local.is_dir():
        raise ConfigError(f"--out {out} is a file, not a folder; choose a folder")
    if os.path.lexists(target):
        if not overwrite:
            raise ConfigError(f"--out {out}: {target} exists; pass --overwrite to build its shards again")
        if not target.is_symlink() and (problem := foreign_entry(target)):
            raise ConfigError(f"{problem}; ragbench replaces only shards it made: move it away")


@dataclass
class Shown:
    """The steps run on `runner`, each shown (`shown`) as a counter of the shards it has done, the one-process
    build's counter of passages (`build_progress`); a shard a killed build did counted done from the start."""

    runner: Runner
    corpus: str
    kind: str
    shards: int
    shown: bool

    def share(self, value: Any) -> Any:
        return self.runner.share(value)

    def map(self, step: str, function: Callable[..., Any], calls: list[tuple[Any, ...]], gpu: bool = False) -> Any:
        left = {"total": self.shards, "initial": self.shards - len(calls)}
        with build_progress(self.corpus, self.kind, " shards", self.shown, step, **left) as bar:
            return self.runner.map(function, calls, gpu=gpu, done=bar.update)


def corpus_name(corpus: str | Path) -> str:
    """What a build's counter names the corpus by: its file's or object's name."""
    return str(corpus).rstrip("/").rpartition("/")[2]


def built(
    corpus: str | Path, builder: BuildsShards, parts: list[CorpusPart], state: ShardBuildState,
    text: TextSettings, runner: Shown, before: tuple[tuple[str, int, int | str], ...], started: float,
    overwrite: bool, store: StoreTarget | None,
) -> ShardBuild:  # fmt: skip
    """The shards' two steps run on `runner` and the shards put in place (`build_shards`): in `store` where given."""
    shards, name = len(parts), builder.name
    finished = [state.kept(n, "finished") for n in range(shards)]  # each record read once
    results = step_one(builder, parts, state, text, runner, finished)
    kept = sum(record is not None for record in finished)
    try:
        check_passages(corpus, results, state)
    except ConfigError:
        state.discard()  # ours, and no build of this key can complete
        raise
    shared = builder.merge([result["stats"] for result in results])
    if results[0].get("terms") is not None:
        shared.update(merged_by_term(results, builder.term_order, state, runner))
    calls = [
        (builder, state.files, n, runner.share(shared), results[n]["stats"], store.shard(n) if store else None)
        for n in range(shards) if finished[n] is None
    ]  # fmt: skip
    state.held()
    runner.map("step 2 of 2, shards written", finish_part, calls, gpu=builder.encodes_on_gpu())
    after = part_corpus_state(corpus)
    if after != before:
        raise ConfigError(
            f"corpus {corpus} changed while it was indexed ({corpus_bytes(before)} bytes, now {corpus_bytes(after)}): "
            "the shards would hold neither version; build again once it is complete"
        )
    manifest = shards_manifest(corpus, name, results, builder.options(shared), text, after, started)
    ranges, start = [], 0
    for result in results:
        ranges.append((start, start + int(result["passages"])))
        start += int(result["passages"])
    folders = [state.folder / shard_name(n) for n in range(shards)]  # their names
    files = [(state.kept(n, "finished") if record is None else record)["files"] for n, record in enumerate(finished)]
    manifest_text = json.dumps(manifest.to_dict(), indent=2, ensure_ascii=False) + "\n"
    layout = partial(layout_record, name, manifest.doc_count, state.folder, folders, ranges, files)
    return ShardBuild(manifest, state.publish(name, manifest_text, layout, overwrite), kept)


def step_one(
    builder: BuildsShards, parts: list[CorpusPart], state: ShardBuildState, text: TextSettings, runner: Shown,
    finished: list[Any],
) -> list[Stats]:  # fmt: skip
    """Each shard's step-1 result: kept from a killed build where its files match, else its part analysed. A shard
    `finished` (its step-2 record, else None) keeps it unchecked (its step-1 files are gone); one whose step 1 is
    not kept is forgotten, its entry in `finished` set to None."""
    state.held()  # before a step forgotten is removed
    results: list[Stats | None] = []
    for part in parts:
        kept = state.kept(part.number, "analysed", check=finished[part.number] is None)
        if kept is None:
            state.forget(part.number)
            finished[part.number] = None
        results.append(kept["result"] if kept is not None else None)
    todo = [part for part, result in zip(parts, results) if result is None]
    calls = [(builder, part, state.files, text, len(parts)) for part in todo]
    for part, result in zip(todo, runner.map("step 1 of 2, parts read", analyse_part, calls)):
        results[part.number] = result
    return [result for result in results if result is not None]


def merged_by_term(results: list[Stats], order: TermOrder, state: ShardBuildState, runner: Shown) -> Stats:
    """The parts' per-term statistics merged by term, a bucket a task (one a shard), each bucket kept from a killed
    build where it merged the same parts' files; the buckets' paths (step 2 reads them) and their counts."""
    inputs = [[result["terms"]["bytes"], result["terms"]["digest"]] for result in results]
    offsets = [result["terms"]["offsets"] for result in results]
    counts = [state.kept_bucket(n, inputs) for n in range(len(results))]
    todo = [n for n, kept in enumerate(counts) if kept is None]
    calls = [(state.files, offsets, n, order, inputs) for n in todo]
    state.held()
    for n, merged in zip(todo, runner.map("terms merged", merge_bucket, calls)):
        counts[n] = merged
    return {
        "buckets": [state.files.location(bucket_name(n)) for n in range(len(results))],
        "terms": sum(int(count["terms"]) for count in counts),
        "postings": sum(int(count["postings"]) for count in counts),
    }


def first_text(part: CorpusPart, text: TextSettings) -> str:
    """The corpus's first passage's text as `IndexBuilder.indexed_text` makes it ("" where it has none): what
    FlashRAG picks its language by."""
    from ...corpus.chunking import chunk_documents, parse_split, title_header

    passages = read_part(part, PartReading())
    if text.split is not None:
        splitter = parse_split(text.split)
        header = title_header(text.split_header) if text.split_header is not None else None
        passages = chunk_documents(passages, splitter, whole_up_to=splitter.chunk_size, header=header)
    for item in passages:
        if not isinstance(item, Exception):
            return passage_text(item, text.title)
    return ""


def check_passages(corpus: str | Path, results: list[Stats], state: ShardBuildState) -> None:
    """A ConfigError where the corpus has no passages, a shard none, or a passage id repeats (the one-process
    build's message)."""
    if not sum(int(result["passages"]) for result in results):
        bad = sum(int(result["bad_records"]) for result in results)
        raise ConfigError(f"corpus {corpus} has no readable passages ({bad} bad records)")
    for number, (result, after) in enumerate(zip(results, results[1:])):
        if result["bytes"][1] != after["bytes"][0]:
            raise ConfigError(
                f"--shards {len(results)}: corpus {corpus}: a row goes on past byte {after['bytes'][0]}, where shard "
                f"{number + 1}'s part starts (a quoted field holding a line break): build it with --merged, or "
                "another number of shards"
            )
    for number, result in enumerate(results):
        if not result["passages"]:
            raise ConfigError(
                f"--shards {len(results)}: shard {number}'s part of corpus {corpus} holds no passages; choose fewer shards"
            )
    repeated: Counter[str] = Counter()
    for result in results:
        repeated.update(result["repeated"])
    repeated.update(repeated_across(state, len(results)))
    if repeated:
        shown = ", ".join(f"{doc_id!r} ({count} passages)" for doc_id, count in list(repeated.items())[:3])
        raise ConfigError(
            f"corpus {corpus}: {len(repeated)} passage id(s) repeat: {shown}; retrieval metrics match documents by "
            "id, so each passage needs its own: make the ids unique, then build again"
        )


def shards_manifest(
    corpus: str | Path, kind: str, results: list[Stats], options: Stats, text: TextSettings,
    after: tuple[tuple[str, int, int | str], ...], started: float,
) -> Manifest:  # fmt: skip
    """The manifest of the shards: a one-process build's fields (bad records named by the file's lines)."""
    errors, lines_before = [], 0
    one_file = part_form(corpus) != SEGMENTED  # a segmented shard's lines are numbered in its own file
    for result in results:
        errors += [str(renumbered(error, lines_before if one_file else 0)) for error in result["errors"]]
        lines_before += int(result["lines"])
    return Manifest(
        retriever=kind,
        doc_count=sum(int(result["passages"]) for result in results),
        corpus={
            "path": corpus_location(corpus),
            "format": part_form(corpus),
            "bytes": corpus_bytes(after),
            "parts_sha256": [result["sha256"] for result in results],
            "title": text.title,
            **({"split": text.split} if text.split else {}),
            **({"split_header": text.split_header} if text.split and text.split_header is not None else {}),
        },
        options=options,
        bad_records=sum(int(result["bad_records"]) for result in results),
        errors=errors[:KEPT_ERRORS],
        build_seconds=round(time.perf_counter() - started, 3),
        built_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    )


def ray_runner(address: str | None, workers: int | None) -> Callable[[], Runner]:
    """What starts Ray tasks on the Ray at `address` (checked now: a wrong address fails before any work)."""
    from ...._ray_connect import check_address

    if workers is not None and workers < 1:
        raise ConfigError(f"--workers {workers}: must be at least 1")
    try:
        import ray  # noqa: F401
    except ImportError:
        raise ConfigError("index build --ray needs Ray: pip install 'ragbench[ray]'") from None
    check_address(address, "--ray ")
    return partial(RayTasks, address, workers)
