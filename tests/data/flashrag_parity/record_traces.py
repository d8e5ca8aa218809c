"""Record FlashRAG's own RAG pipelines, call for call, as parity fixtures for ragbench.

FlashRAG is NOT a dependency of ragbench: this script is run by hand, in a separate Python
environment, and its output (the ``<method>.json`` files next to it) is committed.  That
environment must be able to import FlashRAG (RUC-NLPIR/FlashRAG at the commit NOTES.md names;
``--src`` is its source tree, whose examples/methods/my_config.yaml the script reads) with
its dependencies.  The fixtures were recorded with Python 3.11, transformers 5.24, bm25s 0.3.16
(FlashRAG pins bm25s[core]==0.2.1), PyStemmer and numba (NOTES.md), besides torch, datasets,
termcolor, base58, langid, openai and tiktoken, which FlashRAG imports.  There it runs as::

    PYTHONHASHSEED=0 python tests/data/flashrag_parity/record_traces.py --model-dir DIR --src FLASHRAG_SOURCE

(PYTHONHASHSEED=0: AdaptivePipeline runs its A/B/C groups in ``set()`` order of the labels,
which Python's string hashing changes from process to process.)  ``--methods`` picks methods.

``DIR`` holds a tokenizer-only model folder (config.json, tokenizer.json,
tokenizer_config.json, chat_template.jinja; no weights): the script copies it to
``smollm2-base`` (FlashRAG treats it as a plain model) and ``smollm2-instruct``
(FlashRAG's PromptTemplate sees "instruct" in the path and applies the chat template).
The fixtures were recorded with the SmolLM2-135M-Instruct tokenizer.  NOTES.md says what the
fixtures hold and what FlashRAG does; ``full_inputs`` (stdlib only) rebuilds the full model inputs.

What is real and what is fake:

* real FlashRAG code, unchanged: Config, Dataset, the pipelines, PromptTemplate,
  VLLMGenerator.generate / HFCausalLMGenerator.generate (parameter handling, stop
  strings, decoding), the BM25 retriever (bm25s backend) over ``corpus.jsonl`` with an
  index built by FlashRAG's own Index_Builder.
* fake: the model.  ``vllm`` is replaced by a stand-in module whose ``LLM.generate``
  answers from the prompt text (FAKE_RULE below) and then cuts at the stop strings as
  vLLM does (the stop string that completes first; kept when include_stop_str_in_output).  For the
  ``hf`` framework (FLARE, REPLUG) a stand-in causal LM (FakeCausalLM) returns token ids of the same
  scripted continuation with logits from which FlashRAG computes its token scores.
  For ``framework: openai`` (the "openai" form) ``openai.AsyncOpenAI`` and
  ``tiktoken.encoding_for_model`` are stood in for (FakeAsyncOpenAI, FakeTiktoken).
  The judgers of SKR and Adaptive-RAG (a CUDA-only SimCSE kNN and a T5 classifier)
  are replaced by scripted judgements stored in the fixture.
"""

import argparse
import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))

FAKE_RULE = (
    "The fake model reads one prompt (API form: the message contents joined by blank lines, an assistant "
    "message appended directly) and finds which of the six questions it is about (the question text that "
    "occurs last in it).  It then follows the per-question script in fake_model_script: it makes hops[q] "
    "searches/thoughts before answering, counting the ones the prompt already holds (retrieved-document "
    "blocks for the reasoning methods, thoughts after the last 'Thought:' for IRCoT, 'Follow up:' lines "
    "for Self-Ask, \"{'function': 'search'\" actions for ReaRAG, 'Intermediate query' lines for CoRAG); "
    "hop k uses queries[q][k] / facts[q][k]; the answer is answers[q].  Method specifics: reasoning "
    "methods emit '<tag> query </tag> trailing text' or 'fact. </think>\\n\\n<answer> answer </answer> "
    "trailing text' (SimpleDeepSearcher: \\boxed{answer}), and question no_pattern_question ends without "
    "answer tags; IRCoT emits ' fact. Then more text.' (the 2nd thought ends with a newline instead of "
    "'.') and finally ' So the answer is: answer. Extra sentence.'; SuRe: candidates ' (a) answer, (b) "
    "<first word of queries[q][0]>', summaries ' The passages say that the answer is <pred>. [DONE]', "
    "validation ' True'/' False' by sha256(prompt) parity, ranking ' Passage 1'/' Passage 2'/' Neither' by "
    "sha256(prompt) % 3; CoRAG sub-queries are quoted queries, then 'Intermediate query k: ... details'; "
    "CoRAG intermediate answers are the fact of the sub-query.  Any other answer prompt gets one of "
    "three variants chosen by sha256(prompt) % 3: ' answer', ' answer\\nThis is supported by the "
    "documents.', ' I am not sure.'.  vLLM: the continuation is cut where the first stop string to "
    "complete ends (kept when include_stop_str_in_output); API: cut before the first stop string.  "
    "hf (FLARE, REPLUG): see FakeCausalLM in record_traces.py; FLARE continues with the facts as "
    "sentences then 'So the answer is answer.' (sentences already in the prompt skipped, then ' Done.'); "
    "REPLUG: each passage's prompt proposes the answer when the passage title's first word occurs in the "
    "question's facts, else the title."
)

