"""What the engines that run a model on this machine share: the embedded default model, a model's identity by content,
tokenizers and tool-call parsers."""
