"""CRAG Task 3 at scale: the event loop never blocks, and page work is done once across systems.

The data are synthetic Task 3 records in the released `.tar.bz2.part*` format with real-looking
HTML pages (ragbench.tasks.crag.synthetic), small enough for a 2-core CI machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import random
import time
from typing import ClassVar

import pytest

from ragbench.tasks.crag import loader
from ragbench.tasks.crag.synthetic import CRAG_PAGES, PageSizes, write_task3_archive
from ragbench.tasks.crag.task import CragTask3
from ragbench.testing import installed_registry, prompts, run_eval
from support.crag_helpers import tokenizer_dir

EMBEDDER = "support.crag_helpers:KeywordEmbedder"
LOOP_CPU_SECONDS = 0.05


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """4 questions x 8 pages (log-normal sizes around 20 kB; records of ~300 kB to 1 MB)."""
    return write_task3_archive(tmp_path_factory.mktemp("crag_t3"), questions=4, pages=8, sizes=PageSizes.small(20_000))


@pytest.fixture(scope="module")
def small_archive(tmp_path_factory):
    """4 questions x 8 pages around 5 kB (records of ~30 to 80 kB): the real encoder's run, whose CPU time is its
    encoding, on a quarter of `archive`'s text (its per-page calls still take the encoder seconds)."""
    folder = tmp_path_factory.mktemp("crag_t3_small")
    return write_task3_archive(folder, questions=4, pages=8, sizes=PageSizes.small(5_000))


def distinct_pages(archive) -> int:
    """The archive's pages to parse: each distinct page once (the empty ones are one page)."""
    return len(
        {page["page_result"] for _, record in loader.read_task3_archive(archive) for page in record["search_results"]}
    )


class CountedCrag3(CragTask3):
    """crag_t3, each object a run makes of it kept: its page work's counters (pages parsed here, texts through the
    embedder) read once the run is over. Its runs are given the system options the catalogue gives crag_t3 (top 50
    pages, the baselines' sampling), which a class given to run_eval does not carry."""

    made: ClassVar[list[CragTask3]] = []

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.made.append(self)


def crag_run(tmp_path, archive, name, system="vanilla", options=None, system_args=None, **task_args):
    """A run of crag_t3 on `archive` into tmp_path/name (the page cache: the test's), and the task object it ran."""
    if system_args is None:
        system_args = installed_registry().entry("tasks", "crag_t3").defaults["system_args"]
    CountedCrag3.made.clear()
    done = run_eval(
        CountedCrag3,
        system,
        data=archive,
        output=tmp_path / name,
        bootstrap_iters=50,
        max_inflight=4,
        page_cache=None,  # the test's ($RAGBENCH_PAGE_CACHE), as a run's by default
        system_args=system_args,
        task_args={"tokenizer": tokenizer_dir(), "kg": False, "judge_protocol": "none", **task_args},
        **(options or {}),
    )
    [task] = CountedCrag3.made
    return done, task


@contextlib.contextmanager
def loop_cpu_time_per_callback(threshold: float):
    """Every event-loop callback that used more than `threshold` seconds of the loop thread's CPU.

    CPU time of the loop's own thread, not wall time (asyncio's debug mode measures wall time): on a
    loaded CI machine a callback of microseconds can wait 50 ms for the GIL or a core while the
    encoder's thread runs, which is not the loop doing page work. Parsing or embedding on the loop
    costs seconds of this thread's CPU; waiting costs none.
    """
    slow: list[str] = []
    original = asyncio.events.Handle._run

    def measured(handle):
        start = time.thread_time()
        try:
            return original(handle)
        finally:
            used = time.thread_time() - start
            if used > threshold:
                slow.append(f"{handle!r} used {used:.3f} s of the loop thread's CPU")

    asyncio.events.Handle._run = measured
    try:
        yield slow
    finally:
        asyncio.events.Handle._run = original


