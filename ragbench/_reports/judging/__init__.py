"""LLM judges judged: their agreement with each other (`judge_agreement`), with human labels (`human_agreement`), and a
judge swapped on a finished run."""
