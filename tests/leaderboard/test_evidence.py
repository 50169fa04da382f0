"""A board that trusts evidence, not self-description: each gamed or forged log is refused (store unchanged) or
placed on a marked board, judged by the shipped reference manifest and by what its samples show.

Cases: (1) references edited inside a log, every score recomputed with the package's own re-derivation;
(2) a solver that looks for the gold provisions in its TaskState; (3) placement claimed by the header
(corpus status, `retrieves=false`, a `replay/` model, the replay solver's name, predictions swapped in a
released replay).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import Score
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store_as

from koblex_tasks.benchmarks.koblex.evidence import ProvisionEvidence
from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.data.koblex.dataset import load_koblex
from koblex_tasks.data.koblex.references import manifest_items
from koblex_tasks.leaderboard.store import Store
from koblex_tasks.logs.references import manifest_for
from koblex_tasks.scorers.koblex.answer import sample_answer
from koblex_tasks.scorers.koblex.provision_match import rederive as provision_rederive
from koblex_tasks.scorers.koblex.token_f1 import rederive as token_rederive
from tests.conftest import TINY_STATUTES, _answer, statute_key
from tests.leaderboard import test_submit
from tests.leaderboard.test_submit import Mutate, renamed, submit_rejected, variant

one_run_template = test_submit.one_run_template
one_run_db = test_submit.one_run_db


def rescore(sample: EvalSample) -> None:
    """Every score recomputed from the (edited) sample with the package's own re-derivations."""
    for name, fn, params in (
        ("provision_match", provision_rederive, {}),
        ("token_f1", token_rederive, {"official": True}),
    ):
        score: Score = sample.scores[name]
        values = fn(sample, score, params)
        if all(v is not None for v in values.values()):
            score.value = dict(values)


# ------------------------------------------------------------------------ 1. references from the manifest


def test_shipped_manifest_is_derived_from_the_official_dataset(shared_data: Path) -> None:
    manifest = manifest_for(KOBLEX.name)
    assert manifest is not None and manifest.dataset_fingerprint in KOBLEX.dataset_fingerprints
    questions = load_koblex(str(shared_data / "koblex" / "koblex.jsonl"))
    assert questions.fingerprint == manifest.dataset_fingerprint
    assert manifest_items(questions) == manifest.items  # the generator's output, item for item
    assert len(manifest.released) == 10 and all(
        len(r["file_sha256"]) == 64 for r in manifest.released.values()
    )


def test_edited_references_with_rederived_scores_are_refused(
    one_run_db: Path, replay_logs, tmp_path: Path, capsys
) -> None:
    """The reference answer := the model's answer, the gold := its predictions, every score recomputed."""

    def forge(log: EvalLog) -> None:
        for s in log.samples or []:
            s.target = sample_answer(s) or "x"
            meta = s.scores["provision_match"].metadata or {}
            if "gold" in meta:
                meta["gold"] = sorted(set(s.store.get("ProvisionEvidence:predicted") or []))
            rescore(s)

    bad = variant(replay_logs["ircot_gpt4o"], tmp_path / "forged.eval", renamed(forge, "forged"))
    assert max(v for v in bad_values(bad, "token_f1", "token_f1")) == 1.0  # the forgery did raise the scores
    err = submit_rejected(one_run_db, bad, capsys)
    first = sorted(s for s in KOBLEX_IDS(replay_logs))[0]
    assert "item(s) differ from the official references" in err
    assert f"first {first!r}: its reference answer (target) is not the official one" in err


def test_edited_gold_alone_is_refused(one_run_db: Path, replay_logs, tmp_path: Path, capsys) -> None:
    def gold_is_predicted(log: EvalLog) -> None:
        for s in log.samples or []:
            meta = s.scores["provision_match"].metadata or {}
            if "gold" in meta:
                meta["gold"] = sorted(set(s.store.get("ProvisionEvidence:predicted") or []))
            rescore(s)

    bad = variant(replay_logs["parser_gpt4o"], tmp_path / "gold.eval", renamed(gold_is_predicted, "gold"))
    err = submit_rejected(one_run_db, bad, capsys)
    assert "provision_match: cannot re-derive" in err
    assert "its gold provisions are not the official ones" in err


def test_edited_input_is_refused(one_run_db: Path, replay_logs, tmp_path: Path, capsys) -> None:
    def reword(log: EvalLog) -> None:
        log.samples[3].input = "다른 질문이다."

    bad = variant(replay_logs["parser_gpt4o"], tmp_path / "input.eval", renamed(reword, "input"))
    err = submit_rejected(one_run_db, bad, capsys)
    sid = str(test_submit._READ[replay_logs["parser_gpt4o"]].samples[3].id)
    assert f"1 item(s) differ from the official references (koblex references.v1.json), first {sid!r}" in err


