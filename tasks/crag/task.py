"""CRAG Tasks 1, 2 and 3 (KDD Cup 2024) on the released files.

crag_t1  5 pages per question (`crag_task_1_and_2_dev_v{4,5}.jsonl.bz2`)
crag_t2  the same 5 pages + the mock KG API
crag_t3  up to 50 pages (`crag_task_3_dev_v{4,5}.tar.bz2.part*`) + the mock KG API

Options (--task-arg): split=public_test|validation|all (public_test, the paper's test set),
version=v5|v4 (file to look for when no --data is given), tokenizer=DIR (Llama-2 tokenizer for the
75-token cut), judge_protocol=kddcup2024|crag_repo|none, baseline=crag_repo|straightforward,
kg=true|false (RAG+KG; default on for Tasks 2 and 3), kg_url=URL (else $CRAG_MOCK_API_URL),
kg_dir=DIR (start the mock API in-process on a free port), allow_pickle=true (let kg_dir load
upstream pickles), embedder=PATH|module:factory, embedder_device=cuda|cpu (default cuda when there is
one), embedder_precision=fp32|fp16, embedder_batch_size=N (default fp16 x 512 on a GPU, fp32 x 128 on
the CPU), page_cache=PATH|off (parsed pages and their embeddings, ragbench._storage.page_cache),
page_executor=process|thread (the run's worker processes, or threads for tests), page_workers=N
(threads of page_executor=thread), web_tokens / kg_tokens (straightforward RAG windows, in Llama-2
tokens). CPU-bound work (page parsing, the straightforward windows' tokenisation) never runs on
the event loop.
"""

from __future__ import annotations

import ast
import asyncio
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, cast

from ragbench.api import ConfigError, Document, Example, RecordError, Task, TaskScoring
from ragbench.api.data import data_dir, named_data, parse_json, resolve_data_file

from ..shared.task_options import check_choices, given_options
from .embedder import ModelSpec
from .kg.client import URL_ENV, CragKgClient
from .loader import Item, read_jsonl, read_task3_archive, record_parser
from .metrics import TOKENIZER
from .prompting import CragPrompting, PageWork

SPLITS = {"validation": 0, "public_test": 1, "all": None}
PROTOCOL_METRICS = {
    "kddcup2024": ("crag", "crag_human"),
    "crag_repo": ("crag_repo", "crag_human"),
    "none": ("crag_human",),
}
BASELINES = ("crag_repo", "straightforward")
UPSTREAM_DATA = "https://github.com/facebookresearch/CRAG/raw/refs/heads/main/data/"
SLICES = ("domain", "question_type", "static_or_dynamic", "popularity")
CHOICES: dict[str, Collection[str]] = {
    "split": SPLITS,
    "judge_protocol": PROTOCOL_METRICS,
    "baseline": BASELINES,
    "version": ("v4", "v5"),
    "page_executor": ("process", "thread"),
}


def _alt_answers(record: Mapping[str, object], where: str, number: int) -> list[str]:
    """`alt_ans` (a list, v3+), or the pre-v3 example file's `alternative_answers` string ("[]")."""
    if "alt_ans" in record:
        value = record["alt_ans"]
    else:
        value = record.get("alternative_answers", [])
        if isinstance(value, str):
            try:
                value = parse_json(value)
            except ValueError:
                try:
                    value = ast.literal_eval(value)
                except (ValueError, SyntaxError):
                    value = [value] if value.strip() else []
    if not isinstance(value, list):
        raise RecordError(where, number + 1, f"expected a list, got {type(value).__name__}", "alt_ans")
    return [str(v) for v in value]


def _page(page: Any, index: int, interaction_id: str, where: str, number: int) -> Document:
    if not isinstance(page, dict) or not isinstance(page.get("page_result", ""), str):
        raise RecordError(
            where, number + 1, f"page {index} is not an object with a string page_result", "search_results"
        )
    return Document(
        id=f"{interaction_id}:{index}",
        title=str(page.get("page_name") or ""),
        text=str(page.get("page_snippet") or ""),
        url=page.get("page_url") or None,
        metadata={"page_result": page.get("page_result", ""), "page_last_modified": page.get("page_last_modified", "")},
    )


