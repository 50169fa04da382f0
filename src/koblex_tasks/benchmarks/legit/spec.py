"""LEGIT's spec: the task's facts in one place (see `koblex_tasks.spec`)."""

from koblex_tasks.benchmarks.legit.methods import LEGIT_GRID
from koblex_tasks.spec import BenchmarkSpec, ScorerSpec, StratumSpec, ValueSpec, failure_rate

# The rubric's points: 5 for the final order, 2 spread over issue coverage, 3 over issue correctness.
FINAL_ORDER_POINTS = 5.0
COVERAGE_POINTS = 2.0
CORRECTNESS_POINTS = 3.0
DIFFICULTIES = ("easy", "medium", "hard")

LEGIT_RUBRIC = ScorerSpec(
    name="legit_rubric",
    values=(
        ValueSpec(
            "legit_score", "LEGIT score", 0.0, FINAL_ORDER_POINTS + COVERAGE_POINTS + CORRECTNESS_POINTS
        ),
        ValueSpec("final_order", "Final order", 0.0, FINAL_ORDER_POINTS),
        ValueSpec("coverage", "Coverage", 0.0, COVERAGE_POINTS),
        ValueSpec("correctness", "Correctness", 0.0, CORRECTNESS_POINTS),
        failure_rate("judge_failure_rate", "Judge failures %"),
    ),
    judge=True,
)
# The Likert judge the paper compares the rubric with (0-10 for the whole answer): an extra column, ranked on
# its own, never required (only runs that ask for it carry it).
LIKERT_MIN, LIKERT_MAX = 0, 10
LEGIT_LIKERT = ScorerSpec(
    name="legit_likert",
    values=(
        ValueSpec("likert_score", "Likert score", float(LIKERT_MIN), float(LIKERT_MAX)),
        failure_rate("likert_failure_rate", "Likert judge failures %"),
    ),
    judge=True,
    required=False,
)

# Sample metadata the `legit_verdicts` solver writes (a released row's verdicts) and the rubric scorer reads.
REPLAYED_KEY = "replayed_verdicts"

LEGIT = BenchmarkSpec(
    name="legit",
    title="LEGIT",
    description=(
        "300 Korean court cases (arXiv 2512.01020): a system predicts the judgment and its reasoning from the "
        "facts. A judge model checks the prediction against the case's issue tree (each issue's conclusion and "
        "the laws it rests on) and scores it 0-10: issue coverage, the correctness of each covered issue, and the "
        "final order."
    ),
    task="koblex_tasks/legit",
    # 1.1.0: the Likert judge column, the official scripts' judge temperature under official_script.
    version="1.1.0",
    accepted_versions=("1.0.0", "1.1.0"),
    scorers=(LEGIT_RUBRIC, LEGIT_LIKERT),
    stratum=StratumSpec("difficulty", "difficulty", order=DIFFICULTIES, strata_mean_label="difficulty_mean"),
    headline=("legit_score", "final_order", "coverage", "correctness"),
    ranking="legit_score",
    # the rubric's rule, and whether the released scripts' arithmetic (bugs included) was used
    variants={"rule": "rule", "official_script": "official script arithmetic"},
    subset_args=("difficulty", "doc_ids"),
    filter_args=("responses", "verdicts"),
    replay_solvers=("koblex_tasks/legit_replay", "koblex_tasks/legit_verdicts"),
    full_corpus_size=None,  # scores do not depend on a statute corpus (legit_rag is an extra)
    paper_protocol={
        "solver": "legit_predict",
        "rule": "paper",
        "official_script": False,
        "judge": "gpt-4.1 / open judges",
    },
    # The 300-record test split's SHA-256 could not be computed here (no network); see tasks/legit/dataset.py.
    dataset_fingerprints={},
    official_size=300,
    methods=LEGIT_GRID,
    # The 300-record split is not available here, so its sample ids are not declared: LEGIT subsets are
    # recognised from the task's own record (`dataset_size`, selecting arguments) only.
    official_ids_sha256=None,
)
