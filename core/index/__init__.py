"""Derived search state: SQLite FTS5 over lines, sentence vectors in hnswlib, hybrid search.

Files are the truth; everything here can be rebuilt from them.
"""
from core.index.search import IndexStatus, SearchHit, SearchIndex, SearchModeError, SearchResults
from core.index.sync import SyncReport

__all__ = ["IndexStatus", "SearchHit", "SearchIndex", "SearchModeError", "SearchResults", "SyncReport"]
