"""LEGIT's own metric: the judge's pooled failure rate (the other metrics are the shared ones, `scorers/metrics.py`)."""

from inspect_ai.scorer import Metric, SampleScore, metric

ISSUE_COUNT_KEY = "n_issues"  # sample metadata: nodes in the document's issue tree


@metric
def pooled() -> Metric:
    """`failure_rate`: unparsable judge replies over all judged issues (pooled, not a mean of per-sample rates).

    Returned as a named part, so the log names it `pooled_failure_rate` (group and name) with no registry
    prefix to strip.

    Each sample's `judge_failure_rate` is weighted by its issue count from the *sample* metadata, which is
    the same in every epoch: after Inspect's epoch reduction (the mean) the weighted sum is the pooled rate
    over all epochs. Score metadata is not reduced across epochs, so it is not read here.
    """

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        failures = total = 0.0
        for s in scores:
            n = float((s.sample_metadata or {}).get(ISSUE_COUNT_KEY) or 0)
            failures += s.score.as_float() * n
            total += n
        return {"failure_rate": failures / total if total else float("nan")}

    return compute
