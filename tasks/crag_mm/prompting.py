"""What CRAG-MM's example agents send (base_agent.py `_prepare_messages`; open_source_model_agents.py VlmAgent by
default, closed_model_agents.py's layout with `agent=closed`, the Pixtral / Qwen / InternVL agents' forms with
`agent=pixtral|qwen|internvl`: agent_formats.py): the system prompt (the multi-turn one when there is
history), the image, the search results (utils/retriever.py `get_rag_context`: its image block over
`cragmm_search`'s image hits, its web block over the other documents shown), the history between
<conversation_history> tags, the reminder (`_get_prompt_summary`), then the
question, each a message of its own.

The image is the example's (`Example.images`), a user turn of one image part: VlmAgent's `{"type": "image"}` whose
picture goes beside the prompt (vLLM's multi_modal_data: the engine does the same with the part's image); the API
agents' a JPEG data URL (vLLM's `encode_image_base64`: the picture in RGB, saved as JPEG), here that JPEG. Sampling
is VlmAgent's, and the Pixtral / Qwen / InternVL agents' (PixtralAgent leaves skip_special_tokens at vLLM's default,
true): temperature 0, top_p 1, 1,000 tokens (the task's default system_args; GPTAgent sends temperature 0 and top_p 1
without a token limit).
"""

from __future__ import annotations

from typing import Any

from ragbench.api import Document, Example, Image, Prompt, TaskPrompting

from .agent_formats import agent_picture, mistral_turns
from .prompts import prompts
from .search_context import image_block, is_image_hit


def search_results(query: str, docs: list[Document]) -> str:
    """get_rag_context over a retriever's documents: the image-search block over `cragmm_search`'s image hits
    (search_context.py), then the web-search block over the others: the introduction once there are results, then
    each document's snippet (its text) and page name (its title), in order, while the block stays under 32,000
    characters."""
    rag = prompts()["rag"]
    web = [doc for doc in docs if not is_image_hit(doc)]
    block = rag["web_intro"].format(query=query) if web else ""
    shown = [doc for doc in web if doc.text]
    for number, doc in enumerate(shown, 1):
        if len(block) + len(doc.text) >= rag["web_cap_chars"]:
            break
        block += rag["web_doc"].format(number=number, title=doc.title or "", snippet=doc.text)
    images = image_block([doc for doc in docs if is_image_hit(doc)])
    return str(rag["open"]) + images + (block + str(rag["web_outro"]) if block else "") + str(rag["close"])


def agent_messages(
    query: str, history: list[dict[str, str]], rag_context: str, agent: str = "open", image: Image | None = None
) -> list[dict[str, Any]]:
    """The example agent's messages: system, image, search results, history, question. The open-model agents
    (`VlmAgent` and its Pixtral, Qwen, InternVL kin) wrap the history in <conversation_history> tags and add their
    reminder before the question; the closed-model agents (`ClosedModelBaseAgent`: GPT, Claude, Gemini) send
    neither. Each agent's own picture and chat form: agent_formats.py."""
    agents = prompts()["agents"]
    tagged = agent != "closed"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": agents["SYSTEM_MULTI_PROMPT" if history else "SYSTEM_PROMPT"]}
    ]
    if image is not None:
        messages.append({"role": "user", "content": [{"type": "image", "image": agent_picture(agent, image)}]})
    if rag_context:
        messages.append({"role": "user", "content": rag_context})
    if history:
        messages += [{"role": "user", "content": "<conversation_history>"}] if tagged else []
        messages += history
        messages += [{"role": "user", "content": "</conversation_history>"}] if tagged else []
    if tagged:
        reminder = (
            (agents["KEY_RAG_PROMPT"] if rag_context else "")
            + (agents["KEY_MESSAGE_HISTORY_PROMPT"] if history else "")
            + agents["KEY_USER_PROMPT"]
        )
        messages.append({"role": "user", "content": reminder})
    messages.append({"role": "user", "content": query})
    return mistral_turns(messages) if agent == "pixtral" else messages


class CragMMPrompting(TaskPrompting):
    """The example agent's chat (`agent`: open, the vLLM VlmAgent; closed, the API agents; pixtral, qwen,
    internvl, those open models' agents); with documents (a retriever), its web-search block over them."""

    def __init__(self, agent: str = "open") -> None:
        self.agent = agent

    def build_prompt(self, example: Example, docs: list[Document] | None = None, **options: Any) -> Prompt:
        question = options.get("question") or example.question
        rag_context = search_results(example.question, docs) if docs else ""
        image = example.images[0] if example.images else None
        return agent_messages(question, list(example.turns or []), rag_context, self.agent, image)
