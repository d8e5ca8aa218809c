"""The `vidore` task (ViDoRe, Faysse et al., ICLR 2025, illuin-tech/vidore-benchmark; here beside BEIR, whose
prompt and measures it shares): a ViDoRe dataset kept offline (V1's QA table, V2's and V3's corpus, queries and qrels;
`ragbench.api.retrieval.open_vidore` reads each storage), its queries the examples, its pages the corpus a
retriever searches (`--retriever colpali --retriever-arg pages=FOLDER`).

The examples and their gold are those vidore-benchmark's evaluators score:

- V1 (`ViDoReEvaluatorQA`): each distinct non-null `query`, in first-occurrence order, its one relevant page
  (grade 1) the `image_filename` of the last row holding it; the example id is the row first holding it.
- V2, V3 (`ViDoReEvaluatorBEIR`): each query of `queries` that `qrels` judges (pytrec_eval scores only those), in
  the order of `queries`, its gold every qrels row (graded, a later row of the same pair replacing an earlier
  one); ids are strings, as upstream casts them. A qrels query missing from `queries` is a counted bad record
  (upstream leaves it unscored). `language` keeps the queries of one language (V3's `language` column, as mteb
  splits ViDoRe V3 by language).

A reader is shown the top `images` (5) retrieved pages themselves (`PagesPrompting`): one user turn holding, for
each in rank order, its number and id as text then its image, then the question; the task `holds_images`, so the
pre-flight refuses a model that takes none. The sample keeps every page retrieved (`top_n`, 100), which the figures
score. `images=0` names the pages by id instead (text models serve; the figures are the same).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Annotated, Any

from annotated_types import Ge

from ragbench.api import ConfigError, Document, Example, Part, Prompt, RecordError, Task, TaskScoring, chat_turn
from ragbench.api.retrieval import ViDoReData, id_column, open_vidore, qa_queries, relevance

from .metrics import cutoffs
from .task import PROMPT, BeirPrompting

# vidore-benchmark's CustomRetrievalEvaluator k_values
DEFAULT_K = "1,3,5,10,20,50,100"
# the top pages a reader sees as images: as many as nDCG@5, vidore-benchmark's headline figure, scores
DEFAULT_IMAGES = 5


class PagesPrompting(BeirPrompting):
    """A reader's prompt over the retrieved pages: the first `images` of them, in rank order, as one chat turn in
    which each page's number and id come before its image, then BEIR's question line; with `images` 0 (or pages
    that hold no image), BEIR's text prompt naming every page by id."""

    def __init__(self, images: int = DEFAULT_IMAGES) -> None:
        self.images = images

    def shown(self, doc: Document) -> str:
        return f"page {doc.id}"

    def read(self, docs: list[Document]) -> list[Document]:
        """The pages the prompt shows as images: the first `images`, where they hold any (else none)."""
        first = docs[: self.images]
        return first if any(doc.image is not None for doc in first) else []

    def documents_read(self, docs: list[Document]) -> int:
        """The pages shown as images, or every page named by id (the text prompt)."""
        return len(self.read(docs)) or len(docs)

    def build_prompt(self, example: Example, docs: list[Document] | None = None, **options: Any) -> Prompt:
        read = self.read(docs or [])
        if not read:
            return super().build_prompt(example, docs, **options)
        parts: list[Part] = []
        for number, doc in enumerate(read, start=1):
            parts.append(f"[{number}] {self.shown(doc)}")
            if doc.image is not None:
                parts.append(doc.image)
        question = PROMPT.format(docs="", question=options.get("question") or example.question)
        return [chat_turn([*parts, question])]


