"""KoBLEX closed-book tasks for lm-evaluation-harness (`koblex_sp`, `koblex_cot`).

lm-eval has no plugin entry point for tasks; point it at this directory:

    lm-eval run --model hf --model_args pretrained=... --tasks koblex_sp,koblex_cot \\
        --include_path "$(python -c 'import koblex_tasks.lm_eval_tasks as m; print(m.__path__[0])')"

or in Python `TaskManager(include_path=koblex_tasks.lm_eval_tasks.TASKS_DIR)`. The prompts are the Inspect
solvers' files (`koblex/sp`, `koblex/cot`), the answer is the text after the last "Answer:", and the score is
the Inspect scorer's token F1. Questions come from `$KOBLEX_DATA` (a local JSONL) or the Hugging Face dataset;
`$KOBLEX_LANG` (or `--metadata '{"lang": "en"}'`) picks the language. Needs the `lm-eval` extra
(`pip install -e ".[lm-eval]"` from a clone).
"""

from pathlib import Path

TASKS_DIR = str(Path(__file__).resolve().parent)
TASKS = ("koblex_sp", "koblex_cot")

__all__ = ["TASKS", "TASKS_DIR"]
