"""The `selfrag` system: Self-RAG (Asai et al., 2024) inference: reflection-token scoring of one generation per
passage (short form, run_short_form.py `call_model_rerank_w_scores_batch`) and segment beam search (long form,
run_long_form_static.py `call_model_beam_batch` / `run_step_generation_batch`), on the engine's named-token
log-probabilities (`Sampling.logprob_tokens`). system.py holds the System class the registry loads; its other
modules: longform.py, outline.py, prompts.py, scoring.py.
"""
