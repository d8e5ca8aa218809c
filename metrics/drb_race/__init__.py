"""DeepResearch Bench's RACE (Ayanami0730/deep_research_bench 214741e, deepresearch_bench_race.py) asked of the
run's judge as the released script asks Gemini: the report cleaned of its citations, then judged against the
reference report criterion by criterion, the scores weighted as its score_calculator weighs them
(docs/metrics.md, "DeepResearch Bench RACE")."""