QUESTIONS = [json.loads(l) for l in open(os.path.join(HERE, "questions.jsonl"))]
ANSWERS = ["Jane Austen", "Canberra", "July 20, 1969", "Poland", "yes", "Ohio"]
HOPS = [0, 1, 1, 2, 2, 2]
QUERIES = [
    ["Pride and Prejudice author"],
    ["capital city of Australia"],
    ["Apollo 11 Moon landing"],
    ["polonium discovered physicist", "Marie Curie born"],
    ["Eiffel Tower engineer", "Statue of Liberty iron framework"],
    ["Jaws film director", "Steven Spielberg born"],
]
FACTS = [
    ["Pride and Prejudice was written by Jane Austen"],
    ["The capital city of Australia is Canberra"],
    ["Apollo 11 landed on the Moon on July 20, 1969"],
    ["Polonium was discovered by Marie Curie", "Marie Curie was born in Warsaw, Poland"],
    [
        "The Eiffel Tower was built by Gustave Eiffel's company",
        "Gustave Eiffel engineered the Statue of Liberty framework",
    ],
    ["Jaws was directed by Steven Spielberg", "Steven Spielberg was born in Cincinnati, Ohio"],
]
# the reasoning methods: question 5 ends without the answer tags (the "no pattern" branch)
NO_PATTERN_QUESTION = 5
# adaptive-rag / skr judgements (the real judgers need CUDA / a downloaded classifier)
ADAPTIVE_JUDGE = ["A", "B", "B", "C", "C", "A"]
SKR_JUDGE = [False, True, True, True, False, True]

EVENTS = []  # the recording of the current run (reset per method/form)


def h(text):
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16)


def question_index(prompt):
    best, pos = None, -1
    for i, q in enumerate(QUESTIONS):
        p = prompt.rfind(q["question"])
        if p > pos:
            best, pos = i, p
    return best


def answer_variant(prompt, qi):
    v = h(prompt) % 3
    if v == 0:
        return " " + ANSWERS[qi]
    if v == 1:
        return " " + ANSWERS[qi] + "\nThis is supported by the documents."
    return " I am not sure."


# ---------------------------------------------------------------- the scripted continuations
def respond(prompt):
    """The fake model's continuation (before stop strings cut it) for one prompt string."""
    if "generate an appropriate answer for the query" in prompt:
        sub = prompt.rsplit("## Query\n", 1)[1].split("\n", 1)[0]
        for qs, fs in zip(QUERIES, FACTS):
            for q, f in zip(qs, fs):
                if sub.startswith(q):
                    return f"{f}."
        return "No relevant information found"
    qi = question_index(prompt)
    if qi is None:
        return " I am not sure."
    ans = ANSWERS[qi]
    hops = HOPS[qi]
    # --- SuRe
    if "provide two correct candidates" in prompt:
        return f" (a) {ans}, (b) {QUERIES[qi][0].split()[0]}"
    if "Does the passage correctly support the prediction?" in prompt:
        return " True" if h(prompt) % 2 else " False"
    if "Choices: [Passage 1,Passage 2]" in prompt:
        return [" Passage 1", " Passage 2", " Neither"][h(prompt) % 3]
    if "write [DONE] to indicate" in prompt:
        pred = prompt.rsplit("Prediction: ", 1)[1].split("\n", 1)[0]
        return f" The passages say that the answer is {pred}. [DONE]"
    # --- reasoning family: tags from the instruction in the prompt
    for q_open, q_close, d_open, final in [
        ("<|begin_search_query|>", "<|end_search_query|>", "<|begin_search_result|>", "\\boxed{%s}"),
        ("<|begin_of_query|>", "<|end_of_query|>", "<|begin_of_documents|>", "<answer> %s </answer>"),
        ("<search>\n<query>", "</query>\n</search>", "<learnings>", "<answer> %s </answer>"),
        ("<search>", "</search>", "<information>", "<answer> %s </answer>"),
    ]:
        if q_open in prompt:
            if d_open == "<learnings>":
                done = prompt.count("Search learnings: <learnings>")
            else:
                done = prompt.count(f"\n\n{d_open}\n")
            refine = " <refine> The documents are relevant. </refine>" if "<refine>" in prompt and done else ""
            if done < hops:
                return f"{refine} I need to search. {q_open} {QUERIES[qi][done]} {q_close} trailing text"
            if qi == NO_PATTERN_QUESTION:
                return f"{refine} I think the answer is {ans}."
            return f"{refine} {FACTS[qi][-1]}. </think>\n\n" + (final % ans) + " trailing text"
    # --- Self-Ask: the prompt ends with what has been generated so far (res)
    if "Are follow up questions needed here:" in prompt:
        after = prompt.rsplit("Are follow up questions needed here: ", 1)[1]
        res = after.split("\n", 1)[1] if "\n" in after else ""
        k = res.count("Follow up:") - 1  # index of the follow-up being worked on
        if res.endswith("Follow up:"):  # FlashRAG kept the stop string: continue the question
            return f" {QUERIES[qi][min(k, len(QUERIES[qi]) - 1)]}?\nIntermediate answer: {FACTS[qi][min(k, len(FACTS[qi]) - 1)]}."
        if res.endswith("?"):  # a follow-up question waits for its answer
            nxt = (
                f"Follow up: {QUERIES[qi][k + 1]}?\nIntermediate answer: {FACTS[qi][k + 1]}."
                if k + 1 < hops
                else f"So the final answer is: {ans}\n"
            )
            return f" {FACTS[qi][min(k, len(FACTS[qi]) - 1)]}.\n{nxt}"
        if hops and not res:
            return f"Follow up: {QUERIES[qi][0]}?\nIntermediate answer: {FACTS[qi][0]}."
        return f"So the final answer is: {ans}\n"
    # --- ReaRAG: Thought/Action steps, then a long answer and a short answer
    if "[Reference answer]" in prompt:
        return f" {ans}"
    if "If the Question is comparison type" in prompt:
        return answer_variant(prompt, qi)
    if "# Available functions:" in prompt:
        done = prompt.count("{'function': 'search'")  # the searches it already made
        if done < hops:
            return (
                "Thought 1: I need to look this up.\nAction 1: ```\n{'function': 'search', 'parameters': {'query': '%s'}}\n```"
                % QUERIES[qi][done]
            )
        return (
            "Thought 1: I know the answer now.\nAction 1: ```\n{'function': 'finish', 'parameters': {'answer': 'The answer is %s.'}}\n```"
            % ans
        )
    # --- CoRAG: sub-query, intermediate answer, final answer
    if "generate a new simple follow-up question" in prompt:
        k = prompt.count("Intermediate query ")
        if k < len(QUERIES[qi]):
            return f'"{QUERIES[qi][k]}"'
        return f"Intermediate query {k + 1}: {QUERIES[qi][-1]} details"
    if "generate a final answer for the main query" in prompt:
        return f" {ans}"
    # --- IRCoT: thoughts so far follow the last "Thought:"
    if prompt.rstrip().endswith("Thought:") or "\nThought:" in prompt[-2000:]:
        tail = prompt.rsplit("Thought:", 1)[1]
        done = tail.count(".") + tail.count("\n")
        if done < hops:
            sep = "\n" if done == 1 else "."
            return f" {FACTS[qi][done]}{sep} Then more text."
        return f" So the answer is: {ans}. Extra sentence."
    return answer_variant(prompt, qi)


