"""Statutes and retrieval: corpus loading, tokenizers, cached BM25, reranking, and the Inspect tool."""

from koblex_tasks.corpus.provision import Provision, provision_key
from koblex_tasks.corpus.retriever import Hit, Retriever, RetrieverSettings, aget_retriever, get_retriever
from koblex_tasks.corpus.statutes import StatuteCorpus, load_statutes

__all__ = [
    "Hit",
    "Provision",
    "Retriever",
    "RetrieverSettings",
    "StatuteCorpus",
    "aget_retriever",
    "get_retriever",
    "load_statutes",
    "provision_key",
]
