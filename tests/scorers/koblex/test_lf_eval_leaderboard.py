"""The leaderboard re-derives LF-Eval with the spec's rules: a log declaring its own `min_prob` (0.5, NaN) is
refused, even when its stored values follow from that rule; the untouched judged log is accepted."""

import math
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog

from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.logs.rederivation import NO_RECORD
from koblex_tasks.scorers.koblex.lf_eval_record import Rules, derive
from tests.leaderboard.test_submit import submit_rejected, variant


def declaring(where: str, min_prob: float, eval_id: str) -> Callable[[EvalLog], None]:
    """A mutation declaring `min_prob` in the score records ("record") or the scorer's arguments ("options");
    in the records the stored value is recomputed by that rule, so only the rule gives the log away."""

    def mutate(log: EvalLog) -> None:
        log.eval.eval_id = eval_id
        if where == "options":
            [entry] = [s for s in log.eval.scorers or [] if s.name == "lf_eval"]
            entry.options = {**(entry.options or {}), "min_prob": min_prob}
            return
        for sample in log.samples or []:
            score = (sample.scores or {})["lf_eval"]
            meta = {**(score.metadata or {}), "weighting": "koblex", "min_prob": min_prob}
            score.metadata = meta
            score.value = {"lf_eval": derive(meta, Rules("koblex", min_prob)).value}

    return mutate


@pytest.mark.parametrize(("where", "min_prob"), [("record", 0.5), ("record", math.nan), ("options", 0.5)])
def test_a_log_declaring_its_own_min_prob_is_refused(
    where: str, min_prob: float, judged_log: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "board.sqlite"
    forged = variant(
        Path(judged_log), tmp_path / "forged.eval", declaring(where, min_prob, f"forged-{where}")
    )
    err = submit_rejected(db, forged, capsys, "--allow-subset")
    where_named = {"record": "score record", "options": "scorer arguments"}[where]
    assert (
        f"lf_eval: 2 score(s) refused, e.g. 'q1': LF-Eval min_prob={min_prob!r} in the {where_named}; "
        "the spec's rule is 0.01" in err
    ), err
    assert NO_RECORD not in err  # the refusal's own reason, not a missing record
    assert leaderboard_main(["submit", "--db", str(db), "--allow-subset", judged_log]) == 0
