"""ALCE: ASQA, QAMPARI and ELI5 with verifiable-generation (citation) prompting.

Data: ALCE's own files (`asqa_eval_gtr_top100.json` ...), each question with its 100 retrieved
docs (`summary`/`extraction` for the top 20 kept in `Document.metadata`). Prompts: ALCE run.py's
VANILLA protocol (see prompting.py), so `ragbench --tasks alce --system vanilla` reproduces the
paper's baseline; the docs shown are recorded on the prediction, so citation numbers index them.

Options (--task-arg):
  variant            default (VANILLA) | light_inst | closedbook | sum_or_ext (SUMM / SNIPPET)
  use_shorter        summary | extraction (required by sum_or_ext): docs are shown by that field;
                     docs whose field says "irrelevant" are dropped, as run.py does
  shot, ndoc, seed   demos (2), documents per demo (5; the vanilla system's top_n must match)
                     and the demo-choice seed (42; ALCE's paper averages 42, 43, 44)
  retrieval          which ALCE file: gtr | dpr | oracle (ASQA, QAMPARI), bm25 | oracle (ELI5)
  citations, rouge, claims_nli, mauve
                     the upstream eval.py switches; by default as ALCE's README evaluates each
                     dataset, except MAUVE (off: its gpt2-large featurizer cannot be fetched
                     offline; turn it on with mauve=true and --metric-arg mauve.featurizer=...)
  run_py_cleanup     apply run.py's post-generation cleanup before eval.py's truncation (default
                     true: predictions are raw model text); false to score outputs saved by ALCE's
                     run.py, which had it already (it is not idempotent on a doubled "End.")
  use_sub_questions  ASQA only: the prompt's question is the gold sub-questions joined by "\\n"
                     (LLatrieval's final-answer setting)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, cast

from annotated_types import Ge, Lt

from ragbench.api import ConfigError, Document, Example, RecordError, Task, TaskPrompting, TaskScoring
from ragbench.api.text import cited_numbers, list_items, sent_tokenize

from ..shared.task_options import check_choices
from .data import alce_data_file, data_files, read_records
from .prompting import SHORTER_FIELDS, fill, head_prompt, load_prompt_file, shorter_docs

# run.py LLM.generate: the system message OpenAI chat models get.
CHAT_SYSTEM_MESSAGE = "You are a helpful assistant that answers the following questions with proper citations."


def run_py_cleanup(text: str) -> str:
    """run.py after generation: drop "<|im_end|>", rstrip, drop one trailing "End."."""
    text = text.replace("<|im_end|>", "").rstrip()
    return text[: -len("End.")] if text.endswith("End.") else text


def eval_py_truncation(text: str) -> str:
    """eval.py before every metric: strip, keep the first line, drop "<|im_end|>"."""
    return text.strip().split("\n")[0].replace("<|im_end|>", "")


@dataclass(frozen=True)
class AlcePrompting(TaskPrompting):
    """run.py's prompt (the prompt file of `dataset` and `variant`, `shot` demos of `ndoc` documents chosen
    by `seed`), its chat system message, run.py's cleanup and eval.py's truncation; statements cite [n]."""

    answer_format = "long"
    cites = True
    dataset: str
    variant: str = "default"
    use_shorter: str | None = None
    shot: int = 2
    ndoc: int = 5
    seed: int = 42
    run_py_cleanup: bool = True

    def prompt_question(self, example: Example) -> str:
        return example.question

    def build_prompt(
        self,
        example: Example,
        docs: list[Document] | None = None,
        shot: int | None = None,
        question: str | None = None,
        **options: Any,
    ) -> str:
        """run.py's prompt; `shot` and `question` override the task's demo count and the question shown,
        for systems with their own answer protocol (LLatrieval: 1 shot, the gold sub-questions)."""
        shot = self.shot if shot is None else int(shot)
        return self.compose(self.prompt_question(example) if question is None else question, list(docs or []), shot)

    def compose(self, question: str, docs: list[Document], shot: int) -> str:
        """The prompt of `question` over `docs` after `shot` demonstrations: ALCE's head and question."""
        prompt_file = load_prompt_file(self.dataset, self.variant)
        if docs and (not prompt_file.shows_documents or self.ndoc == 0):
            raise ValueError(
                f"the {self.variant} prompt (ndoc={self.ndoc}) shows no documents but the system "
                f"chose {len(docs)}; use --system closed_book"
            )
        if len(docs) > self.ndoc:
            raise ValueError(
                f"the system shows {len(docs)} documents but ALCE's demos show ndoc={self.ndoc}; "
                f"pass --task-arg ndoc={len(docs)} (or --system-arg top_n={self.ndoc})"
            )
        head = head_prompt(self.dataset, self.variant, shot, self.ndoc, self.seed, self.use_shorter)
        return head + fill(prompt_file, question, docs, self.ndoc, self.use_shorter)

    def chat_messages(self, prompt: str) -> list[dict[str, str]]:
        return [{"role": "system", "content": CHAT_SYSTEM_MESSAGE}, {"role": "user", "content": prompt}]

    def postprocess(self, text: str) -> str:
        """run.py's cleanup of a generation (unless run_py_cleanup=false), then eval.py's truncation."""
        return eval_py_truncation(run_py_cleanup(text) if self.run_py_cleanup else text)

    def statements(self, answer: str) -> list[str]:
        return sent_tokenize(answer)

    def citations(self, answer: str) -> list[list[int]]:
        return [cited_numbers(statement) for statement in self.statements(answer)]


