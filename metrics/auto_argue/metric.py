"""`auto_argue`: a report judged as Auto-ARGUE's paper (Walden et al., arXiv 2509.26184) describes its ARGUE
implementation, from the paper, not parity-checked (its package could not be had here). Each sentence of the
report (Punkt sentences of the answer, its "[n]" markers the documents shown it cites):

- with citations: each cited document relevant iff it attests some nugget answer (looked up in the nuggets); the
  judge asked whether it attests the sentence; and, for each nugget answer attested by one of the cited documents,
  whether the sentence gives that answer;
- without: the judge asked whether it needs a citation (one that does counts against sentence support).

Answers given by any sentence are pooled over the report: an OR nugget is answered by one of its answers, an AND
nugget by all. Scores (scores.py): sentence support, nugget coverage (plain and vital 2 / okay 1), their F1s,
citation support and relevance. Each judgment is a YES/NO question (prompts.py, written for ragbench); a reply with
neither is counted (`argue_unparsed`) and read as NO."""

from __future__ import annotations

import re
from typing import Any

from ragbench.api import Example, KeySpec, Metric, MetricDeclaration, Prediction, Scores
from ragbench.api.text import cited_numbers, remove_citations, sent_tokenize

from . import prompts
from .scores import JudgedCounts, Nugget, report_scores

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


class AutoArgue(Metric):
    name = "auto_argue"
    declares = MetricDeclaration(
        keys=KEYS,
        needs=("judge",),
        judge_roles=("judge",),
        gold_needs=("argue_nuggets",),
        key_specs={key: KeySpec(True, (0, 1)) for key in KEYS},
        counters={
            "argue_unparsed": "judge replies with neither YES nor NO: read as NO",
            "argue_unknown_citation": "citations of a document the report was not shown: neither relevant nor attesting",
            "argue_over_limit": "reports longer than the request's character limit (scored as written)",
        },
    )

    async def ask(self, judge: Any, prompt: str, ctx: Any) -> bool:
        reply = await judge.chat([{"role": "user", "content": prompt}], step=f"judge:{self.name}", temperature=0.0)
        found = VERDICT.search(str(reply.text or ""))
        if found is None:
            ctx.count("argue_unparsed")
            return False
        return found.group(1).upper() == "YES"

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        (judge,) = ctx.judges_for(self)
        nuggets: list[Nugget] = example.gold["argue_nuggets"]
        limit = example.meta.get("limit")
        answer = prediction.answer or ""
        if isinstance(limit, int) and len(remove_citations(answer)) > limit:
            ctx.count("argue_over_limit")
        relevant = {doc for nugget in nuggets for a in nugget["answers"] for doc in a["docs"]}
        counts = JudgedCounts()
        for sentence in (s for s in sent_tokenize(answer) if s.strip()):
            counts.sentences += 1
            text = " ".join(remove_citations(sentence).split())
            cited = list(dict.fromkeys(cited_numbers(sentence)))
            if not cited:
                request = example.question
                if await self.ask(judge, prompts.NEEDS_CITATION.format(request=request, sentence=text), ctx):
                    counts.needing += 1
                continue
            counts.needing += 1
            attested_all = True
            cited_ids: set[str] = set()
            for number in cited:
                counts.citations += 1
                if not 1 <= number <= len(prediction.docs):
                    ctx.count("argue_unknown_citation")
                    attested_all = False
                    continue
                doc = prediction.docs[number - 1]
                counts.relevant += doc.id in relevant
                cited_ids.add(str(doc.id))
                document = f"{doc.title}\n{doc.text}" if doc.title else doc.text
                if await self.ask(judge, prompts.ATTESTED.format(document=document, sentence=text), ctx):
                    counts.supporting += 1
                else:
                    attested_all = False
            counts.correctly_cited += attested_all
            await self._answers(judge, nuggets, text, cited_ids, counts, ctx)
        return report_scores(counts, nuggets)

    async def _answers(
        self, judge: Any, nuggets: list[Nugget], text: str, cited: set[str], counts: JudgedCounts, ctx: Any
    ) -> None:
        """The nugget answers a cited document attests that the sentence gives (one already given is not asked again)."""
        for i, nugget in enumerate(nuggets):
            for n, answer in enumerate(nugget["answers"]):
                if (i, n) in counts.given or not cited & set(answer["docs"]):
                    continue
                prompt = prompts.ANSWERS.format(question=nugget["question"], answer=answer["answer"], sentence=text)
                if await self.ask(judge, prompt, ctx):
                    counts.given.add((i, n))
