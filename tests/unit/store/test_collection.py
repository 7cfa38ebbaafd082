"""Collections: incremental ingest of pre-parsed documents, reconcile after a crash, locking.

These use a hashing fake embedder (control flow only); real-model behaviour is in tests/e2e.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from tests.unit.fakes import FAKE_NAME, HashEmbedder
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
    CollectionExists,
    CollectionNotFound,
    EmbedderMismatch,
    InvalidCollectionName,
    ModelNotFound,
)
from verifai_desktop.retrieve import Retriever
from verifai_desktop.settings import (
    ModelSettings,
    RetrievalSettings,
    SearchMode,
    Settings,
    collections_dir,
    save_settings,
)
from verifai_desktop.store import writer as run_mod
from verifai_desktop.store.base import CollectionStore
from verifai_desktop.store.catalog import DocumentMeta
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import (
    collection_history,
    collection_metadata,
    delete_collection,
    list_collections,
    rename_collection,
)
from verifai_desktop.store.writer import Outcome, ingest_documents


def _doc(key: str, text: str) -> tuple[str, Document]:
    return key, Document(
        Path(key),
        DocFormat.TXT,
        key,
        text,
        (Section(0, len(text), Location(LocationKind.SECTION)),),
    )


LEXICAL = RetrievalSettings(mode="lexical")

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
        retriever = Retriever(col, LEXICAL)
        assert retriever.search("vitamin winter") == ()
        top = retriever.search("zinc colds", k=1)
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
        modes: tuple[SearchMode, ...] = ("lexical", "semantic")
        for mode in modes:
            top = Retriever(col, RetrievalSettings(mode=mode)).search("metformin diabetes", k=1)
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
        Collection.open("esc\x1b[2J", create=True)
    with Collection.open("t", create=True, settings=fake_settings) as writer:
        ingest_documents(writer, CORPUS[:1])
        with Collection.open("t", settings=fake_settings) as other:
            with pytest.raises(CollectionBusy):
                ingest_documents(other, CORPUS[1:2])
            # Readers still search while the writer holds the lock.
            assert len(Retriever(other, LEXICAL).search("aspirin")) == 1
        with pytest.raises(CollectionBusy):
            delete_collection("t")
    delete_collection("t")
    assert list_collections() == []


def test_the_layers_above_read_it_through_the_store_contract(fake_settings: Settings) -> None:
    with Collection.open("t", create=True, settings=fake_settings) as col:
        ingest_documents(col, CORPUS)
        store: CollectionStore = col
        assert [r.source for r in store.documents()] == ["beir:1", "beir:2", "beir:3"]
        record = store.document("beir:2")
        assert record is not None and record.chunk_count == 1
        assert store.document("beir:9") is None
        assert store.num_chunks() == store.num_vectors() == 3
        ((found, score),) = store.lexical_search("vitamin winter", 5)
        assert score > 0 and store.lexical_search("the of", 5) == []
        chunks = store.chunks([found, found, 999])
        assert list(chunks) == [found] and chunks[found].source == "beir:2"
        q = store.embedder().embed([CORPUS[2][1].text])[0]
        hits = store.vector_search(q, 3)
        scores = [s for _, s in hits]
        assert len(hits) == 3 and scores == sorted(scores, reverse=True)
        assert store.chunks([hits[0][0]])[hits[0][0]].source == "beir:3"
        exact = col.catalog.vectors([cid for cid, _ in hits])
        assert scores == pytest.approx([float(np.dot(exact[cid], q)) for cid, _ in hits])
        with store.history() as history:
            assert history.answers() == []
    with collection_history("t") as history:
        assert history.path == collections_dir() / "t" / "history.sqlite"
    with pytest.raises(CollectionNotFound):
        collection_history("missing")


def test_semantic_scores_are_exact_float32_cosines(fake_settings: Settings) -> None:
    with Collection.open("t", create=True, settings=fake_settings) as col:
        ingest_documents(col, CORPUS)
        retriever = Retriever(col, RetrievalSettings(mode="semantic"))
        passages = retriever.search("aspirin stroke blood", k=3)
        q = col.embedder().embed(["aspirin stroke blood"])[0]
        stored = col.catalog.vectors([p.chunk_id for p in passages])
        for p in passages:
            assert p.raw_semantic == pytest.approx(float(np.dot(stored[p.chunk_id], q)), abs=1e-6)
        assert str(passages[0].path) == "beir:1"
        assert passages[0].semantic_score == 1.0


def test_create_replace_and_exists(fake_settings: Settings) -> None:
    with Collection.create("t", settings=fake_settings) as col:
        ingest_documents(col, CORPUS)
        assert col.embedder_name == FAKE_NAME
    with pytest.raises(CollectionExists, match="'t' already exists"):
        Collection.create("t", settings=fake_settings)
    with Collection.open("t", settings=fake_settings) as col:
        col.acquire_write_lock()  # an ingest is running
        with pytest.raises(CollectionBusy):
            Collection.create("t", settings=fake_settings, replace=True)
        assert len(col.documents()) == 3
    with Collection.create("t", settings=fake_settings, replace=True) as col:
        assert col.documents() == [] and col.catalog.num_chunks() == 0
    assert list_collections() == ["t"]


def test_settings_file_is_never_read_by_open(fake_settings: Settings) -> None:
    save_settings(fake_settings)  # the user's settings name the fake embedder ...
    with Collection.open("t", create=True) as col:  # ... but none were passed: the defaults
        assert col.embedder_name == "all-MiniLM-L6-v2"
    with Collection.open("u", create=True, settings=fake_settings) as col:
        assert col.embedder_name == FAKE_NAME


def test_embedder_is_checked_against_an_existing_collection(fake_settings: Settings) -> None:
    with Collection.open("t", create=True, embedder=FAKE_NAME) as col:
        assert col.embedder_name == FAKE_NAME
    with Collection.open("t", create=True, embedder=FAKE_NAME) as col:
        assert col.embedder_name == FAKE_NAME
    with pytest.raises(EmbedderMismatch) as info:
        Collection.open("t", embedder="sentence-transformers/all-MiniLM-L6-v2")
    assert str(info.value) == (
        f"collection 't' was built with the embedder '{FAKE_NAME}', not "
        "'sentence-transformers/all-MiniLM-L6-v2'; use another collection name for a "
        "different embedder"
    )
    # Bundled aliases name one model.
    with Collection.open("b", create=True, embedder="sentence-transformers/all-MiniLM-L6-v2"):
        pass
    Collection.open("b", embedder="all-MiniLM-L6-v2").close()


def test_metadata_records(fake_settings: Settings) -> None:
    with Collection.open("t", create=True, settings=fake_settings) as col:
        assert col.metadata("beir_corpus") == {}
        col.set_metadata("beir_corpus", {"dataset": "scifact", "documents": 3})
        assert col.metadata("beir_corpus") == {"dataset": "scifact", "documents": 3}
        assert (col.path / "beir_corpus.json").is_file()
        for bad in ("vectors", "lexical", "../x", "Upper", ""):
            with pytest.raises(ValueError, match="invalid collection metadata key"):
                col.metadata(bad)
    assert collection_metadata("t", "beir_corpus") == {"dataset": "scifact", "documents": 3}
    assert collection_metadata("missing", "beir_corpus") == {}


def test_rename_to_an_existing_name(fake_settings: Settings) -> None:
    Collection.open("a", create=True, settings=fake_settings).close()
    Collection.open("b", create=True, settings=fake_settings).close()
    with pytest.raises(CollectionExists, match="'b' already exists"):
        rename_collection("a", "b")
    with pytest.raises(InvalidCollectionName):
        rename_collection("a", "no\nnewline")
    assert rename_collection("a", "c") == "c"
    assert list_collections() == ["b", "c"]
    # A slash is only a character of the name; the folder gets none.
    assert rename_collection("c", "no/slash") == "no-slash"
    assert list_collections() == ["b", "no-slash"]


def test_importing_the_store_loads_no_index_or_model_library() -> None:
    code = (
        "import sys, verifai_desktop.store.collection; "
        "print(sorted(m for m in ('tantivy', 'usearch', 'torch', 'onnxruntime', "
        "'sentence_transformers', 'PySide6') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_an_unknown_embedder_is_refused_and_leaves_no_collection() -> None:
    """A Hub name that is not on this machine once left an empty collection bound to it."""
    unknown = "sentence-transformers/no-such-model-for-verifai-tests"
    message = (
        f"model {unknown!r} is not available on this machine; it is neither a model folder "
        "nor a downloaded model; `verifai models pull NAME` downloads the embedders listed by "
        "`verifai models list`, or give the path of a sentence-transformers model folder"
    )
    for make in (
        lambda: Collection.open("n", create=True, embedder=unknown),
        lambda: Collection.create("n", embedder=unknown),
        lambda: Collection.open("n", create=True, settings=Settings(models=ModelSettings(unknown))),
    ):
        with pytest.raises(ModelNotFound) as info:
            make()
        assert str(info.value) == message
        assert not (collections_dir() / "n").exists()
    assert list_collections() == []
