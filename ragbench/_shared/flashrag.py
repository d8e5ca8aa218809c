"""FlashRAG's prompt and generator conventions, which its methods and its QA prompt style share.

FlashRAG (RUC-NLPIR/FlashRAG, flashrag/prompt/base_prompt.py `PromptTemplate`, flashrag/generator/
generator.py) decides per model: a chat model gets `[system, user]` messages (an empty part left out,
the documents in the system message), a plain model one string, the non-empty parts joined by "\\n\\n".
Its vLLM generator, the default of its `run_exp.py`, adds "<|eot_id|>" to every stop list and, when the
caller gave stop strings, keeps the stop string that fired at the end of the output; its HF generator
cuts the output before the stop string and strips it. A method here sends what FlashRAG's generator
would send whatever engine runs underneath: `flashrag_sampling` maps FlashRAG's generation parameters
onto `Sampling`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .._system import SystemDeclaration
from .._types import Document, Example, Prediction
from .._values.json_values import JsonObject
from .._values.sampling import SamplingArgs
from .refined_text import is_refined_text

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing's from Python 3.11

    from .._context import Context
    from .._llm import LLM
    from .._values.llm_responses import Response

EOT = "<|eot_id|>"  # FlashRAG's vLLM generator appends it to every stop list (generator.py)
REFERENCE = "Doc {idx}(Title: {title}) {text}\n"  # PromptTemplate.format_reference's default
# base_prompt.py's base system prompt (its missing space after "document." kept) and user prompt, and
# pipeline.py's zero-shot system prompt: the templates of its QA prompt and of the methods that use the default
WITH_DOCUMENTS = (
    "Answer the question based on the given document.Only give me the answer and do not output any "
    "other words.\nThe following are given documents.\n\n{reference}"
)
WITHOUT_DOCUMENTS = (
    "Answer the question based on your own knowledge. Only give me the answer and do not output any other words."
)
QUESTION = "Question: {question}"


def title_and_text(doc: Document) -> tuple[str, str]:
    """A passage as FlashRAG splits its `contents`: the title its first line, the text the rest. A passage of
    a FlashRAG corpus shows that line as written (`metadata["title_line"]` where it is not the title: quoted,
    or empty), and one whose title is still in its text (an index built before ragbench split FlashRAG's
    `contents`) the text's first line."""
    title, text = doc.metadata.get("title_line", doc.title), doc.text
    if not title and "title_line" not in doc.metadata:
        title, _, text = text.partition("\n")
    return title, text


def flashrag_reference(docs: list[Document], template: str = REFERENCE) -> str:
    """The documents as PromptTemplate.format_reference writes them: `template` per document, with
    `{idx}` (1-based), `{title}`, `{text}` and `{contents}` ("title\\ntext"). A refiner's text made of the
    documents (`--refiner`: one document marked `REFINED_TEXT`) is the reference as it is, as FlashRAG's
    pipelines pass a refiner's output as `formatted_reference`."""
    if is_refined_text(docs):
        return docs[0].text
    parts = []
    for idx, doc in enumerate(docs, 1):
        title, text = title_and_text(doc)
        parts.append(template.format(idx=idx, title=title, text=text, contents=f"{title}\n{text}"))
    return "".join(parts)


@dataclass(frozen=True)
class FlashRagTemplate:
    """A `PromptTemplate`: a system and a user prompt with `{reference}`, `{question}` and other fields."""

    system: str
    user: str
    reference_template: str = REFERENCE
    enable_chat: bool = True  # False: a plain string even for a chat model (IRCoT's template)

    def render(
        self, chat_model: bool, docs: list[Document] | None = None, previous_gen: str = "", **fields: Any
    ) -> str | list[dict[str, str]]:
        """`get_string`: the messages a chat model gets (when `enable_chat`), else the string; `previous_gen`
        (what the model wrote so far) follows the string with no separator, or, for a chat model, is a
        final assistant message (FlashRAG's API form), which the `hf` and `vllm` engines continue: the
        prompt of FlashRAG's local chat form, which appends it to the rendered template. As there, "" and " "
        are not appended (IRCoT's two empty thoughts join to " ")."""
        if "reference" not in fields:
            fields["reference"] = flashrag_reference(docs or [], self.reference_template)
        system, user = self.system.format(**fields), self.user.format(**fields)
        previous_gen = "" if previous_gen in ("", " ") else previous_gen
        if chat_model and self.enable_chat:
            messages = [{"role": role, "content": text} for role, text in (("system", system), ("user", user)) if text]
            return messages + ([{"role": "assistant", "content": previous_gen}] if previous_gen else [])
        return "\n\n".join(part for part in (system, user) if part) + previous_gen


