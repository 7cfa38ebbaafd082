"""Collections: incremental ingest of pre-parsed documents, reconcile after a crash, locking.

These use a hashing fake embedder (control flow only); real-model behaviour is in tests/e2e.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from tests.unit.fakes import HashEmbedder
from verifai_desktop.store.collection import Collection, delete_collection, list_collections
from verifai_desktop.domain import (
    Chunk,
    DocFormat,
    DocStatus,
    Document,
    Location,
    LocationKind,
    Progress,
    Section,
)
from verifai_desktop.errors import (
    Cancelled,
    CollectionBusy,
    CollectionNotFound,
    InvalidCollectionName,
)
from verifai_desktop.store import writer as run_mod
from verifai_desktop.store.catalog import DocumentMeta
from verifai_desktop.store.writer import Outcome, ingest_documents
from verifai_desktop.retrieve import Retriever
from verifai_desktop.settings import Settings


def _doc(key: str, text: str) -> tuple[str, Document]:
    return key, Document(
        Path(key),
        DocFormat.TXT,
        key,
        text,
        (Section(0, len(text), Location(LocationKind.SECTION)),),
    )


CORPUS = [
    _doc("beir:1", "Aspirin lowers the risk of stroke. It thins the blood."),
    _doc("beir:2", "Vitamin D deficiency is common in winter."),
    _doc("beir:3", "Statins reduce cholesterol and heart attacks."),
]


def test_ingest_documents_is_incremental(
    fake_settings: Settings, fake_embedder: HashEmbedder
) -> None:
    with Collection.open("t", create=True, settings=fake_settings) as col:
        first = ingest_documents(col, CORPUS)
        assert [o.status for o in first.outcomes] == [Outcome.INDEXED] * 3
        assert first.chunks_indexed == col.catalog.num_chunks() == 3
        again = ingest_documents(col, CORPUS)
        assert [o.status for o in again.outcomes] == [Outcome.SKIPPED] * 3
        changed = [CORPUS[0], _doc("beir:2", "Zinc supplements shorten colds."), CORPUS[2]]
        third = ingest_documents(col, changed)
        assert [o.status for o in third.outcomes] == [
            Outcome.SKIPPED,
            Outcome.INDEXED,
            Outcome.SKIPPED,
        ]
        retriever = Retriever(col)
        assert retriever.search("vitamin winter", mode="lexical") == ()
        top = retriever.search("zinc colds", k=1, mode="lexical")
        assert [str(p.path) for p in top] == ["beir:2"]
        assert len(col.vectors) == col.catalog.num_chunks() == 3
    assert list_collections() == ["t"]


def test_reopen_rebuilds_indexes_behind_the_catalog(fake_settings: Settings) -> None:
    with Collection.open("t", create=True, settings=fake_settings) as col:
        ingest_documents(col, CORPUS[:2])
        assert col.is_consistent()
        # A crash after the SQLite commit but before the index flush: catalog ahead of indexes.
        text = "Metformin treats type 2 diabetes."
        chunk = Chunk(0, text, 0, len(text), Location(LocationKind.SECTION), ((0, len(text)),))
        vec = col.embedder().embed([text])
        col.catalog.write_documents(
            [(DocumentMeta("beir:9"), DocStatus.INDEXED, "", (chunk,), vec)]
        )
        assert not col.is_consistent()
    # Damage the vector file too: it is derived data and must be rebuilt, not trusted.
    (col.path / "vectors.usearch").write_bytes(b"garbage")
    with Collection.open("t", settings=fake_settings) as col:
        assert col.is_consistent()
        assert len(col.vectors) == col.lexical.num_chunks() == 3
        for mode in ("lexical", "semantic"):
            top = Retriever(col).search("metformin diabetes", k=1, mode=mode)
            assert [str(p.path) for p in top] == ["beir:9"]


def test_cancel_commits_finished_batches(
    fake_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_mod, "DOCUMENT_BATCH_CHUNKS", 1)
    cancel = threading.Event()

    def progress(p: Progress) -> None:
        if p.stage == "documents":
            cancel.set()  # cancel right after the first batch is committed

    with Collection.open("t", create=True, settings=fake_settings) as col:
        with pytest.raises(Cancelled):
            ingest_documents(col, CORPUS, progress=progress, cancel=cancel)
        assert [r.source for r in col.documents()] == ["beir:1"]
        assert col.is_consistent()


def test_single_writer_and_names(fake_settings: Settings) -> None:
    with pytest.raises(CollectionNotFound):
        Collection.open("nope")
    with pytest.raises(InvalidCollectionName):
        Collection.open("../evil", create=True)
    with Collection.open("t", create=True, settings=fake_settings) as writer:
        ingest_documents(writer, CORPUS[:1])
        with Collection.open("t", settings=fake_settings) as other:
            with pytest.raises(CollectionBusy):
                ingest_documents(other, CORPUS[1:2])
            # Readers still search while the writer holds the lock.
            assert len(Retriever(other).search("aspirin", mode="lexical")) == 1
        with pytest.raises(CollectionBusy):
            delete_collection("t")
    delete_collection("t")
    assert list_collections() == []


def test_semantic_scores_are_exact_float32_cosines(fake_settings: Settings) -> None:
    with Collection.open("t", create=True, settings=fake_settings) as col:
        ingest_documents(col, CORPUS)
        retriever = Retriever(col)
        passages = retriever.search("aspirin stroke blood", k=3, mode="semantic")
        q = col.embedder().embed(["aspirin stroke blood"])[0]
        stored = col.catalog.vectors([p.chunk_id for p in passages])
        for p in passages:
            assert p.raw_semantic == pytest.approx(float(np.dot(stored[p.chunk_id], q)), abs=1e-6)
        assert str(passages[0].path) == "beir:1"
        assert passages[0].semantic_score == 1.0
