"""BrowseComp-Plus's prompts and tool descriptions, byte for byte (search_agent/prompts.py and
searcher/searchers/base.py at commit 97c637c): the user message of a question, with or without the
get_document tool, with or without citations; `query_template` picks one."""

from __future__ import annotations

from ragbench.api import ConfigError

# each prompt: what the agent is and which tools it has, the question, then the response format (whose
# explanation asks for docids in brackets, or not)
WITH_GET_DOCUMENT = (
    "You are a deep research agent. You need to answer the given question by interacting with a search "
    "engine, using the search and get_document tools provided. Please perform reasoning and use the "
    "tools step by step, in an interleaved manner. You may use the search and get_document tools "
    "multiple times.\n"
)
SEARCH_ONLY = (
    "You are a deep research agent. You need to answer the given question by interacting with a search "
    "engine, using the search tool provided. Please perform reasoning and use the tool step by step, in "
    "an interleaved manner. You may use the search tool multiple times.\n"
)
QUESTION = "\nQuestion: {Question}\n\nYour response should be in the following format:\n"
CITED_EXPLANATION = (
    "Explanation: {{your explanation for your final answer. For this explanation section only, you "
    "should cite your evidence documents inline by enclosing their docids in square brackets [] at the "
    "end of sentences. For example, [20].}}\n"
)
EXPLANATION = "Explanation: {{your explanation for your final answer}}\n"
ANSWER = (
    "Exact Answer: {{your succinct, final answer}}\n"
    "Confidence: {{your confidence score between 0% and 100% for your answer}}"
)
QUERY_TEMPLATE = WITH_GET_DOCUMENT + QUESTION + CITED_EXPLANATION + ANSWER
QUERY_TEMPLATE_NO_GET_DOCUMENT = SEARCH_ONLY + QUESTION + CITED_EXPLANATION + ANSWER
QUERY_TEMPLATE_NO_GET_DOCUMENT_NO_CITATION = SEARCH_ONLY + QUESTION + EXPLANATION + ANSWER


# The tool descriptions of `BaseSearcher` (searcher/searchers/base.py:57-67), which the BM25 and FAISS searchers keep;
# `{k}` is the number of hits a search returns
SEARCH_DESCRIPTION = (
    "Perform a search on a knowledge source. Returns top-{k} hits with docid, score, and snippet. The snippet "
    "contains the document's contents (may be truncated based on token limits)."
)
GET_DOCUMENT_DESCRIPTION = "Retrieve a full document by its docid."


# tongyi_client's system prompt (search_agent/tongyi_utils/react_agent.py, SYSTEM_PROMPT_SEARCH_ONLY), today's date
# appended, and the texts its loop puts in place of the conversation's last message when a limit is reached
TONGYI_SYSTEM_PROMPT = (
    "You are a deep research assistant. Your core function is to conduct thorough, multi-source investigations "
    "into any topic. You must handle both broad, open-domain inquiries and queries within specialized academic "
    "fields. For every request, synthesize information from credible, diverse sources to deliver a comprehensive, "
    "accurate, and objective response. When you have gathered sufficient information and are ready to provide the "
    "definitive response, you must enclose the entire final answer within <answer></answer> tags.\n"
    "\n"
    "# Tools\n"
    "\n"
    "You may call the search tool one or multiple times to assist with the user query.\n"
    "\n"
    "You are provided with the search tool, its signature within <tools></tools> XML tags:\n"
    "<tools>\n"
    '{"type": "function", "function": {"name": "search", "description": "Perform Google web searches then returns '
    'a string of the top search results. Accepts a single query.", "parameters": {"type": "object", "properties": '
    '{"query": {"type": "string", "description": "The search query."}}, "required": ["query"]}}}\n'
    "</tools>\n"
    "\n"
    "For each search tool call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n"
    "<tool_call>\n"
    '{"name": search, "arguments": <args-json-object>}\n'
    "</tool_call>\n"
    "\n"
    "Current date: "
)
TONGYI_CALLS_EXCEEDED = "Sorry, the number of llm calls exceeds the limit."
TONGYI_CONTEXT_EXCEEDED = (
    "You have now reached the maximum context length you can handle. You should stop making tool calls and, based "
    "on all the information above, think again and provide what you consider the most likely answer in the "
    "following format:<think>your final thinking</think>\n<answer>your answer</answer>"
)


def query_template(get_document: bool, citations: bool) -> str:
    """BrowseComp-Plus's user prompt for the tools offered (prompts.py; it has no prompt that offers
    get_document without asking for citations)."""
    if get_document:
        if not citations:
            raise ConfigError("search_agent: BrowseComp-Plus has no prompt with get_document and no citations")
        return QUERY_TEMPLATE
    return QUERY_TEMPLATE_NO_GET_DOCUMENT if citations else QUERY_TEMPLATE_NO_GET_DOCUMENT_NO_CITATION