def example_from_record(record: Mapping[str, object], number: int, where: str) -> Example:
    def required(field: str, kind: type | tuple[type, ...]) -> Any:
        if field not in record:
            raise RecordError(where, number + 1, "missing field", field)
        if not isinstance(record[field], kind):
            raise RecordError(
                where,
                number + 1,
                f"expected {getattr(kind, '__name__', kind)}, got {type(record[field]).__name__}",
                field,
            )
        return record[field]

    query = required("query", str)
    answer = required("answer", (str, int, float))
    # load_data_in_batches indexes item["search_results"]: upstream stops on such a record
    pages = required("search_results", list)
    interaction_id = str(record.get("interaction_id") or number)
    meta = {field: str(record[field]) for field in SLICES[:3] if field in record}
    if "popularity" in record:  # v5: "" for web questions, head/torso/tail for KG questions
        meta["popularity"] = str(record["popularity"]) or "none"
    return Example(
        id=interaction_id,
        question=query,
        index=number,
        gold={"answer": str(answer), "alt_ans": _alt_answers(record, where, number)},
        docs=[_page(page, i, interaction_id, where, number) for i, page in enumerate(pages)],
        meta=meta,
        extras={"query_time": str(record.get("query_time", "")), "split": record.get("split")},
    )


def _split_name(value: Any) -> str:
    return next((name for name, number in SPLITS.items() if number == value and number is not None), "unknown")


