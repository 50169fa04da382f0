"""Loading a dataset split from the Hugging Face hub, with the revision recorded for provenance."""

from typing import Any


def load_hub_rows(repo: str, split: str, revision: str | None) -> tuple[list[dict[str, Any]], str]:
    """Return the rows of `repo`/`split` and a source label naming repo and revision.

    `datasets` is imported here, not at module import, so local-file runs never touch the hub.
    """
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - datasets is a core dependency
        raise RuntimeError("loading from the Hugging Face hub needs the 'datasets' package") from exc
    try:
        ds = datasets.load_dataset(repo, split=split, revision=revision)
    except Exception as exc:
        raise RuntimeError(
            f"could not load {repo} (split {split!r}, revision {revision or 'main'}) from the Hugging Face hub: "
            f"{exc}. Pass a local JSONL file instead (-T data=PATH / -T corpus=PATH)."
        ) from exc
    return [dict(row) for row in ds], f"hf:{repo}@{revision or 'main'}"
