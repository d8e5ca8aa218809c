"""`dragun_question_autojudge`: DRAGUN's AutoJudge score of a ranked list of questions (Task 1), asked of the run's
`--judge` as auto_judge.py (trec-dragun/resources 4b60fb6) asks gpt-oss-120b: first its compound check of each
question (auto_compound_question_check: the question alone), then each rubric question against each submitted
question, in rank order (auto_question_evaluation: the article, the target rubric question, the organizer runs'
human-assessed questions as examples and the candidate); `response_format` the json_schema of its pydantic
models under the name "assessment", temperature 0 and top_p 1 (ints, as sent), no token limit, n or seed. The
decisions are scored as utils/score.py's question_generation_evaluation scores them (scoring.question_score).

Key: `dragun_question_score`, score.py's per-topic score (its per-run score is the mean over the topics). The
released scripts stop at a reply that is not their schema's JSON and at a rationale pandas reads as missing;
here such a reply leaves the topic out of the averages, counted (`dragun_question_unparsed`); so does a
prediction with no question (score.py gives the run no score on that topic: `dragun_no_questions`)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ragbench.api import Example, KeySpec, Metric, MetricDeclaration, Prediction, Scores
from ragbench.api.text import list_lines

from .metric import ask_judge, dumped, readable
from .scoring import COMPOUND_FACTORS, PANDAS_MISSING, SIMILARITY_SCORES, judges_mean, question_score

KEY = "dragun_question_score"
SUBMITTED = (
    "dragun_questions"  # a scored run file's questions as submitted, in its predictions' extras (dragun_questions)
)
Ranked = list[tuple[int, str]]  # (rank, question)


def schema(title: str, decisions: list[str]) -> str:
    """auto_judge.py's `model_json_schema()` (pydantic 2) of a {rationale, assessment_decision} model."""
    properties = {
        "rationale": {"title": "Rationale", "type": "string"},
        "assessment_decision": {"enum": decisions, "title": "Assessment Decision", "type": "string"},
    }
    body = {"properties": properties, "required": ["rationale", "assessment_decision"], "title": title}
    return json.dumps({"name": "assessment", "schema": body | {"type": "object"}})


COMPOUND_SCHEMA = schema("CompoundAssessment", list(COMPOUND_FACTORS))
SIMILARITY_SCHEMA = schema("QuestionAssessment", list(SIMILARITY_SCORES))


def compound_turn(question: str) -> str:
    return f"Question: {question}\nCheck if this question is a compound question. Reason first and then decide."


def similarity_turn(example: Example, target: str, rank: int, candidate: str) -> str:
    """auto_judge.py's user input for one rubric question and one submitted question, character for character."""
    shots = example.gold["question_examples"][str(rank)]
    return (
        f"Below is the news article:\n\n{dumped(example.gold['article'])}\n\n"
        f"This is the target question: {target}\n\n"
        f"Below are some example candidate questions with assessments:\n\n{dumped(shots)}\n\n"
        f"Assess the following candidate question:\n\n{dumped({'candidate_question': candidate})}\n\n"
        "Provide your reasoning in a rationale field and your decision in an assessment_decision field."
    )


def decision(reply: str, allowed: Any, rationale_read: bool) -> str:
    """The reply's assessment_decision, read as the script's pydantic model reads it; a reply that is not that
    JSON, or (rationale_read: score.py reads it from the CSV) whose rationale pandas reads as missing, is a
    ValueError."""
    data = json.loads(readable(reply))
    if not isinstance(data, dict) or not isinstance(data.get("rationale"), str):
        raise ValueError("no rationale")
    if not isinstance(data.get("assessment_decision"), str) or data["assessment_decision"] not in allowed:
        raise ValueError(f"no decision of {list(allowed)}")
    if rationale_read and data["rationale"] in PANDAS_MISSING:
        raise ValueError("a rationale score.py reads as missing")
    return str(data["assessment_decision"])


def submitted(prediction: Prediction) -> Ranked:
    """The questions judged, as auto_judge.py judges a run file's: a scored run file's as submitted (ranked as
    there), else the answer's, one a line (`list_lines`), ranked in the order written; every one, however many."""
    given = prediction.extras.get(SUBMITTED)
    if isinstance(given, list):
        return [(int(q["rank"]), str(q["text"])) for q in given]
    return list(enumerate(list_lines(prediction.answer or ""), 1))


class DragunQuestionAutoJudge(Metric):
    """With several --judge, each is asked alone and the topic's score is their mean (the judges whose replies
    were read); --judge-repeats then compares them."""

    name = "dragun_question_autojudge"
    declares = MetricDeclaration(
        keys=(KEY,),
        needs=("judge",),
        gold_needs=("article", "rubric", "question_examples"),
        key_specs={KEY: KeySpec(True, (0, 1))},
        counters={
            "dragun_question_unparsed": "topics with a judge reply that is not AutoJudge's JSON (or whose rationale "
            "score.py reads as missing; the released scripts stop at it): left out of the averages",
            "dragun_no_questions": "predictions with no question (score.py scores no run on a topic it asked "
            "nothing of): left out of the averages",
        },
    )

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        ranked = submitted(prediction)
        if not ranked:
            ctx.count("dragun_no_questions")
            return {KEY: None}
        found = await asyncio.gather(*(self.judged(judge, example, ranked, ctx) for judge in ctx.judges_for(self)))
        return judges_mean(found, (KEY,))

    async def judged(self, judge: Any, example: Example, ranked: Ranked, ctx: Any) -> dict[str, float] | None:
        """One judge's score of the questions: its compound checks, then each rubric question against each question."""

        async def ask(system: str, user: str, json_schema: str) -> str:
            return await ask_judge(judge, self.name, system, user, json_schema)

        pairs = [
            (int(str(q["question_id"]).split("-")[-1]), str(q["question_text"]), candidate)
            for q in example.gold["rubric"]
            for candidate in ranked
        ]
        checks = (ask("compound_question_check", compound_turn(text), COMPOUND_SCHEMA) for _, text in ranked)
        similarities = (
            ask("question_judge", similarity_turn(example, target, rank, c[1]), SIMILARITY_SCHEMA)
            for rank, target, c in pairs
        )
        checked, judged = await asyncio.gather(asyncio.gather(*checks), asyncio.gather(*similarities))
        try:
            compound: dict[int, list[str]] = {}
            for (position, _), reply in zip(ranked, checked):
                compound.setdefault(position, []).append(decision(reply, COMPOUND_FACTORS, False))
            labels = [
                (rank, candidate[0], decision(reply, SIMILARITY_SCORES, True))
                for (rank, _, candidate), reply in zip(pairs, judged)
            ]
        except ValueError:
            ctx.count("dragun_question_unparsed")
            return None
        return {KEY: question_score(example.gold["rubric"], compound, labels)}