@dataclass(frozen=True)
class AlceAsqaPrompting(AlcePrompting):
    use_sub_questions: bool = False  # the prompt's question: the gold sub-questions joined by "\n"

    def prompt_question(self, example: Example) -> str:
        if self.use_sub_questions:
            return "\n".join(pair["question"] for pair in example.gold["qa_pairs"])
        return example.question


class AlceQampariPrompting(AlcePrompting):
    answer_format = "list"

    def statements(self, answer: str) -> list[str]:
        return [piece.strip() for piece in list_items(answer)]


def sub_question_answers(gold: Mapping[str, object]) -> list[str]:
    """Every sub-question's short answers (ASQA's `qa_pairs`), in order."""
    pairs = cast("Iterable[Mapping[str, Iterable[object] | None]]", gold.get("qa_pairs") or [])
    return [str(a) for pair in pairs for a in pair.get("short_answers") or []]


def first_aliases(gold: Mapping[str, object]) -> str:
    """Each answer's first alias (QAMPARI's `answers`, a list of alias lists), joined by commas."""
    return ", ".join(
        str(aliases[0]) for aliases in cast("Iterable[Sequence[object]]", gold.get("answers") or []) if aliases
    )


class AlceTask(Task):
    dataset: ClassVar[str] = ""
    prompting_class: ClassVar[type[AlcePrompting]] = AlcePrompting
    own_documents = True  # each question's retrieved top-100 (GTR, DPR, BM25 or oracle)
    files: ClassVar[Mapping[str, str]] = MappingProxyType({})  # retrieval -> file name
    default_retrieval: ClassVar[str] = "gtr"
    quality_metrics: ClassVar[tuple[str, ...]] = ()  # beside length, before citations
    citation_metric: ClassVar[str] = "citation"
    default_rouge: ClassVar[bool] = True

    def __init__(
        self,
        data_path: str | Path | None = None,
        variant: str = "default",
        use_shorter: str | None = None,
        shot: int = 2,
        ndoc: int = 5,
        seed: Annotated[int, Ge(0), Lt(2**32)] = 42,
        retrieval: str | None = None,
        citations: bool | None = None,
        rouge: bool | None = None,
        mauve: bool = False,
        run_py_cleanup: bool = True,
    ) -> None:
        retrieval = retrieval or self.default_retrieval
        check_choices(self.name, {"retrieval": self.files}, retrieval=retrieval)
        load_prompt_file(self.dataset, variant)
        if (variant == "sum_or_ext") != (use_shorter is not None):
            raise ConfigError(
                f"task {self.name}: variant sum_or_ext needs use_shorter=summary|extraction "
                "(and use_shorter needs variant=sum_or_ext)"
            )
        if use_shorter is not None:
            check_choices(self.name, {"use_shorter": SHORTER_FIELDS}, use_shorter=use_shorter)
        if int(shot) < 0 or int(ndoc) < 0:
            raise ConfigError(f"task {self.name}: shot and ndoc must be >= 0")
        citations = variant != "closedbook" if citations is None else bool(citations)
        rouge = self.default_rouge if rouge is None else bool(rouge)
        super().__init__(
            data_path,
            variant=variant,
            use_shorter=use_shorter,
            shot=int(shot),
            ndoc=int(ndoc),
            seed=int(seed),
            retrieval=retrieval,
            citations=citations,
            rouge=rouge,
            mauve=bool(mauve),
            run_py_cleanup=bool(run_py_cleanup),
        )
        self.use_shorter, self.retrieval = use_shorter, retrieval
        self.prompting = self.prompting_class(
            self.dataset, variant, use_shorter, int(shot), int(ndoc), int(seed), bool(run_py_cleanup)
        )
        metrics = (
            "length",
            *self.quality_metrics,
            *(("rouge_lsum",) if rouge else ()),
            *self.extra_metrics(),
            *((self.citation_metric,) if citations else ()),
            *(("mauve",) if mauve else ()),
        )
        self.scoring = replace(self.scoring, metrics=metrics)
        self.path: Path | None = None

    def extra_metrics(self) -> tuple[str, ...]:
        return ()

    def prepare(self) -> None:
        self.path = alce_data_file(self.name, self.files[self.retrieval], self.data_path)

    # --- data -------------------------------------------------------------------------------
    def examples(self) -> Iterator[Example | RecordError]:
        if self.path is None:
            self.prepare()
        assert self.path is not None  # found by prepare()
        for index, record in enumerate(read_records(self.path)):
            try:
                example = self.parse(record, index)
            except RecordError as exc:
                yield exc
                continue
            yield example

    def parse(self, record: Any, index: int) -> Example:
        path = str(self.path)
        if not isinstance(record, dict):
            raise RecordError(path, index + 1, f"record {index}: expected a JSON object, got {type(record).__name__}")
        question = self.field(record, "question", str, index)
        try:
            docs = [Document.from_dict(doc) for doc in self.field(record, "docs", list, index)]
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise RecordError(path, index + 1, f"record {index}: bad document ({exc})", "docs") from exc
        if self.use_shorter is not None:
            docs = shorter_docs(docs, self.use_shorter)
        example_id = record.get("sample_id", record.get("id"))
        return Example(
            id=str(example_id) if example_id is not None else str(index),
            question=question,
            gold=self.gold(record, index),
            docs=docs,
            index=index,
        )

    def field(self, record: dict[str, Any], name: str, kind: type, index: int) -> Any:
        if name not in record:
            raise RecordError(str(self.path), index + 1, f"record {index}: missing field", name)
        if not isinstance(record[name], kind):
            raise RecordError(
                str(self.path),
                index + 1,
                f"record {index}: expected {kind.__name__}, got {type(record[name]).__name__}",
                name,
            )
        return record[name]

    def gold(self, record: dict[str, Any], index: int) -> dict[str, Any]:
        raise NotImplementedError

    # --- the prompting protocols -------------------------------------------------------------
    def demonstration(self) -> tuple[str, str] | None:
        """The first demo of the dataset's default prompt file, its citations kept."""
        demo = load_prompt_file(self.dataset, "default").demos[0]
        return demo["question"], demo["answer"]