def bad_values(path: Path, scorer: str, key: str) -> list[float]:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    values = [s.scores[scorer].value for s in log.samples or []]
    return [float(v[key]) for v in values if isinstance(v, dict)]


def KOBLEX_IDS(replay_logs) -> list[str]:
    return [str(s.id) for s in test_submit._READ[replay_logs["ircot_gpt4o"]].samples or []]


# ------------------------------------------------------------------------- 2. gold never reaches a solver

GOLD = [statute_key(TINY_STATUTES[i]) for i in (1, 2, 3)] + [TINY_STATUTES[i]["content"] for i in (1, 2, 3)]


@solver
def snoop() -> Solver:
    """Looks for the gold provisions everywhere in its TaskState and predicts whatever it finds."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seen = json.dumps(
            [
                state.input,
                state.metadata,
                state.target.text,
                [m.model_dump() for m in state.messages],
                dict(state.store.items()),
                state.choices._choices if hasattr(state.choices, "_choices") else None,
            ],
            ensure_ascii=False,
            default=str,
        )
        found = [g for g in GOLD if g in seen]
        record = store_as(ProvisionEvidence)
        record.method, record.uses_retrieval, record.predicted = "snoop", True, found
        state.store.set("snoop_found", found)
        state.output = ModelOutput.from_content("m", "Answer: 소멸한다")
        return state

    return solve


def test_a_solver_finds_no_gold_in_its_state(tiny_questions: Path, tiny_corpus: Path, tmp_path: Path) -> None:
    from koblex_tasks.tasks.koblex.task import koblex

    task = koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="none", solver=snoop())
    [log] = inspect_eval(task, model="mockllm/model", log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success"
    for s in log.samples or []:
        assert s.store["snoop_found"] == []
        assert s.target not in GOLD
        score = s.scores["provision_match"]
        assert score.value["provision_recall"] == 0.0 and score.metadata["gold"]  # scored against the book
    by_id = {str(s.id): s for s in log.samples or []}
    assert by_id["q1"].scores["provision_match"].metadata["gold"] == [statute_key(TINY_STATUTES[1])]


# ---------------------------------------------------------------------------------- 3. derived placement


@pytest.fixture
def retrieving_log(tiny_questions: Path, tiny_corpus: Path, tmp_path: Path) -> str:
    """A genuine run that retrieves from a 5-provision corpus (partial), with a scripted model."""
    from koblex_tasks.solvers.koblex.one_time_retrieval import one_time_retrieval
    from koblex_tasks.tasks.koblex.task import koblex

    task = koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="none")
    [log] = inspect_eval(
        task,
        solver=one_time_retrieval(k=2),
        model=get_model("mockllm/model", custom_outputs=lambda *a: _answer()),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success"
    return log.location


PLACEMENT_FORGERIES: dict[str, tuple[Mutate, str]] = {
    "status": (
        lambda log: log.eval.metadata["corpus"].update(status="full"),
        "the header says the corpus is 'full' but it records 5 provisions: partial",
    ),
    "retrieves": (
        lambda log: log.eval.metadata["corpus"].update(retrieves=False),
        "the header says the method retrieves nothing (corpus.retrieves=false) but 2 sample(s) record retrieval",
    ),
    "model": (
        lambda log: setattr(log.eval, "model", "replay/gpt-4o"),
        "presents itself as released predictions (model replay/gpt-4o)",
    ),
    "solver": (
        lambda log: setattr(log.eval, "solver", "koblex_tasks/replay"),
        "presents itself as released predictions (solver koblex_tasks/replay)",
    ),
}


@pytest.mark.parametrize("case", sorted(PLACEMENT_FORGERIES))
def test_self_declared_placement_is_refused(retrieving_log: str, tmp_path: Path, capsys, case: str) -> None:
    mutate, message = PLACEMENT_FORGERIES[case]
    db = tmp_path / "board.sqlite"
    assert leaderboard_main(["submit", "--db", str(db), "--allow-subset", retrieving_log]) == 0
    with Store(db) as store:
        [genuine] = store.runs()
    assert (
        "unregistered corpus (5 provisions, " in genuine.board_label
    )  # the tiny corpus is no registered one
    bad = variant(Path(retrieving_log), tmp_path / f"{case}.eval", renamed(mutate, case))
    assert message in submit_rejected(db, bad, capsys, "--allow-subset")


def test_closed_book_is_placed_by_evidence(judged_log: str, tmp_path: Path) -> None:
    """A closed-book run (no sample retrieves) is closed book whatever corpus its task loaded."""
    db = tmp_path / "board.sqlite"
    assert leaderboard_main(["submit", "--db", str(db), "--allow-subset", judged_log]) == 0
    with Store(db) as store:
        [run] = store.runs()
    assert "full corpus" in run.board_label and "closed book" in run.provenance["corpus"]["kind"]


def test_swapped_predictions_are_not_released_ones(
    one_run_db: Path, replay_logs, tmp_path: Path, capsys
) -> None:
    """A released replay whose provisions are replaced by the gold ones (a hand-made prediction file)."""

    def gold_as_predictions(log: EvalLog) -> None:
        for s in log.samples or []:
            meta = s.scores["provision_match"].metadata or {}
            if "gold" in meta:
                s.store["ProvisionEvidence:predicted"] = list(meta["gold"])
            rescore(s)

    bad = variant(replay_logs["sp_or_gpt4o"], tmp_path / "handmade.eval", renamed(gold_as_predictions, "hm"))
    assert max(bad_values(bad, "provision_match", "provision_f1")) == 1.0
    err = submit_rejected(one_run_db, bad, capsys)
    assert "presents itself as released predictions (solver koblex_tasks/replay)" in err


def test_released_replays_are_placed_by_their_outputs(seeded_db: Path) -> None:
    with Store(seeded_db) as store:
        runs = store.runs()
    assert len(runs) == 10
    kinds = {r.provenance["corpus"]["kind"] for r in runs}
    assert all(k.startswith("released predictions of ") for k in kinds) and len(kinds) == 10


def test_a_sample_recovered_without_its_store_is_still_rederived(
    retrieving_log: str, tmp_path: Path, capsys
) -> None:
    """`inspect eval-retry` can bring a sample back with an empty store (simulated here on a real log): its
    scores are re-derived from what the scores recorded, and an edited value is still refused."""

    def lose_store(log: EvalLog) -> None:
        log.samples[1].store = {}

    def lose_and_edit(log: EvalLog) -> None:
        lose_store(log)
        log.samples[1].scores["token_f1"].value["token_f1"] = 1.0

    db = tmp_path / "board.sqlite"
    recovered = variant(Path(retrieving_log), tmp_path / "recovered.eval", lose_store)
    assert leaderboard_main(["submit", "--db", str(db), str(recovered)]) == 0
    edited = variant(Path(retrieving_log), tmp_path / "edited.eval", renamed(lose_and_edit, "edited"))
    assert "token_f1: 1 stored score(s) disagree" in submit_rejected(db, edited, capsys)


def test_a_legit_sample_run_stays_a_subset_without_its_arguments(
    legit_shared: Path, sample_file: Path, tmp_path: Path, capsys
) -> None:
    """LEGIT knows its official size (300) but not its ids: fewer items is a subset whatever the header says."""
    from koblex_tasks.tasks.legit.replay import run_verdict_replay

    released = next((legit_shared / "released_verdicts").glob("*.jsonl"))
    log = run_verdict_replay(str(released), data=str(sample_file), log_dir=str(tmp_path / "logs")).log

    def no_arguments(log: EvalLog) -> None:
        for args in (log.eval.task_args, log.eval.task_args_passed):
            for key in list(args or {}):
                if key not in ("rule",):
                    args.pop(key)

    bare = variant(Path(log.location), tmp_path / "bare.eval", renamed(no_arguments, "bare"))
    db = tmp_path / "legit.sqlite"
    err = submit_rejected(db, bare, capsys)
    assert "of the 300 official items" in err and "a subset of the dataset" in err
    assert leaderboard_main(["submit", "--db", str(db), "--allow-subset", str(bare)]) == 0
    with Store(db) as store:
        [run] = store.runs()
    assert run.subset and "SUBSET" in run.board_label


def test_a_legit_replay_no_manifest_verifies_gets_a_board_of_its_own(
    legit_shared: Path, sample_file: Path, tmp_path: Path
) -> None:
    """LEGIT has no manifest of released outputs: a log that calls itself a replay skips the answer rule (no
    model wrote its answers), so it is never ranked beside runs whose answers a model wrote."""
    from koblex_tasks.logs.placement import UNVERIFIED_REPLAY
    from koblex_tasks.tasks.legit.replay import run_verdict_replay

    released = next((legit_shared / "released_verdicts").glob("*.jsonl"))
    log = run_verdict_replay(str(released), data=str(sample_file), log_dir=str(tmp_path / "logs")).log
    db = tmp_path / "legit.sqlite"
    assert leaderboard_main(["submit", "--db", str(db), "--allow-subset", str(log.location)]) == 0
    with Store(db) as store:
        [run] = store.runs()
    assert UNVERIFIED_REPLAY in run.board_label and "outputs=unverified-replay" in run.board_key
