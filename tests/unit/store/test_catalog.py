"""The SQLite catalog: generations, replacement of a document's chunks, exact vectors."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from verifai_desktop.domain import Chunk, DocFormat, DocStatus, Location, LocationKind
from verifai_desktop.store.catalog import Catalog, DocumentMeta


def _chunks(*texts: str) -> tuple[Chunk, ...]:
    out, pos = [], 0
    for i, t in enumerate(texts):
        out.append(
            Chunk(i, t, pos, pos + len(t), Location(LocationKind.PAGE, i + 1), ((0, len(t)),))
        )
        pos += len(t) + 1
    return tuple(out)


def test_generation_counts_every_commit_and_rewrite_keeps_doc_id(tmp_path: Path) -> None:
    cat = Catalog(tmp_path / "c.sqlite")
    assert cat.generation() == 0
    vecs = np.arange(6, dtype=np.float32).reshape(2, 3) / 7.0
    meta = DocumentMeta("/a.pdf", "A", "h1", 10, 5, DocFormat.PDF)
    gen, [(doc_id, removed, new_ids)] = cat.write_documents(
        [(meta, DocStatus.INDEXED, "", _chunks("one two", "three"), vecs)]
    )
    assert (gen, removed, len(new_ids)) == (1, [], 2)
    # Re-writing the same source keeps doc_id and reports the old chunk ids as removed.
    gen2, [(doc_id2, removed2, new_ids2)] = cat.write_documents(
        [(meta, DocStatus.INDEXED, "", _chunks("four"), vecs[:1])]
    )
    assert (gen2, doc_id2, removed2) == (2, doc_id, new_ids)
    assert new_ids2[0] > max(new_ids)  # AUTOINCREMENT: ids are never reused
    rec = cat.document("/a.pdf")
    assert rec is not None
    assert (rec.chunk_count, rec.status, rec.format, rec.sha256) == (
        1,
        DocStatus.INDEXED,
        DocFormat.PDF,
        "h1",
    )
    assert cat.num_chunks() == 1
    cat.close()


def test_vectors_round_trip_at_full_precision(tmp_path: Path) -> None:
    cat = Catalog(tmp_path / "c.sqlite")
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((3, 5)).astype(np.float32)
    _, [(_, _, ids)] = cat.write_documents(
        [(DocumentMeta("/b.txt"), DocStatus.INDEXED, "", _chunks("a", "b", "c"), vecs)]
    )
    got = cat.vectors([ids[2], ids[0], 999])
    assert set(got) == {ids[0], ids[2]}
    np.testing.assert_array_equal(got[ids[2]], vecs[2])
    all_ids, mat = cat.all_vectors()
    assert all_ids.tolist() == ids
    np.testing.assert_array_equal(mat, vecs)
    rec = cat.chunk_records([ids[1]])[ids[1]]
    assert (rec.chunk.text, rec.chunk.location.number, rec.chunk.sentence_spans) == (
        "b",
        2,
        ((0, 1),),
    )
    cat.close()


def test_failed_status_and_remove(tmp_path: Path) -> None:
    cat = Catalog(tmp_path / "c.sqlite")
    cat.write_documents([(DocumentMeta("/d/x.pdf"), DocStatus.ENCRYPTED, "needs pw", (), None)])
    _, [(doc_id, _, ids)] = cat.write_documents(
        [
            (
                DocumentMeta("/d/sub/y.txt"),
                DocStatus.INDEXED,
                "",
                _chunks("y"),
                np.ones((1, 2), np.float32),
            )
        ]
    )
    cat.write_documents([(DocumentMeta("/other/z.txt"), DocStatus.EMPTY, "no text", (), None)])
    rec = cat.document("/d/x.pdf")
    assert rec is not None and (rec.status, rec.reason, rec.chunk_count) == (
        DocStatus.ENCRYPTED,
        "needs pw",
        0,
    )
    assert sorted(cat.sources_under(Path("/d"))) == ["/d/sub/y.txt", "/d/x.pdf"]
    gen_before = cat.generation()
    gen, removed = cat.remove(["/d/sub/y.txt", "/missing"])
    assert (gen, removed) == (gen_before + 1, [(doc_id, ids)])
    assert cat.num_chunks() == 0
    # Removing nothing commits nothing.
    assert cat.remove(["/missing"]) == (gen, [])
    assert [r.source for r in cat.documents()] == ["/d/x.pdf", "/other/z.txt"]
    cat.close()


def test_sources_that_are_not_utf8_round_trip_and_titles_become_text(tmp_path: Path) -> None:
    """Surrogate-escaped names (POSIX bytes that are not UTF-8) cannot be SQLite text."""
    cat = Catalog(tmp_path / "c.sqlite")
    bad = os.fsdecode(b"/docs/bad\xff\xfe.txt")
    lookalike = "/docs/bad\\xff\\xfe.txt"  # the escaped spelling is another file
    for source, title in ((bad, os.fsdecode(b"bad\xff")), (lookalike, "odd \ud800 title")):
        cat.write_documents([(DocumentMeta(source, title), DocStatus.FAILED, title, (), None)])
    records = {r.source: (r.title, r.reason) for r in cat.documents()}
    assert records == {
        bad: ("bad\\xff", "bad\\xff"),
        lookalike: ("odd \\ud800 title", "odd \\ud800 title"),
    }
    assert sorted(cat.sources_under(Path("/docs"))) == sorted([lookalike, bad])
    assert cat.remove([bad])[1][0][0] == 1 and cat.document(bad) is None
    assert cat.document(lookalike) is not None
