"""DeepResearch Bench (Ayanami0730/deep_research_bench, arXiv 2506.11763): its research tasks, RACE criteria and
reference reports read from the repository's `data/` folder (data.py) as the `deep_research_bench` task (task.py), scored by
the `drb_race` metric (ragbench.metrics.drb_race)."""
