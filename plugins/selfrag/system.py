"""Self-RAG (Asai et al., 2024) inference: reflection-token scoring of one generation per passage
(short form, run_short_form.py `call_model_rerank_w_scores_batch`) and segment beam search (long
form, run_long_form_static.py `call_model_beam_batch` / `run_step_generation_batch`), on the
engine's named-token log-probabilities (`Sampling.logprob_tokens`).

Options keep upstream's flag names. Defaults reproduce the paper's protocol as the shipped scripts
and README commands run it, quirks included; each quirk that moves numbers has its own switch
(docs/systems.md, "Self-RAG"):
  retrieval_ratio="logprob"       short-form adaptive decision divides raw log-probs (upstream);
                                  "prob" normalises probabilities as the paper and the long form do
  w_use=None                      1.0 in short form (the CLI default), 0.5 in long form (hard-coded)
  skip_special_tokens=True        vLLM's default in the eval scripts: generated text holds no
                                  reflection tokens, so long-form segmentation never continues
  long_form_utility_bug=True      the long-form utility loop reads the grounding tokens -> 0
  long_form_seqscore=False        use_seqscore never reaches the long-form step scorer
  chain_sibling_segments=True     a long-form child's prompt continues its previous sibling's segment
  citation_numbering="path"       ASQA citations number path positions, past skipped duplicates
  logprob_window="upstream"       a reflection token counts only inside the top-k dict upstream asked
                                  vLLM for (5,000 / 32,016 / 32,000), else -100; "exact" reads every one
Where upstream crashes, this runs and says so in the docstring of the place: adaptive mode without
a threshold is a configuration error before the run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from statistics import mean
from typing import TYPE_CHECKING, Annotated, Any

from annotated_types import Ge

from ragbench.api import (
    ConfigError,
    Context,
    Document,
    Example,
    OutputFormat,
    Prediction,
    RecordedExtras,
    SampleRecord,
    System,
    SystemDeclaration,
    Task,
)
from ragbench.api.data import JsonObject
from ragbench.api.engines import Engine, EngineNeeds, SamplingArgs
from ragbench.api.protocols import closed_answer
from ragbench.api.trace import outline

from .longform import long_form
from .outline import long_form as long_form_outline
from .outline import short_form as short_form_outline
from .prompts import (
    GROUNDING_TOKENS,
    NO_RETRIEVAL,
    PROMPT,
    RELEVANCE_TOKENS,
    RETRIEVAL_TOKENS,
    UTILITY_TOKENS,
    clean_short_answer,
    evidence_prompt,
)
from .scoring import LONG_FORM_WINDOW, SHORT_DECISION_WINDOW, SHORT_PASSAGE_WINDOW, critique, logprob, token_positions
from .shapes import SelfRagTrace, Settings

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing's from Python 3.11

MODES = ("adaptive_retrieval", "always_retrieve", "no_retrieval")


def starts_with_relevance_token(response: Any) -> bool:
    """Whether the generation's first token is [Relevant] or [Irrelevant] (the chosen token, which the
    engine reports whether or not special tokens are kept in the text)."""
    return bool(response.logprobs) and response.logprobs[0].token in RELEVANCE_TOKENS


SCORED_TOKENS = RELEVANCE_TOKENS + GROUNDING_TOKENS + UTILITY_TOKENS
REFLECTION_NAMES = ("[Retrieval]", "[No Retrieval]") + SCORED_TOKENS  # the entries whose log-probs are read
SELF_RAG_MODELS = "a Self-RAG checkpoint such as selfrag/selfrag_llama2_7b"


def _choice(name: str, value: Any, allowed: tuple[Any, ...]) -> Any:
    if value not in allowed:
        raise ConfigError(
            f"selfrag: {name}={value!r} is not one of {', '.join(map(str, allowed))} (--system-arg {name}=...)"
        )
    return value


def checked_passages(extras: Any) -> list[bool]:
    """Of each passage's generation whose first token was read, whether it was a relevance token."""
    return [p["relevance_token_first"] for p in (extras or {}).get("passages", []) if "relevance_token_first" in p]


