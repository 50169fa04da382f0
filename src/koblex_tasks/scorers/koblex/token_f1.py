"""`token_f1`: word-overlap F1 between the answer and the reference answer.

Default: the whole answer (a leading `<think>` block removed), full precision. `official=True` reproduces the
paper's script: prediction cut to its first 800 characters, per-item F1 rounded to 4 decimals. An empty answer
scores 0 and is flagged (`empty_answer`), so a silent generation failure is visible in the metrics.
"""

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from koblex_tasks.scorers.koblex.text import official_prediction, strip_reasoning
from koblex_tasks.scorers.koblex.text import token_f1 as f1_parts
from koblex_tasks.scorers.metrics import value_metrics
from koblex_tasks.tasks.koblex.spec import KOBLEX, TOKEN_F1


@scorer(metrics=value_metrics(TOKEN_F1, KOBLEX.stratum, extra={"empty_answer": [mean()]}))
def token_f1(official: bool = False) -> Scorer:
    """Token F1 against the reference answer, and whether the answer was empty (scored 0, counted)."""

    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion or ""
        prediction = official_prediction(answer) if official else strip_reasoning(answer)
        precision, recall, f1 = f1_parts(prediction, target.text)
        if official:
            f1 = round(f1, 4)
        empty = not prediction.strip()
        return Score(
            value={"token_f1": f1, "empty_answer": float(empty)},
            answer=prediction,
            metadata={"precision": precision, "recall": recall, "official": official},
            explanation="empty answer: scored 0" if empty else None,
        )

    return score