class AlceAsqa(AlceTask):
    name = "alce_asqa"
    dataset = "asqa"
    files = data_files("asqa", ("gtr", "dpr"))
    quality_metrics = ("str_em",)
    scoring = TaskScoring(gold_fields=("qa_pairs", "long_answer"))
    prompting_class = AlceAsqaPrompting
    prompting: AlceAsqaPrompting

    def __init__(self, data_path: str | Path | None = None, use_sub_questions: bool = False, **common: Any) -> None:
        super().__init__(data_path, **common)
        self.args["use_sub_questions"] = bool(use_sub_questions)
        self.prompting = replace(self.prompting, use_sub_questions=bool(use_sub_questions))

    def gold(self, record: dict[str, Any], index: int) -> dict[str, Any]:
        qa_pairs = self.field(record, "qa_pairs", list, index)
        if not all(isinstance(p, dict) and isinstance(p.get("short_answers"), list) for p in qa_pairs):
            raise RecordError(
                str(self.path), index + 1, f"record {index}: each qa_pair needs a short_answers list", "qa_pairs"
            )
        annotations = record.get("annotations") or []
        long_answers = [a["long_answer"] for a in annotations if isinstance(a, dict) and "long_answer" in a]
        return {
            "qa_pairs": [{"question": p.get("question", ""), "short_answers": p["short_answers"]} for p in qa_pairs],
            "answer": record.get("answer", ""),
            "long_answers": long_answers,
        }

    def gold_references(self, gold: Mapping[str, object]) -> list[str]:
        """The annotators' long answers; else the record's answer; else every sub-question's short answers."""
        long_answers = gold.get("long_answers")
        if long_answers:
            return [str(a) for a in cast("Iterable[object]", long_answers)]
        if gold.get("answer"):
            return [str(gold["answer"])]
        return sub_question_answers(gold)