def trace_figures(traces: list[Any]) -> JsonObject:
    """The share of examples that retrieved, then the mean retrieval ratio and segments where the examples
    recorded them."""
    stats: JsonObject = {"retrieval_rate": round(mean(1.0 if t["retrieved"] else 0.0 for t in traces), 4)}
    ratios = [t["retrieval_ratio"] for t in traces if "retrieval_ratio" in t]
    if ratios:
        stats["mean_retrieval_ratio"] = round(mean(ratios), 4)
    depths = [t["depth"] for t in traces if "depth" in t]
    if depths:
        stats["mean_segments"] = round(mean(depths), 2)
    return stats


class SelfRag(System):
    name = "selfrag"
    declares = SystemDeclaration(
        budget_options={"passages": "ndocs"},
        prompt_style="selfrag",
        # a Self-RAG model opens each passage's generation with [Relevant] or [Irrelevant]; a model without
        # trained reflection tokens does not, and its critique scores then read tokens it never generates
        # (relevance from position 0, support and utility left at 0)
        recorded=RecordedExtras(
            "selfrag",
            figures=trace_figures,
            output_format=OutputFormat(
                "passage generations opening with a relevance token ([Relevant]/[Irrelevant])",
                lambda extras: sum(checked_passages(extras)),
                "use a Self-RAG checkpoint (e.g. selfrag/selfrag_llama2_7b) whose vocabulary and training "
                "carry the reflection tokens",
                of=lambda extras: len(checked_passages(extras)),
            ),
        ),
    )

    def __init__(
        self,
        mode: str | None = None,
        threshold: float | None = 0.2,
        ndocs: Annotated[int, Ge(1)] | None = None,
        max_new_tokens: Annotated[int, Ge(1)] | None = None,
        max_tokens: Annotated[int, Ge(1)] | None = None,
        form: str = "auto",
        w_rel: float = 1.0,
        w_sup: float = 1.0,
        w_use: float | None = None,
        use_seqscore: bool = True,
        use_groundness: bool = True,
        use_utility: bool = True,
        beam_width: Annotated[int, Ge(1)] = 2,
        max_depth: Annotated[int, Ge(2)] = 7,
        ignore_cont: bool = False,
        closed: bool | None = None,
        retrieval_ratio: str = "logprob",
        skip_special_tokens: bool = True,
        long_form_utility_bug: bool = True,
        long_form_seqscore: bool = False,
        chain_sibling_segments: bool = True,
        citation_numbering: str = "path",
        logprob_window: str = "upstream",
    ) -> None:
        self.mode = mode if mode is None else _choice("mode", mode, MODES)
        self.threshold = None if threshold is None else float(threshold)
        if self.mode == "adaptive_retrieval" and self.threshold is None:
            raise ConfigError(
                "selfrag: mode=adaptive_retrieval needs a threshold (upstream crashes without one); "
                "pass --system-arg threshold=0.2 or use mode=always_retrieve"
            )
        self.form = _choice("form", form, ("auto", "short", "long"))
        self.ndocs = ndocs
        # upstream's --max_new_tokens; `max_tokens` is what the task defaults in registry.yaml give
        self.max_new_tokens = int(max_new_tokens if max_new_tokens is not None else (max_tokens or 15))
        self.w_rel, self.w_sup, self.w_use = float(w_rel), float(w_sup), w_use
        self.use_seqscore, self.use_groundness, self.use_utility = (
            bool(use_seqscore),
            bool(use_groundness),
            bool(use_utility),
        )
        self.beam_width, self.max_depth, self.ignore_cont = int(beam_width), int(max_depth), bool(ignore_cont)
        if self.max_depth < 2 or self.beam_width < 1:  # upstream: KeyError after a search of depth 0
            raise ConfigError("selfrag: max_depth must be >= 2 and beam_width >= 1 (README: max_depth=7, beam_width=2)")
        self.closed = closed
        self.retrieval_ratio = _choice("retrieval_ratio", retrieval_ratio, ("logprob", "prob"))
        self.skip_special_tokens = bool(skip_special_tokens)
        self.long_form_utility_bug = bool(long_form_utility_bug)
        self.long_form_seqscore = bool(long_form_seqscore)
        self.chain_sibling_segments = bool(chain_sibling_segments)
        self.citation_numbering = _choice("citation_numbering", citation_numbering, ("path", "kept"))
        self.logprob_window = _choice("logprob_window", logprob_window, ("upstream", "exact"))
        self.declares = dataclasses.replace(self.declares, retrieves=self.mode != "no_retrieval")

    # -- resolved per task ------------------------------------------------------------------

    def is_long(self, task: Task) -> bool:
        return self.form == "long" or (self.form == "auto" and task.prompting.answer_format == "long")

    def settings(self, task: Task) -> Settings:
        """The options as they run on `task` (per-form upstream defaults filled in)."""
        long = self.is_long(task)
        return {
            "form": "long" if long else "short",
            "mode": self.mode or ("always_retrieve" if long else "adaptive_retrieval"),
            "ndocs": self.ndocs or (5 if long else 10),
            "w_use": self.w_use if self.w_use is not None else (0.5 if long else 1.0),
            "closed": closed_answer(task) if self.closed is None else bool(self.closed),
        }

    def check(self, task: Task) -> None:
        self._resolved = run = self.settings(task)  # recorded by config(): the options as they ran
        if run["mode"] == "adaptive_retrieval" and self.threshold is None:
            raise ConfigError(
                f"selfrag on {task.name}: adaptive retrieval needs a threshold "
                "(--system-arg threshold=0.2, or mode=always_retrieve)"
            )

    def engine_needs(self, task: Task) -> EngineNeeds:
        """The reflection tokens' log-probs, under logprob_window=upstream within upstream's top-k windows
        (5,000 / 32,016 short form, 32,000 long form): what vLLM must be started for (max_logprobs) and
        what an OpenAI-compatible server (top 20) cannot give, known before any engine starts."""
        window = None
        if self.logprob_window == "upstream":
            window = LONG_FORM_WINDOW if self.is_long(task) else max(SHORT_DECISION_WINDOW, SHORT_PASSAGE_WINDOW)
        return EngineNeeds(
            f"selfrag on {task.name}",
            REFLECTION_NAMES,
            window,
            "pass --system-arg logprob_window=exact" if window else "",
            SELF_RAG_MODELS,
        )

    def check_model(self, engine: Engine) -> None:
        """Refuse a model without the reflection tokens before the run (engines that can tell once loaded;
        the pre-flight has asked those that can tell from the tokenizer alone)."""
        missing = engine.missing_tokens(REFLECTION_NAMES)
        if missing:
            raise ConfigError(
                f"selfrag: model {engine.model} lacks Self-RAG's reflection tokens {missing} "
                f"(single vocabulary entries); use {SELF_RAG_MODELS}"
            )

    def config(self) -> JsonObject:
        """The options; `resolved` fills the per-form defaults (mode, ndocs, w_use, closed) for the task."""
        resolved = getattr(self, "_resolved", None)
        return {**super().config(), **({"resolved": resolved} if resolved else {})}

    def sampling(self, window: int | None = None, **extra: Unpack[SamplingArgs]) -> SamplingArgs:
        """Greedy sampling as upstream; `window` is the top-k upstream asked for at this call,
        applied to the named tokens under logprob_window=upstream."""
        if window is not None and self.logprob_window == "upstream":
            extra["logprob_window"] = window
        return {
            "max_tokens": self.max_new_tokens,
            "temperature": 0.0,
            "top_p": 1.0,
            "skip_special_tokens": self.skip_special_tokens,
            **extra,
        }

    async def documents(self, example: Example, ctx: Context, ndocs: int) -> list[Document]:
        docs = await ctx.retriever.search(example.question, ndocs) if ctx.retriever else example.docs
        return list(await ctx.task.prompting.passages(list(docs)))[:ndocs]

    # -- the run -----------------------------------------------------------------------------

    async def run(self, example: Example, ctx: Context) -> Prediction:
        run = self.settings(ctx.task)
        prompting = ctx.task.prompting
        prompt = PROMPT.format(instruction=prompting.query_text(example))
        docs = await self.documents(example, ctx, run["ndocs"]) if run["mode"] != "no_retrieval" else []
        if run["form"] == "long":
            output, shown, trace = await long_form(self, ctx, prompt, docs, run)
            answer = prompting.postprocess(output)  # e.g. ASQA: ALCE eval.py keeps the first line
            return Prediction(
                example_id=example.id,
                answer=answer,
                raw_output=output,
                docs=shown,
                citations=prompting.citations(answer) if prompting.cites else [],
                extras={"selfrag": trace},
            )
        answer, raw, shown, trace = await self.short_form(ctx, prompt, docs, run)
        return Prediction(example_id=example.id, answer=answer, raw_output=raw, docs=shown, extras={"selfrag": trace})

    async def decide_retrieval(self, ctx: Context, prompt: str, trace: SelfRagTrace) -> bool:
        """Adaptive decision of run_short_form.py: the two retrieval tokens' values at the first
        generated position, ratio > threshold. Upstream divides raw log-probs (retrieval_ratio=
        "logprob"), so a confident [Retrieval] gives a small ratio; a token the engine did not report
        counts as -100 (upstream then raises KeyError)."""
        response = await ctx.llm.generate(
            prompt, step="selfrag:decide", **self.sampling(SHORT_DECISION_WINDOW, logprob_tokens=RETRIEVAL_TOKENS)
        )
        positions = token_positions(response)
        values = {t: logprob(positions[0], t) if positions else -100.0 for t in ("[Retrieval]", "[No Retrieval]")}
        if self.retrieval_ratio == "prob":
            values = {t: math.exp(v) for t, v in values.items()}
        total = values["[Retrieval]"] + values["[No Retrieval]"]
        ratio = values["[Retrieval]"] / total if total else 0.0
        trace["no_retrieval_output"], trace["retrieval_ratio"] = response.text, ratio
        return ratio > self.threshold  # type: ignore[operator]

    async def short_form(
        self, ctx: Context, prompt: str, docs: list[Document], run: Settings
    ) -> tuple[str, str, list[Document], SelfRagTrace]:
        """call_model_rerank_w_scores_batch. (Upstream crashes with always_retrieve and a single passage;
        here one passage is simply the best one. With no passages there is nothing to retrieve. Upstream's
        no_retrieval mode also generates once from the bare prompt and discards it: that call is skipped.)"""
        trace: SelfRagTrace = {"form": "short", "mode": run["mode"], "ndocs": len(docs)}
        if run["mode"] == "always_retrieve":
            retrieve = True
        elif run["mode"] == "no_retrieval":
            retrieve = False
        else:
            retrieve = await self.decide_retrieval(ctx, prompt, trace)
        trace["retrieved"] = retrieve = bool(retrieve and docs)
        if not retrieve:
            response = await ctx.llm.generate(prompt + NO_RETRIEVAL, step="selfrag:no_retrieval", **self.sampling())
            return clean_short_answer(response.text), response.text, [], trace

        responses = await asyncio.gather(
            *[
                ctx.llm.generate(
                    evidence_prompt(prompt, d.title, d.text),
                    step="selfrag:passage",
                    **self.sampling(SHORT_PASSAGE_WINDOW, logprob_tokens=SCORED_TOKENS),
                )
                for d in docs
            ]
        )
        scores = [
            critique(
                r,
                w_rel=self.w_rel,
                w_sup=self.w_sup,
                w_use=run["w_use"],
                use_groundness=self.use_groundness,
                use_utility=self.use_utility,
                use_seqscore=self.use_seqscore,
            )
            for r in responses
        ]
        trace["passages"] = [
            {
                "doc_id": d.id,
                "title": d.title,
                "pred": r.text,
                **s.to_dict(),
                "relevance_token_first": starts_with_relevance_token(r),
            }
            for d, r, s in zip(docs, responses, scores)
        ]
        if run["closed"]:  # vote: sum the scores of identical cleaned answers
            votes: dict[str, float] = {}
            for response, score in zip(responses, scores):
                answer = clean_short_answer(response.text)
                votes[answer] = votes.get(answer, 0.0) + score.final
            best = max(votes, key=votes.__getitem__)  # the first of equal sums, as upstream's stable sort
            trace["votes"] = votes
            return best, best, docs, trace
        best_index = max(range(len(docs)), key=lambda i: scores[i].final)
        trace["best_passage"] = best_index
        raw = responses[best_index].text  # open tasks: the raw text, not cleaned (upstream)
        return raw, raw, [docs[best_index]], trace

    @classmethod
    def trace_outline(cls, record: SampleRecord) -> list[JsonObject]:
        """The viewer's timeline: the retrieval decision, then each passage's (short form) or beam-search
        node's (long form) call with its critique scores, the chosen ones marked (selfrag_outline)."""
        extras = record.extras.get("selfrag") or {}
        form = {"short": short_form_outline, "long": long_form_outline}.get(extras.get("form", ""))
        return form(record.trace, extras) if form else outline(record.trace)
