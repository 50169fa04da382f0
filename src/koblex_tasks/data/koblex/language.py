"""Which identities a KoBLEX run scores provisions by, and the check that questions and corpus share a language.

The gold provisions are compared at the corpus' level and in the corpus' language (`GoldIdentity`). A corpus
whose text is in the other language than the questions (`-T lang=en` with the Korean corpus, or the reverse)
is a `SetupError` before any model call: the queries would search text of the other language and every
identity it returns is in that language, so against the questions' own gold provisions every provision would
score 0. `allow_language_mismatch=True` runs it on purpose (cross-lingual retrieval) with a warning, the note
recorded in the eval metadata, and the gold compared in the corpus' language so the scores mean something.
"""

import logging
from typing import Any

from koblex_tasks.corpus.provision import ARTICLE, PARAGRAPH
from koblex_tasks.data.koblex.dataset import GoldIdentity, KoblexData, check_identity
from koblex_tasks.errors import DataError, SetupError

logger = logging.getLogger(__name__)
LANGUAGE_NAMES = {"ko": "Korean", "en": "English"}
FIX = (
    "pass a statute corpus in the questions' language (-T corpus=PATH; for lang=en the article-level rows of "
    "JihyungL/KoBLEX-statute-eng, which is the default without -T corpus), or -T allow_language_mismatch=true "
    "to retrieve across languages on purpose"
)


def gold_identity(
    corpus: Any, questions: KoblexData, lang: str, allow_mismatch: bool
) -> tuple[GoldIdentity, str | None]:
    """The identity the run's gold provisions take, and the mismatch note (None when the languages agree).

    `corpus` is the run's `StatuteCorpus`, or None for a method that retrieves nothing (paragraphs in `lang`).
    Every question's contexts must carry the identity's fields (an article corpus needs their `index`).
    """
    if corpus is None:
        return GoldIdentity(PARAGRAPH, lang), None
    language = corpus.language or lang  # a corpus without letters says nothing: the questions' language
    identity = GoldIdentity(corpus.level, language)
    try:
        check_identity(questions, identity)
    except DataError as exc:
        raise SetupError(f"KoBLEX: {exc}") from exc
    if language == lang:
        return identity, None
    corpus_name, question_name = LANGUAGE_NAMES[language], LANGUAGE_NAMES[lang]
    scored_by = "article keys" if corpus.level == ARTICLE else f"{corpus_name} hierarchy + content"
    if not allow_mismatch:
        zero = (
            ""
            if corpus.level == ARTICLE
            else f" (its paragraphs are {corpus_name} strings, so against the {question_name} gold paragraphs "
            "every provision would score 0)"
        )
        raise SetupError(
            f"KoBLEX: lang={lang!r} asks {question_name} questions, but the statute corpus {corpus.source} is "
            f"{corpus_name}: {question_name} queries would search {corpus_name} text and the model would read "
            f"{corpus_name} provisions{zero}; {FIX} (provisions are then scored by {scored_by})"
        )
    note = (
        f"cross-lingual run (allow_language_mismatch): {question_name} questions, {corpus_name} statute corpus "
        f"{corpus.source}; provisions are scored by {scored_by} ({corpus.level} level), and retrieval "
        f"searches {corpus_name} text with {question_name} queries"
    )
    logger.warning("KoBLEX: %s", note)
    return identity, note