FLASHRAG_RAG_TEMPLATE = FlashRagTemplate(system=WITH_DOCUMENTS, user=QUESTION)
FLASHRAG_ZERO_SHOT_TEMPLATE = FlashRagTemplate(system=WITHOUT_DOCUMENTS, user=QUESTION)


def flashrag_retrieving(**fields: Any) -> SystemDeclaration:
    """The declaration of a FlashRAG method that searches with the question (REPLUG, SuRe, SKR, Adaptive-RAG): it
    retrieves, shows `topk` passages (its my_config.yaml `retrieval_topk`), and a task reads it in FlashRAG's
    prompt style; `fields`, the method's other declared facts."""
    return SystemDeclaration(retrieves=True, budget_options={"passages": "topk"}, prompt_style="flashrag", **fields)


def flashrag_searching(searches: str, **fields: Any) -> SystemDeclaration:
    """The declaration of a FlashRAG method that writes its own searches (IRCoT, FLARE, CoRAG ...): as
    `flashrag_retrieving`'s, and its option `searches` bounds its searches; `fields`, its other declared facts."""
    return SystemDeclaration(
        retrieves=True,
        budget_options={"passages": "topk", "searches": searches},
        searches_own_queries=True,
        prompt_style="flashrag",
        **fields,
    )


def flashrag_sampling(framework: Literal["vllm", "hf"] = "vllm", **sampling: Unpack[SamplingArgs]) -> SamplingArgs:
    """FlashRAG's generation parameters as `ctx.llm.generate` keywords: greedy (`do_sample: False` in its
    config), `max_tokens` (32 where not given); with "vllm" the stop list gains "<|eot_id|>" and a given stop string
    stays at the end of the output; with "hf" the output is cut before the stop string (the caller strips it, as
    FlashRAG's HF generator does)."""
    stop = sampling.pop("stop", None)
    stops = [stop] if isinstance(stop, str) else list(stop or ())
    out: SamplingArgs = {"max_tokens": 32, "temperature": 0.0, **sampling}
    if framework == "vllm":
        out["stop"] = [*stops, EOT]
        out["keep_stop"] = bool(stops)
    elif stops:
        out["stop"] = stops
    return out


async def flashrag_generate(
    llm: LLM,
    prompt: str | list[dict[str, str]],
    framework: Literal["vllm", "hf"] = "vllm",
    *,
    step: str = "generate",
    max_tokens: int = 32,
    stop: list[str] | None = None,
    **sampling: Any,
) -> Response:
    """A rendered `FlashRagTemplate` (a string, or a chat model's messages) sent as FlashRAG's generator sends
    it (`flashrag_sampling`)."""
    params = flashrag_sampling(framework, max_tokens=max_tokens, stop=stop, **sampling)
    if isinstance(prompt, list):
        return await llm.chat(prompt, step=step, **params)
    return await llm.generate(prompt, step=step, **params)


async def flashrag_naive_or_zero_shot(
    ctx: Context,
    example: Example,
    retrieve: bool,
    topk: int,
    max_tokens: int,
    zero_shot: FlashRagTemplate = FLASHRAG_ZERO_SHOT_TEMPLATE,
    *,
    extras: JsonObject,
) -> Prediction:
    """The two branches of FlashRAG's conditional methods (SKR, Adaptive-RAG's A and B): its naive pipeline
    (`topk` passages searched for the question, its base prompt) or its zero-shot one; their answer as the
    prediction, its raw output the answer and its `extras` the method's own record of the choice."""
    question = example.question
    docs = await ctx.required_retriever().search(question, topk) if retrieve else []
    template = FLASHRAG_RAG_TEMPLATE if retrieve else zero_shot
    response = await flashrag_generate(
        ctx.llm, template.render(ctx.llm.chat_model, docs, question=question), max_tokens=max_tokens
    )
    answer = response.text
    return Prediction(example_id=example.id, answer=answer, raw_output=answer, docs=docs, extras=extras)