def cut_at_stop(text, stop, include):
    """vLLM's stop strings: generation ends as soon as a stop string is complete, so the stop string
    that ENDS first wins (ties: the first in the list); it is kept only when include is set."""
    best = None  # (end, start, stop string)
    for s in stop or []:
        i = text.find(s)
        if i != -1 and (best is None or i + len(s) < best[0]):
            best = (i + len(s), i, s)
    if best is None:
        return text, None
    end, start, hit = best
    return (text[:end] if include else text[:start]), hit


# ---------------------------------------------------------------- fake vllm
class _SamplingParams:
    def __init__(self, **kw):
        self.kw = copy.deepcopy(kw)


class _Out:
    def __init__(self, text):
        self.text = text
        self.logprobs = None


class _ReqOut:
    def __init__(self, text):
        self.outputs = [_Out(text)]


class _LLM:
    calls = 0

    def __init__(self, *args, **kwargs):
        pass

    def generate(self, prompts, sampling_params, **kw):
        params = sampling_params.kw
        _LLM.calls += 1
        outs = []
        for p in prompts:
            raw = respond(p)
            text, hit = cut_at_stop(raw, params.get("stop"), params.get("include_stop_str_in_output", False))
            ev = {"type": "llm", "batch": _LLM.calls, "input": p, "params": params, "output": text}
            attach_messages(ev)
            EVENTS.append(ev)
            outs.append(_ReqOut(text))
        return outs


def install_transformers4_names():
    """FlashRAG's replug_utils imports names that transformers 5 removed (SampleDecoderOnlyOutput, ...,
    validate_stopping_criteria); give them back under the old names so the module imports.  Only the
    REPLUGLogitsProcessor of that module runs here (the fake model does the decoding)."""
    import transformers.generation.stopping_criteria as sc
    import transformers.generation.utils as gu

    for old, new in (
        ("SampleDecoderOnlyOutput", "GenerateDecoderOnlyOutput"),
        ("SampleEncoderDecoderOutput", "GenerateEncoderDecoderOutput"),
        ("SampleOutput", "GenerateOutput"),
    ):
        if not hasattr(gu, old):
            setattr(gu, old, getattr(gu, new))
    if not hasattr(sc, "validate_stopping_criteria"):
        sc.validate_stopping_criteria = lambda criteria, max_length: criteria


def install_fake_vllm():
    vllm = types.ModuleType("vllm")
    vllm.LLM = _LLM
    vllm.SamplingParams = _SamplingParams
    lora = types.ModuleType("vllm.lora")
    req = types.ModuleType("vllm.lora.request")
    req.LoRARequest = object
    sys.modules.update({"vllm": vllm, "vllm.lora": lora, "vllm.lora.request": req})


# ---------------------------------------------------------------- fake OpenAI API (the "openai" form)
OPENAI_FORM = {
    "framework": "openai",
    "generator_model": "gpt-4o-mini",
    "openai_setting": {"api_key": "not-used", "base_url": "http://127.0.0.1:9/v1"},
}


class FakeTiktoken:
    """Stands in for tiktoken's encoding (its BPE file is downloaded at first use): one token per
    word with its leading whitespace.  FlashRAG uses it only to measure and truncate prompts, which
    no prompt here is long enough to trigger."""

    def __init__(self):
        self.pieces, self.ids = [], {}

    def encode(self, text, **kw):
        import re

        out = []
        for piece in re.findall(r"\s*\S+|\s+", text):
            if piece not in self.ids:
                self.ids[piece] = len(self.pieces)
                self.pieces.append(piece)
            out.append(self.ids[piece])
        return out

    def decode(self, ids):
        return "".join(self.pieces[i] for i in ids)


