"""A small multi-reference `evaluate` metric written for ragbench's tests: per prediction, the best share
of a reference's words found in the prediction (lower-cased, whitespace words), averaged."""

import datasets
import evaluate


class BestOverlap(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="best share of reference words found in the prediction",
            citation="",
            inputs_description="",
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Sequence(datasets.Value("string"))}
            ),
        )

    def _compute(self, predictions, references):
        best = []
        for prediction, alternatives in zip(predictions, references):
            found = set(prediction.lower().split())
            best.append(
                max(
                    sum(word in found for word in words) / len(words)
                    for words in (reference.lower().split() for reference in alternatives)
                )
            )
        return {"best_overlap": sum(best) / len(best)}
