"""Tantivy BM25 index: the English analyzer and punctuation-proof queries."""

from __future__ import annotations

from pathlib import Path

from verifai_desktop.index.lexical import LexicalIndex, query_terms


def test_query_terms_drop_stop_words_stem_and_ignore_punctuation() -> None:
    assert query_terms('COVID-19: (why?) The running "studies" AND OR NOT +x') == (
        "covid",
        "19",
        "whi",
        "run",
        "studi",
        "x",
    )
    assert query_terms("the of and ?!:()") == ()
    assert query_terms("Studies study studied") == ("studi",)


def test_search_ranks_by_bm25_and_survives_query_syntax(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "lex", tmp_path / "lex.json")
    index.add([1, 2], 10, ["Vaccines reduce COVID-19 transmission.", "Masks were studied."])
    index.add([3], 11, ["Running studies of vaccine trials in children."])
    index.commit(5)
    assert index.generation() == 5
    hits = index.search("COVID-19: (why?) vaccine", 10)
    assert [cid for cid, _ in hits] == [1, 3]
    assert hits[0][1] > hits[1][1] > 0
    assert index.search('AND OR "unbalanced ( [ { :', 10) == []
    # Same term frequency: the shorter chunk wins (BM25 length normalisation).
    assert [cid for cid, _ in index.search("study", 10)] == [2, 3]
    # Deleting a document removes all its chunks once committed.
    index.delete_document(10)
    index.commit(6)
    assert [cid for cid, _ in index.search("vaccine masks", 10)] == [3]
    index.close()
    # Reopening sees the committed state and generation.
    again = LexicalIndex(tmp_path / "lex", tmp_path / "lex.json")
    assert (again.generation(), again.num_chunks()) == (6, 1)
    again.close()
