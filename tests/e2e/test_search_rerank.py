"""`verifai search --rerank` with the bundled verifier and embedder on real documents: the
verifier reads the top passages against the query and reorders them by evidence."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.conftest import DOCS_CLEAN
from tests.e2e.cli import run_verifai
from verifai_desktop.rerank import fuse
from verifai_desktop.settings import RetrievalSettings

DOCS = ("deep_rules_09_overfitting.md", "acl2020_specter.pdf", "deep_rules_02_intro.md")
QUERY = "SPECTER uses citations as a signal of document relatedness."


def test_search_rerank_reads_the_top_n_and_orders_them_by_the_fusion(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ingest = run_verifai("ingest", *(str(DOCS_CLEAN / d) for d in DOCS), "-c", "rr", home=home)
    assert ingest.returncode == 0, ingest.stderr
    n = RetrievalSettings().rerank_candidates
    plain = run_verifai("search", QUERY, "-c", "rr", "-k", str(n), "--json", home=home)
    ranked = run_verifai("search", QUERY, "-c", "rr", "-k", str(n), "--rerank", "--json", home=home)
    assert plain.returncode == 0 and ranked.returncode == 0, plain.stderr + ranked.stderr
    before, after = json.loads(plain.stdout), json.loads(ranked.stdout)
    assert (before["rerank"], after["rerank"]) == (False, True)
    assert all("evidence" not in p["scores"] for p in before["passages"])
    ids = [p["chunk_id"] for p in before["passages"]]
    assert sorted(p["chunk_id"] for p in after["passages"]) == sorted(ids)  # same N, reordered
    evidence = {p["chunk_id"]: p["scores"]["evidence"] for p in after["passages"]}
    assert all(0.0 <= e <= 1.0 for e in evidence.values())
    # The order is the fusion of the retrieval rank and the evidence, with the defaults.
    s = RetrievalSettings()
    order = fuse(np.array([evidence[c] for c in ids]), s.rerank_weight, s.rerank_fusion)
    assert [p["chunk_id"] for p in after["passages"]] == [ids[int(i)] for i in order]
    # The passage that states it (the SPECTER paper) reads as evidence; the overfitting
    # notes do not.
    specter = [evidence[p["chunk_id"]] for p in after["passages"] if "specter" in p["file"]]
    others = [evidence[p["chunk_id"]] for p in after["passages"] if "specter" not in p["file"]]
    assert max(specter) > max(others, default=0.0)
    text = run_verifai("search", QUERY, "-c", "rr", "-k", "3", "--rerank", home=home)
    assert text.returncode == 0, text.stderr
    assert "evid." in text.stdout.splitlines()[0]
