"""A statute provision: its identity (`key`, what scoring compares) and its text (what is retrieved and shown).

The KoBLEX paper identifies a paragraph by `hierarchy + content` with no separator: gold contexts, released
predictions and the BM25 corpus all use that string, so for a paragraph the key and the text are one string.

The English statute dataset is article-level: one row per article, not one per paragraph, so its rows cannot
carry the paragraph identity of the gold contexts. An article is identified by its article key (`index`, e.g.
"상법 814조  운송인의 채권ㆍ채무의 소멸"), which the Korean and English data share; its text is its heading and
body, which is what a model must read.
"""

from dataclasses import dataclass
from typing import Literal

Level = Literal["paragraph", "article"]
PARAGRAPH: Level = "paragraph"
ARTICLE: Level = "article"
LEVELS: tuple[Level, ...] = (PARAGRAPH, ARTICLE)
# Between an article's heading and body: English words would otherwise merge ("Compound LarcenyArticle 330").
ARTICLE_SEPARATOR = " "


def provision_key(hierarchy: str, content: str) -> str:
    """The official identity of a paragraph: hierarchy and content joined with no separator."""
    return hierarchy + content


def provision_text(hierarchy: str, content: str, level: Level = PARAGRAPH) -> str:
    """What retrieval indexes and a model reads: a paragraph's key; an article's heading, a space, its body."""
    return hierarchy + ARTICLE_SEPARATOR + content if level == ARTICLE else hierarchy + content


@dataclass(frozen=True, slots=True)
class Provision:
    """One unit of the retrieval pool: a statute paragraph, or (article-level corpora) a whole article.

    `row_id` is a paragraph row's `id` (its line number when it has none) and an article's key; `hierarchy`
    is an article's heading (`index_eng` in the English dataset).
    """

    row_id: str
    hierarchy: str
    content: str
    level: Level = PARAGRAPH

    @property
    def key(self) -> str:
        """The identity compared with the gold provisions."""
        return self.row_id if self.level == ARTICLE else provision_key(self.hierarchy, self.content)

    @property
    def text(self) -> str:
        """The text retrieval indexes and the solvers show the model."""
        return provision_text(self.hierarchy, self.content, self.level)
