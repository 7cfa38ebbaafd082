"""Where a catalogued document comes from: a file on this machine, or a benchmark corpus.

A document's *source* (``DocumentRecord.source``, the catalog's key) is the absolute path of
the file it was read from, or, for a document of a benchmark corpus ingested pre-parsed
(:meth:`~verifai_desktop.store.collection.Collection.add_documents`; BEIR in
:mod:`verifai_desktop.evaluate.beir`, ``benchmarks/ingest.py``), a key made of
:data:`BENCHMARK_SOURCE_PREFIX` and the corpus id. A key names no file: there is nothing to hash
again, watch, or remove by folder. Catalogs and answer histories store these keys as they are,
so the prefix never changes.
"""

from __future__ import annotations

BENCHMARK_SOURCE_PREFIX = "beir:"
"""Source-key prefix of benchmark documents: ``"beir:<corpus id>"`` (BEIR, Thakur et al.,
NeurIPS 2021 Datasets and Benchmarks)."""


def is_file_source(source: str) -> bool:
    """True when ``source`` is a file path, False for a benchmark key (``"beir:<id>"``).

    Args:
        source: a document source as catalogued (``DocumentRecord.source``, ``Passage.path``
            as text, a key of ``SavedAnswer.documents``).
    """
    return not source.startswith(BENCHMARK_SOURCE_PREFIX)
