"""The `hf` engine: transformers `generate` with ragbench's batching, decoding hooks, prefix cache and ensemble
requests."""
