"""`verifai eval answers`: whole answers on PubMedQA, measured by their citations.

A collection is built from the PubMedQA abstracts (PQA-L ``ori_pqal.json``: the CONTEXTS of a
PMID joined into one document, source key ``pubmedqa:<pmid>``). Each question is asked through
the real pipeline (retrieve, generate under the citation grammar, verify) and we report:

* citation coverage: answer sentences with at least one citation (TREC BioGen 2025 / BioACE);
* invalid citations: cited numbers naming no given passage (dropped; 0 under the grammar);
* citation support / contradict rates: (sentence, cited passage) pairs whose verifier
  P(SUPPORT) >= support_threshold / P(CONTRADICT) >= contradict_threshold;
* gold cited: questions whose own abstract is among the cited passages (and among retrieved);
* decision agreement: yes/no/maybe vs the gold ``final_decision``. The decision is a second,
  grammar-constrained one-word turn ("yes" | "no" | "maybe") appended to the answer chat;
* mean wall time per stage;
* the refusal / hallucination trade-off: every question is answered (abstention off), then
  for each threshold t a question counts as refused when its best raw cosine < t, and we
  report the refusal rate and the share of not-supported sentences among the kept answers.

Anchors (TREC BioGen 2025, BioACE): best run coverage 99.36%, support 98.33%; GEHC run 98.77%
coverage, 95.39% support, 0.00% contradict.

The data and its collection are in :mod:`verifai_desktop.evaluate.pubmedqa`, the scores and
sweeps in :mod:`verifai_desktop.evaluate.answer_metrics`, the tables in
:mod:`verifai_desktop.evaluate.answer_tables`, the generation cache in
:mod:`verifai_desktop.evaluate.generation_cache`.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from pathlib import Path

from verifai_desktop import modelstore
from verifai_desktop.domain import Progress
from verifai_desktop.errors import Cancelled
from verifai_desktop.evaluate.answer_metrics import AnswersReport, aggregate, question_result
from verifai_desktop.evaluate.generation_cache import CachingGenerator
from verifai_desktop.evaluate.pubmedqa import build_collection, held_out_corpus, load_pubmedqa
from verifai_desktop.generate import Generator, make_generator
from verifai_desktop.generate.grammar import decision_grammar
from verifai_desktop.generate.prompt import AnswerPrompt, decision_messages
from verifai_desktop.pipeline import AskSession
from verifai_desktop.settings import Settings, data_root
from verifai_desktop.store.collection import Collection
from verifai_desktop.verify.check import Verifier


def without_abstention(settings: Settings) -> Settings:
    """``settings`` with both abstentions off (by retrieval score and by evidence), so every
    question of an evaluation is answered and its sentences counted."""
    return dataclasses.replace(
        settings,
        verify=dataclasses.replace(
            settings.verify, abstain_threshold=-1.0, abstain_unsupported=False
        ),
    )


def decide(generator: Generator, prompt: AnswerPrompt, answer_text: str) -> str:
    """A one-word yes/no/maybe decision for an answered question (the PubMedQA decision).

    The answer chat is continued with a constrained one-word question (grammar
    ``yes | no | maybe``); the shared prefix reuses llama.cpp's KV cache.

    Args:
        generator: the generator that wrote the answer (the session's).
        prompt: the answer's prompt.
        answer_text: the answer as generated.

    Returns:
        ``"yes"``, ``"no"`` or ``"maybe"``.
    """
    reply = "".join(
        generator.stream(
            decision_messages(prompt, answer_text), grammar=decision_grammar(), max_tokens=4
        )
    )
    return reply.strip().lower()


def evaluate_pubmedqa(
    path: Path,
    *,
    limit: int = 30,
    k: int = 5,
    corpus_limit: int | None = None,
    skip: int = 0,
    collection_name: str = "pubmedqa-eval",
    settings: Settings,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    verifier: Verifier | None = None,
    use_cache: bool = True,
    held_out: bool = False,
) -> AnswersReport:
    """Ask ``limit`` PubMedQA questions, after the first ``skip``, over a collection of abstracts.

    Args:
        path: ``ori_pqal.json``.
        limit: questions asked (file order).
        k: passages per question.
        corpus_limit: abstracts indexed (file order; at least up to the last question asked);
            all if None.
        skip: questions passed over before the ones asked. The first 40 are the reported
            set; choices (the answer prompt, ``benchmarks/answer_prompt.py``) are made on
            questions after them (``skip=40``).
        collection_name: collection built (or reused when unchanged).
        settings: the settings in effect; abstention is switched off for the run (see the
            module docstring).
        progress: per-question progress (stage ``"questions"``) and ingest progress.
        cancel: set to stop between questions.
        verifier: the NLI verifier; ``settings.models.verifier`` if None.
        use_cache: replay identical generations from ``<data root>/cache/generations.json``
            (see :class:`CachingGenerator`).
        held_out: leave the own abstract of every other question asked (the 1st, 3rd, ...)
            out of the collection (named ``<collection_name>-heldout``): those questions
            should be refused (:func:`verifai_desktop.evaluate.answer_metrics.held_out_sweep`).

    Returns:
        The report.

    Raises:
        DatasetError: the file is unreadable.
        Cancelled: ``cancel`` was set.
    """
    items = load_pubmedqa(path)
    corpus = items if corpus_limit is None else items[: max(corpus_limit, skip + limit)]
    asked = items[skip : skip + limit]
    held: frozenset[str] = frozenset()
    if held_out:
        corpus, held = held_out_corpus(corpus, asked)
        collection_name = f"{collection_name}-heldout"
    n_docs = build_collection(
        collection_name, corpus, settings=settings, progress=progress, cancel=cancel
    )
    run_settings = without_abstention(settings)
    ident = modelstore.resolve(settings.models.generator, "generator")
    generator: Generator = make_generator(ident.path, settings.models)
    cache: CachingGenerator | None = None
    if use_cache:
        cache = CachingGenerator(
            generator, ident.sha256, data_root() / "cache" / "generations.json"
        )
        generator = cache
    session = AskSession(run_settings, generator=generator, verifier=verifier)
    session.set_identity("generator", ident.as_dict())
    results = []
    with Collection.open(collection_name, settings=settings) as collection:
        for i, item in enumerate(asked, start=1):
            if cancel is not None and cancel.is_set():
                raise Cancelled("evaluation")
            if cache is not None:
                cache.last = None
            detailed = session.ask_detailed(collection, item.question, k=k)
            generated = dict(cache.last) if cache is not None and cache.last else {}
            if cache is not None:
                cache.last = None
            t0 = time.perf_counter()
            decision = "maybe"
            if detailed.prompt is not None:
                answer = detailed.answer
                decision = decide(
                    session.generator, detailed.prompt, answer.generated_text or answer.text
                )
            decide_ms = (time.perf_counter() - t0) * 1000
            if cache is not None and cache.last:
                decide_ms = cache.last["generate"]
            result = question_result(
                item, detailed.answer, decision, run_settings, decide_ms, held_out=item.pmid in held
            )
            if generated:  # report the original generation times, not the replay's
                replayed_ms = result.timings_ms.get("generate", 0.0)
                result.timings_ms.update(generated)
                result.timings_ms["total"] = (
                    result.timings_ms.get("total", 0.0) - replayed_ms + generated["generate"]
                )
            results.append(result)
            if progress:
                progress(Progress("questions", i, len(asked), "questions", item.pmid))
    return aggregate(results, n_documents=n_docs, k=k, models=session.model_identities())
