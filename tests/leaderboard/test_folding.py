"""Names and model ids are compared after NFKC and confusable folding (issue 32): a fullwidth `ｇ_parser` is a
duplicate of `g_parser`, and a model id with Cyrillic letters (`rерlay/gpt-4o`) never passes for a replay."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.leaderboard.store import Store
from koblex_tasks.text import folded
from tests.conftest import _answer
from tests.leaderboard.test_submit import renamed, submit_rejected, variant


def _run(tiny_questions: Path, tiny_corpus: Path, logs: Path, k: int) -> Path:
    from koblex_tasks.solvers.koblex.one_time_retrieval import one_time_retrieval
    from koblex_tasks.tasks.koblex.task import koblex

    task = koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="none")
    model = get_model("mockllm/model", custom_outputs=lambda *a: _answer())
    [log] = inspect_eval(task, solver=one_time_retrieval(k=k), model=model, log_dir=str(logs), display="none")
    assert log.status == "success"
    return Path(log.location)


def test_folding() -> None:
    assert folded("ｇ_parser") == "g_parser" and folded("rерlay/gpt-4o") == "replay/gpt-4o"
    assert folded("부산지방법원 · 파서") == "부산지방법원 · 파서"  # Korean names are not folded away


def test_a_fullwidth_name_is_a_duplicate(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path, capsys
) -> None:
    db = tmp_path / "board.sqlite"
    first = _run(tiny_questions, tiny_corpus, tmp_path / "a", k=2)
    second = _run(tiny_questions, tiny_corpus, tmp_path / "b", k=1)
    assert (
        leaderboard_main(["submit", "--db", str(db), "--allow-subset", "--name", "g_parser", str(first)]) == 0
    )
    err = submit_rejected(db, second, capsys, "--allow-subset", "--name", "ｇ_parser")
    assert "run #1 on this board is already named 'g_parser'" in err and "confusable folding" in err
    assert (
        leaderboard_main(["submit", "--db", str(db), "--allow-subset", "--name", "h_parser", str(second)])
        == 0
    )
    with Store(db) as store:
        assert sorted(r.name for r in store.runs()) == ["g_parser", "h_parser"]


def test_a_lookalike_model_id_is_refused(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path, capsys
) -> None:
    log = _run(tiny_questions, tiny_corpus, tmp_path / "a", k=2)
    for i, model in enumerate(["rерlay/gpt-4o", "ｒeplay/gpt-4o", "mockllm/mоdel"]):
        bad = variant(
            log, tmp_path / f"m{i}.eval", renamed(lambda lg, m=model: setattr(lg.eval, "model", m), f"m{i}")
        )
        err = submit_rejected(tmp_path / "board.sqlite", bad, capsys, "--allow-subset")
        assert "holds look-alike characters: it reads as" in err, err
