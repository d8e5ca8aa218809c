"""`drb_race`: DeepResearch Bench's RACE score of a report, asked of the run's `--judge` as
deepresearch_bench_race.py (Ayanami0730/deep_research_bench 214741e) asks Gemini: two calls per report, each one
user turn and nothing else (no system turn, temperature, top_p, token limit or seed: the server's defaults, as its
google-genai client sends none; its thinking budget of 16,000 is the judge's `thinking_config` option):

1. the report cleaned of its citations (utils/clean_article.py's prompt; a reply under 100 characters is no
   cleaned report). The released run_benchmark.sh cleans every report in its first, Chinese, pass, with the
   Chinese prompt, whatever the task's language (`clean_language=zh`, the default); `clean_language=task` cleans
   each with its task's language (what `--only_en` and `--only_zh` runs do);
2. the cleaned report (article 1) judged against the task's reference report (article 2) on each RACE criterion,
   with the prompt of the task's language (prompt/score_prompt_*.py's generate_merged_score_prompt); the reply's
   JSON read as utils/json_extractor.py reads it (reply_json.py) and weighted as its score_calculator weighs it
   (weighted.py).

Keys: `race` (the overall score: the report's share of the two weighted totals) and each dimension's share. The
script retries a cleaning or a scoring that failed (up to 10 times) and then drops the task from its averages;
here the first failed reply drops the example from the averages, counted (`race_clean_invalid`,
`race_unparsed`): a greedy judge asked the same again answers the same from the response cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, Example, Metric, MetricDeclaration, Prediction, Scores
from ragbench.api.data import JsonObject

from .reply_json import DIMENSIONS, reply_json
from .weighted import criteria_list, race_scores

PROMPTS = json.loads(Path(__file__).with_name("prompts.json").read_text(encoding="utf-8"))
MIN_CLEANED = 100  # ArticleCleaner.min_valid_length: a shorter cleaned report is no report
KEYS = ("race", *(f"race_{dim}" for dim in DIMENSIONS))
CLEAN_LANGUAGES = ("zh", "en", "task")
# what google-genai sends when asked with contents alone: none of these (nor n, which the gemini engine sends
# only above 1); the seed a repeat is given is kept out of the request too, so every request is the script's
LEFT_TO_SERVER = ("temperature", "top_p", "max_tokens", "seed")


class DeepResearchBenchRace(Metric):
    name = "drb_race"
    declares = MetricDeclaration(
        keys=KEYS,
        needs=("judge",),
        judge_roles=("judge",),
        gold_needs=("race_criteria", "reference_report"),
        value_range=(0, 1),
        counters={
            "race_empty_report": "reports that are empty: RACE has no article to clean, and leaves the task out",
            "race_clean_invalid": "cleaned reports under 100 characters (RACE's invalid cleaning): left out",
            "race_unparsed": "judge replies without JSON holding the four dimensions: left out of the averages",
        },
    )

    def __init__(self, clean_language: str = "zh") -> None:
        if clean_language not in CLEAN_LANGUAGES:
            raise ConfigError(f"metric drb_race: clean_language={clean_language} is not one of zh, en, task")
        self.clean_language = clean_language

    def config(self) -> JsonObject:
        return super().config() | {"clean_language": self.clean_language}

    async def ask(self, judge: Any, prompt: str) -> str:
        reply = await judge.chat(
            [{"role": "user", "content": prompt}], step=f"judge:{self.name}", left_to_server=LEFT_TO_SERVER
        )
        return str(reply.text or "")

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        unscored: Scores = dict.fromkeys(KEYS)
        (judge,) = ctx.judges_for(self)
        language = str(example.meta["language"])
        if not prediction.answer:
            ctx.count("race_empty_report")
            return unscored
        cleaning = language if self.clean_language == "task" else self.clean_language
        cleaned = await self.ask(judge, PROMPTS["clean"][cleaning].format(article=prediction.answer))
        if len(cleaned.strip()) < MIN_CLEANED:
            ctx.count("race_clean_invalid")
            return unscored
        criteria = example.gold["race_criteria"]
        prompt = PROMPTS["score"][language].format(
            task_prompt=example.question,
            article_1=cleaned,
            article_2=example.gold["reference_report"],
            criteria_list=criteria_list(criteria),
        )
        found = reply_json(await self.ask(judge, prompt))
        judged = json.loads(found) if found is not None else None
        if not isinstance(judged, dict) or not all(dim in judged for dim in DIMENSIONS):
            ctx.count("race_unparsed")
            return unscored
        scores = race_scores(judged, criteria)
        return {"race": scores["overall_score"], **{f"race_{dim}": scores[dim] for dim in DIMENSIONS}}
