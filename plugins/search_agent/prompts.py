"""BrowseComp-Plus's prompts and tool descriptions, byte for byte (search_agent/prompts.py and
searcher/searchers/base.py at commit 97c637c): the user message of a question, with or without the
get_document tool, with or without citations."""

from __future__ import annotations

QUERY_TEMPLATE = (
    "You are a deep research agent. You need to answer the given question by interacting with a search "
    "engine, using the search and get_document tools provided. Please perform reasoning and use the "
    "tools step by step, in an interleaved manner. You may use the search and get_document tools "
    "multiple times.\n"
    "\n"
    "Question: {Question}\n"
    "\n"
    "Your response should be in the following format:\n"
    "Explanation: {{your explanation for your final answer. For this explanation section only, you "
    "should cite your evidence documents inline by enclosing their docids in square brackets [] at the "
    "end of sentences. For example, [20].}}\n"
    "Exact Answer: {{your succinct, final answer}}\n"
    "Confidence: {{your confidence score between 0% and 100% for your answer}}"
)

QUERY_TEMPLATE_NO_GET_DOCUMENT = (
    "You are a deep research agent. You need to answer the given question by interacting with a search "
    "engine, using the search tool provided. Please perform reasoning and use the tool step by step, in "
    "an interleaved manner. You may use the search tool multiple times.\n"
    "\n"
    "Question: {Question}\n"
    "\n"
    "Your response should be in the following format:\n"
    "Explanation: {{your explanation for your final answer. For this explanation section only, you "
    "should cite your evidence documents inline by enclosing their docids in square brackets [] at the "
    "end of sentences. For example, [20].}}\n"
    "Exact Answer: {{your succinct, final answer}}\n"
    "Confidence: {{your confidence score between 0% and 100% for your answer}}"
)

QUERY_TEMPLATE_NO_GET_DOCUMENT_NO_CITATION = (
    "You are a deep research agent. You need to answer the given question by interacting with a search "
    "engine, using the search tool provided. Please perform reasoning and use the tool step by step, in "
    "an interleaved manner. You may use the search tool multiple times.\n"
    "\n"
    "Question: {Question}\n"
    "\n"
    "Your response should be in the following format:\n"
    "Explanation: {{your explanation for your final answer}}\n"
    "Exact Answer: {{your succinct, final answer}}\n"
    "Confidence: {{your confidence score between 0% and 100% for your answer}}"
)


# The tool descriptions of `BaseSearcher` (searcher/searchers/base.py:57-67), which the BM25 and FAISS searchers keep;
# `{k}` is the number of hits a search returns
SEARCH_DESCRIPTION = (
    "Perform a search on a knowledge source. Returns top-{k} hits with docid, score, and snippet. The snippet "
    "contains the document's contents (may be truncated based on token limits)."
)
GET_DOCUMENT_DESCRIPTION = "Retrieve a full document by its docid."
