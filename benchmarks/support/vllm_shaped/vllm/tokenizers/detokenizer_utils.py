"""vllm.tokenizers.detokenizer_utils of the stand-in."""

from vllm import convert_ids_list_to_tokens

__all__ = ["convert_ids_list_to_tokens"]
