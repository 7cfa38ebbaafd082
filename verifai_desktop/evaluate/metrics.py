"""Ranking metrics for retrieval evaluation: nDCG@k, Recall@k, MAP@k and P@k.

The definitions follow ``trec_eval`` (measures ``ndcg_cut``, ``recall``, ``map_cut``, ``P``) as
used through ``pytrec_eval`` by the BEIR benchmark (Thakur et al., "BEIR: A Heterogeneous
Benchmark for Zero-shot Evaluation of Information Retrieval Models", NeurIPS 2021 Datasets and
Benchmarks), so figures are comparable with published BEIR tables:

* relevance is graded; a document is *relevant* when its qrels grade is > 0;
* DCG uses linear gain and a log2 discount, ``sum(rel_i / log2(i + 1))`` over ranks ``i = 1..k``;
  the ideal DCG sorts the query's qrels grades (not just the retrieved ones);
* MAP@k sums precision at the rank of each relevant document found in the top k and divides by
  the number of relevant documents of the query (``map_cut``), not by ``min(k, R)``;
* P@k always divides by k, even if fewer than k documents were returned.

Scores are averaged over the queries with at least one relevant document in the qrels. A query
that has relevant documents but is missing from the run counts as 0 on every metric (as
``trec_eval -c`` does), so a system cannot gain by skipping hard queries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Qrels = Mapping[str, Mapping[str, int]]
"""Relevance judgements: query id -> document id -> graded relevance (> 0 means relevant)."""

Run = Mapping[str, Sequence[str]]
"""A retrieval run: query id -> document ids, best first, without repeats."""


def dcg_at_k(ranked: Sequence[str], relevance: Mapping[str, int], k: int) -> float:
    """Discounted cumulative gain of the top ``k`` of a ranking (linear gain, log2 discount).

    Args:
        ranked: document ids, best first.
        relevance: document id -> graded relevance; missing ids count as 0.
        k: cut-off rank (>= 1).

    Returns:
        ``sum(rel_i / log2(i + 1) for i in 1..k)``.
    """
    return sum(
        max(relevance.get(doc, 0), 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k])
    )


def ndcg_at_k(ranked: Sequence[str], relevance: Mapping[str, int], k: int = 10) -> float:
    """Normalised DCG at ``k`` (trec_eval ``ndcg_cut.k``; BEIR's headline nDCG@10).

    Args:
        ranked: document ids, best first.
        relevance: document id -> graded relevance for this query.
        k: cut-off rank.

    Returns:
        DCG@k divided by the DCG@k of the ideal ranking of the qrels grades; 0.0 when the
        query has no relevant document.
    """
    ideal_grades = sorted((g for g in relevance.values() if g > 0), reverse=True)[:k]
    ideal = sum(g / math.log2(rank + 2) for rank, g in enumerate(ideal_grades))
    if ideal == 0.0:
        return 0.0
    return dcg_at_k(ranked, relevance, k) / ideal


def recall_at_k(ranked: Sequence[str], relevance: Mapping[str, int], k: int = 100) -> float:
    """Fraction of the query's relevant documents found in the top ``k`` (trec_eval ``recall_k``).

    Returns:
        ``|relevant in top k| / |relevant|``; 0.0 when the query has no relevant document.
    """
    n_relevant = sum(1 for g in relevance.values() if g > 0)
    if n_relevant == 0:
        return 0.0
    found = sum(1 for doc in ranked[:k] if relevance.get(doc, 0) > 0)
    return found / n_relevant


def precision_at_k(ranked: Sequence[str], relevance: Mapping[str, int], k: int = 10) -> float:
    """Fraction of the top ``k`` ranks holding a relevant document (trec_eval ``P_k``).

    Returns:
        ``|relevant in top k| / k`` (divides by ``k`` even if fewer documents were ranked).
    """
    return sum(1 for doc in ranked[:k] if relevance.get(doc, 0) > 0) / k


def average_precision_at_k(
    ranked: Sequence[str], relevance: Mapping[str, int], k: int = 10
) -> float:
    """Average precision cut at ``k`` (trec_eval ``map_cut_k``; BEIR's MAP@k).

    Returns:
        Sum of precision@i over ranks ``i <= k`` holding a relevant document, divided by the
        number of relevant documents of the query; 0.0 when it has none.
    """
    n_relevant = sum(1 for g in relevance.values() if g > 0)
    if n_relevant == 0:
        return 0.0
    hits = 0
    total = 0.0
    for rank, doc in enumerate(ranked[:k], start=1):
        if relevance.get(doc, 0) > 0:
            hits += 1
            total += hits / rank
    return total / n_relevant


@dataclass(frozen=True, slots=True)
class RetrievalMetrics:
    """Metrics of one run averaged over the judged queries.

    Attributes:
        ndcg_at_10: mean nDCG@10 (0..1).
        recall_at_100: mean Recall@100 (0..1).
        map_at_10: mean MAP@10 (0..1).
        precision_at_10: mean P@10 (0..1).
        n_queries: number of queries averaged (those with >= 1 relevant document).
    """

    ndcg_at_10: float
    recall_at_100: float
    map_at_10: float
    precision_at_10: float
    n_queries: int

    def as_dict(self) -> dict[str, float | int]:
        """Metric name (BEIR spelling, e.g. ``"nDCG@10"``) -> value."""
        return {
            "nDCG@10": self.ndcg_at_10,
            "Recall@100": self.recall_at_100,
            "MAP@10": self.map_at_10,
            "P@10": self.precision_at_10,
            "queries": self.n_queries,
        }


def per_query_metrics(run: Run, qrels: Qrels) -> dict[str, dict[str, float]]:
    """Every metric for every judged query.

    Args:
        run: query id -> ranked document ids.
        qrels: query id -> document id -> grade.

    Returns:
        Query id -> ``{"nDCG@10", "Recall@100", "MAP@10", "P@10"}`` for each query with at
        least one relevant document (queries absent from ``run`` score 0).
    """
    out: dict[str, dict[str, float]] = {}
    for qid, relevance in qrels.items():
        if not any(g > 0 for g in relevance.values()):
            continue
        ranked = run.get(qid, ())
        out[qid] = {
            "nDCG@10": ndcg_at_k(ranked, relevance, 10),
            "Recall@100": recall_at_k(ranked, relevance, 100),
            "MAP@10": average_precision_at_k(ranked, relevance, 10),
            "P@10": precision_at_k(ranked, relevance, 10),
        }
    return out


def evaluate_run(run: Run, qrels: Qrels) -> RetrievalMetrics:
    """Average nDCG@10, Recall@100, MAP@10 and P@10 of a run over the judged queries.

    Args:
        run: query id -> document ids, best first.
        qrels: query id -> document id -> graded relevance.

    Returns:
        The mean of each metric over the queries of ``qrels`` with at least one relevant
        document; all zeros and ``n_queries == 0`` when there is none.
    """
    per_query = per_query_metrics(run, qrels)
    n = len(per_query)
    if n == 0:
        return RetrievalMetrics(0.0, 0.0, 0.0, 0.0, 0)

    def mean(name: str) -> float:
        return sum(m[name] for m in per_query.values()) / n

    return RetrievalMetrics(
        ndcg_at_10=mean("nDCG@10"),
        recall_at_100=mean("Recall@100"),
        map_at_10=mean("MAP@10"),
        precision_at_10=mean("P@10"),
        n_queries=n,
    )
