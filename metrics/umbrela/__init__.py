"""UMBRELA relevance assessment (castorini/umbrela 0.0.7, its GPTJudge) asked of the run's judge as umbrela asks
its OpenAI model: one chat per passage the system showed, umbrela's zero-shot prompt and sampling, each reply read
into a grade 0-3 by umbrela's patterns (docs/metrics.md, "UMBRELA")."""
