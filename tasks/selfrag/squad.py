"""SQuAD 1.1 dev as SMART evaluates it: open-domain questions scored by Self-RAG's `match`.

SMART (appendix B.1) reports SQuAD 1.1 "accuracy by matching, i.e., ground truth appears in the
model responses" with passages retrieved from Wikipedia (Contriever-MS MARCO over DPR's 100-word
passages): the record's own paragraph is not shown. Here:
  passages=none     (default) the example carries no documents; systems read what the run's
                    retriever finds (--retriever dense|bm25 --retriever-arg index=DIR over a
                    Wikipedia index, as SMART does); without one, they answer closed-book
  passages=context  the record's paragraph as its one document (reading comprehension)
The file is the official `dev-v1.1.json` ({"version", "data": [{"title", "paragraphs": [{"context",
"qas": [{"id", "question", "answers": [{"text", "answer_start"}]}]}]}]}): 10,570 questions. SMART
counts 8,886 SQuAD queries without saying which; this task reads every question of the file.
Gold answers are the distinct answer texts of the annotators, in file order.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from ragbench.api import ConfigError, Document, Example, RecordError, parse_json, resolve_data_file

from .tasks import SelfRagTask

UPSTREAM_URL = "https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v1.1.json"
PASSAGES = ("none", "context")


class Squad(SelfRagTask):
    name = "squad"
    filename = "dev-v1.1.json"

    def __init__(self, data_path=None, passages: str = "none", template: str = "alpaca") -> None:
        if passages not in PASSAGES:
            raise ConfigError(f"task squad: passages '{passages}' is not one of {', '.join(PASSAGES)}")
        super().__init__(data_path, template=template)
        self.args.pop("instruction_format", None)  # SQuAD has no task instruction: the question alone
        self.passages_from = self.args["passages"] = passages

    def prepare(self) -> None:
        self.path = resolve_data_file(self.name, self.filename, self.data_path, UPSTREAM_URL)

    def size_hint(self) -> int | None:
        return None  # one JSON document: counting means parsing it

    def examples(self) -> Iterator[Example | RecordError]:
        if self.path is None:
            self.prepare()
        articles = self._articles(Path(self.path))
        index = 0
        for a, article in enumerate(articles):
            paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
            if not isinstance(paragraphs, list):
                yield RecordError(str(self.path), a + 1, "article without a 'paragraphs' list", "paragraphs")
                continue
            for paragraph in paragraphs:
                for qa in (paragraph.get("qas") or []) if isinstance(paragraph, dict) else [None]:
                    item = self._example(article, paragraph, qa, index)
                    index += 1
                    yield item

    def _articles(self, path: Path) -> list[Any]:
        try:
            data = parse_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"task squad: {path} is not readable JSON ({exc}); expected SQuAD's dev-v1.1.json") from exc
        if not isinstance(data, dict) or not isinstance(data.get("data"), list):
            raise ConfigError(f"task squad: {path} has no 'data' list of articles; expected SQuAD's dev-v1.1.json")
        return data["data"]

    def _example(self, article: dict, paragraph: Any, qa: Any, index: int) -> Example | RecordError:
        where = f"{self.path}"
        if not isinstance(paragraph, dict) or not isinstance(paragraph.get("context"), str):
            return RecordError(where, index + 1, "paragraph without a 'context' string", "context")
        if not isinstance(qa, dict) or not isinstance(qa.get("question"), str) or qa.get("id") is None:
            return RecordError(where, index + 1, "question without 'id' and 'question'", "qas")
        texts = [a.get("text") for a in qa.get("answers") or [] if isinstance(a, dict)]
        answers = list(dict.fromkeys(t for t in texts if isinstance(t, str) and t))
        if not answers:
            return RecordError(where, index + 1, f"question {qa['id']} has no answer text", "answers")
        title = str(article.get("title", ""))
        docs = [Document(id=f"{qa['id']}:context", title=title.replace("_", " "), text=paragraph["context"])] \
            if self.passages_from == "context" else []
        example = Example(id=str(qa["id"]), question=qa["question"], gold={"answers": answers}, docs=docs,
                          meta={"title": title})
        example.index = index
        return example
