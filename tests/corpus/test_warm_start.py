"""What a warm start skips: Kiwi while the query-word cache knows every query word, and inspect_ai always."""

import subprocess
import sys
from pathlib import Path

from koblex_tasks.corpus import wordcache
from koblex_tasks.corpus.bm25 import BM25Index
from koblex_tasks.corpus.statutes import load_statutes
from koblex_tasks.corpus.tokenizers import KiwiTokenizer


def test_kiwi_is_constructed_only_for_a_word_no_cache_knows(tiny_corpus: Path, tmp_path: Path) -> None:
    corpus = load_statutes(str(tiny_corpus))
    query = "운송인의 손해배상 책임은 언제 소멸하는가"
    first = KiwiTokenizer(num_workers=1)
    index = BM25Index.open(corpus, first, cache_dir=tmp_path)
    expected = index.search(query, 3)
    assert "_kiwi" in vars(first) and first.query_words  # analysed the query's words
    wordcache.save_query_words(first, tmp_path)  # what the process does when it exits
    assert not first.query_words
    again = KiwiTokenizer(num_workers=1)
    warm = BM25Index.open(corpus, again, cache_dir=tmp_path)
    assert warm.loaded_from_cache and warm.search(query, 3) == expected
    assert "_kiwi" not in vars(again)  # every word came from the cache
    warm.search("재량권을 남용한 처분", 3)
    assert "_kiwi" in vars(again) and "남용한" in again.query_words


def test_the_corpus_path_does_not_import_inspect_ai() -> None:
    code = "import sys, koblex_tasks.corpus.retriever; print('inspect_ai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
