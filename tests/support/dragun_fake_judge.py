"""A fake OpenAI-compatible judge for DRAGUN's AutoJudge (the recorder runs it for the released auto_judge.py in its
own venv, the tests for ragbench): a chat completion answered from the request's user turn alone, every request
body kept as sent (test_engine_openai's FakeServer).

A report (Task 2): the reply judges each short answer of the rubric the user turn shows (between "Below is the
rubric used to assess reports:" and the examples), its label drawn from a hash of the answer's id and the report
judged (the user turn's last JSON string): supports, partial, contradicts or none, or left out of the reply (one
in five, so that score.py's per-question count of judged answers is exercised). Like gpt-oss served by vLLM, the message carries
`reasoning_content` (the released script reads it).

A question (Task 1): the compound check ("Question: ...") answers compound or not-compound, the similarity of a
candidate to a target question (the user turn's "target question" and last JSON object) one of the four labels,
each drawn from a hash of the question(s).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from test_engine_openai import FakeServer

RUBRIC = "Below is the rubric used to assess reports:\n\n"
EXAMPLES = "\n\nBelow are example reports and their assessments:"
REPORT = "or has no relation (none) to each short answer in the rubric.\n\n"
LABELS = ("supports", "partial", "contradicts", "none", None)  # None: the answer is left out of the reply
COMPOUND = "Question: "
TARGET = "This is the target question: "
CANDIDATE = "Assess the following candidate question:\n\n"
SIMILARITY = ("very-similar", "similar", "different", "very-different")


def _digest(*parts: str) -> int:
    return int(hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest(), 16)


def assessments(user: str) -> dict[str, Any]:
    rubric = json.loads(user[user.index(RUBRIC) + len(RUBRIC) : user.index(EXAMPLES)])
    report = json.loads(user[user.index(REPORT) + len(REPORT) :])
    judged = []
    for question in rubric:
        for answer in question["short_answers"]:
            label = LABELS[_digest(answer["answer_id"], report) % len(LABELS)]
            if label is not None:
                judged.append(
                    {"answer_id": answer["answer_id"], "rationale": f"Read for {label}.", "assessment_decision": label}
                )
    return {"assessments": judged}


def compound_check(user: str) -> dict[str, Any]:
    question = user[len(COMPOUND) : user.index("\nCheck if this question")]
    decision = "compound" if _digest(question) % 3 == 0 else "not-compound"
    return {"rationale": f"Read as {decision}.", "assessment_decision": decision}


def similarity(user: str) -> dict[str, Any]:
    target = user[user.index(TARGET) + len(TARGET) : user.index("\n\nBelow are some example")]
    candidate = json.loads(user[user.index(CANDIDATE) + len(CANDIDATE) : user.rindex("}") + 1])["candidate_question"]
    label = SIMILARITY[_digest(target, candidate) % len(SIMILARITY)]
    return {"rationale": f"Read as {label}.", "assessment_decision": label}


def reply(user: str) -> dict[str, Any]:
    if user.startswith(COMPOUND):
        return compound_check(user)
    if TARGET in user:
        return similarity(user)
    return assessments(user)


def answer(path: str, body: dict[str, Any]) -> dict[str, Any]:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    content = json.dumps(reply(user), indent=1)
    message = {"role": "assistant", "content": content, "reasoning_content": "The rubric was read answer by answer."}
    return {
        "id": "chatcmpl-dragun",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "judge"),
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def fake_judge() -> FakeServer:
    return FakeServer(answer=answer)