@pytest.mark.parametrize(
    ("embedder", "pages"),
    [
        pytest.param(EMBEDDER, "archive", id=EMBEDDER),
        pytest.param(None, "small_archive", marks=pytest.mark.model, id="minilm"),
    ],
)
def test_a_task3_run_never_blocks_the_event_loop(tmp_path, request, monkeypatch, embedder, pages):
    """The pages parsed at scale with the keyword embedder; the real encoder (all-MiniLM-L6-v2) on smaller pages."""
    archive = request.getfixturevalue(pages)
    monkeypatch.setattr(loader, "LARGE_RECORD_BYTES", 16 * 1024)  # every record of either archive: in a worker
    args = {"embedder": embedder} if embedder else {}
    if embedder is None:  # import time holds the GIL in C for long stretches; loading the model does not
        pytest.importorskip("sentence_transformers")
    with loop_cpu_time_per_callback(LOOP_CPU_SECONDS) as slow:
        done, _ = crag_run(tmp_path, archive, "run", **args)
    assert done.results["counts"]["crag_t3"]["records"] == 4
    assert done.results["counts"]["crag_t3"]["failed"] == 0
    assert not slow, "callbacks blocked the event loop:\n" + "\n".join(slow)


def _page_work(task) -> tuple[int, int]:
    return task.page_work.pages.parsed, task.page_work.embedder.texts_encoded


def test_a_second_system_on_the_same_file_parses_and_embeds_nothing(tmp_path, archive):
    first, task = crag_run(tmp_path, archive, "first", embedder=EMBEDDER)
    parsed, embedded = _page_work(task)
    assert parsed == distinct_pages(archive) > 4 * 8 * 0.8 and embedded > 0
    stats = first.results["cost"]["page_cache"]  # its only hits: a page met again (the empty ones)
    assert stats["hits"] == 4 * 8 - parsed and stats["lookups"] > 0 and stats["bytes"] > 0

    # another system on the same file: the same RAG baseline around another model, then a passage reader
    second, task = crag_run(tmp_path, archive, "second", options={"model_args": {"batch_size": 3}}, embedder=EMBEDDER)
    assert _page_work(task) == (0, 0)
    assert second.results["cost"]["page_cache"]["hit_rate"] == 1.0
    assert [prompts(s) for s in second.samples["crag_t3"]] == [prompts(s) for s in first.samples["crag_t3"]]

    # selfrag takes none of the baselines' options (a run leaves them out for it): it reads the pages as passages
    _, task = crag_run(tmp_path, archive, "third", system="selfrag", system_args={}, embedder=EMBEDDER)
    assert _page_work(task)[0] == 0


def test_page_cache_off_parses_again_and_reports_nothing(tmp_path, archive):
    crag_run(tmp_path, archive, "warm", embedder=EMBEDDER)
    off, task = crag_run(tmp_path, archive, "off", embedder=EMBEDDER, page_cache="off")
    assert _page_work(task)[0] == distinct_pages(archive)
    assert "page_cache" not in off.results["cost"]


def test_the_device_decides_precision_and_batch_size(monkeypatch):
    from ragbench.api import ConfigError
    from ragbench.tasks.crag import embedder

    monkeypatch.setattr(embedder, "cuda_available", lambda: True)
    assert embedder.placement() == embedder.Placement("cuda", "fp16", 512)
    assert embedder.placement("cpu") == embedder.Placement(
        "cpu", "fp32", 128
    )  # the baselines' batch: upstream's numbers
    assert embedder.placement(precision="fp32", batch_size=64) == embedder.Placement("cuda", "fp32", 64)
    monkeypatch.setattr(embedder, "cuda_available", lambda: False)
    assert embedder.placement() == embedder.Placement("cpu", "fp32", 128)
    with pytest.raises(ConfigError, match="embedder_precision"):
        embedder.placement(precision="int8")
    half, full = embedder.ModelSpec("/models/x", "cuda"), embedder.ModelSpec("/models/x", "cpu")
    assert half.where.precision == "fp16" and full.where.precision == "fp32"


