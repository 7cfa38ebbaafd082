"""nDCG@10, Recall@100, MAP@10 and P@10 against values worked out by hand (trec_eval rules)."""

from __future__ import annotations

import math

import pytest

from verifai_desktop.evaluate.metrics import (
    average_precision_at_k,
    dcg_at_k,
    evaluate_run,
    ndcg_at_k,
    per_query_metrics,
    precision_at_k,
    recall_at_k,
)

# Ranked a, b, c, d; relevant b (grade 1), d (grade 2) and e (grade 1, never retrieved).
RANKED = ("a", "b", "c", "d")
GRADES = {"b": 1, "d": 2, "e": 1, "z": 0}


def test_dcg_is_linear_gain_with_log2_discount() -> None:
    # rank 2 -> 1 / log2(3), rank 4 -> 2 / log2(5)
    assert dcg_at_k(RANKED, GRADES, 10) == pytest.approx(0.6309298 + 0.8613531, abs=1e-6)
    assert dcg_at_k(RANKED, GRADES, 3) == pytest.approx(0.6309298, abs=1e-6)


def test_ndcg_ideal_comes_from_qrels_not_from_the_run() -> None:
    # ideal order of grades 2, 1, 1: 2/1 + 1/log2(3) + 1/2 = 3.1309298
    assert ndcg_at_k(RANKED, GRADES, 10) == pytest.approx(1.4922829 / 3.1309298, abs=1e-6)
    # at k=2 the ideal is 2 + 0.6309298, the run gets 0.6309298
    assert ndcg_at_k(RANKED, GRADES, 2) == pytest.approx(0.6309298 / 2.6309298, abs=1e-6)


def test_ndcg_of_the_ideal_ranking_is_one_and_of_no_hit_is_zero() -> None:
    assert ndcg_at_k(("d", "b", "e"), GRADES, 10) == pytest.approx(1.0)
    assert ndcg_at_k(("e", "b", "d"), GRADES, 10) < 1.0
    assert ndcg_at_k(("a", "c", "z"), GRADES, 10) == 0.0
    assert ndcg_at_k(RANKED, {"z": 0}, 10) == 0.0


def test_recall() -> None:
    assert recall_at_k(RANKED, GRADES, 100) == pytest.approx(2 / 3)
    assert recall_at_k(RANKED, GRADES, 2) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, GRADES, 1) == 0.0
    assert recall_at_k(RANKED, {}, 100) == 0.0


def test_precision_divides_by_k_even_for_short_runs() -> None:
    assert precision_at_k(RANKED, GRADES, 10) == pytest.approx(0.2)
    assert precision_at_k(RANKED, GRADES, 2) == pytest.approx(0.5)
    assert precision_at_k((), GRADES, 10) == 0.0


def test_map_cut_divides_by_all_relevant_documents() -> None:
    # precision at rank 2 = 1/2, at rank 4 = 2/4; three relevant documents in the qrels
    assert average_precision_at_k(RANKED, GRADES, 10) == pytest.approx((0.5 + 0.5) / 3)
    assert average_precision_at_k(RANKED, GRADES, 3) == pytest.approx(0.5 / 3)
    assert average_precision_at_k(("b", "d", "e"), GRADES, 10) == pytest.approx(1.0)


def test_evaluate_run_averages_over_judged_queries_and_zeroes_missing_ones() -> None:
    qrels = {
        "q1": {"d1": 1},
        "q2": {"d2": 1, "d3": 1},
        "q3": {"d9": 1},  # not in the run: counts as 0
        "q4": {"d1": 0},  # no relevant document: not averaged
    }
    run = {"q1": ["d1", "x"], "q2": ["x", "d3"], "q4": ["d1"], "q5": ["d1"]}
    m = evaluate_run(run, qrels)
    assert m.n_queries == 3
    q2_ndcg = (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    assert m.ndcg_at_10 == pytest.approx((1.0 + q2_ndcg + 0.0) / 3)
    assert m.recall_at_100 == pytest.approx((1.0 + 0.5 + 0.0) / 3)
    assert m.map_at_10 == pytest.approx((1.0 + 0.5 / 2 + 0.0) / 3)
    assert m.precision_at_10 == pytest.approx((0.1 + 0.1 + 0.0) / 3)
    assert set(per_query_metrics(run, qrels)) == {"q1", "q2", "q3"}
    assert m.as_dict()["queries"] == 3


def test_evaluate_run_with_no_judged_query() -> None:
    m = evaluate_run({"q": ["d"]}, {"q": {"d": 0}})
    assert (m.ndcg_at_10, m.recall_at_100, m.map_at_10, m.precision_at_10, m.n_queries) == (
        0.0,
        0.0,
        0.0,
        0.0,
        0,
    )
