"""SMART (Yue et al., AAAI 2025): four agents in one trajectory - Intent Reconstructor, Knowledge
Retriever, Fact Locator, Response Generator - as the paper's Algorithm 1 runs them.

SMART released training code and data but no inference code and no checkpoint (spec D.1); this is
the pipeline of Algorithm 1 over the trajectory format of its data (smart_prompts):

  1. x = "<|Instruction|>:\\n{instruction}[\\n\\n<|Input|>:\\n{input}]</eoi>\\n\\n", the instruction
     being SMART's TASK_INST for the task (PubHealth, ARC, ASQA) or the question itself;
  2. the Reconstructor continues "<|Reconstructor|>:\\n" up to "</eor>": Search(q1; q2 ...);
  3. the Retriever takes the top `top_k` (3) passages per intent (the paper; "joined" searches
     the whole intent string once, as the released data-creation retriever did);
  4. the Locator continues "<retrieval>...</retrieval>\\n\\n<|Locator|>:\\n" up to "</eol>";
  5. the Generator continues "<|Generator|>:\\n" up to "</eog>": answer [+ "\\n[Cite]: [i] [j]"];
     when no passage is [Relevant] it answers from x alone (Algorithm 1, line 10;
     no_facts="trajectory" keeps the trajectory instead: the paper does not say).

Modes:
  trajectory  a model fine-tuned on SMART's data (greedy, special tokens kept so the end tokens
              stop generation). One model continues one long trajectory; with --role-model giving
              the agents their own models (the paper's MMAgent-3*7B), each agent gets its short-
              trajectory prompt ("<|retrieval|>", "<|Locator|>\\n" as in that data). `trajectory=
              long|short` forces either layout.
  prompted    any instruct model: reconstructor and locator prompts derived from the ChatGPT prompts
              SMART made its data with (smart_prompts), one locator call per passage; the
              generator uses the task's own answer prompt over the located facts.
Ablations of the paper's Table 3: agents=no_locator | no_reconstructor | generator_only.

The answer is the Generator's text before "[Cite]" (else "[Cite]" matches ARC's gold "C"), then the
task's postprocess; for choice tasks and PubHealth-style true/false label tasks SMART's
postprocess_answers_closed (closed_postprocess=smart, its bugs kept; smart_choices adds its "last listed
letter found" rule for choice tasks; none).
On a task that cites, the answer-level citations are written as "[i][j]" before the final period.
"""

from __future__ import annotations

import asyncio
import dataclasses
from statistics import mean
from typing import Annotated, Any, TypedDict

from annotated_types import Ge

from ragbench.api import (
    ConfigError,
    Context,
    Document,
    Example,
    OutputFormat,
    Prediction,
    Prompt,
    RecordedExtras,
    System,
    SystemDeclaration,
    Task,
)
from ragbench.api.data import JsonObject
from ragbench.api.engines import Response
from ragbench.api.protocols import closed_answer, instruction_key, task_input
from ragbench.api.trace import grouped

from .prompts import (
    END_GENERATOR,
    END_INTENT,
    END_LOCATOR,
    GENERATOR,
    LONG,
    RECONSTRUCTOR,
    SHORT,
    SMART_TASK_INSTRUCTIONS,
    LocatedFact,
    LocatedRecord,
    instruction_block,
    intent_prompt,
    locate_prompt,
    locator_block,
    parse_intent_reply,
    parse_intents,
    parse_locator,
    parse_rating,
    passages_block,
    postprocess_answers_closed,
    split_citations,
)

ROLES = ("reconstructor", "locator", "generator")
OPTIONS = {
    "mode": ("trajectory", "prompted"),
    "agents": ("all", "no_locator", "no_reconstructor", "generator_only"),
    "intent_retrieval": ("per_intent", "joined"),
    "trajectory": ("auto", "long", "short"),
    "no_facts": ("question", "trajectory"),
    "closed_postprocess": ("smart", "smart_choices", "none"),
}


class SmartTrace(TypedDict, total=False):
    """What an example records (extras["smart"]): the mode and agents; the Reconstructor's intents (whether its
    reply was in SMART's format and parsed); the trajectory layout; the Locator's facts (and their block) and
    whether none was relevant; the passages the answer cites."""

    mode: str
    agents: str
    intents: list[str]
    intents_in_format: bool
    intents_parsed: bool
    trajectory: str
    located: list[LocatedRecord]
    locator_block: str
    no_facts: bool
    cited: list[int]


