"""Each official KoBLEX item's references, hashed as the manifest records them (`benchmarks.koblex.references`).

Per item and question language: the input the sample shows, the reference answer (the target) and every gold
set a run may be scored by (`GoldIdentity.name`: paragraphs in either language, or articles).
"""

from typing import Any

from koblex_tasks.benchmarks.koblex.references import gold_sha256, text_sha256
from koblex_tasks.corpus.provision import ARTICLE, PARAGRAPH
from koblex_tasks.corpus.rows import LANG_SUFFIX
from koblex_tasks.data.koblex.dataset import GoldIdentity, KoblexData, sample_input


def identities(record: dict[str, Any]) -> list[GoldIdentity]:
    """The gold identities `record` carries the fields of."""
    candidates = [*(GoldIdentity(PARAGRAPH, lang) for lang in LANG_SUFFIX), GoldIdentity(ARTICLE, "ko")]
    return [identity for identity in candidates if identity.carried_by(record)]


def item_references(record: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per question language: input, target and gold-set hashes."""
    gold = {i.name: gold_sha256(i.keys(record)) for i in identities(record)}
    return [
        {
            "lang": lang,
            "input_sha256": text_sha256(sample_input(record, lang)),
            "target_sha256": text_sha256(record["answer" + suffix]),
            "gold_sha256": gold,
        }
        for lang, suffix in LANG_SUFFIX.items()
        if all(isinstance(record.get(f + suffix), str) for f in ("background", "question", "answer"))
    ]


def manifest_items(data: KoblexData) -> dict[str, list[dict[str, Any]]]:
    return {str(r["id"]): item_references(r) for r in data.records}
