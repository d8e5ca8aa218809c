"""The `search_agent` system: a chat model given BrowseComp-Plus's `search` (and `get_document`) tools calls
them natively, turn after turn, until it answers (texttron/BrowseComp-Plus search_agent/ at commit 97c637c).
system.py holds the loop, tools.py the tools and what they answer, prompts.py BrowseComp-Plus's prompts,
qwen_client.py the text form of qwen_client (Qwen's agent library: tools in the system message, calls in the text),
tongyi_client.py tongyi_client's ReAct loop (Tongyi DeepResearch: its prompt, one call a turn, <answer> tags).
"""
