"""The hf engine's requests with images, and every chat of an image-text-to-text model (AutoModelForImageTextToText),
whose processor's chat template reads typed content parts: one request at a time (local/vision.py renders it).

Decoding follows the engine's text path where it can: only the request's Sampling counts (the model's own
generation_config is not read), greedy at temperature 0, otherwise sampled with temperature and top_p (no top_k)
from a generator seeded by the request's seed; the text is cut at the first EOS and at the earliest stop string
(kept with keep_stop), finish_reason "length" where max_tokens ran out. Log-probabilities of such a request are
not read: it is refused (RequestError) rather than answered without them.
"""

from __future__ import annotations

from typing import Any

from ..._values.engine_errors import RequestError
from ..._values.llm_request import Request
from ..._values.llm_responses import Response
from ..._values.sampling import apply_stop
from ..local.vision import vision_prompt


def generate_with_images(engine: Any, request: Request) -> Response:
    """Answer one request with images on `engine` (an HFEngine holding a `processor`)."""
    sampling = request.sampling
    if sampling.logprobs is not None or sampling.logprob_tokens:
        raise RequestError("hf engine: log-probs of a request with images are not read")
    torch, transformers = engine._torch, engine.transformers
    text, images = vision_prompt(engine.processor, request)
    inputs = engine.processor(text=text, images=images or None, return_tensors="pt").to(engine.device)
    sampled = sampling.temperature > 0
    config = transformers.GenerationConfig(
        max_new_tokens=sampling.max_tokens,
        do_sample=sampled,
        num_return_sequences=sampling.n if sampled else 1,
        pad_token_id=engine.pad_id,
        eos_token_id=sorted(engine.eos_ids),
        **({"temperature": sampling.temperature, "top_p": sampling.top_p, "top_k": 0} if sampled else {}),
    )
    if sampled and sampling.seed is not None:
        torch.manual_seed(sampling.seed)  # under the engine's lock: this request alone draws from it
    with torch.no_grad():
        output = engine.model_obj.generate(**inputs, generation_config=config)
    prompt_tokens = int(inputs["input_ids"].shape[1])
    texts, finish, counts = [], "stop", []
    for row in output[:, prompt_tokens:].tolist():
        ended = next((i for i, token in enumerate(row) if token in engine.eos_ids), None)
        kept = row if ended is None else row[:ended]
        decoded = engine.tokenizer.decode(kept, skip_special_tokens=sampling.skip_special_tokens)
        cut, stopped = apply_stop(decoded, sampling.stop, sampling.keep_stop)
        texts.append(cut)
        counts.append(len(row) if ended is None else ended + 1)
        if not texts[1:] and ended is None and not stopped and len(row) >= sampling.max_tokens:
            finish = "length"
    texts = texts * (sampling.n if not sampled else 1)
    return Response(
        texts=texts[: sampling.n], prompt_tokens=prompt_tokens, completion_tokens=counts[0], finish_reason=finish
    )
