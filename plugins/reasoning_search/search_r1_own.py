"""Search-R1 as its own inference script runs it (PeterGriffinJin/Search-R1 `infer.py` at commit a14dc3a), and as
BrowseComp-Plus's client "mostly based on" it runs it (texttron/BrowseComp-Plus search_agent/search_r1_client.py
at commit 97c637c): one growing text, sampled, each round until the model ends or writes a "</search>"; a
round the model did not end is searched for (the last <search> ... </search> anywhere in the text) and its
output comes back as "\\n\\n{output}<information>{passages}</information>\\n\\n", until the model ends.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Annotated, Literal

from annotated_types import Ge

from ragbench.api import Context, Document, Example, Prediction, Task
from ragbench.api.data import JsonObject, JsonValue
from ragbench.api.engines import EngineNeeds, Response, SamplingArgs
from ragbench.api.flashrag import flashrag_reference
from ragbench.api.retrieval import passage_text
from ragbench.api.text import Snippets

from .prompts import SEARCH_R1_DOC, SEARCH_R1_USER
from .system import EXTRAS, SEARCH_R1, ReasoningSearch

# infer.py's `target_sequences` (StopOnSequence); its model's end (Qwen2.5's EOS ids, `curr_eos`) ends the loop
SEARCH_R1_OWN_STOP = ("</search>", " </search>", "</search>\n", " </search>\n", "</search>\n\n", " </search>\n\n")
INFORMATION = "\n\n{output_text}<information>{search_results}</information>\n\n"  # `curr_search_template`
SEARCH_FAILED = "Search failed"  # search_r1_client.py's `search` on any error
SEARCH_TAG = re.compile(r"<search>(.*?)</search>", re.DOTALL)
ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
THINK_TAG = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def normalised_question(question: str) -> str:
    """The question stripped and ended with "?" (infer.py; scripts/data_process/qa_search_test_merge.py)."""
    question = question.strip()
    return question if question.endswith("?") else question + "?"


def last_query(text: str) -> str | None:
    """`get_query`: the last <search> ... </search> of the whole text, the prompt included, unstripped."""
    found = SEARCH_TAG.findall(text)
    return found[-1] if found else None


def qa_em_answer(text: str) -> str:
    """Search-R1's scorer's answer (verl/utils/reward_score/qa_em.py:62-82, `extract_solution`) of the prompt and
    the response: the last <answer> ... </answer>, stripped, where there are two or more, else "" (its None).
    The prompt itself holds two, "<answer> and </answer>" and "<answer> Beijing </answer>", so a response that
    answers nothing is read as "Beijing"."""
    found = ANSWER_TAG.findall(text)
    return found[-1].strip() if len(found) >= 2 else ""


def ended_by_model(response: Response) -> bool:
    """The round ended at the model's own end, not at a "</search>" (kept at the output's end) or the token limit:
    infer.py's `outputs[0][-1].item() in curr_eos`."""
    return response.finish_reason == "stop" and not response.text.endswith(SEARCH_R1_OWN_STOP)


def browsecomp_plus_passage(doc: Document) -> tuple[str, str]:
    """A hit's title and text as BrowseComp-Plus's search server splits its text (`format_results_for_api`): a
    "---\\ntitle:" header's title, else the first line, quotes stripped; the text the lines after it."""
    lines = passage_text(doc).split("\n")
    if passage_text(doc).startswith("---\ntitle:"):
        return lines[1].strip('"')[7:], "\n".join(lines[2:])
    return lines[0].strip('"'), "\n".join(lines[1:])


@dataclass
class Round:
    """One round of search_r1_client.py (`step_data`): its output, its first <think>, its search."""

    output: str
    think: str | None
    query: str | None = None
    information: str = ""
    docids: list[str] = field(default_factory=list)