def messages_text(messages):
    """The text the fake model reads from chat messages: contents joined by blank lines, an
    assistant message (FlashRAG's previous_gen) appended directly, as in the plain form."""
    if isinstance(messages, str):
        return messages
    text = ""
    for m in messages:
        if m["role"] == "assistant":
            text += m["content"]
        elif m["content"]:
            text += ("\n\n" if text else "") + m["content"]
    return text


class FakeAsyncOpenAI:
    """Stands in for openai.AsyncOpenAI: the scripted continuation, cut BEFORE the first stop string
    (the OpenAI API never returns it)."""

    def __init__(self, **kw):
        self.chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=self._chat))
        self.completions = types.SimpleNamespace(create=self._completion)

    def _reply(self, model, inp, params):
        text, _ = cut_at_stop(respond(messages_text(inp)), params.get("stop"), False)
        EVENTS.append(
            {
                "type": "llm",
                "batch": _LLM.calls,
                "input": copy.deepcopy(inp),
                "params": dict(copy.deepcopy(params), model=model),
                "output": text,
            }
        )
        return text

    async def _chat(self, model, messages, **params):
        text = self._reply(model, messages, params)
        return types.SimpleNamespace(
            choices=[types.SimpleNamespace(message=types.SimpleNamespace(content=text), logprobs=None)]
        )

    async def _completion(self, model, prompt, **params):
        text = self._reply(model, prompt, params)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(text=text, logprobs=None)])


def install_fake_openai():
    import flashrag.generator.openai_generator as og
    import tiktoken

    encoding = FakeTiktoken()
    tiktoken.encoding_for_model = lambda name: encoding
    og.AsyncOpenAI = FakeAsyncOpenAI


def count_generate_calls(generator):
    """Number the generate() calls of an API generator (the fake vLLM numbers its own)."""
    orig = generator.generate

    def generate(*a, **kw):
        _LLM.calls += 1
        return orig(*a, **kw)

    generator.generate = generate


# ---------------------------------------------------------------- chat-template spy
CHAT_RENDERS = {}


def spy_chat_template(tokenizer):
    if not hasattr(tokenizer, "apply_chat_template"):  # tiktoken (openai form)
        return
    orig = tokenizer.apply_chat_template

    def wrapped(messages, *a, **kw):
        out = orig(messages, *a, **kw)
        if isinstance(out, str):
            CHAT_RENDERS[out] = copy.deepcopy(messages)
        return out

    tokenizer.apply_chat_template = wrapped


def attach_messages(ev):
    """Name the chat messages a prompt string was rendered from (and any text appended after)."""
    p = ev["input"]
    if not isinstance(p, str):
        return
    best = max((r for r in CHAT_RENDERS if p.startswith(r)), key=len, default=None)
    if best is not None:
        ev["messages"] = CHAT_RENDERS[best]
        ev["appended_after_template"] = p[len(best) :]


# ---------------------------------------------------------------- retrieval spy
def spy_retriever(retriever):
    orig_search, orig_batch = retriever.search, retriever.batch_search

    def rec(query, num, results, scores, batch):
        EVENTS.append(
            {
                "type": "retrieve",
                "batch": batch,
                "query": query,
                "topk": num if num is not None else retriever.topk,
                "results": [
                    {"id": d["id"], "score": round(float(s), 6)}  # contents: corpus.jsonl by id
                    for d, s in zip(results, scores)
                ],
            }
        )

    def search(query, num=None, return_score=False):
        results, scores = orig_search(query, num=num, return_score=True)
        rec(query, num, results, scores, False)
        return (results, scores) if return_score else results

    def batch_search(query, num=None, return_score=False):
        results, scores = orig_batch(query, num=num, return_score=True)
        for q, r, s in zip(query, results, scores):
            rec(q, num, r, s, True)
        return (results, scores) if return_score else results

    retriever.search, retriever.batch_search = search, batch_search


def ids_only(x):
    """Passages inside stored output fields are named by id (their text is in corpus.jsonl)."""
    if isinstance(x, dict):
        if "id" in x and "contents" in x:
            return {k: x[k] for k in ("id", "score") if k in x}
        return {k: ids_only(v) for k, v in x.items()}
    if isinstance(x, list):
        return [ids_only(v) for v in x]
    return x


MIN_SHARED_PREFIX = 80


def share_prefixes(events, form, seen):
    """Store a long text that repeats an earlier one by reference: the fixture stays small although
    multi-step methods resend growing prompts and the API form resends the chat form's messages.
    `seen` maps (form, seq, message index or None) -> text, over the forms recorded so far.
    A prompt string that starts like an earlier text becomes
    {"input_prefix": {"form", "seq", "index", "chars"}, "input_tail"}; a chat message's content
    (API form) found whole inside an earlier text becomes {"role", "content_from": {"form", "seq",
    "index", "start", "chars"}}, or else, when it starts like one, {"role", "content_prefix": {...},
    "content_tail"}.  "index" is null when event "seq"'s input is a prompt string."""

    def ref(key, **more):
        return dict({"form": key[0], "seq": key[1], "index": key[2]}, **more)

    def longest_prefix(text):
        best, best_n = None, 0
        for key, earlier in seen.items():
            n = len(os.path.commonprefix([earlier, text]))
            if n > best_n:
                best, best_n = key, n
        return (best, best_n) if best_n >= MIN_SHARED_PREFIX else (None, 0)

    for ev in events:
        inp = ev.get("input")
        if ev["type"] != "llm":
            continue
        if isinstance(inp, str):
            key, n = longest_prefix(inp)
            seen[(form, ev["seq"], None)] = inp
            if key is not None:
                del ev["input"]
                ev["input_prefix"] = ref(key, chars=n)
                ev["input_tail"] = inp[n:]
        elif isinstance(inp, list):
            for j, m in enumerate(inp):
                content = m.get("content")
                if not isinstance(content, str):
                    continue
                found = None
                if len(content) >= MIN_SHARED_PREFIX:
                    found = next(((k, t.find(content)) for k, t in seen.items() if content in t), None)
                key, n = (None, 0) if found else longest_prefix(content)
                seen[(form, ev["seq"], j)] = content
                if found:
                    inp[j] = {"role": m["role"], "content_from": ref(found[0], start=found[1], chars=len(content))}
                elif key is not None:
                    inp[j] = {"role": m["role"], "content_prefix": ref(key, chars=n), "content_tail": content[n:]}


