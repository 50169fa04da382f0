"""How the scripted `koblexmock` model answers KoBLEX's own prompts (offline smoke runs and tests).

An LF-Eval judge prompt gets the score `JUDGE_SCORE` (DeepEval's prompt, ending "JSON:", a JSON object
`{"score": 7, "reason": ...}`; the bare prompt, ending "Score:", the digit alone), a parametric-provision
prompt a one-item list echoing the question, a selection prompt `Answer: 0`. Any other prompt is not
KoBLEX's own: None (the provider answers it with its generic reply).
"""

JUDGE_SCORE = 7
_JUDGE_JSON = f'{{"score": {JUDGE_SCORE}, "reason": "scripted"}}'


def is_lf_eval_json_prompt(prompt: str) -> bool:
    """DeepEval's G-Eval prompt (LF-Eval's default): it ends with "JSON:" and asks for a `score` key."""
    return prompt.rstrip().endswith("JSON:") and '"score"' in prompt


def query_first_line(prompt: str) -> str:
    """The first line of the question in the prompt's last `<Query>` block (at most 200 characters)."""
    query = prompt.rsplit("<Query>", 1)[-1]
    question = query.split("Question:", 1)[-1].strip().splitlines()
    return question[0][:200] if question else ""


def koblex_reply(prompt: str) -> str | None:
    if is_lf_eval_json_prompt(prompt):
        return _JUDGE_JSON
    if prompt.rstrip().endswith(("Score:", "점수:")):
        return str(JUDGE_SCORE)  # the bare LF-Eval prompt asks for the score alone
    if "Candidates:" in prompt.rsplit("<Query>", 1)[-1]:
        return "Answer: 0"
    if "statutory provisions" in prompt and "Answer must be a list" in prompt:
        return f'["{query_first_line(prompt).replace(chr(34), "")}"]'
    return None
