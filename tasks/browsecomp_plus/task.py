"""The `browsecomp_plus` task: BrowseComp-Plus's decrypted queries (data.py), each with its answer and the
docids of its evidence and gold documents, scored by `browsecomp_plus` and `browsecomp_plus_agent` (metric.py) as evaluate_run.py scores
a run. `--data browsecomp_plus=PATH`: a BrowseComp-Plus checkout (its data/browsecomp_plus_decrypted.jsonl and
topics-qrels/), or the decrypted JSONL itself. The relevant docids are the qrels files' where the checkout has
them (what evaluate_run.py reads), else the queries' own evidence_docs and gold_docs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ragbench.api import ConfigError, Example, RecordError, Task, TaskScoring
from ragbench.api.data import JsonObject

from ..shared.given_data import given_data
from .data import EVIDENCE_QRELS, GOLD_QRELS, QUERIES, read_qrels, read_queries
from .prompting import BrowseCompPlusPrompting
from .runs import run_folder_records

GOLD_LISTS = {"evidence_docids": ("evidence_docs", EVIDENCE_QRELS), "gold_docids": ("gold_docs", GOLD_QRELS)}


class BrowseCompPlusTask(Task):
    """BrowseComp-Plus's 830 queries (or a file of them in its format), open domain over its corpus."""

    name = "browsecomp_plus"
    prompting = BrowseCompPlusPrompting()
    scoring = TaskScoring(
        gold_fields=("answers", "evidence_docids", "gold_docids"), metrics=("browsecomp_plus", "browsecomp_plus_agent")
    )
    own_documents = False

    @property
    def source(self) -> Path:
        """What --data names: a BrowseComp-Plus checkout, or its decrypted queries file."""
        where = f", a BrowseComp-Plus checkout holding {QUERIES} (its README's decrypt command) or that file"
        return given_data(self, "the decrypted queries", "PATH", where)

    @property
    def queries_path(self) -> Path:
        return self.source / QUERIES if self.source.is_dir() else self.source

    def prepare(self) -> None:
        if not self.queries_path.exists():  # what is there but no file: refused by its reader (given_files)
            raise ConfigError(
                f"task browsecomp_plus: {self.queries_path} not found; run BrowseComp-Plus's "
                "scripts_build_index/decrypt_dataset.py (docs/benchmarks/browsecomp-plus.md)"
            )

    def qrels(self) -> dict[str, dict[str, list[str]]]:
        """gold field -> the checkout's qrels (query id -> docids), for the qrels files it has."""
        if not self.source.is_dir():
            return {}
        return {
            field: read_qrels(self.source / name)
            for field, (_, name) in GOLD_LISTS.items()
            if (self.source / name).exists()  # a FIFO there is refused, not passed over
        }

    def examples(self) -> Iterator[Example | RecordError]:
        self.prepare()
        qrels = self.qrels()
        for index, (_, query) in enumerate(read_queries(self.queries_path)):
            if isinstance(query, RecordError):
                yield query
                continue
            qid = query["query_id"]
            gold = {
                field: qrels[field].get(qid, []) if field in qrels else query[docs]
                for field, (docs, _) in GOLD_LISTS.items()
            }
            yield Example(id=qid, question=query["query"], gold={"answers": [query["answer"]], **gold}, index=index)

    def prediction_records(self, folder: Path) -> Iterator[tuple[int, JsonObject | RecordError]]:
        """A BrowseComp-Plus run folder (one JSON file per query) as `ragbench score` records (runs.py)."""
        return run_folder_records(folder)