class AlceQampari(AlceTask):
    name = "alce_qampari"
    dataset = "qampari"
    files = data_files("qampari", ("gtr", "dpr"))
    quality_metrics = ("qampari",)
    citation_metric = "citation_list"
    prompting_class = AlceQampariPrompting
    scoring = TaskScoring(gold_fields=("answer_lists", "long_answer"))
    default_rouge = False  # eval.py turns ROUGE (and QA, MAUVE) off for QAMPARI

    def gold(self, record: dict[str, Any], index: int) -> dict[str, Any]:
        answers = self.field(record, "answers", list, index)
        if not all(isinstance(a, list) and all(isinstance(x, str) for x in a) for a in answers):
            raise RecordError(str(self.path), index + 1, f"record {index}: expected a list of alias lists", "answers")
        return {"answers": answers, "answer": record.get("answer", "")}

    def gold_references(self, gold: Mapping[str, object]) -> list[str]:
        """The whole list as one text: the record's answer, else each answer's first alias joined by commas."""
        return [str(gold.get("answer") or first_aliases(gold))]


class AlceEli5(AlceTask):
    name = "alce_eli5"
    dataset = "eli5"
    files = data_files("eli5", ("bm25",))
    default_retrieval = "bm25"
    scoring = TaskScoring(gold_fields=("claims", "long_answer"))

    def __init__(self, data_path: str | Path | None = None, claims_nli: bool = True, **common: Any) -> None:
        self.claims_nli = bool(claims_nli)  # read by extra_metrics during super().__init__
        super().__init__(data_path, **common)
        self.args["claims_nli"] = self.claims_nli

    def extra_metrics(self) -> tuple[str, ...]:
        return ("claims_nli",) if self.claims_nli else ()

    def gold(self, record: dict[str, Any], index: int) -> dict[str, Any]:
        claims = self.field(record, "claims", list, index)
        answer = self.field(record, "answer", str, index)
        return {"answer": answer, "claims": [str(c) for c in claims]}

    def gold_references(self, gold: Mapping[str, object]) -> list[str]:
        """The long answer (the claims are read by the claims metric)."""
        return [str(gold["answer"])] if gold.get("answer") else []