class ViDoReTask(Task):
    """A ViDoRe dataset: each scored query, its gold the graded relevant page ids."""

    name = "vidore"
    prompting = PagesPrompting()
    scoring = TaskScoring(gold_fields=("qrels",), metrics=("vidore_retrieval",))
    own_documents = False

    def __init__(
        self,
        data_path: Any = None,
        split: str = "test",
        k: str | int = DEFAULT_K,
        language: str | None = None,
        images: Annotated[int, Ge(0)] = DEFAULT_IMAGES,
    ) -> None:
        super().__init__(data_path, split=split, k=k, language=language, images=images)
        # the reader is shown pages as images: a model that takes none is refused before the run
        self.holds_images = images > 0
        self.text_only = "--task-arg vidore.images=0 (the pages named by id as text: the figures are the same)"
        self.page_retrieval = (
            "--retriever colpali (or siglip) --retriever-arg pages=FOLDER --retriever-arg model=MODEL_FOLDER "
            "--retriever-arg index=INDEX_FOLDER (docs/benchmarks/vidore.md)"
        )
        self.prompting = PagesPrompting(int(images))
        self.split, self.language = split, language
        self.cutoffs = cutoffs(k)
        # ids of queries and pages overlap in V2 and V3 ("1" is both): never drop a page for its id (upstream's
        # BEIR evaluator passes ignore_identical_ids=False; V1's True compares query texts with filenames)
        options = {"k": k, "ignore_identical_ids": False}
        self.scoring = replace(self.scoring, metric_options={"vidore_retrieval": options})

    def system_defaults(self) -> dict[str, object]:
        """A system shows as many pages as the deepest cut-off scores."""
        return {"top_n": max(self.cutoffs)}

    def dataset(self) -> ViDoReData:
        return open_vidore(self.data_path, self.split, what="task vidore: --data vidore=FOLDER")

    def prepare(self) -> None:
        self.dataset()

    def examples(self) -> Iterator[Example | RecordError]:
        data = self.dataset()
        if data.layout == "qa":
            for index, (row, query, filename) in enumerate(qa_queries(data.tables["qa"])):
                yield Example(id=str(row), question=query, gold={"qrels": {filename: 1}}, index=index)
            return
        queries, qrels = data.tables["queries"], data.tables["qrels"]
        query_ids = queries.column(id_column(queries.rows, "query-id", queries.where))
        texts = queries.column("query")
        languages = queries.column("language") if "language" in queries.rows.column_names else [None] * len(texts)
        if self.language is not None and "language" not in queries.rows.column_names:
            raise ConfigError(f"task vidore: language={self.language}: {queries.where} has no 'language' column")
        judged, bad = self.judgments(qrels)
        asked = {str(query_id) for query_id in query_ids}
        index = 0
        for query_id, text, language in zip(query_ids, texts, languages):
            key = str(query_id)
            if key not in judged and key not in bad or (self.language is not None and language != self.language):
                continue
            if key in bad:
                yield bad[key]
            else:
                yield Example(id=key, question=str(text), gold={"qrels": judged[key]}, index=index)
            index += 1
        for number, key in enumerate(sorted(judged.keys() - asked), start=1):
            yield RecordError(
                qrels.where, number, f"qrels query {key!r} is not in queries", "query-id", at=f"query {key}"
            )

    def size_hint(self) -> int | None:
        """The items `examples` yields (the progress bar's total and ETA): its queries and bad records, counted
        as it reads them (tables of text; no page is read). None where the data cannot be opened (the pre-flight
        says why)."""
        try:
            return sum(1 for _ in self.examples())
        except ConfigError:
            return None

    @staticmethod
    def judgments(qrels: Any) -> tuple[dict[str, dict[str, int]], dict[str, RecordError]]:
        """query id -> {page id: grade} from a qrels table, and the first bad row of each query that has one."""
        query_column, corpus_column = (id_column(qrels.rows, name, qrels.where) for name in ("query-id", "corpus-id"))
        judged: dict[str, dict[str, int]] = {}
        bad: dict[str, RecordError] = {}
        rows = zip(qrels.column(query_column), qrels.column(corpus_column), qrels.column("score"))
        for row, (query_id, corpus_id, score) in enumerate(rows):
            try:
                judged.setdefault(str(query_id), {})[str(corpus_id)] = relevance(str(score))
            except ValueError as exc:
                bad.setdefault(str(query_id), RecordError(qrels.where, row + 1, str(exc), "score", at=f"row {row + 1}"))
        for key in bad:
            judged.pop(key, None)
        return judged, bad