class CragTask(Task):
    scoring = TaskScoring(slice_fields=SLICES, gold_fields=("crag_answer",))
    plot_keys = ("accuracy", "hallucination", "missing", "score")
    own_documents = True  # each question's five search result pages
    kg_default: ClassVar[bool] = False
    # how the data file is read: Task 1&2's JSONL (.bz2); Task 3's multi-part archive (CragTask3)
    read_records: ClassVar[Callable[..., Iterator[Item]]] = staticmethod(read_jsonl)
    tools_replayed = False  # set by the run (UsesTools)
    prompting: CragPrompting

    def __init__(
        self,
        data_path: str | Path | None = None,
        split: str = "public_test",
        version: str = "v5",
        tokenizer: str | None = None,
        judge_protocol: str = "kddcup2024",
        baseline: str = "crag_repo",
        kg: bool | None = None,
        kg_url: str | None = None,
        kg_dir: str | None = None,
        allow_pickle: bool = False,
        embedder: str | None = None,
        embedder_device: str | None = None,
        embedder_precision: str | None = None,
        embedder_batch_size: int | None = None,
        page_cache: str | None = None,
        page_executor: str = "process",
        page_workers: int | None = None,
        web_tokens: int = 4000,
        kg_tokens: int = 2000,
    ) -> None:
        options = given_options(locals())
        check_choices(self.name, CHOICES, **options)
        self.uses_kg = self.kg_default if kg is None else bool(kg)
        if self.uses_kg and not self.kg_default:
            raise ConfigError(f"task {self.name} has no KG API (Task 1 is web pages only); use crag_t2 or crag_t3")
        super().__init__(data_path, **{**options, "kg": self.uses_kg})
        self.split, self.version = split, version
        self.scoring = replace(self.scoring, metrics=PROTOCOL_METRICS[judge_protocol])
        self.tokenizer_path = tokenizer
        self.kg_url, self.kg_dir, self.allow_pickle = kg_url, kg_dir, bool(allow_pickle)
        self.path: Path | None = None
        model = ModelSpec(
            embedder, embedder_device, embedder_precision, int(embedder_batch_size) if embedder_batch_size else None
        )
        self.page_work = PageWork(
            self.name, page_executor, int(page_workers) if page_workers else None, page_cache, model
        )
        self.prompting = CragPrompting(self.page_work, baseline, self.uses_kg, int(web_tokens), int(kg_tokens))
        self.resources: Any = None  # the run's (`bind`)
        self._kg_server: Any = None
        self._kg_client: CragKgClient | None = None

    def bind(self, resources: Any) -> None:
        """Records are parsed in the run's record lane; pages in its workers, for the prompting (`page_work`)."""
        self.resources = resources
        self.page_work.bind(resources)

    # --- data ---------------------------------------------------------------------------------
    def prepare(self) -> None:
        self.path = self.resolve_data()
        self.find_tokenizer()
        self.check_kg()

    def preflight(self, check: Any) -> None:
        """Data, the Llama-2 tokenizer (by its vocabulary) and the KG API (answering), each on its own,
        then the first records in the selected split."""
        from ragbench.api.run import probe_data

        from .preflight import check_kg_reachable, check_llama2_tokenizer

        with check.step(f"task {self.name}: data file found"):
            self.path = self.resolve_data()
        with check.step(f"task {self.name}: Llama-2 tokenizer"):
            self.find_tokenizer()
            assert self.tokenizer_path is not None  # found, or find_tokenizer raised
            check_llama2_tokenizer(self.name, self.tokenizer_path)
        if self.uses_kg and not self.tools_replayed:
            with check.step(f"task {self.name}: mock KG API"):
                self.check_kg()
                if not self.kg_dir:
                    check_kg_reachable(self.name, self.kg_url or os.environ[URL_ENV])
        if self.path is not None:
            probe_data(self, check)

    def check_kg(self) -> None:
        if self.uses_kg and not self.tools_replayed and not (self.kg_url or self.kg_dir or os.environ.get(URL_ENV)):
            raise ConfigError(
                f"task {self.name} calls the mock KG API: pass --task-arg kg_url=URL (or set "
                f"${URL_ENV}), --task-arg kg_dir=DIR to serve it in-process, or --task-arg kg=false"
            )
        if self.kg_dir and not self.tools_replayed and not Path(self.kg_dir).is_dir():
            raise ConfigError(f"task {self.name}: kg_dir {self.kg_dir} is not a folder; --task-arg kg_dir=DIR")

    def resolve_data(self) -> Path:
        name = f"crag_task_1_and_2_dev_{self.version}.jsonl.bz2"
        return resolve_data_file(self.name, name, self.data_path, UPSTREAM_DATA + name)

    def find_tokenizer(self) -> None:
        """CRAG's scoring cuts predictions with the Llama-2 tokenizer, and the straightforward baseline its windows."""
        self.tokenizer_path = self.prompting.tokenizer_path = self.resolve_tokenizer()

    def resolve_tokenizer(self) -> str:
        return TOKENIZER.find(self.name, self.tokenizer_path)

    def records(self, path: Path) -> Iterator[Item]:
        return self.read_records(path, parse=self._record_parser())

    def _record_parser(self) -> Callable[[str], Any]:
        """Large records are parsed in the run's record lane (in place outside a run)."""
        return record_parser(self.resources.workers if self.resources is not None else None)

    def examples(self) -> Iterator[Example | RecordError]:
        if self.path is None:
            self.prepare()
        assert self.path is not None  # found by prepare()
        wanted = SPLITS[self.split]
        read, selected, splits = 0, 0, set()
        for number, record in self.records(self.path):
            read += 1
            if isinstance(record, RecordError):
                yield record
                continue
            splits.add(record.get("split"))
            if wanted is not None and record.get("split") != wanted:
                if "split" not in record:
                    yield RecordError(
                        str(self.path), number + 1, f"missing field (needed for split={self.split})", "split"
                    )
                continue
            selected += 1
            try:
                yield example_from_record(record, number, str(self.path))
            except RecordError as exc:
                yield exc
        if read and not selected and wanted is not None:  # nothing of the split: never a silent empty run
            found = ", ".join(f"{s} ({_split_name(s)})" for s in sorted(splits, key=str)) or "none"
            yield RecordError(
                str(self.path),
                read,
                f"none of its {read} records is in split={self.split} "
                f"(split {wanted}; splits found: {found}); pass --task-arg "
                "split=validation, public_test or all",
                "split",
            )

    # --- run-time tools -----------------------------------------------------------------------
    async def setup(self) -> dict[str, Any]:
        if not self.uses_kg:
            return {}
        url = self.kg_url
        if self.kg_dir:
            from .kg.server import BackgroundServer

            self._kg_server = await asyncio.to_thread(BackgroundServer.start, self.kg_dir, self.allow_pickle)
            url = self._kg_server.url
        self._kg_client = CragKgClient(url)
        return {"crag_kg": self._kg_client}

    async def teardown(self) -> None:
        if self._kg_client is not None:
            await self._kg_client.aclose()
            self._kg_client = None
        if self._kg_server is not None:
            await asyncio.to_thread(self._kg_server.stop)
            self._kg_server = None
        self.page_work.close()

    def gold_references(self, gold: Mapping[str, object]) -> list[str]:
        """The gold answer, then its alternatives (`alt_ans`)."""
        return [str(gold["answer"]), *map(str, cast("Iterable[object]", gold.get("alt_ans") or []))]


class CragTask1(CragTask):
    name = "crag_t1"


class CragTask2(CragTask):
    name = "crag_t2"
    kg_default = True


class CragTask3(CragTask):
    name = "crag_t3"
    kg_default = True
    read_records = staticmethod(read_task3_archive)

    def resolve_data(self) -> Path:
        first = "part0" if self.version == "v5" else "part1"  # v5 parts are numbered from 0, v4 from 1
        local = data_dir() / f"crag_task_3_dev_{self.version}.tar.bz2.{first}"
        found = named_data(self.name, self.data_path) or (local if local.is_file() else None)
        if found is not None:
            return found
        raise ConfigError(
            f"task {self.name} needs the Task 3 archive parts (about 7.7 GB, facebookresearch/CRAG "
            f"data/crag_task_3_dev_{self.version}.tar.bz2.part*): put them in {data_dir()} "
            f"or pass --data {self.name}=PATH (one part, the .tar.bz2, or their folder)"
        )
