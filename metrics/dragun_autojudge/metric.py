"""`dragun_autojudge`: DRAGUN's AutoJudge score of a report, asked of the run's `--judge` as auto_judge.py
(trec-dragun/resources 4b60fb6, auto_report_evaluation) asks gpt-oss-120b: one call per report, a system turn (its
report_judge.txt) and a user turn showing the news article, the topic's rubric (the answers' references left
out), the two organizer runs' reports with their human assessments as examples and the report (its sentences'
texts joined by spaces); `response_format` the json_schema of its ReportAssessments, temperature 0 and top_p 1
(ints, as sent), no token limit, n or seed. The reply's assessments (answer_id, rationale, assessment_decision)
are scored as utils/score.py scores them (scoring.py).

Keys: `dragun_supportive` and `dragun_contradictory`, score.py's per-topic scores (its per-run scores are their
means over the topics). The released script stops at a reply that is not its schema's JSON, and score.py at an
assessment of an answer the rubric does not hold or a rationale pandas reads as missing (an empty one, "NA", ...);
here such a reply leaves the report out of the averages, counted (`dragun_unparsed`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ragbench.api import Example, KeySpec, Metric, MetricDeclaration, Prediction, Scores
from ragbench.api.text import remove_citations, sent_tokenize

from .scoring import LABEL_SCORES, PANDAS_MISSING, judges_mean, topic_scores

PROMPTS = json.loads(Path(__file__).with_name("prompts.json").read_text(encoding="utf-8"))
KEYS = ("dragun_supportive", "dragun_contradictory")
LEFT_TO_SERVER = ("max_tokens", "n", "seed")  # the released call sends none of them


def _schema() -> str:
    """auto_judge.py's `ReportAssessments.model_json_schema()` (pydantic 2) under the name "assessments"."""
    answer = {
        "properties": {
            "answer_id": {"title": "Answer Id", "type": "string"},
            "rationale": {"title": "Rationale", "type": "string"},
            "assessment_decision": {"enum": list(LABEL_SCORES), "title": "Assessment Decision", "type": "string"},
        },
        "required": ["answer_id", "rationale", "assessment_decision"],
        "title": "ReportAnswerAssessment",
        "type": "object",
    }
    schema = {
        "$defs": {"ReportAnswerAssessment": answer},
        "properties": {
            "assessments": {
                "items": {"$ref": "#/$defs/ReportAnswerAssessment"},
                "title": "Assessments",
                "type": "array",
            }
        },
        "required": ["assessments"],
        "title": "ReportAssessments",
        "type": "object",
    }
    return json.dumps({"name": "assessments", "schema": schema})


SCHEMA = _schema()


async def ask_judge(judge: Any, metric: str, system: str, user: str, json_schema: str) -> str:
    """One AutoJudge call as auto_judge.py makes it: its system prompt `system`, greedy, the JSON schema enforced,
    nothing else sent; the reply's text."""
    messages = [{"role": "system", "content": PROMPTS[system]}, {"role": "user", "content": user}]
    reply = await judge.chat(
        messages,
        step=f"judge:{metric}",
        temperature=0,
        top_p=1,
        json_schema=json_schema,
        left_to_server=LEFT_TO_SERVER,
    )
    return str(reply.text or "")


SUBMITTED = "dragun_responses"  # a scored run file's sentences as submitted, in its predictions' extras (dragun_report)


def report_text(prediction: Prediction) -> str:
    """The report as AutoJudge reads it: its sentences' texts joined by spaces. A scored run file's sentences are
    its own; a ragbench answer's are its Punkt sentences without their [n] markers (as `ragbench export dragun`
    writes them)."""
    given = prediction.extras.get(SUBMITTED)
    if isinstance(given, list):
        return " ".join(str(sentence["text"]) for sentence in given)
    texts = (" ".join(remove_citations(sentence).split()) for sentence in sent_tokenize(prediction.answer or ""))
    return " ".join(text for text in texts if text)


def dumped(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def user_turn(example: Example, report: str) -> str:
    """auto_judge.py's user input for one report, character for character."""
    shots = "\n".join(
        f"Example {n}:\n\n{dumped(shot)}" for n, shot in enumerate(example.gold["autojudge_examples"], start=1)
    )
    return (
        f"Below is the news article:\n\n{dumped(example.gold['article'])}\n\n"
        f"Below is the rubric used to assess reports:\n\n{dumped(example.gold['rubric'])}\n\n"
        f"Below are example reports and their assessments:\n\n{shots}\n\n"
        "Below is the report you need to assess, based on the rubric above and given examples. Assess whether this "
        "report supports, partially supports (partial), contradicts, or has no relation (none) to each short answer "
        f"in the rubric.\n\n{dumped(report)}\n\n"
    )


def readable(reply: str) -> str:
    """The reply as auto_judge.py reads it: its control characters made spaces."""
    return "".join(" " if ord(c) < 0x20 or ord(c) == 0x7F else c for c in reply)


def assessments(reply: str) -> list[tuple[str, str]]:
    """The reply's (answer_id, assessment_decision) pairs, read as the script's pydantic model reads them; a reply
    that is not that JSON, or with a rationale pandas reads as missing (score.py stops at it), is a ValueError."""
    data = json.loads(readable(reply))
    if not isinstance(data, dict) or not isinstance(data.get("assessments"), list):
        raise ValueError("no assessments list")
    out = []
    for item in data["assessments"]:
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("answer_id", "rationale")):
            raise ValueError(f"an assessment is not {{answer_id, rationale, assessment_decision}}: {item!r}")
        if item["rationale"] in PANDAS_MISSING:
            raise ValueError(f"a rationale score.py reads as missing: {item!r}")
        out.append((item["answer_id"], str(item.get("assessment_decision"))))
    return out


class DragunAutoJudge(Metric):
    """With several --judge, each is asked alone and the report's scores are their mean (the judges whose reply
    was read); --judge-repeats then compares them."""

    name = "dragun_autojudge"
    declares = MetricDeclaration(
        keys=KEYS,
        needs=("judge",),
        gold_needs=("article", "rubric", "autojudge_examples"),
        key_specs={"dragun_supportive": KeySpec(True, (0, 1)), "dragun_contradictory": KeySpec(False, (0, 1))},
        counters={
            "dragun_unparsed": "judge replies that are not AutoJudge's JSON of assessments of the rubric's answers "
            "with its four labels (the released script stops at them): left out of the averages",
        },
    )

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        user = user_turn(example, report_text(prediction))

        async def judged(judge: Any) -> dict[str, float] | None:
            reply = await ask_judge(judge, self.name, "report_judge", user, SCHEMA)
            try:
                scores = topic_scores(example.gold["rubric"], assessments(reply))
            except ValueError:
                ctx.count("dragun_unparsed")
                return None
            return {"dragun_supportive": scores["supportive"], "dragun_contradictory": scores["contradictory"]}

        return judges_mean(await asyncio.gather(*(judged(judge) for judge in ctx.judges_for(self))), KEYS)
