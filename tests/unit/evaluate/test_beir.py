"""BEIR folder loading, corpus -> Document conversion and passage -> document ranking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifai_desktop.domain import ChunkId, DocId, Location, LocationKind, Passage
from verifai_desktop.errors import ParseError
from verifai_desktop.evaluate.beir import (
    BeirDocument,
    corpus_fingerprint,
    doc_id_from_key,
    iter_documents,
    load_beir,
    rank_documents,
    source_key,
    to_document,
)


def _write_beir(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    corpus = [
        {
            "_id": "10",
            "title": "Aspirin and colds",
            "text": "Aspirin shortens colds.",
            "metadata": {},
        },
        {"_id": "20", "title": "", "text": "Zinc does nothing."},
    ]
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in corpus) + "\n")
    queries = [
        {"_id": "1", "text": "aspirin colds"},
        {"_id": "2", "text": "zinc"},
        {"_id": "3", "text": "train only"},
    ]
    (root / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n1\t10\t1\n2\t20\t2\n2\t10\t0\n"
    )
    (root / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\n3\t20\t1\n")
    return root


def test_load_beir_keeps_only_the_split_queries(tmp_path: Path) -> None:
    ds = load_beir(_write_beir(tmp_path / "scifact" / "beir"), "test")
    assert ds.name == "scifact"
    assert [d.doc_id for d in ds.corpus] == ["10", "20"]
    assert ds.corpus[0] == BeirDocument("10", "Aspirin and colds", "Aspirin shortens colds.")
    assert dict(ds.queries) == {"1": "aspirin colds", "2": "zinc"}
    assert {q: dict(r) for q, r in ds.qrels.items()} == {"1": {"10": 1}, "2": {"20": 2, "10": 0}}
    train = load_beir(tmp_path / "scifact" / "beir", "train")
    assert dict(train.queries) == {"3": "train only"}


def test_load_beir_errors_name_the_file(tmp_path: Path) -> None:
    root = _write_beir(tmp_path / "ds")
    with pytest.raises(ParseError, match=r"dev\.tsv"):
        load_beir(root, "dev")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n99\t10\t1\n")
    with pytest.raises(ParseError, match=r"queries\.jsonl"):
        load_beir(root, "test")
    (root / "corpus.jsonl").write_text('{"_id": "1"}\nnot json\n')
    with pytest.raises(ParseError, match="line 2"):
        load_beir(root, "test")


def test_to_document_concatenates_title_and_text() -> None:
    doc = to_document(BeirDocument("10", "Aspirin and colds", "Aspirin shortens colds."))
    assert doc.text == "Aspirin and colds\n\nAspirin shortens colds."
    assert doc.title == "Aspirin and colds"
    assert len(doc.sections) == 1
    section = doc.sections[0]
    assert (section.char_start, section.char_end) == (0, len(doc.text))
    assert section.location == Location(LocationKind.SECTION, heading="Aspirin and colds")
    assert doc_id_from_key(str(doc.path)) == "10"
    untitled = to_document(BeirDocument("20", "", "Zinc does nothing."), include_title=True)
    assert untitled.text == "Zinc does nothing."
    keys = [k for k, _ in iter_documents([BeirDocument("7", "t", "x")])]
    assert keys == [source_key("7")] == ["beir:7"]
    assert doc_id_from_key("/abs/beir:7") == "7"
    assert doc_id_from_key("report.pdf") is None


def test_fingerprint_changes_with_content_not_order() -> None:
    a, b = BeirDocument("1", "t", "x"), BeirDocument("2", "u", "y")
    assert corpus_fingerprint([a, b]) == corpus_fingerprint([b, a])
    assert corpus_fingerprint([a, b]) != corpus_fingerprint([a, BeirDocument("2", "u", "z")])
    assert corpus_fingerprint([a]) != corpus_fingerprint([a], include_title=False)


def _passage(chunk: int, doc: str, score: float) -> Passage:
    return Passage(
        chunk_id=ChunkId(chunk),
        doc_id=DocId(0),
        path=Path(f"beir:{doc}"),
        title="",
        text="",
        char_start=0,
        char_end=0,
        location=Location(LocationKind.SECTION),
        sentence_spans=(),
        fused_score=score,
    )


def test_rank_documents_scores_a_document_by_its_best_chunk() -> None:
    passages = [
        _passage(1, "a", 0.5),
        _passage(2, "b", 0.9),
        _passage(3, "a", 0.95),
        _passage(4, "c", 0.5),
        _passage(5, "b", 0.1),
    ]
    key = lambda p: doc_id_from_key(str(p.path))  # noqa: E731
    assert rank_documents(passages, doc_key=key) == ["a", "b", "c"]
    assert rank_documents(passages, doc_key=key, depth=2) == ["a", "b"]
    # equal best scores: the document met first in the retriever's order wins
    tied = [_passage(1, "x", 0.5), _passage(2, "y", 0.5)]
    assert rank_documents(tied, doc_key=key) == ["x", "y"]
    assert rank_documents(list(reversed(tied)), doc_key=key) == ["y", "x"]