def messages_as_spans(events, inputs):
    """A chat event's messages name their contents as [start, end) spans of the full prompt string
    (the chat template copies them verbatim), and the text FlashRAG appended after the rendered
    template as a character count: the fixture does not hold every prompt twice."""
    for ev in events:
        if "messages" not in ev:
            continue
        text, pos, msgs = inputs[ev["seq"]], 0, []
        for m in ev["messages"]:
            i = text.find(m["content"], pos) if m["content"] else -1
            if i == -1:
                msgs.append(m)
            else:
                msgs.append({"role": m["role"], "content_span": [i, i + len(m["content"])]})
                pos = i + len(m["content"])
        ev["messages"] = msgs
        ev["appended_after_template_chars"] = len(ev.pop("appended_after_template"))


def full_inputs(forms):
    """{form: {seq: the full model input}} of a fixture's "forms" (in their order): a prompt string,
    or the list of chat messages in the API form (undoes share_prefixes)."""
    texts, out = {}, {}

    def text_of(r, start=0):
        return texts[(r["form"], r["seq"], r["index"])][start : start + r["chars"]]

    for name, form in forms.items():
        out[name] = {}
        events = sorted(
            (ev for ex in form.get("examples", []) for ev in ex["events"] if ev["type"] == "llm"),
            key=lambda e: e["seq"],
        )
        for ev in events:
            if "input_prefix" in ev:
                inp = text_of(ev["input_prefix"]) + ev["input_tail"]
            elif isinstance(ev["input"], list):
                inp = [
                    {"role": m["role"], "content": text_of(m["content_from"], m["content_from"]["start"])}
                    if "content_from" in m
                    else {"role": m["role"], "content": text_of(m["content_prefix"]) + m["content_tail"]}
                    if "content_prefix" in m
                    else dict(m)
                    for m in ev["input"]
                ]
            else:
                inp = ev["input"]
            if isinstance(inp, str):
                texts[(name, ev["seq"], None)] = inp
            else:
                for j, m in enumerate(inp):
                    if isinstance(m.get("content"), str):
                        texts[(name, ev["seq"], j)] = m["content"]
            out[name][ev["seq"]] = inp
    return out


