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

from ragbench.api import Document, Example, Image, Message, Prompt, TaskPrompting, chat_turn
from ragbench.api.engines import SamplingArgs

from .agent_formats import agent_picture, mistral_turns
from .cut import truncate_response
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
) -> list[Message]:
    """The example agent's messages: system, image, search results, history, question. The open-model agents
    (`VlmAgent` and its Pixtral, Qwen, InternVL kin) wrap the history in <conversation_history> tags and add their
    reminder before the question; the closed-model agents (`ClosedModelBaseAgent`: GPT, Claude, Gemini) send
    neither. Each agent's own picture and chat form: agent_formats.py."""
    agents = prompts()["agents"]
    tagged = agent != "closed"
    messages = [Message("system", agents["SYSTEM_MULTI_PROMPT" if history else "SYSTEM_PROMPT"])]
    if image is not None:
        messages.append(chat_turn([agent_picture(agent, image)]))
    if rag_context:
        messages.append(Message("user", rag_context))
    if history:
        messages += [Message("user", "<conversation_history>")] if tagged else []
        messages += [Message(turn["role"], turn["content"]) for turn in history]
        messages += [Message("user", "</conversation_history>")] if tagged else []
    if tagged:
        reminder = (
            (agents["KEY_RAG_PROMPT"] if rag_context else "")
            + (agents["KEY_MESSAGE_HISTORY_PROMPT"] if history else "")
            + agents["KEY_USER_PROMPT"]
        )
        messages.append(Message("user", reminder))
    messages.append(Message("user", query))
    return mistral_turns(messages) if agent == "pixtral" else messages


# user_config.py's MODEL_KEYWORD_TO_AGENT, in its order: the agent upstream picks by the model's name
AGENT_KEYWORDS = ("pixtral", "claude", "gpt", "gemini", "llama", "internvl", "qwen")
CLAUDE_TOKENS = 2048  # ClaudeAgent's max_tokens


def upstream_agent(model: str) -> str | None:
    """The keyword by which get_agent_from_model_name picks the agent of `model`; None: none (it raises)."""
    name = model.lower()
    return next((keyword for keyword in AGENT_KEYWORDS if keyword in name), None)


class CragMMPrompting(TaskPrompting):
    """The example agent's chat (`agent`: open, the vLLM VlmAgent; closed, the API agents; pixtral, qwen,
    internvl, those open models' agents); with documents (a retriever), its web-search block over them. The answer
    is the model's text cut to 75 Llama-3.2 tokens (`tokenizer`), as upstream's generation keeps every response."""

    def __init__(self, agent: str = "open", tokenizer: str | None = None) -> None:
        self.agent = agent
        self.tokenizer = tokenizer

    def build_prompt(self, example: Example, docs: list[Document] | None = None, **options: Any) -> Prompt:
        if not example.images:
            raise ValueError(
                f"example {example.id!r} has no picture: a file of turns (local_evaluation.py's response.jsonl) is "
                "scored with ragbench score, not run; run over the hub copy of the dataset"
            )
        question = options.get("question") or example.question
        rag_context = search_results(example.question, docs) if docs else ""
        return agent_messages(question, list(example.turns or []), rag_context, self.agent, example.images[0])

    def answer_sampling(self, model: str, sampling: SamplingArgs) -> SamplingArgs:
        """With `agent=closed`, the API agent upstream picks by the model's name sends its own fields: ClaudeAgent
        a token limit of 2,048 where none is given; GPTAgent no temperature to a model whose name starts with
        "gpt-5" (`_make_api_call`: top_p and n only). Other agents: as given."""
        out = sampling.copy()
        if self.agent != "closed":
            return out
        left = list(out.get("left_to_server", ()))
        agent = upstream_agent(model)
        if agent == "claude" and "max_tokens" in left:
            left.remove("max_tokens")
            out["max_tokens"] = CLAUDE_TOKENS
        if agent == "gpt" and model.startswith("gpt-5"):
            out.pop("temperature", None)
            left += [] if "temperature" in left else ["temperature"]
        if left:
            out["left_to_server"] = tuple(left)
        else:
            out.pop("left_to_server", None)
        return out

    def postprocess(self, text: str) -> str:
        """The model's text cut to 75 Llama-3.2 tokens (`truncate_agent_responses`), the text upstream judges and
        shows as history; the sample keeps the uncut text as its raw output."""
        if self.tokenizer is None:
            raise ValueError("the 75-token cut needs the Llama-3.2 tokenizer (--task-arg tokenizer=DIR)")
        return truncate_response(text, self.tokenizer)
