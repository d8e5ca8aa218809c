"""`nuggetizer`: TREC 2024 RAG's AutoNuggetizer per example. Nuggets are created (and labelled vital or okay)
from the example's passages, then assigned against the system's answer; the four scores are nuggetizer's
`calculate_nugget_scores` of that answer, and the run's mean of each is its `calculate_global_metrics`.

Roles (--judge, in order): creator, scorer, assigner; one judge does all three (nuggetizer's `model=`).
`window_size` sizes creation's and scoring's windows (create_nuggets.py's --window_size), `assign_window_size`
assignment's (assign_nuggets.py's Nuggetizer keeps its default, 10).
The passages are the example's own documents (`passages=example`, what the task gives as its relevant passages)
or the documents the system showed (`passages=shown`), the nuggets created again for each example scored; or, as
TREC RAG runs it, the topic's pool (`passages=pool`, pool.py): nuggets created once per topic from its qrels
segments graded 1-3 (their text from `corpus`), kept in `nuggets=FILE` for every run, assigned against the
answer as its submission reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, Example, Metric, MetricDeclaration, Prediction, Preflight, Scores
from ragbench.api.data import JsonObject

from ..segment_texts import existing_corpus
from .pool import Pool, pooled_docids, submitted_text
from .steps import ASSIGN_WINDOW, TRIALS, Steps, scores

KEYS = ("strict_vital_score", "strict_all_score", "vital_score", "all_score")


class NuggetizerMetric(Metric):
    name = "nuggetizer"
    SOURCES = ("example", "shown", "pool")
    declares = MetricDeclaration(
        keys=tuple(f"nuggetizer_{key}" for key in KEYS),
        needs=("judge",),
        judge_roles=("creator", "scorer", "assigner"),
        value_range=(0, 1),
        counters={
            "nuggetizer_unparsed": "judge replies nuggetizer cannot use (not a Python literal it can slice or "
            "whose labels it can lower): each is asked again at temperature 0.2, as nuggetizer asks",
            "nuggetizer_gave_up": f"windows where {TRIALS} replies in a row could not be used: creation keeps the "
            'nuggets so far, scoring labels the window\'s nuggets "failed" (not vital), assignment "failed" '
            "(not supported), as nuggetizer does",
            "nuggetizer_no_vital": "examples with no vital nugget: their vital scores are 0.0, as nuggetizer's",
            "nuggetizer_no_nuggets": "examples where no nugget was created (passages=pool: a topic with no segment "
            "graded above 0): all four scores 0.0, as nuggetizer's",
        },
    )

    def __init__(
        self,
        passages: str = "example",
        window_size: int = 10,
        max_nuggets: int = 30,
        assign_window_size: int = ASSIGN_WINDOW,
        assign_grades: int = 3,
        corpus: str | None = None,
        nuggets: str | None = None,
    ) -> None:
        if passages not in self.SOURCES:
            raise ConfigError(f"metric {self.name}: passages={passages} is not one of {', '.join(self.SOURCES)}")
        if (passages == "pool") != (corpus is not None) or (nuggets is not None and passages != "pool"):
            raise ConfigError(
                f"metric {self.name}: passages=pool reads the pooled segments from corpus=PATH (and keeps the nuggets "
                "in nuggets=FILE); give corpus (and nuggets) with passages=pool only"
            )
        self.corpus_path, self.nugget_file = corpus, nuggets
        nugget_file = None if nuggets is None else Path(nuggets)
        self.pool = None if corpus is None else Pool(existing_corpus(self.name, corpus), nugget_file)
        if min(int(window_size), int(max_nuggets), int(assign_window_size)) < 1:
            raise ConfigError(f"metric {self.name}: window_size, assign_window_size and max_nuggets must be 1 or more")
        if int(assign_grades) not in (2, 3):
            raise ConfigError(f"metric {self.name}: assign_grades={assign_grades} is not 2 or 3")
        self.passages, self.window, self.max_nuggets = passages, int(window_size), int(max_nuggets)
        self.grades, self.assign_window = int(assign_grades), int(assign_window_size)

    def config(self) -> JsonObject:
        config: JsonObject = {
            "name": self.name,
            "passages": self.passages,
            "window_size": self.window,
            "assign_window_size": self.assign_window,
            "max_nuggets": self.max_nuggets,
            "assign_grades": self.grades,
        }
        pool: JsonObject = {"corpus": self.corpus_path, "nuggets": self.nugget_file}  # passages=pool only
        return config | pool if self.pool is not None else config

    def preflight(self, check: Preflight, task: Any) -> None:
        """passages=pool: every topic's pool is read from the corpus in one pass (segment_texts.py)."""
        if self.pool is not None:
            self.pool.segments.want_topics(task, pooled_docids)

    def texts(self, example: Example, prediction: Prediction) -> list[str]:
        """The passages the nuggets are created from (a document's text, as nuggetizer's `segment`)."""
        if self.passages == "shown":
            docs = prediction.shown_docs(f"{self.name}'s passages")
            whose = "this prediction shows"
        else:
            docs, whose = example.docs, "the example has (passages=shown takes the system's)"
        if not docs:
            raise ValueError(f"{self.name} creates nuggets from passages and {whose} none")
        return [doc.text for doc in docs]

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        passages = self.texts(example, prediction) if self.pool is None else []  # no passages: fails at once
        count = getattr(ctx, "count", None) or (lambda name: None)
        steps = Steps(ctx.judges_for(self), count, self.window, self.max_nuggets, self.assign_window)
        if self.pool is None:
            created = await steps.create(example.question, passages)
            answer = prediction.answer or ""
        else:
            made_by = {"creator": steps.creator.engine.model, "scorer": steps.scorer.engine.model}
            created = await self.pool.nuggets(example, lambda texts: steps.create(example.question, texts), made_by)
            answer = submitted_text(prediction.answer or "")
        assigned = await steps.assign(example.question, answer, created, self.grades)
        if not assigned:
            count("nuggetizer_no_nuggets")
        elif not any(n.importance == "vital" for n in assigned):
            count("nuggetizer_no_vital")
        return {f"nuggetizer_{key}": value for key, value in scores(assigned).items()}
