"""RAGChecker's benchmark (amazon-science/RAGChecker data/benchmark) as a YAML task: ragchecker.yaml."""
