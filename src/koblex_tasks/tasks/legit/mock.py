"""How the scripted `koblexmock` model answers LEGIT's issue judge: covered, and correct unless the answer is
empty. Any other prompt is not the judge's: None (predictions get the provider's generic reply)."""


def legit_reply(prompt: str) -> str | None:
    if prompt.rstrip().endswith("<OUTPUT>") and "contains_issue" in prompt:
        correct = "true" if "<TEXT>\n\n</TEXT>" not in prompt else "false"
        return (
            f'{{"rationales": "scripted", "contains_issue": true, "correct_conclusion": {correct}}}</OUTPUT>'
        )
    return None
