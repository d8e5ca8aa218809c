"""`auto_argue`: a report judged as Auto-ARGUE's paper (Walden et al., arXiv 2509.26184) and its repository's README
describe ARGUE's sentence flow, not parity-checked (its package could not be had here). The report is cut at its
request's character limit (report.py); each sentence left (Punkt sentences of the answer, its "[n]" markers the
documents shown it cites) is judged:

- with citations: each cited document relevant iff it attests some nugget answer (looked up in the nuggets); the
  judge asked whether it attests the sentence (the README: penalised if any cited document does not support it);
  and, for each nugget answer attested by one of the cited documents, whether the sentence gives that answer;
- without: the judge asked whether it is a negative assertion (something not known, no evidence): rewarded if a
  nugget confirms it (the judge shown every nugget), penalised otherwise; else whether it needs a citation, and if
  so whether an earlier sentence already states it: penalised at its first instance only, a repeat ignored; a
  sentence needing no citation is ignored.

Answers given by any sentence are pooled over the report: an OR nugget is answered by one of its answers, an AND
nugget by all. Scores (scores.py): sentence support (rewarded / rewarded or penalised sentences), nugget coverage
(plain and vital 2 / okay 1), their F1s, citation support and relevance. Each judgment is a YES/NO question asked
few-shot (prompts.py, written for ragbench); a reply with neither is counted (`argue_unparsed`) and read as NO.
With several --judge each judges the report alone and every key is their mean."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from ragbench.api import Example, Metric, MetricDeclaration, Prediction, Scores

from . import prompts
from .report import ArgueSentence, report_sentences
from .scores import JudgedCounts, Nugget, judges_mean, report_scores

KEYS = (
    "argue_sentence_support",
    "argue_nugget_coverage",
    "argue_nugget_coverage_weighted",
    "argue_f1",
    "argue_f1_weighted",
    "argue_citation_support",
    "argue_citation_relevance",
)
VERDICT = re.compile(r"\b(YES|NO)\b", re.IGNORECASE)


def nugget_list(nuggets: list[Nugget]) -> str:
    """The nuggets as the judge is shown them to confirm a negative assertion: numbered questions and answers."""
    return "\n".join(
        f"{n}. {nugget['question']} Answers: {' | '.join(a['answer'] for a in nugget['answers'])}"
        for n, nugget in enumerate(nuggets, start=1)
    )


class AutoArgue(Metric):
    name = "auto_argue"
    declares = MetricDeclaration(
        keys=KEYS,
        needs=("judge",),
        gold_needs=("argue_nuggets",),
        value_range=(0, 1),
        counters={
            "argue_unparsed": "judge replies with neither YES nor NO: read as NO",
            "argue_unknown_citation": "citations of a document the report was not shown: neither relevant nor attesting",
            "argue_over_limit": "reports longer than the request's character limit: cut to the whole sentences within it",
            "argue_negative_assertion": "uncited sentences a judge found negative assertions: rewarded if a nugget confirms them",
            "argue_repeated_claim": "uncited sentences needing a citation a judge found to repeat an earlier one: ignored",
        },
    )

    async def ask(self, judge: Any, judgment: prompts.Judgment, ctx: Any, **fields: str) -> bool:
        messages = judgment.messages(**fields)
        reply = await judge.chat(messages, step=f"judge:{self.name}", temperature=0.0)
        found = VERDICT.search(str(reply.text or ""))
        if found is None:
            ctx.count("argue_unparsed")
            return False
        return found.group(1).upper() == "YES"

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        sentences, cut = report_sentences(prediction.answer or "", example.meta.get("limit"))
        if cut:
            ctx.count("argue_over_limit")
        judged = [self.judged(judge, example, prediction, sentences, ctx) for judge in ctx.judges_for(self)]
        return judges_mean(await asyncio.gather(*judged))

    async def judged(
        self, judge: Any, example: Example, prediction: Prediction, sentences: list[ArgueSentence], ctx: Any
    ) -> dict[str, float | None]:
        """One judge's scores of the report."""
        nuggets: list[Nugget] = example.gold["argue_nuggets"]
        counts = JudgedCounts()
        for index, sentence in enumerate(sentences):
            if sentence.cited:
                await self._cited(judge, nuggets, prediction, sentence, counts, ctx)
            else:
                earlier = "\n".join(s.text for s in sentences[:index])
                await self._uncited(judge, example, nuggets, earlier, sentence.text, counts, ctx)
        return report_scores(counts, nuggets)

    async def _uncited(
        self,
        judge: Any,
        example: Example,
        nuggets: list[Nugget],
        earlier: str,
        text: str,
        counts: JudgedCounts,
        ctx: Any,
    ) -> None:
        """The README's flow of a sentence without citations: a negative assertion first, then a claim needing a
        citation (its first instance only), else nothing."""
        if await self.ask(judge, prompts.NEGATIVE, ctx, sentence=text):
            ctx.count("argue_negative_assertion")
            counts.judged += 1
            if nuggets:
                counts.supported += await self.ask(
                    judge, prompts.CONFIRMED, ctx, nuggets=nugget_list(nuggets), sentence=text
                )
            return
        if not await self.ask(judge, prompts.NEEDS_CITATION, ctx, request=example.question, sentence=text):
            return
        if earlier and await self.ask(judge, prompts.REPEATED, ctx, earlier=earlier, sentence=text):
            ctx.count("argue_repeated_claim")
            return
        counts.judged += 1

    async def _cited(
        self,
        judge: Any,
        nuggets: list[Nugget],
        prediction: Prediction,
        sentence: ArgueSentence,
        counts: JudgedCounts,
        ctx: Any,
    ) -> None:
        """A sentence with citations: each cited document's relevance and attestation, then the answers it gives."""
        counts.judged += 1
        relevant = {doc for nugget in nuggets for a in nugget["answers"] for doc in a["docs"]}
        attested_all = True
        cited_ids: set[str] = set()
        for number in sentence.cited:
            counts.citations += 1
            if not 1 <= number <= len(prediction.docs):
                ctx.count("argue_unknown_citation")
                attested_all = False
                continue
            doc = prediction.docs[number - 1]
            counts.relevant += doc.id in relevant
            cited_ids.add(str(doc.id))
            document = f"{doc.title}\n{doc.text}" if doc.title else doc.text
            if await self.ask(judge, prompts.ATTESTED, ctx, document=document, sentence=sentence.text):
                counts.supporting += 1
            else:
                attested_all = False
        counts.supported += attested_all
        await self._answers(judge, nuggets, sentence.text, cited_ids, counts, ctx)

    async def _answers(
        self, judge: Any, nuggets: list[Nugget], text: str, cited: set[str], counts: JudgedCounts, ctx: Any
    ) -> None:
        """The nugget answers a cited document attests that the sentence gives (one already given is not asked again)."""
        for i, nugget in enumerate(nuggets):
            for n, answer in enumerate(nugget["answers"]):
                if (i, n) in counts.given or not cited & set(answer["docs"]):
                    continue
                if await self.ask(
                    judge, prompts.ANSWERS, ctx, question=nugget["question"], answer=answer["answer"], sentence=text
                ):
                    counts.given.add((i, n))
