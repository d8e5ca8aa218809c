"""CRAG-MM's evaluation (`local_evaluation.py`, `evaluation/` of facebookresearch/CRAG-MM), per turn then per run.

Per turn, as upstream (`crag_mm`, the default):
  1. the text judged is the answer cut to 75 Llama-3.2 tokens (cut.py), as upstream's generation keeps it: the
     task's post-processing cut it already where the system applied it (its raw output is the uncut text); an
     answer read from upstream's own turn file (`--data` that file: `--mode evaluate`'s input) is judged as it
     is, uncut, as evaluate mode judges it (marked `EVALUATE_MODE` in its extras);
  2. missing iff `clean_text` (lower-cased, everything but a-z 0-9 and whitespace removed) contains "i dont know"
     or "i do not know" - anywhere ("I don't know the variant" too);
  3. exact match (stripped, lower-cased) => correct, and the judge is not asked; an exact match that also says
     "I don't know" is both correct and missing (its hallucination is -1);
  4. otherwise (not missing) the judge, with upstream's prompt and request (model, messages, temperature 0,
     max_tokens 1,024: nothing else), tried as LLMJudge tries it: 3 attempts 1 s and 2 s apart, each the OpenAI
     SDK's with its 2 retries of a 5xx or a dropped connection and none of a reply without choices
     (`judge_client`); "Result: WRONG" anywhere or WRONG in the last line => wrong, else "Result: CORRECT" anywhere
     or CORRECT in the last line ("INCORRECT" too) => correct; a call that fails 3 times => wrong (a
     hallucination; counted, `judge_failed`). A reply neither rule reads makes upstream's whole evaluation crash
     (TypeError in `calculate_scores`); here it is wrong and counted (`judge_unparsed`).
Per run (`corpus`): upstream's `truthfulness_score` ((2 correct + missing) / total - 1, but 0.0 for a run of one
turn) and `mean_multi_turn_conversation_score` (per conversation in turn order, the turns after two consecutive
not-correct ones count as missing; the mean of accuracy - hallucination per conversation, then over conversations),
for all turns and for the egocentric ones (`ego_`). The rest of upstream's ego table is the `image_source` slice.

`crag_mm_corrected` changes what upstream gets wrong (docs/benchmarks/crag-mm.md): the judge's verdict is its last
CORRECT / INCORRECT / WRONG word; an exact match is correct and not missing; a run of one turn has the truthfulness
of that turn; and the two-wrong rule also applies to the run's `truthfulness_score` (the turns after a conversation's
end count as missing), as the paper describes it. With several judges a turn's accuracy is the share that read it
correct; the two-wrong rule calls a turn wrong below one half.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ragbench.api import EngineError, Example, KeySpec, Metric, MetricDeclaration, Prediction, Scores
from ragbench.api.data import JsonObject, tokenizer_in_context

from .cut import TOKENIZER_ENV, truncate_response
from .prompts import judge_messages

if TYPE_CHECKING:
    from ragbench.api import SampleRecord
    from ragbench.api.engines import Response


class ChatJudge(Protocol):
    """What the metric asks of a judge (`ScoringContext.judges_for`'s handles): a chat call with its step name."""

    async def chat(self, messages: list[dict[str, str]], *, step: str, **sampling: object) -> Response: ...


EVALUATE_MODE = "crag_mm_evaluate_mode"  # a prediction's extras: read from upstream's turn file, judged uncut
UNPARSED = "judge_unparsed"
FAILED = "judge_failed"
JUDGE_ATTEMPTS = 3  # evaluation/config.py MAX_API_RETRIES
# LLMJudge.attempt_api_call's client: openai.OpenAI() with the SDK's default max_retries (2); a body without choices
# fails in `choices[0]`, outside the SDK, which does not try it again
UPSTREAM_CLIENT: Mapping[str, int | bool] = MappingProxyType({"max_retries": 2, "retry_unreadable": False})
_NOT_CLEAN = re.compile(r"[^a-z0-9\s]")
_VERDICT = re.compile(r"\b(CORRECT|INCORRECT|WRONG)\b")


def judged_text(prediction: Prediction, tokenizer: str) -> str:
    """The text upstream judges of a prediction the run made (rule 1 of the module's docstring): an answer the
    task's post-processing cut (its raw output, cut, is the answer) as it is; else the answer cut, once."""
    answer, raw = prediction.answer, prediction.raw_output
    if raw is not None and raw != answer and truncate_response(raw, tokenizer) == answer:
        return answer
    return truncate_response(answer, tokenizer)


def tokenizer_dir(ctx: Any) -> str:
    """The Llama-3.2 tokenizer folder: the task's `tokenizer` option, else $CRAG_MM_LLAMA32_TOKENIZER."""
    return tokenizer_in_context(
        ctx,
        TOKENIZER_ENV,
        "CRAG-MM cuts the answers a run generates to 75 Llama-3.2 tokens and needs that tokenizer: --task-arg "
        f"tokenizer=DIR (a folder holding meta-llama/Llama-3.2-1B-Instruct's tokenizer.json) or ${TOKENIZER_ENV}",
    )


def clean_text(text: str) -> str:
    return _NOT_CLEAN.sub("", text.lower())


def says_idk(text: str) -> bool:
    cleaned = clean_text(text)
    return "i dont know" in cleaned or "i do not know" in cleaned


def exact_match(response: str, ground_truth: str) -> bool:
    return response.strip().lower() == ground_truth.strip().lower()


def read_upstream(reply: str | None) -> bool | None:
    """LLMJudge.parse_response: WRONG is looked for first, in the whole reply ("Result: WRONG") or its last
    line; then CORRECT the same way (so "Result: INCORRECT" is correct); None when neither is there."""
    if reply is None:  # upstream: `in None` raises inside its try => None
        return None
    last_line = reply.split("\n")[-1]
    if "Result: WRONG" in reply or "WRONG" in last_line:
        return False
    if "Result: CORRECT" in reply or "CORRECT" in last_line:
        return True
    return None


def read_corrected(reply: str | None) -> bool | None:
    """The judge's last verdict word: CORRECT => correct, INCORRECT or WRONG => wrong; None without one."""
    found = _VERDICT.findall(reply or "")
    return found[-1] == "CORRECT" if found else None


class CragMMEval(Metric):
    """CRAG-MM's evaluation as upstream runs it (see the module docstring)."""

    name = "crag_mm"
    declares = MetricDeclaration(
        gold_needs=("answers",),
        needs=("judge",),
        keys=("accuracy", "exact_match", "missing", "hallucination", "truthfulness"),
        corpus_keys=("truthfulness_score", "multi_turn_score", "ego_truthfulness_score", "ego_multi_turn_score"),
        value_range=(0, 1),
        key_specs={
            # -1 / 2 only where upstream counts an exact match that says "I don't know" as correct and missing
            "hallucination": KeySpec(False, (-1, 1)),
            "truthfulness": KeySpec(True, (-1, 2)),
            "truthfulness_score": KeySpec(True, (-1, 2)),
            "multi_turn_score": KeySpec(True, (-1, 1)),
            "ego_truthfulness_score": KeySpec(True, (-1, 2)),
            "ego_multi_turn_score": KeySpec(True, (-1, 1)),
        },
        counters={
            UNPARSED: "judge replies neither CORRECT nor WRONG, scored wrong (upstream's evaluation crashes)",
            FAILED: "judge calls that failed all 3 attempts, scored wrong as upstream scores them",
        },
        judge_client=UPSTREAM_CLIENT,
    )
    # LLMJudge's request: model, messages, temperature 0 and max_tokens 1,024 (as max_tokens, whatever the model);
    # nothing else (no top_p, no n)
    judge_sampling: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {"temperature": 0.0, "max_tokens": 1024, "max_tokens_as": "max_tokens", "left_to_server": ("top_p", "n")}
    )
    judge_waits: ClassVar[tuple[float, ...]] = (1.0, 2.0)  # LLMJudge: time.sleep(2**attempt) after a failed attempt
    corrected: ClassVar[bool] = False

    def config(self) -> JsonObject:
        return {
            "name": self.name,
            "judge_sampling": {k: list(v) if isinstance(v, tuple) else v for k, v in self.judge_sampling.items()},
            "judge_attempts": JUDGE_ATTEMPTS,
            "judge_client": {k: v for k, v in UPSTREAM_CLIENT.items()},
        }

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        as_read = bool(prediction.extras.get(EVALUATE_MODE))  # evaluate mode's input file: judged as it is
        response = prediction.answer if as_read else judged_text(prediction, tokenizer_dir(ctx))
        truth = str(example.gold["answers"][0])
        exact, missing = exact_match(response, truth), says_idk(response)
        if self.corrected and exact:
            missing = False
        correct = float(exact)
        if not exact and not missing:
            correct = await self.judged(ctx, example.question, truth, response)
        return {
            "accuracy": correct,
            "exact_match": float(exact),
            "missing": float(missing),
            "hallucination": 1.0 - correct - float(missing),
            "truthfulness": 2 * correct + float(missing) - 1,
        }

    async def judged(self, ctx: Any, query: str, truth: str, response: str) -> float:
        """The share of the judges that read the answer correct; a call that fails every attempt reads wrong
        (counted), an unparsed reply too (counted)."""
        messages = judge_messages(query, truth, response)
        replies = await asyncio.gather(*(self.attempts(judge, messages) for judge in ctx.judges_for(self)))
        read = read_corrected if self.corrected else read_upstream
        verdicts = []
        for reply in replies:
            if reply is None:
                ctx.count(FAILED)
                verdicts.append(False)
                continue
            verdict = read(reply)
            if verdict is None:
                ctx.count(UNPARSED)
            verdicts.append(verdict is True)
        return sum(verdicts) / len(verdicts)

    async def attempts(self, judge: ChatJudge, messages: list[dict[str, str]]) -> str | None:
        """LLMJudge.attempt_api_call: the call tried up to 3 times, waiting 1 s then 2 s; its reply, None when every
        attempt failed."""
        for attempt in range(JUDGE_ATTEMPTS):
            try:
                reply = await judge.chat(messages, step=f"judge:{self.name}", **self.judge_sampling)
                return str(reply.text)
            except EngineError:
                if attempt < JUDGE_ATTEMPTS - 1:
                    await asyncio.sleep(self.judge_waits[attempt])
        return None

    def corpus(self, samples: list[SampleRecord], seed: int) -> dict[str, float | None]:
        turns = [turn for s in samples if (turn := _turn(s)) is not None]
        ego = [turn for turn in turns if turn.ego]
        return {
            "truthfulness_score": self.truthfulness(turns),
            "multi_turn_score": multi_turn_score(turns),
            "ego_truthfulness_score": self.truthfulness(ego),
            "ego_multi_turn_score": multi_turn_score(ego),
        }

    def truthfulness(self, turns: Sequence[ScoredTurn]) -> float | None:
        """calculate_scores' truthfulness_score: 0.0 for one turn (`if total > 1 else 0.0`); corrected, the turns
        after a conversation's end count as missing and one turn is scored as any other."""
        if not turns:
            return None
        if self.corrected:
            turns = [turn for conversation in conversations(turns) for turn in ended(conversation)]
        elif len(turns) == 1:
            return 0.0
        return sum(2 * turn.correct + turn.missing for turn in turns) / len(turns) - 1