async def test_per_page_embeddings_rank_as_one_embedding_of_the_unique_sentences(tmp_path):
    """Page vectors come from the cache or from batches shared with other examples; the top 20 equal
    the baseline's way: the example's unique sentences and the question embedded together."""
    import json
    import tarfile

    import numpy as np

    from ragbench.api.run import RunResources
    from ragbench.tasks.crag import baselines
    from ragbench.tasks.crag.pages import html_to_sentences
    from ragbench.tasks.crag.task import CragTask3, example_from_record
    from ragbench.testing import make_context
    from support.crag_helpers import KeywordEmbedder

    archive = write_task3_archive(tmp_path, questions=1, pages=6, sizes=PageSizes.small(3_000), parts=1)
    with tarfile.open(archive, "r:bz2") as tar:
        record = json.loads(next(m for m in (tar.extractfile(x) for x in tar.getmembers() if x.isfile())).readline())
    record["search_results"][3] = dict(record["search_results"][1])  # a repeated page: repeated sentences
    example = example_from_record(record, 0, "x")
    task = CragTask3(kg=False, embedder=EMBEDDER, page_cache=str(tmp_path / "pages.sqlite"), page_executor="thread")
    with RunResources() as resources:
        task.bind(resources)
        for _ in range(2):  # parsed and embedded, then from the cache
            top = await task.prompting.top_sentences(example, make_context(task), example.docs)
            per_page = [html_to_sentences(doc.metadata["page_result"]) for doc in example.docs]
            sentences, origins, _ = baselines.unique_sentences(example.docs, per_page)
            vectors = np.asarray(KeywordEmbedder().encode(sentences + [example.question]))
            order = baselines.rank_sentences(vectors[-1], sentences, vectors[:-1])
            assert [(d.text, d.id) for d in top] == [(sentences[i], origins[i].id) for i in order]
        await task.teardown()


def test_synthetic_pages_have_the_sizes_of_real_crag_pages_by_default():
    """The CRAG repository's example file: p10 64 kB, median 257 kB, p90 669 kB, max 1.56 MB."""
    rng = random.Random(7)
    sizes = sorted(size for size in (CRAG_PAGES.draw(rng) for _ in range(20_000)) if size)
    quantile = lambda q: sizes[int(q * len(sizes))]  # noqa: E731
    assert 0.93 < quantile(0.1) / 64_000 < 1.07 and 0.95 < quantile(0.5) / 257_000 < 1.05
    assert 0.95 < quantile(0.9) / 669_000 < 1.05 and sizes[-1] == 1_560_000
    assert inspect.signature(write_task3_archive).parameters["sizes"].default is CRAG_PAGES
    small = sorted(PageSizes.small(4_000).draw(rng) for _ in range(2_000))
    assert 3_000 < small[1_000] < 5_000 and small[-1] < 200_000


def test_synthetic_pages_read_like_real_crag_pages():
    """The CRAG repository's example pages, as `html_to_sentences` sees them: 6.7 % of the bytes
    visible text, 0.41 sentences per kB of HTML, 161 characters a sentence on average."""
    from bs4 import BeautifulSoup

    from ragbench.tasks.crag.pages import html_to_sentences
    from ragbench.tasks.crag.synthetic import page_html

    rng = random.Random(3)
    pages = [page_html(rng, size, "A page") for size in (60_000, 150_000, 260_000, 400_000)]
    html = sum(len(page.encode()) for page in pages)
    text = sum(len(BeautifulSoup(page, "lxml").get_text(" ", strip=True)) for page in pages)
    sentences = [sentence for page in pages for sentence in html_to_sentences(page)]
    assert 0.05 < text / html < 0.085
    assert 0.33 < len(sentences) / html * 1000 < 0.50
    assert 130 < sum(map(len, sentences)) / len(sentences) < 190
