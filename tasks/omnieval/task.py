"""The OmniEval tasks: `omnieval_auto` (RUC-NLPIR/OmniEval-AutoGen-Dataset) and `omnieval_human`
(RUC-NLPIR/OmniEval-Human-Questions). Both are gated on Hugging Face (accept the conditions, then
download by hand) and the human set was empty when last checked, so `--data NAME=PATH` takes the
downloaded test-set folder (`<一级>/<二级>/<task>.jsonl`) or a flat JSONL with topic_name/task_name.

One example per scored sample, as upstream's flashrag Dataset makes them: a conversational line
(a JSON list) gives one example per turn, whose history is the previous turns' questions only.
Ids: `<一级> - <二级> - <task>/<line>` (`/<turn>` added for turns); the upstream id (0-based line
number, shared by a conversation's turns) is kept in `meta["upstream_id"]`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, Example, RecordError, Task, TaskScoring
from ragbench.api.data import JsonObject

from . import catalog, predictions, prompts
from .loader import TopicTaskCell, load_cells

CONVERSATION_TASK = "多轮对话能力"
# A conversational turn's question: "turn" = the turn's own question (what retrieval searches; prompts
# add the earlier questions); "upstream_repr" = upstream's retrieval path, where the question is the
# Python list of all questions so far, so both the search query and the prompt hold its repr
# (e.g. "['q0', 'q1']"; with --retriever-arg query_style=omnieval the query is f"{instruction} {list}").
CONVERSATION_QUERIES = ("turn", "upstream_repr")


def _as_list(value: Any) -> list[Any]:
    return [value] if isinstance(value, str) else list(value or [])


class OmniEvalAuto(Task):
    name = "omnieval_auto"
    dataset = "RUC-NLPIR/OmniEval-AutoGen-Dataset"
    scoring = TaskScoring(
        metrics=("omnieval_rule", "omnieval_retrieval"),
        slice_fields=("task", "topic", "cell"),  # cell = "<topic> - <task>", one upstream file
        gold_fields=("answers",),
    )
    own_documents = False  # systems search the knowledge corpus (--retriever bm25|dense, ragbench index build)

    def __init__(
        self,
        data_path: str | Path | None = None,
        tasks: str | list[str] | None = None,
        topics: str | list[str] | None = None,
        literal_newlines: bool = False,
        chat: bool = True,
        conversation_query: str = "turn",
        **args: Any,
    ) -> None:
        if conversation_query not in CONVERSATION_QUERIES:
            raise ConfigError(
                f"task {self.name}: conversation_query '{conversation_query}' is not one of "
                f"{', '.join(CONVERSATION_QUERIES)}"
            )
        self.conversation_query = conversation_query
        if conversation_query != "turn":
            args["conversation_query"] = conversation_query
        self.tasks = catalog.select("tasks", tasks, catalog.tasks())
        self.topics = catalog.select("topics", topics, catalog.topics())
        super().__init__(
            data_path,
            tasks=self.tasks,
            topics=self.topics,
            literal_newlines=bool(literal_newlines),
            chat=bool(chat),
            **args,
        )
        self.prompting = prompts.OmniEvalPrompting(bool(literal_newlines), bool(chat), conversation_query)
        self.cells: list[TopicTaskCell] | None = None

    def config(self) -> JsonObject:
        """Records the prompt form and asks report.md for topic x task heat maps (paper Figure 4)."""
        matrix: JsonObject = {
            "field": "cell",
            "separator": " - ",
            "keys": ["rouge_l", "f1", "accuracy", "hallucination"],
            "order": [*catalog.topics(), *catalog.tasks()],
            "labels": {**catalog.english()},
        }
        return {**super().config(), "dataset": self.dataset, "matrix": matrix}

    def prepare(self) -> None:
        if self.data_path is None:
            raise ConfigError(
                f"task {self.name}: the HF dataset {self.dataset} is gated (accept its conditions on "
                f"huggingface.co, download it) - pass --data {self.name}=FOLDER (<一级>/<二级>/<task>.jsonl) "
                f"or a flat JSONL with topic_name/task_name"
            )
        self.cells = [c for c in load_cells(Path(self.data_path)) if self.wanted(c)]

    def wanted(self, cell: TopicTaskCell) -> bool:
        if cell.topic == "?":  # a record error from a flat file: reported, never scored
            return True
        if catalog.skipped(cell.topic, cell.task):
            return False
        return (self.tasks is None or cell.task in self.tasks) and (self.topics is None or cell.topic in self.topics)

    def size_hint(self) -> int | None:
        if self.cells is None:
            return None
        return sum(len(r) if isinstance(r, list) else 1 for c in self.cells for _, r in c.records)

    def examples(self) -> Iterator[Example | RecordError]:
        if self.cells is None:
            self.prepare()
        assert self.cells is not None
        index = 0
        for cell in self.cells:
            for line, record in cell.records:
                if isinstance(record, RecordError):
                    yield record
                    continue
                turns = record if isinstance(record, list) else [record]
                history: list[str] = []
                for round_, turn in enumerate(turns):
                    item = self.example(cell, line, round_ if isinstance(record, list) else None, turn, history)
                    if isinstance(item, Example):
                        item.index = index
                        index += 1
                        history = history + [item.extras.get("turn_question", item.question)]
                    yield item

    def example(
        self, cell: TopicTaskCell, line: int, round_: int | None, turn: Any, history: list[str]
    ) -> Example | RecordError:
        where = f"{cell.path}:{line + 1}" + (f" turn {round_}" if round_ is not None else "")
        if not isinstance(turn, dict) or not isinstance(turn.get("question"), str):
            return RecordError(cell.path, line + 1, f"{where}: no question string", "question")
        answers = turn.get("answer", turn.get("golden_answers"))
        if isinstance(answers, str):  # the judge's loader wraps strings in a list
            answers = [answers]
        if not isinstance(answers, list) or not answers:
            return RecordError(cell.path, line + 1, f"{where}: no answer list", "answer")
        cell_id = f"{cell.topic} - {cell.task}"
        question = turn["question"]
        if round_ is not None and self.conversation_query == "upstream_repr":
            question = repr([*history, turn["question"]])
        return Example(
            id=f"{cell_id}/{line}" + (f"/{round_}" if round_ is not None else ""),
            question=question,
            gold={
                "answers": [str(a) for a in answers],
                # absent: None (upstream cannot score retrieval then); [] scores MAP/MRR 0, as upstream
                "relevant_node": None if turn.get("relevant_node") is None else _as_list(turn["relevant_node"]),
                "relevant_passage": _as_list(turn.get("relevant_passage")),
            },
            meta={
                "topic": cell.topic,
                "task": cell.task,
                "cell": cell_id,
                "upstream_id": line,
                **({"round": round_} if round_ is not None else {}),
            },
            extras={"history": list(history), "turn_question": turn["question"]} if round_ is not None else {},
            turns=[{"role": "user", "content": q} for q in history] if round_ is not None else None,
        )

    def prediction_records(self, folder: Path) -> Iterator[tuple[int, JsonObject | RecordError]]:
        """Upstream's `*.pred.jsonl` folder as `ragbench score` records (plugins/recorded/system.py)."""
        return predictions.prediction_records(folder, CONVERSATION_TASK)


class OmniEvalHuman(OmniEvalAuto):
    name = "omnieval_human"
    dataset = "RUC-NLPIR/OmniEval-Human-Questions"