def trace_figures(traces: list[Any]) -> JsonObject:
    """Beyond the examples and their mean intents: the unparsed intents and the located facts where the
    examples recorded them, and the share of examples that cited."""
    stats: JsonObject = {}
    parsed = [t["intents_parsed"] for t in traces if "intents_parsed" in t]
    if parsed:
        stats["unparsed_intents"] = sum(1 for p in parsed if not p)
    located = [t["located"] for t in traces if "located" in t]
    if located:
        stats["mean_relevant_passages"] = round(mean(sum(f["relevant"] for f in facts) for facts in located), 3)
        stats["no_facts_rate"] = round(mean(1.0 if t.get("no_facts") else 0.0 for t in traces if "located" in t), 4)
    stats["cited_rate"] = round(mean(1.0 if t.get("cited") else 0.0 for t in traces), 4)
    return stats


class Smart(System):
    name = "smart"
    declares = SystemDeclaration(
        budget_options={"passages": "top_k"},
        searches_own_queries=True,
        prompt_style="smart",
        roles=ROLES,
        # trajectory mode reads the Reconstructor's intents from `Search(...)`; a model not trained on SMART's
        # format writes something else, which upstream's parser takes whole as the intents
        recorded=RecordedExtras(
            "smart",
            means={"mean_intents": lambda trace: len(trace.get("intents", []))},
            figures=trace_figures,
            output_format=OutputFormat(
                "Reconstructor intents as Search(intent; ...)",
                lambda trace: trace.get("intents_in_format", False),
                "use a SMART-trained model (--model, or --role-model "
                "reconstructor=ENGINE:MODEL), or --system-arg mode=prompted for an instruction-tuned model",
                of=lambda trace: "intents_in_format" in trace,
            ),
        ),
    )

    def __init__(
        self,
        mode: str = "trajectory",
        agents: str = "all",
        top_k: Annotated[int, Ge(1)] = 3,
        intent_retrieval: str = "per_intent",
        trajectory: str = "auto",
        no_facts: str = "question",
        max_tokens: Annotated[int, Ge(1)] = 100,
        reconstructor_max_tokens: Annotated[int, Ge(1)] = 64,
        locator_max_tokens: Annotated[int, Ge(1)] | None = None,
        chat: bool = True,
        closed_postprocess: str = "smart",
    ) -> None:
        values = {
            "mode": mode,
            "agents": agents,
            "intent_retrieval": intent_retrieval,
            "trajectory": trajectory,
            "no_facts": no_facts,
            "closed_postprocess": closed_postprocess,
        }
        for option, value in values.items():
            if value not in OPTIONS[option]:
                raise ConfigError(
                    f"system smart: {option}={value!r} is not one of {', '.join(OPTIONS[option])} "
                    f"(--system-arg {option}=...)"
                )
        if int(top_k) < 1:
            raise ConfigError("system smart: top_k must be >= 1 (passages per intent; the paper uses 3)")
        self.mode, self.agents, self.intent_retrieval = mode, agents, intent_retrieval
        self.trajectory, self.no_facts, self.closed_postprocess = trajectory, no_facts, closed_postprocess
        self.top_k, self.max_tokens = int(top_k), int(max_tokens)
        self.reconstructor_max_tokens = int(reconstructor_max_tokens)
        # the trajectory Locator writes one block for all k*m passages; a prompted one answers per passage
        self.locator_max_tokens = int(locator_max_tokens or (512 if mode == "trajectory" else 200))
        self.chat = bool(chat)  # prompted mode only: a trajectory model reads its own format, never a chat template
        self.declares = dataclasses.replace(self.declares, retrieves=agents != "generator_only")

    @property
    def reconstructs(self) -> bool:
        return self.agents in ("all", "no_locator")

    @property
    def locates(self) -> bool:
        return self.agents in ("all", "no_reconstructor")

    def sampling(self, max_tokens: int, stop: str | None = None) -> dict[str, Any]:
        """Greedy (the paper). Trajectory calls keep special tokens: SMART's end tokens are special
        tokens of its tokenizer, and a stop string must see them."""
        if self.mode == "prompted":
            return {"max_tokens": max_tokens, "temperature": 0.0, "top_p": 1.0, **({"stop": [stop]} if stop else {})}
        return {
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "top_p": 1.0,
            "stop": [stop],
            "skip_special_tokens": False,
        }

    def user_prompt(self, task: Task, example: Example) -> str:
        instruction = SMART_TASK_INSTRUCTIONS.get(instruction_key(task) or "")
        if instruction is None:
            return instruction_block(task_input(task, example), None)
        return instruction_block(instruction, task_input(task, example))

    # -- the Knowledge Retriever ----------------------------------------------------------------

    @grouped("Knowledge Retriever")  # the viewer's timeline: agent by agent
    async def retrieve(self, example: Example, ctx: Context, intents: list[str]) -> list[Document]:
        """Top `top_k` per intent, in intent order, repeats dropped. The example's own passages
        (`ctx.retriever.fixed_documents`, e.g. retriever `provided`) are ranked for the question and
        cannot be searched by intent: the first top_k x (number of intents) of them are taken."""
        count = self.top_k * len(intents)
        if ctx.retriever is None:
            return list(await ctx.task.prompting.passages(list(example.docs)))[:count]
        if ctx.retriever.fixed_documents:
            return list(await ctx.task.prompting.passages(await ctx.retriever.search(example.question, count)))[:count]
        if self.intent_retrieval == "joined":
            found = [await ctx.retriever.search("; ".join(intents), self.top_k)]
        else:
            found = await asyncio.gather(*[ctx.retriever.search(intent, self.top_k) for intent in intents])
        docs, seen = [], set()
        for batch in found:
            for doc in (await ctx.task.prompting.passages(list(batch)))[: self.top_k]:
                key = doc.id if doc.id is not None else (doc.title, doc.text)
                if key not in seen:
                    seen.add(key)
                    docs.append(doc)
        return docs

    # -- the run ------------------------------------------------------------------------------

    async def run(self, example: Example, ctx: Context) -> Prediction:
        trace: SmartTrace = {"mode": self.mode, "agents": self.agents}
        if self.mode == "trajectory":
            text, docs, cited = await self.run_trajectory(example, ctx, trace)
        else:
            text, docs, cited = await self.run_prompted(example, ctx, trace)
        answer = self.final_answer(ctx.task, text, cited)
        trace["cited"] = cited
        prompting = ctx.task.prompting
        return Prediction(
            example_id=example.id,
            answer=answer,
            raw_output=text,
            docs=docs,
            citations=prompting.citations(answer) if prompting.cites else ([cited] if cited else []),
            extras={"smart": trace},
        )

    @grouped("Intent Reconstructor")  # the viewer's timeline: agent by agent
    async def intents(self, example: Example, ctx: Context, trace: SmartTrace, prompt: str) -> tuple[list[str], str]:
        """The Reconstructor's intents and its raw output ("" when it is ablated: the question is the query)."""
        if not self.reconstructs:
            trace["intents"] = [example.question]
            return [example.question], ""
        llm = ctx.model("reconstructor")
        if self.mode == "trajectory":
            response = await llm.generate(
                prompt, step="smart:reconstructor", **self.sampling(self.reconstructor_max_tokens, END_INTENT)
            )
            intents = parse_intents(response.text)
            trace["intents_in_format"] = "Search(" in response.text  # else the whole reply is taken (upstream)
        else:
            request = intent_prompt(task_input(ctx.task, example), ctx.task.prompting.answer_format)
            response = await self.ask(llm, request, "smart:reconstructor", self.sampling(self.reconstructor_max_tokens))
            intents = parse_intent_reply(response.text)
        trace["intents_parsed"] = bool(intents)
        trace["intents"] = intents = intents or [example.question]  # an unparsable reply: search the question
        return intents, response.text

    async def run_trajectory(
        self, example: Example, ctx: Context, trace: SmartTrace
    ) -> tuple[str, list[Document], list[int]]:
        x = self.user_prompt(ctx.task, example)
        long = self.trajectory == "long" or (self.trajectory == "auto" and not ctx.models)
        spelling = LONG if long else SHORT
        trace["trajectory"] = "long" if long else "short"
        history = x  # the long trajectory so far
        docs: list[Document] = []
        if self.agents == "generator_only":
            generator_prompt = x + GENERATOR
        else:
            intents, written = await self.intents(example, ctx, trace, x + RECONSTRUCTOR)
            if written:
                history = x + RECONSTRUCTOR + written + END_INTENT + "\n\n"
            docs = await self.retrieve(example, ctx, intents)
            retrieval = passages_block([(d.title, d.text) for d in docs], spelling)
            reading = (history if long else x) + retrieval
            if not self.locates:
                generator_prompt = reading + GENERATOR
            elif not docs:  # nothing retrieved: nothing to locate
                trace["no_facts"] = True
                generator_prompt = (x if self.no_facts == "question" else reading) + GENERATOR
            else:
                prompt = reading + spelling["locator"]
                with ctx.group("Fact Locator"):
                    response = await ctx.model("locator").generate(
                        prompt, step="smart:locator", **self.sampling(self.locator_max_tokens, END_LOCATOR)
                    )
                facts = [f for f in parse_locator(response.text) if 1 <= f.number <= len(docs)]
                trace["located"] = [f.to_dict() for f in facts]
                located = (prompt if long else x + spelling["locator"]) + response.text + END_LOCATOR + "\n\n"
                trace["no_facts"] = no_facts = not any(f.relevant for f in facts)
                generator_prompt = (x if no_facts and self.no_facts == "question" else located) + GENERATOR
        with ctx.group("Response Generator"):
            response = await ctx.model("generator").generate(
                generator_prompt, step="smart:generator", **self.sampling(self.max_tokens, END_GENERATOR)
            )
        answer, cited = split_citations(response.text)
        return answer, docs, [n for n in cited if 1 <= n <= len(docs)]

    async def run_prompted(
        self, example: Example, ctx: Context, trace: SmartTrace
    ) -> tuple[str, list[Document], list[int]]:
        shown: list[Document] | None = None
        if self.agents != "generator_only":
            intents, _ = await self.intents(example, ctx, trace, "")
            docs = await self.retrieve(example, ctx, intents)
            shown = docs
            if self.locates and docs:
                facts = await self.locate(example, ctx, docs)
                trace["located"] = [f.to_dict() for f in facts]
                trace["locator_block"] = locator_block(facts)
                shown = [
                    Document(id=d.id, title=d.title, text=f.fact or d.text, score=d.score, metadata=dict(d.metadata))
                    for d, f in zip(docs, facts)
                    if f.relevant
                ]
                trace["no_facts"] = not shown
                if not shown and self.no_facts == "trajectory":
                    shown = docs
        prompt = ctx.task.prompting.answer_prompt(example, shown or None)
        with ctx.group("Response Generator"):
            response = await self.ask(ctx.model("generator"), prompt, "smart:generator", self.sampling(self.max_tokens))
        return response.text, list(shown or []), []

    @grouped("Fact Locator")  # the viewer's timeline: agent by agent
    async def locate(self, example: Example, ctx: Context, docs: list[Document]) -> list[LocatedFact]:
        """One locator call per passage (Table 9's prompt is per passage); all go to the scheduler at once."""
        shown = task_input(ctx.task, example)
        replies = await asyncio.gather(
            *[
                self.ask(
                    ctx.model("locator"),
                    locate_prompt(shown, doc.text, ctx.task.prompting.answer_format),
                    "smart:locator",
                    self.sampling(self.locator_max_tokens, "\n###"),
                )
                for doc in docs
            ]
        )
        facts = []
        for number, (doc, reply) in enumerate(zip(docs, replies), 1):
            relevant, span = parse_rating(reply.text)
            facts.append(LocatedFact(number, relevant, doc.title, span))
        return facts

    async def ask(self, llm: Any, prompt: Prompt, step: str, sampling: dict[str, Any]) -> Response:
        response: Response  # what ctx.llm and ctx.model(role) answer
        if isinstance(prompt, list):
            response = await llm.chat(prompt, step=step, **sampling)
        elif self.chat:
            response = await llm.chat([{"role": "user", "content": prompt}], step=step, **sampling)
        else:
            response = await llm.generate(prompt, step=step, **sampling)
        return response

    def final_answer(self, task: Task, text: str, cited: list[int]) -> str:
        answer = task.prompting.postprocess(text)
        closed = self.closed_rules(task)
        if closed is not None:
            choices = "A B C D" if self.closed_postprocess == "smart_choices" and closed == "arc_c" else None
            answer = postprocess_answers_closed(answer, closed, choices)
        if task.prompting.cites and cited:
            markers = "".join(f"[{n}]" for n in cited)
            answer = f"{answer[:-1]} {markers}." if answer.endswith(".") else f"{answer} {markers}"
        return answer

    def closed_rules(self, task: Task) -> str | None:
        """Which of postprocess_answers_closed's rules apply: "arc_c" on choice tasks, "fever" on label tasks
        that read PubHealth's true/false labels (instruction_key fever). Its fever rules turn "SUPPORTS" into
        "true", so on a label task with other labels (KILT FEVER's SUPPORTS/REFUTES) they would make right
        answers wrong: there the task's postprocess alone gives the answer."""
        if not closed_answer(task) or self.closed_postprocess == "none":
            return None
        if task.prompting.answer_format == "label":
            return "fever" if instruction_key(task) == "fever" else None
        return "arc_c"
