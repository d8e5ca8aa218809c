"""A small `evaluate` metric written for ragbench's tests: the mean share of reference words that
appear in the prediction (lower-cased, whitespace words)."""

import datasets
import evaluate


class WordOverlap(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="share of reference words found in the prediction",
            citation="",
            inputs_description="",
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
        )

    def _compute(self, predictions, references, scale=1.0):
        shares = []
        for prediction, reference in zip(predictions, references):
            words = reference.lower().split()
            found = set(prediction.lower().split())
            shares.append(sum(word in found for word in words) / len(words) if words else 0.0)
        return {"word_overlap": scale * sum(shares) / len(shares), "count": len(shares)}
