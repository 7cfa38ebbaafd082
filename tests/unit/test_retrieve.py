"""Fusion math of hybrid retrieval (VerifAI's weighted sum) and RRF, on hand-computed scores."""

from __future__ import annotations

import pytest

from verifai_desktop.retrieve import fuse, normalise_by_top

LEXICAL = [(1, 10.0), (2, 5.0), (4, 2.5)]  # BM25, best first
SEMANTIC = [(2, 0.8), (3, 0.4), (4, 0.2)]  # cosine, best first


def test_normalise_by_top() -> None:
    assert normalise_by_top(LEXICAL) == {1: 1.0, 2: 0.5, 4: 0.25}
    assert normalise_by_top([]) == {}
    assert normalise_by_top([(7, -0.1), (8, -0.3)]) == {7: 0.0, 8: 0.0}


def test_hybrid_is_weighted_sum_of_top_normalised_scores() -> None:
    fused = fuse(LEXICAL, SEMANTIC, mode="hybrid", k=10, lexical_weight=0.7, semantic_weight=0.3)
    # 1: 0.7*1.0 + 0 = 0.7;  2: 0.7*0.5 + 0.3*1.0 = 0.65;  4: 0.7*0.25 + 0.3*0.25 = 0.25;
    # 3: 0 + 0.3*0.5 = 0.15
    assert [f.chunk_id for f in fused] == [1, 2, 4, 3]
    assert [f.fused for f in fused] == pytest.approx([0.7, 0.65, 0.25, 0.15])
    two = fused[1]
    assert (two.lexical, two.semantic, two.raw_lexical, two.raw_semantic) == (0.5, 1.0, 5.0, 0.8)
    three = fused[3]
    assert (three.lexical, three.raw_lexical) == (0.0, None)


def test_rrf_uses_ranks_with_k_60() -> None:
    fused = fuse(LEXICAL, SEMANTIC, mode="rrf", k=10, rrf_k=60)
    expected = {
        1: 1 / 61,
        2: 1 / 62 + 1 / 61,
        4: 1 / 63 + 1 / 63,
        3: 1 / 62,
    }
    assert [f.chunk_id for f in fused] == [2, 4, 1, 3]
    assert [f.fused for f in fused] == pytest.approx([expected[c] for c in (2, 4, 1, 3)])


def test_single_engine_modes_and_cut_at_k() -> None:
    lex = fuse(LEXICAL, SEMANTIC, mode="lexical", k=2)
    assert [(f.chunk_id, f.fused, f.semantic) for f in lex] == [(1, 1.0, 0.0), (2, 0.5, 1.0)]
    sem = fuse(LEXICAL, SEMANTIC, mode="semantic", k=10)
    assert [(f.chunk_id, f.fused) for f in sem] == [(2, 1.0), (3, 0.5), (4, 0.25)]


def test_ties_break_by_chunk_id() -> None:
    fused = fuse(
        [(9, 1.0), (5, 1.0)],
        [(7, 2.0)],
        mode="hybrid",
        k=3,
        lexical_weight=0.5,
        semantic_weight=0.5,
    )
    assert [f.chunk_id for f in fused] == [5, 7, 9]
