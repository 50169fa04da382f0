"""The rubric judge's settings: recorded in every score and the log header, honoured, and cached on request."""

from pathlib import Path

import pytest
from inspect_ai.log import EvalLog

from koblex_tasks.data.legit.dataset import read_legit_file
from koblex_tasks.scorers.legit.rubric import rederive
from koblex_tasks.tasks.legit.task import legit
from tests.legit_helpers import CountingModel, ScriptedJudge, eval_one


class ConfigRecordingJudge(ScriptedJudge):
    """A scripted judge that also keeps the GenerateConfig of every call."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.configs: list = []

    def __call__(self, input, tools, tool_choice, config):
        self.configs.append(config)
        return super().__call__(input, tools, tool_choice, config)


def _run(task, judge: ScriptedJudge, log_dir: Path) -> EvalLog:
    log = eval_one(task, log_dir, CountingModel().model(), judge.model())
    assert log.status == "success", log.error
    return log


def test_judge_settings_are_used_and_recorded(tiny_legit: Path, tmp_path: Path) -> None:
    records = read_legit_file(tiny_legit)
    judge = ConfigRecordingJudge(records, {})
    task = legit(data=str(tiny_legit), judge_max_tokens=321, judge_retries=1)
    log = _run(task, judge, tmp_path)
    assert {(c.temperature, c.max_tokens) for c in judge.configs} == {(0.0, 321)}  # default temperature 0
    meta = log.samples[0].scores["legit_rubric"].metadata
    assert meta["judge_config"] == {
        "role": "grader",
        "temperature": 0.0,
        "max_tokens": 321,
        "cache": False,
        "retries": 1,
        "concurrency": 8,
    }
    assert meta["retries"] == 1 and meta["official_script"] is False
    header = log.eval.metadata["judge"]
    assert header == {
        "role": "grader",
        "retries": 1,
        "prompt_version": "v1",
        "temperature": 0.0,
        "max_tokens": 321,
        "cache": False,
    }
    judge = ConfigRecordingJudge(records, {})
    _run(legit(data=str(tiny_legit), judge_temperature=0.7), judge, tmp_path)
    assert {c.temperature for c in judge.configs} == {0.7}


def test_under_the_official_scripts_no_temperature_is_sent(tiny_legit: Path, tmp_path: Path) -> None:
    """The released judge scripts send no temperature (the provider's default): `official_script` follows them,
    and the log says so; an explicit temperature is still honoured."""
    records = read_legit_file(tiny_legit)
    judge = ConfigRecordingJudge(records, {})
    log = _run(legit(data=str(tiny_legit), official_script=True), judge, tmp_path)
    assert {c.temperature for c in judge.configs} == {None}
    assert log.eval.metadata["judge"]["temperature"] == "provider default (none sent)"
    assert log.samples[0].scores["legit_rubric"].metadata["judge_config"]["temperature"] is None
    judge = ConfigRecordingJudge(records, {})
    _run(legit(data=str(tiny_legit), official_script=True, judge_temperature=0.2), judge, tmp_path)
    assert {c.temperature for c in judge.configs} == {0.2}


def test_cache_makes_rescoring_free(
    sample_file, sample_records, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the cache on, a second scoring of the same answers calls the judge zero times and scores the same,
    retries included (each attempt has its own cache entry, so a retry is never answered by the reply it
    retries)."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    easy, medium = "부산지방법원-2017구합23", "부산지방법원동부지원-2015가합938"
    script = {
        (easy, "1"): ["no verdict here", '<OUTPUT>{"contains_issue": true, "correct_conclusion": false}']
    }

    def task(cache: bool):
        return legit(data=str(sample_file), doc_ids=[easy, medium], judge_cache=cache)

    first_judge = ScriptedJudge(sample_records, script)
    first = _run(task(True), first_judge, tmp_path / "a")
    assert first_judge.calls[(easy, "1")] == 2  # the retry reached the judge
    assert first_judge.total_calls == 4 + 1 + 5
    second_judge = ScriptedJudge(sample_records, script)
    second = _run(task(True), second_judge, tmp_path / "b")
    assert second_judge.total_calls == 0
    values = [{s.id: s.scores["legit_rubric"].value for s in log.samples} for log in (first, second)]
    assert values[0] == values[1]
    assert values[1][easy]["legit_score"] == pytest.approx(5 + 2 / 3 + 2 * 5 / 3)
    meta = second.samples[0].scores["legit_rubric"].metadata
    assert meta["judge_config"]["cache"] is True
    assert meta["issues"]["1"]["raw_retried"] == ["no verdict here"]  # the cached retry, replayed in order
    third_judge = ScriptedJudge(sample_records, script)  # without the cache the judge is called again
    _run(task(False), third_judge, tmp_path / "c")
    assert third_judge.total_calls == first_judge.total_calls


def test_rederive_equals_the_scripted_judge_log_and_catches_tampering(
    sample_file, sample_records, tmp_path
) -> None:
    easy, hard = "부산지방법원-2017구합23", "대전지방법원-2016가단7699"
    script = {(easy, "1.1"): (True, False), (hard, "2.1"): (True, False), (hard, "4"): ["never parsable"]}
    for rule in ("paper", "official"):
        judge = ScriptedJudge(sample_records, script)
        log = _run(
            legit(data=str(sample_file), rule=rule, doc_ids=[easy, hard], judge_retries=0), judge, tmp_path
        )
        params = log.eval.metadata
        for sample in log.samples:
            score = sample.scores["legit_rubric"]
            stored = {k: (None if v != v else v) for k, v in score.value.items()}  # NaN -> None
            assert rederive(sample, score, params) == stored, (rule, sample.id)
        sample = next(s for s in log.samples if s.id == easy)
        score = sample.scores["legit_rubric"]
        forged = score.model_copy(deep=True)
        forged.metadata["issues"]["1.1"]["correct_conclusion"] = True
        assert rederive(sample, forged, params)["legit_score"] != score.value["legit_score"]
        inflated = score.model_copy(deep=True)
        inflated.value = {**score.value, "legit_score": 10.0}
        assert rederive(sample, inflated, params) != inflated.value
        bad = score.model_copy(deep=True)
        bad.metadata["issues"]["9"] = {"contains_issue": True, "correct_conclusion": True}
        assert set(rederive(sample, bad, params).values()) == {None}  # malformed: refused, not a crash
