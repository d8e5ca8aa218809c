"""FLARE's settings of text as FlashRAG writes them (flashrag/pipeline/active_pipeline.py, commit 1ee5249); its
prompt is FlashRAG's base template (ragbench.api.flashrag.FLASHRAG_RAG_TEMPLATE), with no documents until a search."""

import re

# FLAREPipeline.stop_sym (:715): list() of the string makes SINGLE characters, so any "!", "#", "(", "\n" ... ends
# a look-ahead
STOP = list("!@#$%^&*()\n\n)(*&^%$#@!")
SENTENCE_END = re.compile(r"(?<=[^A-Z].[.?]) +")  # get_next_sentence (:719)