class CragMMCorrectedEval(CragMMEval):
    """CRAG-MM's evaluation with upstream's mistakes corrected (the module docstring)."""

    name = "crag_mm_corrected"
    corrected = True


class ScoredTurn:
    """What the run-level figures read of one scored turn."""

    __slots__ = ("correct", "ego", "missing", "session", "turn")

    def __init__(self, session: str, turn: int, ego: bool, correct: float, missing: float) -> None:
        self.session, self.turn, self.ego, self.correct, self.missing = session, turn, ego, correct, missing

    def stopped(self) -> ScoredTurn:
        """The turn after its conversation ended: missing."""
        return ScoredTurn(self.session, self.turn, self.ego, 0.0, 1.0)


def _turn(sample: SampleRecord) -> ScoredTurn | None:
    correct, missing = sample.scores.get("accuracy"), sample.scores.get("missing")
    if correct is None or missing is None:
        return None
    meta = sample.meta
    session = str(meta.get("session_id", sample.id))
    return ScoredTurn(session, int(meta.get("turn", 0)), meta.get("image_source") == "ego", correct, missing)


def conversations(turns: Sequence[ScoredTurn]) -> list[list[ScoredTurn]]:
    """Turns grouped by conversation (sorted by id, as pandas' groupby), each in turn order."""
    grouped: dict[str, list[ScoredTurn]] = {}
    for turn in turns:
        grouped.setdefault(turn.session, []).append(turn)
    return [sorted(grouped[session], key=lambda t: t.turn) for session in sorted(grouped)]


def ended(conversation: list[ScoredTurn]) -> list[ScoredTurn]:
    """The two-wrong rule: after the first two consecutive turns that are not correct, the rest are missing."""
    for i in range(1, len(conversation)):
        if conversation[i - 1].correct < 0.5 and conversation[i].correct < 0.5:
            return conversation[: i + 1] + [turn.stopped() for turn in conversation[i + 1 :]]
    return conversation


def multi_turn_score(turns: Sequence[ScoredTurn]) -> float | None:
    """mean_multi_turn_conversation_score: per conversation (the two-wrong rule applied), the mean accuracy less
    the mean hallucination (a turn neither correct nor missing); then the mean over conversations."""
    scores = []
    for conversation in conversations(turns):
        kept = ended(conversation)
        hallucinated = sum(max(0.0, 1.0 - t.correct - t.missing) for t in kept)
        scores.append((sum(t.correct for t in kept) - hallucinated) / len(kept))
    return sum(scores) / len(scores) if scores else None
