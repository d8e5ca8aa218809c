"""`ragbench index build` and `ragbench index cache`: the command line of `ragbench._retrieval.index.building.build_index`
and of the index cache (`ragbench._retrieval.index.cache_listing`).

Kept light: the retriever's own module (bm25s, torch) is imported only when the command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ..._errors import ConfigError
from ..._storage.locations import fetched_object, is_remote
from ..plugin_commands import config_errors_exit, exit_if_skipped
from ..registry import command_registry
from .kind_options import KindsOption, built_kinds, parallel_kinds, shard_kinds

if TYPE_CHECKING:
    from ..._retrieval.index.built import Manifest


@click.group("index")
def index_group() -> None:
    """Build on-disk retrieval indexes, once; runs memory-map them (--retriever-arg index=DIR). List and clean
    the cache of indexes built on first use. Plugins add corpus builders here (e.g. omnieval-corpus)."""


@index_group.command("build")
@click.option(
    "--corpus",
    required=True,
    help="DPR psgs_w100.tsv (id, text, title), JSONL {id, title, contents|text}, "
    "FlashRAG's JSONL {id, contents} (the title on its first line), or a folder of Hugging Face datasets' "
    "save_to_disk (rows read as JSONL records); for a page index (colpali, siglip): a ViDoRe dataset's folder or a "
    "folder of page images (PNG, JPEG, ...; each file a page, its id its path in the folder)",
)
@click.option(
    "--retriever",
    "kind",
    required=True,
    cls=KindsOption,
    kinds=built_kinds,
    help="the retriever whose index to build: {kinds} (ragbench list retrievers)",
)
@click.option("--out", required=True, help="index folder to create")
@click.option(
    "--model",
    default=None,
    help="dense encoder: sentence-transformers folder or hub name "
    "(default BAAI/bge-large-en-v1.5; 'embedded' = the packaged all-MiniLM-L6-v2); colpali, siglip: the model's "
    "local folder",
)
@click.option(
    "--build-arg",
    multiple=True,
    metavar="K=V",
    help="builder option: k1, b, method, stemmer, stopwords (bm25); query_instruction, query_style "
    "(default or one a plugin provides: ragbench list retrievers), dtype, encoder_dtype (float32, float16, "
    "bfloat16), batch_size, device, normalize (dense); "
    "language (flashrag_bm25); the retriever's options (colpali, siglip: split, batch_size, pool_factor, device, "
    "dtype)",
)
@click.option("--chunk-size", default=50_000, show_default=True, type=int, help="passages read and indexed at a time")
@click.option("--no-title", is_flag=True, help="index the passage text alone (default: title + newline + text)")
@click.option(
    "--split",
    default=None,
    metavar="tokens:SIZE:OVERLAP[:ENCODING]",
    help="cut documents longer than "
    "SIZE characters into chunks of SIZE tokens overlapping by OVERLAP first (llama-index "
    "TokenTextSplitter; OmniEval's corpus: tokens:2048:256, tiktoken cl100k_base); chunk ids <id>#<n>",
)
@click.option(
    "--split-header",
    default=None,
    metavar="TEMPLATE",
    help="with --split: the metadata text each "
    "document renders, over {title}, taken off every chunk's token budget as llama-index does "
    "(OmniEval's corpus: 'Title=>{title}'; default none)",
)
@click.option("--overwrite", is_flag=True, help="replace an existing index folder")
@click.option("--no-progress", is_flag=True, help="no progress bar")
@click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[ADDRESS]",
    cls=KindsOption,
    kinds=parallel_kinds,
    help="analyse the passages on a pool of Ray actors ({kinds}): the same index, "
    "built in parallel; resumes a killed build. ADDRESS: a cluster's (auto, HOST:6379); alone: $RAY_ADDRESS's, "
    "else a Ray of this machine",
)
@click.option("--workers", type=int, default=None, help="with --ray: worker actors (default: a CPU, dense: a GPU each)")
@click.option(
    "--shards",
    type=int,
    default=None,
    cls=KindsOption,
    kinds=shard_kinds,
    help="with --ray: build the index ({kinds}) as S shards (INDEX/shards-S), each worker reading its own part of the "
    "corpus (a .jsonl or .tsv file, a saved dataset, an MS MARCO v2.1 segmented folder); no merged index unless "
    "--merged; a page index (colpali, siglip): its pages encoded in S shards, joined into the one index",
)
@click.option(
    "--merged", is_flag=True, help="with --ray --shards: build the one index too, and split it into the shards"
)
def build_command(
    corpus: str,
    kind: str,
    out: str,
    model: str | None,
    build_arg: tuple[str, ...],
    chunk_size: int,
    no_title: bool,
    split: str | None,
    split_header: str | None,
    overwrite: bool,
    no_progress: bool,
    ray_address: str | None,
    workers: int | None,
    shards: int | None,
    merged: bool,
) -> None:
    """Stream a corpus into an index folder (a 21M-passage file never has to fit in memory)."""
    from ..._retrieval.index.building import build_index
    from ..._retrieval.pages.build import is_page_kind
    from ..._values.options import parse_assignments

    with config_errors_exit(output_option="--out"):
        options = parse_assignments(build_arg, "--build-arg")
        if model is not None:
            options["model"] = model
        if is_page_kind(command_registry(), kind):
            page_build(corpus, out, kind, options, overwrite, not no_progress, ray_address, workers, shards)
            return
        build: dict[str, Any] = {
            "chunk_size": chunk_size,
            "title": not no_title,
            "overwrite": overwrite,
            "progress": not no_progress,
            "split": split,
            "split_header": split_header,
        }
        corpus, in_parts = text_placement(corpus, out, ray_address, workers, shards, merged)
        if ray_address is not None:
            manifest, out = ray_build(corpus, out, kind, options, build, ray_address, workers, shards, in_parts)
        else:
            manifest = build_index(corpus, out, kind, options, registry=command_registry(), **build)
    click.echo(f"{manifest.retriever} index of {manifest.doc_count} passages in {out} ({manifest.build_seconds:.1f} s)")
    exit_if_skipped(
        manifest.errors,
        "bad record skipped",
        f"{manifest.bad_records} bad record(s) skipped (listed in {out}/manifest.json)",
    )


def text_placement(
    corpus: str, out: str, ray_address: str | None, workers: int | None, shards: int | None, merged: bool
) -> tuple[str, bool]:
    """Where a text index's build reads its corpus (a remote one's copy here, unless each part is read where it
    lies) and whether it is built in parts (--ray --shards S); options out of place refused in one line."""
    in_parts = ray_address is not None and shards is not None and not merged  # each part read where it lies
    if is_remote(out) and not in_parts:  # in parts, each task puts its shard in the store
        raise ConfigError(
            f"--out {out}: an index is built into a folder (one every node sees, for --ray), or in an object "
            "store by --ray --shards S; upload that folder to the store once built (the runs read it there: "
            "--retriever-arg index=URL)"
        )
    if is_remote(corpus) and not in_parts:  # built from this node's copy (docs/scale-out.md, "Where the files")
        url, corpus = corpus, str(fetched_object(corpus))
        click.echo(f"corpus {url}: read from its copy {corpus}")
    if ray_address is None and (workers, shards) != (None, None):
        raise ConfigError(f"{'--workers' if workers is not None else '--shards'} is an option of --ray: pass --ray")
    if merged and shards is None:
        raise ConfigError("--merged is an option of --ray --shards S: pass them")
    return corpus, in_parts


TEXT_OPTIONS = ("chunk_size", "no_title", "split", "split_header", "merged")  # what a page index does not take


def page_build(
    corpus: str,
    out: str,
    kind: str,
    options: dict[str, Any],
    overwrite: bool,
    progress: bool,
    ray_address: str | None,
    workers: int | None,
    shards: int | None,
) -> None:
    """`build --retriever colpali|siglip`: the page index a run of that retriever would build, in one process or,
    with --ray --shards S, encoded in shards by Ray tasks (`pages.shards`); a line saying what was built."""
    from ..._retrieval.pages.build import build_page_index
    from ..._retrieval.pages.shards import PageShards
    from ..._retrieval.sharding.build.driver import ray_runner

    context = click.get_current_context()
    for name in TEXT_OPTIONS:
        if context.get_parameter_source(name) != click.core.ParameterSource.DEFAULT:
            flag = "--" + name.replace("_", "-")
            raise ConfigError(f"{flag} is an option of text indexes; a {kind} index's pages are images: drop it")
    if is_remote(out) or is_remote(corpus):
        raise ConfigError(
            f"{'--out ' + out if is_remote(out) else '--corpus ' + corpus}: a page index is built from a folder "
            "of pages (a dataset's, or page images) into a folder (one every node sees, for --ray); the runs read it there"
        )
    if ray_address is None and (workers, shards) != (None, None):
        raise ConfigError(f"{'--workers' if workers is not None else '--shards'} is an option of --ray: pass --ray")
    if ray_address is not None and shards is None:
        raise ConfigError(f"--ray builds a {kind} index in shards: pass --shards S too")
    in_shards = None
    if ray_address is not None and shards is not None:
        if shards < 1:
            raise ConfigError(f"--shards {shards}: must be at least 1")
        gpu = str(options.get("device", "cpu")).startswith("cuda")
        in_shards = PageShards(shards, ray_runner(ray_address, workers), progress, gpu)
    built = build_page_index(
        kind, corpus, out, options, registry=command_registry(), shards=in_shards, overwrite=overwrite
    )
    if built.kept:
        click.echo(f"resumed: {built.kept} of {shards} shards kept from the interrupted build")
    sharded = f", encoded in {shards} shards" if in_shards is not None else ""
    click.echo(f"{built.kind} index of {built.pages} pages in {out}{sharded} ({built.seconds:.1f} s)")
    if built.left:
        click.echo(
            f"kept {built.left[0].parent}: it holds {', '.join(path.name for path in built.left)}, put in the old "
            "index's folder while the new one was built (not ragbench's: left as it is)",
            err=True,
        )


def ray_build(
    corpus: str,
    out: str,
    kind: str,
    options: dict[str, Any],
    build: dict[str, Any],
    ray_address: str,
    workers: int | None,
    shards: int | None,
    in_parts: bool,
) -> tuple[Manifest, str]:
    """`build --ray`: the index built on Ray, or with `in_parts` (--shards S without --merged) each shard built by a
    Ray task from its own part of the corpus; what was resumed and the shards written said in a line each. The
    manifest, and the folder the index is in."""
    if in_parts and shards is not None:
        from ..._retrieval.sharding.build.driver import build_shards, ray_runner
        from ..._retrieval.sharding.build.kind import TextSettings

        text = TextSettings(build["title"], build["split"], build["split_header"], build["chunk_size"])
        parts = build_shards(
            corpus, out, kind, options, shards, registry=command_registry(), text=text, overwrite=build["overwrite"],
            runner=ray_runner(ray_address, workers), progress=build["progress"],
        )  # fmt: skip
        if parts.kept:
            click.echo(f"resumed: {parts.kept} of {shards} shards kept from the interrupted build")
        click.echo(f"{shards} shards of {out} built in {parts.folder}, no merged index")
        return parts.manifest, f"{out}/shards-{shards}"
    from ..._retrieval.sharding.merged_build.build import build_parallel

    done = build_parallel(
        corpus, out, kind, options, ray_address=ray_address, workers=workers, shards=shards,
        registry=command_registry(), **build,
    )  # fmt: skip
    if done.reused:
        click.echo(f"resumed: {done.reused} of {done.reused + done.analysed} blocks read from the interrupted build")
    if done.shards is not None:
        click.echo(f"{shards} shards of {out} in {done.shards}")
    return done.manifest, out


@index_group.command("shard")
@click.option(
    "--index",
    "index",
    required=True,
    help="an index folder from `ragbench index build` (dense, bm25, lucene_bm25, flashrag_bm25), FlashRAG's bm25s "
    "folder, or its flat faiss .index file",
)
@click.option("--shards", required=True, type=int, help="how many shards (a Ray actor serves each)")
@click.option("--overwrite", is_flag=True, help="split again, replacing INDEX/shards-S (INDEX.shards-S for a file)")
def shard_command(index: str, shards: int, overwrite: bool) -> None:
    """Split an index into shards (INDEX/shards-S, or FILE.shards-S beside a faiss file), each served by a Ray actor
    on its own node when a run passes --retriever-arg shards=S: the same answers as the whole index, about 1/S of it
    in each node's memory."""
    from pathlib import Path

    from ..._retrieval.sharding.split import split_index

    with config_errors_exit():
        folder = split_index(Path(index), shards, overwrite=overwrite, registry=command_registry())
    click.echo(f"{shards} shards of {index} in {folder}")


@index_group.command("cache")
@click.option(
    "--prune", is_flag=True, help="remove the stale indexes (their corpus gone or changed), damaged ones and leftovers"
)
@click.option("--remove", "keys", multiple=True, metavar="KEY", help="remove this index of the cache (a KEY listed)")
def cache_command(prune: bool, keys: tuple[str, ...]) -> None:
    """List the indexes ragbench built on first use of a task's corpus ($RAGBENCH_INDEX_CACHE, default
    ~/.cache/ragbench/indexes): each one's kind, size, last use and corpus, whether that corpus still holds the
    bytes it was built from, and the total. Only what ragbench made there is ever removed."""
    from ..._retrieval.index.cache import index_cache_dir
    from ..._retrieval.index.cache_listing import cache_entries
    from .cache_output import chosen_entries, listing_lines, remove_entries

    folder = index_cache_dir()
    entries = cache_entries(folder, command_registry())
    if not prune and not keys:
        for line in listing_lines(folder, entries):
            click.echo(line)
        return
    with config_errors_exit():
        chosen = chosen_entries(folder, entries, prune, keys)
    failures = remove_entries(chosen)
    exit_if_skipped(failures, "not removed", f"{len(failures)} of {len(chosen)} not removed")
