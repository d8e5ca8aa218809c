"""The values every layer passes around, below all of them: the typed options of plugins and engines
(`options`), an LLM call's request and response (`llm_calls`), whether a response answers its request
(`response_checks`), an image a sample holds or a request sends (`images`), what in a URL is a credential
(`urls`), and the rule for names that become file names (`names`). A run's configuration is ragbench._config's.
Plain data and the checks on it: nothing here imports another ragbench unit but `_errors`."""
