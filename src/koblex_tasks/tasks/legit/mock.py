"""How the scripted `koblexmock` model answers LEGIT's judges: the issue judge (covered, and correct unless the
answer is empty) and the Likert judge (5 of 10, 0 for an empty answer), each in the reply format its scorer
parses. Any other prompt is not a judge's: None (predictions get the provider's generic reply)."""

import json
import re

# What the Likert prompt asks for (`prompts/legit/likert`), and the block the answer sits in.
LIKERT_SCHEMA = '{"rationales": str, "score": int}'
LIKERT_RESPONSE = re.compile(r"<RESPONSE>(.*?)</RESPONSE>", re.S)
LIKERT_SCORE = 5


def legit_reply(prompt: str) -> str | None:
    if prompt.rstrip().endswith("<OUTPUT>") and "contains_issue" in prompt:
        correct = "true" if "<TEXT>\n\n</TEXT>" not in prompt else "false"
        return (
            f'{{"rationales": "scripted", "contains_issue": true, "correct_conclusion": {correct}}}</OUTPUT>'
        )
    response = LIKERT_RESPONSE.search(prompt)
    if LIKERT_SCHEMA in prompt and response is not None:
        score = LIKERT_SCORE if response.group(1).strip() else 0
        return json.dumps({"rationales": "scripted", "score": score})
    return None