def jsonable(x):
    try:
        json.dumps(x)
        return x
    except TypeError:
        if isinstance(x, dict):
            return {k: jsonable(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [jsonable(v) for v in x]
        if hasattr(x, "tolist"):
            return x.tolist()
        return repr(x)


# ---------------------------------------------------------------- fake HF causal LM (FLARE, REPLUG)
def token_prob(token_text):
    """Fake confidence of one generated token: low (0.1) for a token holding a digit and for the
    token 'So' (which opens the answer sentence), else high (0.9)."""
    t = token_text.strip()
    return 0.1 if any(c.isdigit() for c in t) or t == "So" else 0.9


class FakeCausalLM:
    """Stands in for an HF AutoModelForCausalLM inside FlashRAG's HFCausalLMGenerator: greedy
    decoding of a scripted continuation; each step's logits give the scripted token a
    probability of token_prob(token) (REPLUG: the scripted token of each document's prompt
    differs, and FlashRAG's logits processor mixes the rows)."""

    def __init__(self, tokenizer, mode):
        import torch

        self.tok = tokenizer
        self.mode = mode
        self.device = torch.device("cpu")
        self.vocab = len(tokenizer)

    def to(self, device):
        return self

    def eval(self):
        return self

    def continuation_ids(self, prompt):
        qi = question_index(prompt)
        if self.mode == "flare":
            # continue after what the prompt already holds (FlashRAG appends previous_gen)
            # the script's sentences not yet in the prompt (FlashRAG appends what it kept)
            if qi is None:
                return self.tok.encode(" No idea.", add_special_tokens=False)
            sents = [f"{f}." for f in FACTS[qi]] + [f"So the answer is {ANSWERS[qi]}."]
            prev = prompt[prompt.rfind(QUESTIONS[qi]["question"]) + len(QUESTIONS[qi]["question"]) :]
            todo = [x for x in sents if x not in prev]
            text = "".join(" " + x for x in todo) if todo else " Done."
        else:  # replug: each document's prompt proposes an answer; a digit of the doc id varies it
            doc = prompt.split("Document(Title: ", 1)[-1].split(")", 1)[0]
            text = f" {ANSWERS[qi]}" if qi is not None and doc.split()[0] in " ".join(FACTS[qi]) else f" {doc}"
            text += "\n"
        return self.tok.encode(text, add_special_tokens=False)

    def step_logits(self, scripts, step):
        """Each row's next-token logits at generation step `step`: its script's token there (the eos token after
        the script) with probability token_prob(token) (0.99 for the eos), every other token at logit 0."""
        import math

        import torch

        logits = torch.zeros(len(scripts), self.vocab)
        eos = self.tok.eos_token_id
        for r, ids in enumerate(scripts):
            t = ids[step] if step < len(ids) else eos
            p = token_prob(self.tok.decode([t])) if step < len(ids) else 0.99
            logits[r, t] = math.log(p * (self.vocab - 1) / (1 - p))
        return logits

    def generate(self, input_ids=None, attention_mask=None, logits_processor=None, max_new_tokens=32, **kw):
        import torch

        prompts = [self.tok.decode(ids, skip_special_tokens=True) for ids in input_ids]
        scripts = [self.continuation_ids(p) for p in prompts]
        params = {k: jsonable(v) for k, v in kw.items() if k not in ("stopping_criteria",)}
        params["max_new_tokens"] = max_new_tokens
        params["logits_processor"] = repr([type(p).__name__ for p in logits_processor]) if logits_processor else None
        params["stopping_criteria"] = (
            ("StopWordCriteria(%s)" % kw["stopping_criteria"][0].stop_words) if kw.get("stopping_criteria") else None
        )
        for p in prompts:
            ev = {"type": "llm", "input": p, "params": params}
            attach_messages(ev)
            EVENTS.append(ev)
        seqs = input_ids.clone()
        steps = []
        eos = self.tok.eos_token_id
        for step in range(max_new_tokens):
            logits = self.step_logits(scripts, step)
            if logits_processor:
                logits = logits_processor(seqs, logits)
            steps.append(logits)
            nxt = logits.argmax(-1)
            seqs = torch.cat([seqs, nxt[:, None]], dim=1)
            if all(int(n) == eos for n in nxt):
                break
            if kw.get("stopping_criteria") and kw["stopping_criteria"][0](seqs, None):
                break
        out = types.SimpleNamespace(sequences=seqs, scores=tuple(steps))
        for ev, ids in zip(EVENTS[-len(prompts) :], seqs[:, input_ids.shape[1] :]):
            ev["output_raw"] = self.tok.decode(ids, skip_special_tokens=True)
        return out


# ---------------------------------------------------------------- the methods (settings from examples/methods/run_exp.py)
REASONING_PARAMS = {"max_tokens": 512, "skip_special_tokens": False}

METHODS = {
    # name: (run_exp.py function, config overrides, builder)
    "naive": ("naive", {}, lambda P, c: P.SequentialPipeline(c)),
    "zero_shot": ("zero_shot", {}, None),
    "iter_retgen": ("iterretgen", {}, lambda P, c: P.IterativePipeline(c, iter_num=3)),
    "ircot": ("ircot", {}, lambda P, c: P.IRCOTPipeline(c, max_iter=5)),
    "self_ask": (
        "retrobust (SelfAskPipeline, without its LoRA)",
        {"generation_params": {"max_tokens": 100}, "generator_max_input_len": 4096},
        lambda P, c: P.SelfAskPipeline(c, max_iter=5, single_hop=False),
    ),
    "sure": ("sure", {}, lambda P, c: P.SuRePipeline(c)),
    "skr": ("skr", {"judger_name": "skr"}, lambda P, c: P.ConditionalPipeline(c)),
    "adaptive_rag": ("adaptive", {"judger_name": "adaptive-rag"}, lambda P, c: P.AdaptivePipeline(c)),
    "flare": ("flare (framework hf: FlashRAG's vLLM generator fails on return_scores)", {"framework": "hf"}, None),
    "replug": ("replug", {"framework": "hf"}, None),
    "r1_searcher": (
        "r1searcher",
        {"generator_max_input_len": 16384, "generation_params": REASONING_PARAMS},
        lambda P, c: P.ReasoningPipeline(c),
    ),
    "search_r1": (
        "searchr1",
        {"generator_max_input_len": 16384, "generation_params": REASONING_PARAMS},
        lambda P, c: P.SearchR1Pipeline(c),
    ),
    "autorefine": (
        "autorefine",
        {"generator_max_input_len": 16384, "generation_params": REASONING_PARAMS},
        lambda P, c: P.AutoRefinePipeline(c),
    ),
    "o2_searcher": (
        "o2searcher",
        {"retrieval_topk": 3, "generator_max_input_len": 16384, "generation_params": REASONING_PARAMS},
        lambda P, c: P.O2SearcherPipeline(c),
    ),
    "rearag": (
        "rearag",
        {
            "is_reasoning": True,
            "generator_max_input_len": 8192 - 2 - 1024,
            "generation_params": {"max_tokens": 1024, "do_sample": True},
        },
        lambda P, c: P.ReaRAGPipeline(c),
    ),
    "corag": (
        "corag",
        {
            "is_reasoning": True,
            "generator_max_input_len": 4096,
            "generation_params": REASONING_PARAMS,
            "task_desc": "Given a multi-hop question, retrieve documents that can help answer the question",
        },
        lambda P, c: P.CoRAGPipeline(c),
    ),
    "simple_deep_searcher": (
        "simpledeepsearcher",
        {"generator_max_input_len": 20480, "generation_params": {"max_tokens": 2048, "skip_special_tokens": False}},
        lambda P, c: P.SimpleDeepSearcherPipeline(c),
    ),
}


class ScriptedJudger:
    def __init__(self, answers):
        self.answers = answers

    def judge(self, dataset):
        return [self.answers[question_index(q)] for q in dataset.question]


def build_index(work):
    from flashrag.retriever.index_builder import Index_Builder

    out = os.path.join(work, "index")
    if not os.path.exists(os.path.join(out, "bm25")):
        Index_Builder(
            retrieval_method="bm25",
            model_path=None,
            corpus_path=os.path.join(HERE, "corpus.jsonl"),
            save_dir=out,
            max_length=512,
            batch_size=8,
            use_fp16=False,
            bm25_backend="bm25s",
        ).build_index()
    return os.path.join(out, "bm25")


def make_config(src, work, model_path, overrides):
    from flashrag.config import Config

    cfg = {
        "data_dir": work,
        "save_dir": os.path.join(work, "output"),
        "gpu_id": "",
        "dataset_name": "parity",
        "split": ["test"],
        "save_note": "parity",
        "retrieval_method": "bm25",
        "bm25_backend": "bm25s",
        "index_path": os.path.join(work, "index", "bm25"),
        "corpus_path": os.path.join(HERE, "corpus.jsonl"),
        "generator_model_path": model_path,
        "metrics": ["em", "f1", "acc"],
    }
    cfg.update(copy.deepcopy(overrides))
    return Config(os.path.join(src, "examples", "methods", "my_config.yaml"), cfg), cfg


def run_method(
    name, src, work, model_path, form_overrides, questions=os.path.join(HERE, "questions.jsonl"), do_eval=False
):
    """One method's pipeline on the questions; do_eval=True scores and saves as run_exp.py does (its default)."""
    import flashrag.pipeline as P
    import flashrag.pipeline.pipeline as PP
    from flashrag.dataset import Dataset
    from flashrag.prompt import PromptTemplate
    from flashrag.utils import get_generator, get_retriever

    fn, overrides, builder = METHODS[name]
    config, cfg = make_config(src, work, model_path, dict(overrides, **form_overrides))
    data = Dataset(config, dataset_path=questions)
    retriever = get_retriever(config)
    spy_retriever(retriever)
    if config["framework"] == "hf":
        from flashrag.generator import HFCausalLMGenerator
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(model_path)
        generator = HFCausalLMGenerator(config, model=FakeCausalLM(tok, name))
    else:
        generator = get_generator(config)
    if config["framework"] == "openai":
        count_generate_calls(generator)
    spy_chat_template(generator.tokenizer)
    orig_get_tok = PromptTemplate._get_tokenizer

    def _get_tokenizer(self):  # spy on every template's tokenizer once it is loaded
        first = self.tokenizer is None
        t = orig_get_tok(self)
        if first:
            spy_chat_template(t)
        return t

    PromptTemplate._get_tokenizer = _get_tokenizer
    judgements = None
    factories = {k: getattr(PP, k) for k in ("get_judger", "get_generator", "get_retriever")}
    try:
        if name in ("skr", "adaptive_rag"):
            judgements = SKR_JUDGE if name == "skr" else ADAPTIVE_JUDGE
            PP.get_judger = lambda c: ScriptedJudger(judgements)
            PP.get_generator = lambda c: generator
            PP.get_retriever = lambda c: retriever
        if name == "zero_shot":
            t = PromptTemplate(
                config=config,
                system_prompt="Answer the question based on your own knowledge. Only give me the answer and do not output any other words.",
                user_prompt="Question: {question}",
            )
            result = P.SequentialPipeline(config, t, retriever=retriever, generator=generator).naive_run(
                data, do_eval=do_eval
            )
        elif name == "flare":
            result = P.FLAREPipeline(config, retriever=retriever, generator=generator).run(data, do_eval=do_eval)
        elif name == "replug":
            result = P.REPLUGPipeline(config, retriever=retriever, generator=generator).run(data, do_eval=do_eval)
        else:
            pipe = builder(P, config)
            if getattr(pipe, "retriever", None) is not retriever and hasattr(pipe, "retriever"):
                spy_retriever(pipe.retriever)
            if hasattr(pipe, "generator") and pipe.generator is not generator:
                spy_chat_template(pipe.generator.tokenizer)
                if config["framework"] == "openai":
                    count_generate_calls(pipe.generator)
            result = pipe.run(data, do_eval=do_eval)
    finally:
        PromptTemplate._get_tokenizer = orig_get_tok
        for k, v in factories.items():
            setattr(PP, k, v)
    return result, cfg, judgements, fn


def example_of(ev, events_before):
    if ev["type"] == "llm":
        text = ev["input"] if isinstance(ev["input"], str) else json.dumps(ev["input"])
        qi = question_index(text)
        if qi is None:  # a prompt about a sub-query (CoRAG): the example that retrieved for it
            for prev in reversed(events_before):
                if prev["type"] == "retrieve" and prev["query"].strip() and prev["query"] in text:
                    return prev["example"]
        return qi
    q = ev["query"]
    for i, item in enumerate(QUESTIONS):
        if q.startswith(item["question"]):
            return i
    for prev in reversed(events_before):
        if prev["type"] == "llm" and q.strip() and q.strip() in prev.get("output", prev.get("output_raw", "")):
            return prev["example"]
    for prev in reversed(events_before):  # per-example methods (FLARE): the last model call's example
        if prev["type"] == "llm":
            return prev["example"]
    return None


def record(name, src, work, models):
    forms, seen, all_inputs = {}, {}, {}
    for form, (model_path, form_overrides) in models.items():
        if form == "openai" and METHODS[name][1].get("framework") == "hf":
            continue  # FLARE and REPLUG read token scores / logits the API stand-in does not give
        if form == "openai" and name == "self_ask":
            # its prompt is a bare string, which OpenaiGenerator iterates: one request per CHARACTER
            forms[form] = {
                "not_recorded": "OpenaiGenerator.generate(str) sends one completion request per character "
                "of the prompt (openai_generator.py:94-101); thousands of calls"
            }
            continue
        EVENTS.clear()
        CHAT_RENDERS.clear()
        _LLM.calls = 0
        try:
            result, cfg, judgements, fn = run_method(name, src, work, model_path, form_overrides)
        except Exception as e:  # a FlashRAG failure is a finding: record it
            import traceback

            before = [dict(ev, seq=seq) for seq, ev in enumerate(EVENTS)]
            share_prefixes(before, form, {})
            frames = [
                f"{os.path.relpath(f.filename, src)}:{f.lineno} in {f.name}: {f.line}"
                for f in traceback.extract_tb(e.__traceback__)
                if f.filename.startswith(os.path.abspath(src))
            ]
            forms[form] = {
                "error": f"{type(e).__name__}: {e}",
                "flashrag_frames": frames[-4:],
                "events_before_error": before,
            }
            continue
        events = []
        for seq, ev in enumerate(EVENTS):
            ev = dict(ev, seq=seq)
            ev["example"] = example_of(ev, events)
            events.append(ev)
        inputs = {ev["seq"]: copy.deepcopy(ev["input"]) for ev in events if ev["type"] == "llm"}
        share_prefixes(events, form, seen)
        all_inputs[form] = inputs
        messages_as_spans(events, inputs)
        examples = []
        for i, item in enumerate(result):
            out = {
                k: ids_only(jsonable(v))
                for k, v in item.output.items()
                if k not in ("retrieval_result", "messages")
                and not k.startswith("prompt")
                and not k.endswith("_prompts")
                and not k.endswith("_messages")
            }
            examples.append(
                {
                    "id": item.id,
                    "question": item.question,
                    "golden_answers": item.golden_answers,
                    "prediction": item.output.get("pred"),
                    "output_fields": out,
                    "events": [{k: v for k, v in ev.items() if k != "example"} for ev in events if ev["example"] == i],
                }
            )
        forms[form] = {
            "model_path_kind": os.path.basename(model_path) if form != "openai" else None,
            "config_overrides": cfg,
            "judgements": judgements,
            "call_order": [
                [
                    ev["seq"],
                    ev["type"],
                    result[ev["example"]].id if ev["example"] is not None else None,
                    ev.get("batch"),
                ]
                for ev in events
            ],
            "unassigned_events": [ev for ev in events if ev["example"] is None],
            "examples": examples,
        }
        if form == "chat" and all_inputs.get("plain") == inputs:
            forms["chat"] = {"same_as": "plain", "why": "FlashRAG builds the same string prompts for a chat model here"}
            del all_inputs["chat"]
            for key in [k for k in seen if k[0] == "chat"]:
                del seen[key]
    assert {k: v for k, v in full_inputs(forms).items() if k in all_inputs} == all_inputs, "share_prefixes lost text"
    return forms, METHODS[name][0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--src", default="/tmp/flashrag-src", help="FlashRAG checkout (or a copy holding a COMMIT file)")
    ap.add_argument("--work", default="/tmp/flashrag-parity-work")
    ap.add_argument("--methods", nargs="*", default=list(METHODS))
    ap.add_argument("--out", default=HERE)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    models = {}
    for form, sub in (("plain", "smollm2-base"), ("chat", "smollm2-instruct")):
        d = os.path.join(args.work, "models", sub)
        os.makedirs(d, exist_ok=True)
        for f in (
            "config.json",
            "tokenizer.json",
            "tokenizer_config.json",
            "chat_template.jinja",
            "generation_config.json",
        ):
            if os.path.exists(os.path.join(args.model_dir, f)):
                shutil.copy(os.path.join(args.model_dir, f), d)
        models[form] = (d, {})
    models["openai"] = (models["plain"][0], OPENAI_FORM)
    install_fake_vllm()
    install_transformers4_names()
    install_fake_openai()
    build_index(args.work)
    sha = (
        subprocess.run(["git", "-C", args.src, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        or open(os.path.join(args.src, "COMMIT")).read().strip()
    )
    for name in args.methods:
        forms, fn = record(name, args.src, args.work, models)
        doc = {
            "method": name,
            "flashrag_commit": sha,
            "run_exp_function": fn,
            "config_file": "examples/methods/my_config.yaml (FlashRAG) + config_overrides",
            "fake_model_rule": FAKE_RULE,
            "fake_model_script": {
                "answers": ANSWERS,
                "hops": HOPS,
                "queries": QUERIES,
                "facts": FACTS,
                "no_pattern_question": NO_PATTERN_QUESTION,
            },
            "fake_hf_token_prob": token_prob.__doc__ if METHODS[name][1].get("framework") == "hf" else None,
            "corpus": "corpus.jsonl (retrieval results name passages by id)",
            "questions": "questions.jsonl",
            "forms": forms,
        }
        with open(os.path.join(args.out, f"{name}.json"), "w") as f:
            json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
        print(name, {k: ("error: " + v["error"]) if "error" in v else "ok" for k, v in forms.items()})


if __name__ == "__main__":
    main()
