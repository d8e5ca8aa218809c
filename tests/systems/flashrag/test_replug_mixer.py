"""REPLUG's decoding on the hf engine mixes the prompts' next-token logits by the passages' weights, as FlashRAG's
processor does (ragbench._engines.hf.ensemble.LogitMixer), not their probabilities: a unit of the engine's
processor. The system's prompts, weights and answers against FlashRAG's: test_flashrag_parity_replug.py."""

from __future__ import annotations


def test_the_mixer_mixes_logits_not_probabilities():
    import torch

    from ragbench._engines.hf.ensemble import LogitMixer

    scores = torch.tensor([[10.0, 0.0, 0.0], [0.0, 8.0, 8.0]])
    mixed = LogitMixer(torch, [0.5, 0.5], "cpu")(None, scores)
    assert mixed.tolist() == [[5.0, 4.0, 4.0], [5.0, 4.0, 4.0]]
    # one confident passage against one that spreads over three tokens: the logits' mixture picks the latter's
    scores, weights = torch.tensor([[10.0, 0.0, 0.0, 0.0], [0.0, 8.0, 8.0, 8.0]]), [0.4, 0.6]
    mixed = LogitMixer(torch, weights, "cpu")(None, scores)
    by_probabilities = (torch.tensor(weights).unsqueeze(1) * scores.softmax(-1)).sum(0)
    assert int(mixed[0].argmax()) == 1 and int(by_probabilities.argmax()) == 0
