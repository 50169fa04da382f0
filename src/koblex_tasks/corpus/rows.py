"""How a statute row becomes a provision: the paragraph and the article schema, checked strictly.

- A paragraph row (the Korean corpus JihyungL/KoBLEX-statute, 233,544 paragraphs) has `hierarchy` and
  `content` (`hierarchy_eng` / `content_eng` are read for lang=en when present) and an optional `id`. Its
  identity and retrieval text are `hierarchy + content`, the paper's rule.
- An article row (the English corpus JihyungL/KoBLEX-statute-eng: `{index, index_eng, content, content_eng}`)
  has no `hierarchy*` field. Its identity is the article key `index`, shared by both languages and by the gold
  contexts; its retrieval text is `index_eng + " " + content_eng` (`index` + `content` for lang=ko). The
  paragraph rule has nothing to apply to: there is no hierarchy, and the gold paragraphs are not rows of it.

A row that fits neither is a `DataError` naming file and line. Which language a corpus is in is read from its
text (`text_language`), not from field names: the Korean corpus read for lang=en is still Korean.
"""

import re
from collections.abc import Iterable
from typing import Any

from koblex_tasks.corpus.provision import ARTICLE, PARAGRAPH, Level

LANG_SUFFIX = {"ko": "", "en": "_eng"}  # the field suffix of each language in the KoBLEX datasets
Row = tuple[str, str, str, Level]  # (id or article key, hierarchy or heading, content, level)
_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_LATIN = re.compile(r"[A-Za-z]")
KOREAN_SHARE = 0.2  # of the letters: Korean statutes are nearly all Hangul, their translation has none


def data_error(source: str, line: int | None, problem: str) -> Exception:
    """A `DataError`, imported only when one is raised: `koblex_tasks.errors` imports Inspect (a second of a
    warm start that never needs it)."""
    from koblex_tasks.errors import DataError

    return DataError(source, line, problem)


def _row_id(row: dict[str, Any], number: int, source: str) -> str:
    row_id = row.get("id")
    if row_id is None:
        return str(number)
    if isinstance(row_id, bool | list | dict):  # `true` would become the id "True", a list its repr
        raise data_error(source, number, f"field 'id' must be a string or a number, got {row_id!r}")
    return str(row_id)


def _strings(row: dict[str, Any], number: int, source: str, names: Iterable[str]) -> list[str]:
    values = []
    for name in names:
        value = row.get(name)
        if value is None:
            raise data_error(source, number, f"missing field '{name}'")
        if not isinstance(value, str):
            raise data_error(source, number, f"field '{name}' must be a string")
        values.append(value)
    return values


def read_row(row: dict[str, Any], number: int, source: str, lang: str) -> Row:
    """(id, hierarchy, content, "paragraph") or (article key, heading, body, "article") of one row."""
    hierarchy, content = row.get("hierarchy"), row.get("content")
    if lang == "ko" and type(hierarchy) is str and type(content) is str:  # the common case, checked cheaply
        return _row_id(row, number, source), hierarchy, content, PARAGRAPH
    suffix = LANG_SUFFIX[lang]
    if "hierarchy" + suffix in row or "hierarchy" in row:  # lang=en without `_eng` fields: read as they are
        used = suffix if "hierarchy" + suffix in row else ""
        hierarchy, content = _strings(row, number, source, (f"hierarchy{used}", f"content{used}"))
        return _row_id(row, number, source), hierarchy, content, PARAGRAPH
    article = _article_fields(suffix)
    if "index" in row:
        key, *text = _strings(row, number, source, article)
        if not key.strip():
            raise data_error(source, number, "field 'index' (the article key) is empty")
        heading, body = text if len(text) == 2 else (key, *text)
        return key, heading, body, ARTICLE
    raise data_error(
        source,
        number,
        f"missing field 'hierarchy{suffix}': the row is neither a paragraph ('hierarchy{suffix}', "
        f"'content{suffix}') nor an article ({', '.join(repr(f) for f in article)})",
    )


def _article_fields(suffix: str) -> tuple[str, ...]:
    """Key, heading (the key itself in Korean) and body of an article row."""
    return tuple(dict.fromkeys(("index", f"index{suffix}", f"content{suffix}")))


def text_language(texts: Iterable[str]) -> str | None:
    """The language of `texts` by script: Korean when Hangul is at least `KOREAN_SHARE` of their letters,
    else English ("ko" / "en"); None when they hold no letters."""
    hangul = latin = 0
    for text in texts:
        hangul += len(_HANGUL.findall(text))
        latin += len(_LATIN.findall(text))
    if not hangul + latin:
        return None
    return "ko" if hangul >= KOREAN_SHARE * (hangul + latin) else "en"
