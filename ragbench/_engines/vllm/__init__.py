"""The `vllm` engine: vLLM's offline `LLM`, its options, step loop, log-probs and tool-call parsers."""
