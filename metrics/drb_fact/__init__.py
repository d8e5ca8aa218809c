"""DeepResearch Bench's FACT (Ayanami0730/deep_research_bench 214741e, utils/extract.py to utils/stat.py) asked of
the run's judge as the released scripts ask Gemini: the report's citations extracted, de-duplicated per cited URL,
each page read (offline from the example's documents or a pages file, or the Jina Reader) and each fact judged
against it; counted as stat.py counts (docs/metrics.md, "DeepResearch Bench FACT")."""