def run_file(rounds: list[Round], searches: int, answer: str) -> JsonObject:
    """What search_r1_client.py writes of a question (`conversation_data`): the reasoning and search of every
    round but the last, the last round's output; the docids of those searches; "completed" where it found an
    answer."""
    result: list[JsonValue] = []
    for step in rounds[:-1]:
        if step.think:
            result.append({"type": "reasoning", "tool_name": None, "arguments": None, "output": step.think})
        if step.query:
            result.append(
                {
                    "type": "tool_call",
                    "tool_name": "search",
                    "arguments": {"query": step.query},
                    "output": step.information,
                }
            )
    result.append({"type": "output_text", "tool_name": None, "arguments": None, "output": rounds[-1].output})
    return {
        "status": "completed" if answer else "incomplete",
        "tool_call_counts": {"search": searches},
        "retrieved_docids": [*sorted({docid for step in rounds[:-1] for docid in step.docids})],
        "result": result,
    }


class SearchR1Own(ReasoningSearch):
    """Search-R1 as its own scripts run it. The prompt is Search-R1's (FlashRAG's `search_r1` has the same) with
    the question stripped and ended with "?"; a chat model gets it as the user message and everything appended
    after it as an assistant message to continue (infer.py renders the template and appends). Each round samples
    until one of infer.py's six "</search>" stop strings (kept) or the model's end; a round the model ended ends
    the example; any other appends "\\n\\n{output}<information>{passages}</information>\\n\\n", the passages
    those of the last <search> ... </search> of the whole text, prompt included (an output that wrote none
    searches the previous query again, or the prompt's " query "; an empty query searches nothing).

    Options:
      client              "infer" (infer.py: top 3 "Doc i(Title: t) x" lines of the run's retriever; a failed search
                          fails the example; the prediction the last <answer> of the prompt and what the model
                          wrote, as Search-R1's scorer reads it: `qa_em_answer`) or "browsecomp_plus"
                          (search_r1_client.py: the search server's hits, "Search failed" on an error; the
                          prediction the last round's output, judged where an <answer> was written, recorded
                          as its run file)
      answer_from         client infer: "qa_em" (the scorer's reading above, the prompt's two <answer> tags included,
                          so a run that answers nothing is read "Beijing") or "response" (the last <answer> the
                          model wrote, "" where it wrote none: the fix, beside the quirk)
      topk                passages per search (infer 3, browsecomp_plus 5: the server's --k)
      snippet_max_tokens  browsecomp_plus: a hit's text cut to its first N tokens of `snippet_tokenizer` (512: the
                          server's --snippet-max-tokens; 0: whole text)
      snippet_tokenizer   the tokenizer snippets are counted in ("Qwen/Qwen3-0.6B"), read from disk only
      max_retrieval_num   rounds (None: until the model ends, as both scripts; each round's prompt is longer, so a
                          model that never ends stops at its context length, or at the run's ceiling of each
                          example's steps and prompt characters, an error of that example)
      round_tokens        tokens per round (1024: max_new_tokens)
      temperature         0.7 (do_sample, temperature 0.7)
    """

    name = "search_r1_own"
    declares = dataclasses.replace(
        ReasoningSearch.declares,
        prompt_style="search_r1",
    )
    search_format = SEARCH_R1

    def __init__(
        self,
        client: Literal["infer", "browsecomp_plus"] = "infer",
        topk: Annotated[int, Ge(1)] | None = None,
        snippet_max_tokens: Annotated[int, Ge(0)] = 512,
        snippet_tokenizer: str = "Qwen/Qwen3-0.6B",
        max_retrieval_num: Annotated[int, Ge(1)] | None = None,
        round_tokens: Annotated[int, Ge(1)] = 1024,
        temperature: Annotated[float, Ge(0)] = 0.7,
        answer_from: Literal["qa_em", "response"] = "qa_em",
    ) -> None:
        self.client, self.answer_from = client, answer_from
        self.topk = int(topk or (5 if client == "browsecomp_plus" else 3))
        self.max_retrieval_num = max_retrieval_num  # type: ignore[assignment]  # None: unbounded
        self.round_tokens, self.temperature = int(round_tokens), float(temperature)
        self.snippet_max_tokens = int(snippet_max_tokens) if client == "browsecomp_plus" else 0
        self._snippets = Snippets("search_r1_own", snippet_tokenizer, self.snippet_max_tokens)
        self.declares = dataclasses.replace(self.declares, recorded=self.recorded_run())

    def check(self, task: Task) -> None:
        super().check(task)
        self._snippets.check()

    def engine_needs(self, task: Task) -> EngineNeeds:
        return EngineNeeds(system=f"search_r1_own on {task.name}", stop_known=True)

    def sampling(self) -> SamplingArgs:
        return {
            "max_tokens": self.round_tokens,
            "temperature": self.temperature,
            "stop": list(SEARCH_R1_OWN_STOP),
            "keep_stop": True,
        }

    def _passages(self, docs: list[Document]) -> str:
        if self.client == "infer":
            return flashrag_reference(docs, SEARCH_R1_DOC)  # `_passages2string`: contents' first line the title
        lines = []
        for idx, doc in enumerate(docs, 1):
            title, text = browsecomp_plus_passage(doc)
            lines.append(SEARCH_R1_DOC.format(idx=idx, title=title, text=self._snippets.cut(text)))
        return "".join(lines)

    async def _search(self, query: str, ctx: Context) -> tuple[str, list[Document]]:
        assert ctx.retriever is not None  # `retrieves`: the run gives one
        if self.client == "infer":
            docs = await ctx.retriever.search(query, self.topk)
            return self._passages(docs), docs
        try:  # search_r1_client.py catches every error of its search call
            docs = await ctx.retriever.search(query, self.topk)
            return self._passages(docs), docs
        except Exception as exc:
            ctx.record_step("search failed", inputs={"query": query}, outputs={"error": str(exc)})
            return SEARCH_FAILED, []

    async def run(self, example: Example, ctx: Context) -> Prediction:
        question = normalised_question(example.question)
        user = SEARCH_R1_USER.format(question=question)
        appended, said, searches = "", "", 0
        shown: list[Document] = []
        rounds: list[Round] = []
        while self.max_retrieval_num is None or len(rounds) < self.max_retrieval_num:
            with ctx.group(f"iteration {len(rounds) + 1}"):
                response = await self.continue_text(ctx, appended, question=question)
                output = response.text
                think = THINK_TAG.search(output)
                step = Round(output, think.group(1).strip() if think else None)
                rounds.append(step)
                if ended_by_model(response):
                    said += output
                    ctx.record_step("read output", inputs={"output": output}, outputs={"ended": True})
                    break
                step.query = last_query(user + appended + output)
                information = ""
                if step.query:
                    information, docs = await self._search(step.query, ctx)
                    step.information, step.docids = information, [str(doc.id) for doc in docs]
                    searches += 1
                    shown.extend(docs)
                ctx.record_step("read output", inputs={"output": output}, outputs={"search": step.query})
                appended += INFORMATION.format(output_text=output, search_results=information)
                said += output + "\n" + (f"Search: {step.query}\nResults: {information}\n" if step.query else "")
        ended = ended_by_model(response)
        written = appended + output if ended else appended
        if self.client == "infer":
            written_answers = ANSWER_TAG.findall(written)
            answered = bool(written_answers)
            answer = (
                qa_em_answer(user + written)
                if self.answer_from == "qa_em"
                else written_answers[-1].strip()
                if written_answers
                else ""
            )
            extras = {}
        else:
            found = ANSWER_TAG.search(said)
            final = found.group(1).strip() if found else ""
            answer, extras, answered = output, run_file(rounds, searches, final), bool(final)
        finish = ("answer" if answered else "no_answer") if ended else "rounds_out"
        extras[EXTRAS] = {"rounds": len(rounds), "searches": searches, "finish": finish}
        return Prediction(
            example_id=example.id,
            answer=answer,
            raw_output=written,
            docs=shown,
            extras=extras,
        )
