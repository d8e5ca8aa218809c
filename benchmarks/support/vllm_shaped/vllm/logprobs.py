"""vllm.logprobs of the stand-in."""

from vllm import Logprob

__all__ = ["Logprob"]
