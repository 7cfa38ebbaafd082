"""Control flow of the ask session with fakes behind the protocols (no models).

The verifier path with the real bundled verifier is in tests/unit/verify/test_check.py.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from tests.conftest import DOCS_CLEAN
from tests.unit.fakes import FAKE_NAME
from verifai_desktop.codec import answer_from_dict, answer_to_dict
from verifai_desktop.domain import (
    ChunkId,
    DocFormat,
    DocId,
    Document,
    Location,
    LocationKind,
    NliLabel,
    Passage,
    Progress,
    Section,
    SentenceLabel,
)
from verifai_desktop.errors import Cancelled, EmptyClaim, ModelNotFound, SettingsError
from verifai_desktop.evaluate.verifier import EvalPair, evaluate_pairs
from verifai_desktop.generate.prompt import ChatMessage
from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.pipeline import PREPARE_STAGE, AskSession, claim_to_check
from verifai_desktop.presentation import passages_given_text
from verifai_desktop.retrieve import Fused, Retriever
from verifai_desktop.settings import (
    GenerationSettings,
    ModelSettings,
    PremiseGranularity,
    RetrievalSettings,
    ServerSettings,
    Settings,
    VerifySettings,
)
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.writer import ingest_documents
from verifai_desktop.verify.abstention import ABSTAIN_TEXT, should_abstain
from verifai_desktop.verify.check import verify_pairs
from verifai_desktop.verify.labels import sentence_label
from verifai_desktop.verify.nli import get_verifier


def _passage(i: int, text: str, cosine: float) -> Passage:
    spans, start = [], 0
    for part in text.split(". "):
        end = start + len(part) + (1 if not part.endswith(".") else 0)
        end = min(end, len(text))
        spans.append((start, end))
        start = end + 1
    return Passage(
        chunk_id=ChunkId(i),
        doc_id=DocId(i),
        path=Path(f"/docs/doc{i}.pdf"),
        title=f"doc {i}",
        text=text,
        char_start=0,
        char_end=len(text),
        location=Location(LocationKind.PAGE, i),
        sentence_spans=tuple(spans),
        fused_score=1.0 / i,
        raw_semantic=cosine,
    )


PASSAGES = (
    _passage(1, "Cats sleep a lot. Cats purr when happy.", 0.62),
    _passage(2, "Dogs bark at night. Dogs never sleep.", 0.40),
    _passage(3, "Birds sing in spring.", 0.30),
)


class FakeRetriever:
    """Returns fixed passages for every query; finds no other candidates for the
    contradiction search (control flow only)."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        self.given = tuple(passages)
        self.calls: list[tuple[str, int, bool]] = []

    def search(self, query: str, *, k: int, include_references: bool = True) -> tuple[Passage, ...]:
        self.calls.append((query, k, include_references))
        kept = [p for p in self.given if include_references or not p.is_reference]
        return tuple(kept[:k])

    def lexical_hits(self, query: str, limit: int) -> list[tuple[int, float]]:
        return []

    def semantic_hits(self, query: str, limit: int) -> list[tuple[int, float]]:
        return []

    def passages(
        self, fused: Sequence[Fused], k: int, *, include_references: bool = True
    ) -> tuple[Passage, ...]:
        return ()


class FakeGenerator:
    """Yields fixed pieces; reports reading a prompt of ``read_tokens`` in two steps first."""

    def __init__(self, pieces: Sequence[str], read_tokens: int = 0) -> None:
        self.pieces = tuple(pieces)
        self.read_tokens = read_tokens
        self.calls: list[dict[str, Any]] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        grammar: str | None = None,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[str]:
        self.calls.append({"messages": tuple(messages), "grammar": grammar})
        if progress and self.read_tokens:
            for done in (0, self.read_tokens // 2, self.read_tokens):
                progress(Progress("read", done, self.read_tokens, "tokens"))
        yield from self.pieces


class FakeVerifier:
    """SUPPORT when every claim word appears in the premise, CONTRADICT on 'never'."""

    def __init__(self) -> None:
        self.batches: list[list[tuple[str, str]]] = []

    def load(self) -> None:
        """Nothing to load."""

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        self.batches.append(list(pairs))
        rows = []
        for premise, claim in pairs:
            words = {w.strip(".").lower() for w in claim.split()}
            prem = {w.strip(".").lower() for w in premise.split()}
            if "never" in prem and words & prem - {"never"}:
                rows.append([0.05, 0.9, 0.05])
            elif words <= prem:
                rows.append([0.9, 0.05, 0.05])
            else:
                rows.append([0.1, 0.1, 0.8])
        return np.asarray(rows, dtype=np.float32)


def _splitter(text: str) -> tuple[tuple[int, int], ...]:
    spans, start = [], 0
    for i, ch in enumerate(text):
        if ch == "." and (i + 1 == len(text) or text[i + 1] == " "):
            spans.append((start, i + 1))
            start = i + 2
    return tuple(spans)


def _session(
    pieces: Sequence[str], settings: Settings | None = None
) -> tuple[AskSession, FakeGenerator, FakeVerifier, FakeRetriever]:
    gen, ver, ret = FakeGenerator(pieces), FakeVerifier(), FakeRetriever(PASSAGES)
    session = AskSession(
        settings or Settings(verify=VerifySettings(premise="sentences", abstain_threshold=0.25)),
        generator=gen,
        verifier=ver,
        retriever_factory=lambda c, s: ret,
        splitter=_splitter,
    )
    return session, gen, ver, ret


ANSWER_PIECES = (
    "Cats sleep a lot [1].",
    " Dogs sleep [2][1].",
    " Dogs bark",
    " [2].",
    " Fish swim.",
)


def test_full_flow_labels_and_one_verifier_batch_per_sentence() -> None:
    session, gen, ver, ret = _session(ANSWER_PIECES)
    tokens: list[str] = []
    answer = session.ask(object(), "Do cats sleep?", k=3, on_token=tokens.append)  # type: ignore[arg-type]
    # twice k, so that k remain after near-duplicates go; reference lists left out by default
    assert ret.calls == [("Do cats sleep?", 6, False)]
    assert tokens == list(ANSWER_PIECES)
    assert answer.text == "".join(ANSWER_PIECES)
    assert not answer.abstained
    # the grammar allows exactly the three given passages
    grammar = gen.calls[0]["grammar"]
    assert 'num ::= "3" | "2" | "1"' in grammar
    # passages numbered in the prompt with their sources
    user = gen.calls[0]["messages"][1].content
    assert "[1] (source: doc1.pdf, p. 1)" in user and "[3] (source: doc3.pdf, p. 3)" in user
    assert [s.citations for s in answer.sentences] == [(1,), (2, 1), (2,), ()]
    # one batch per sentence (its pairs with every passage), so checking reports progress;
    # "Fish swim." shares no word with any passage: decided without the verifier (the gate)
    assert [{claim for _, claim in batch} for batch in ver.batches] == [
        {s.claim} for s in answer.sentences[:3]
    ]
    labels = [s.label for s in answer.sentences]
    assert labels == [
        SentenceLabel.SUPPORTED,
        SentenceLabel.CONTRADICTED,  # passage 2 says dogs never sleep
        SentenceLabel.SUPPORTED,
        SentenceLabel.UNREFERENCED,
    ]
    for s in answer.sentences:
        assert [v.passage_number for v in s.verdicts] == list(s.citations)
        assert s.label is sentence_label(s.verdicts, session.settings.verify)
        assert answer.text[s.char_start : s.char_end] == s.text
    v = answer.sentences[0].verdicts[0]
    assert v.label is NliLabel.SUPPORT
    assert v.evidence == "Cats sleep a lot."
    assert PASSAGES[0].text[v.evidence_span[0] : v.evidence_span[1]] == v.evidence
    # the evidence is the window that decided the verdict: passage 2's "never" sentence
    contradicting = answer.sentences[1].verdicts[0]
    assert contradicting.passage_number == 2 and contradicting.label is NliLabel.CONTRADICT
    assert contradicting.evidence == "Dogs never sleep."
    assert contradicting.evidence_span == (20, 37)
    assert ("Dogs never sleep.", "Dogs sleep.") in ver.batches[1]
    assert set(answer.timings_ms) >= {"retrieve", "generate", "first_token", "verify", "total"}


def test_stages_are_reported_in_order_with_the_passages_and_each_sentence_checked() -> None:
    session, gen, _, _ = _session(ANSWER_PIECES)
    gen.read_tokens = 600
    events: list[tuple[str, int, int | None]] = []
    shown: dict[str, tuple[Passage, ...]] = {}

    def report(p: Progress) -> None:
        events.append((p.stage, p.done, p.total))
        if p.passages:
            shown[p.stage] = p.passages
            assert ("token", 0, None) not in events  # before the first piece

    answer = session.ask(
        object(),  # type: ignore[arg-type]
        "Do cats sleep?",
        k=3,
        on_token=lambda piece: events.append(("token", 0, None)),
        progress=report,
    )
    assert answer.text == "".join(ANSWER_PIECES)
    n = len(ANSWER_PIECES)
    max_tokens = session.settings.models.max_answer_tokens
    m = len(answer.sentences)
    assert m == 4
    assert events == [
        ("retrieve", 0, 1),
        ("retrieve", 1, 1),
        ("prompt", 3, 3),  # the 3 found fit the reading budget
        ("generate", 0, max_tokens),
        ("read", 0, 600),
        ("read", 300, 600),
        ("read", 600, 600),
        *[e for i in range(1, n + 1) for e in (("token", 0, None), ("generate", i, max_tokens))],
        *[("verify", i, m) for i in range(m + 1)],  # sentence by sentence
        ("conflicts", 0, 1),
    ]
    # the passages found, then those given, before the answer is written
    assert shown == {"retrieve": PASSAGES, "prompt": answer.passages}


def test_abstains_without_generating() -> None:
    settings = Settings(verify=VerifySettings(abstain_threshold=0.7))
    session, gen, ver, _ = _session(ANSWER_PIECES, settings)
    answer = session.ask(object(), "Do cats fly?", k=2)  # type: ignore[arg-type]
    assert answer.abstained
    assert answer.text == ABSTAIN_TEXT
    assert answer.passages == PASSAGES[:2]
    assert answer.sentences == ()
    assert gen.calls == [] and ver.batches == []


def test_cancel_stops_before_generation() -> None:
    session, gen, _, _ = _session(ANSWER_PIECES)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        session.ask(object(), "q", cancel=cancel)  # type: ignore[arg-type]
    assert gen.calls == []


def test_answer_json_has_the_documented_fields() -> None:
    session, *_ = _session(ANSWER_PIECES)
    answer = session.ask(object(), "Do cats sleep?", k=3)  # type: ignore[arg-type]
    data = answer_to_dict(answer, session.settings)
    assert data["schema"] == "verifai.answer/4"
    assert set(data) >= {
        "question",
        "answer",
        "abstained",
        "sentences",
        "passages",
        "timings_ms",
        "models",
    }
    s0 = data["sentences"][0]  # type: ignore[index]
    assert set(s0) >= {
        "text",
        "char_start",
        "char_end",
        "citations",
        "label",
        "probability",
        "verdicts",
    }
    assert set(s0["verdicts"][0]) >= {
        "passage",
        "label",
        "p_support",
        "p_contradict",
        "p_no_evidence",
        "evidence",
    }
    p0 = data["passages"][0]  # type: ignore[index]
    assert p0["number"] == 1 and p0["file"] == "doc1.pdf" and p0["location"]["label"] == "p. 1"
    assert p0["scores"]["raw_semantic"] == pytest.approx(0.62)


def test_terminal_rendering_shows_labels_evidence_and_sources(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from verifai_desktop.cli.ask_cmd import render_answer

    session, *_ = _session(ANSWER_PIECES)
    answer = session.ask(object(), "Do cats sleep?", k=3)  # type: ignore[arg-type]
    render_answer(answer, session.settings)
    out = capsys.readouterr().out
    assert "Legend:" in out
    for label in (
        "supported",
        "contradicted",
        "unreferenced",
        "no evidence",
        "partially supported",
    ):
        assert label in out
    assert "“Cats sleep a lot.”" in out  # the evidence sentence under sentence 1
    assert "[1] doc1.pdf, p. 1" in out and "[3] doc3.pdf, p. 3" in out


def test_passage_granularity_shows_the_whole_passage_as_evidence() -> None:
    settings = Settings(verify=VerifySettings(premise="passage", abstain_threshold=0.25))
    session, _, ver, _ = _session(ANSWER_PIECES, settings)
    answer = session.ask(object(), "Do cats sleep?", k=3)  # type: ignore[arg-type]
    assert ver.batches[0][0] == (PASSAGES[0].text, "Cats sleep a lot.")
    # one premise per (sentence, passage given) pair, a batch per sentence
    # pairs sharing no word are decided without the verifier (the gate): "Fish swim." has none
    assert [len(batch) for batch in ver.batches] == [2, 2, 1]
    for s in answer.sentences:
        for v in s.verdicts:
            passage = PASSAGES[v.passage_number - 1]
            assert v.evidence == passage.text
            assert v.evidence_span == (0, len(passage.text))


def test_no_citation_never_loads_the_verifier_without_re_citation() -> None:
    """With re-citation on, an uncited sentence is checked against every passage
    (tests/unit/verify/test_answer.py); without it, nothing is left to verify."""
    session = AskSession(
        Settings(verify=VerifySettings(abstain_threshold=0.25, recite=False)),
        generator=FakeGenerator(("Fish swim.",)),
        retriever_factory=lambda c, s: FakeRetriever(PASSAGES),
        splitter=_splitter,
    )
    answer = session.ask(object(), "Do fish swim?", k=3)  # type: ignore[arg-type]
    assert [s.label for s in answer.sentences] == [SentenceLabel.UNREFERENCED]
    assert session._verifier is None
    assert "verifier" not in answer.models


def test_should_abstain() -> None:
    assert should_abstain((), 0.25)
    assert should_abstain(PASSAGES[1:], 0.5)  # best cosine 0.40
    assert not should_abstain(PASSAGES, 0.5)  # best cosine 0.62
    lexical_only = (dataclasses.replace(PASSAGES[2], raw_semantic=None),)
    assert not should_abstain(lexical_only, 0.99)


def test_default_retriever_uses_the_retrieval_settings_and_records_the_embedder(
    fake_settings: Settings,
) -> None:
    text = "Cats sleep a lot. Cats purr when happy."
    doc = Document(
        Path("cats.txt"), DocFormat.TXT, "cats", text,
        (Section(0, len(text), Location(LocationKind.SECTION)),),
    )  # fmt: skip
    settings = dataclasses.replace(
        fake_settings,
        retrieval=RetrievalSettings(mode="lexical", k=1),
        verify=VerifySettings(premise="sentences", abstain_threshold=0.25),
    )
    ver = FakeVerifier()
    session = AskSession(
        settings, generator=FakeGenerator(("Cats sleep a lot [1].",)), verifier=ver
    )
    with Collection.open("cats", create=True, settings=settings) as collection:
        ingest_documents(collection, [("cats.txt", doc)])
        retriever = session.retriever(collection)
        assert isinstance(retriever, Retriever)
        assert retriever.settings is settings.retrieval
        assert session.retriever(collection) is retriever  # cached per collection
        answer = session.ask(collection, "cats sleep")
    assert len(answer.passages) == 1 and answer.passages[0].text == text
    assert answer.models["embedder"]["name"] == FAKE_NAME
    (sentence,) = answer.sentences
    assert sentence.label is SentenceLabel.SUPPORTED
    assert sentence.verdicts[0].evidence == "Cats sleep a lot."


# -- the app and `verifai eval verifier` share one verification path (real bundled verifier) --


METFORMIN = (
    "Participants were recruited from twelve clinics. Metformin lowered fasting glucose by "
    "20 percent over six months. Adverse events were mild."
)
STATINS = (
    "The registry covered two decades. Statin users had more muscle complaints than "
    "non-users in the registry."
)
VITAMIN = "The trial ended early for funding reasons. Vitamin D was given weekly."
ANSWER = (
    "Metformin lowers fasting glucose. [1] "
    "Statins never cause muscle complaints. [2][1] "
    "Vitamin D supplementation prevents fractures. [3]"
)


@pytest.mark.parametrize("granularity", ["sentences", "passage"])
def test_app_and_eval_verifier_give_identical_probabilities(
    granularity: PremiseGranularity,
) -> None:
    """AskSession's verdicts and `verifai eval verifier`'s probabilities for the same
    (passage, claim) pairs are the same numbers, bit for bit."""
    bundled = get_verifier("verifai-minilm-nli")
    passages = [
        dataclasses.replace(_passage(n, text, 0.9), sentence_spans=split_sentences(text))
        for n, text in enumerate((METFORMIN, STATINS, VITAMIN), start=1)
    ]
    settings = Settings(verify=VerifySettings(premise=granularity, abstain_threshold=0.0))
    session = AskSession(
        settings,
        generator=FakeGenerator((ANSWER,)),
        verifier=bundled,
        retriever_factory=lambda collection, s: FakeRetriever(passages),
    )
    answer = session.ask(object(), "What do the studies say?", k=3)  # type: ignore[arg-type]
    app_pairs = [
        (passages[v.passage_number - 1].text, s.text.split(" [")[0])
        for s in answer.sentences
        for v in s.verdicts
    ]
    assert [c for _, c in app_pairs] == [
        "Metformin lowers fasting glucose.",
        "Statins never cause muscle complaints.",
        "Statins never cause muscle complaints.",
        "Vitamin D supplementation prevents fractures.",
    ]
    app_probs = np.array(
        [
            (v.p_support, v.p_contradict, v.p_no_evidence)
            for s in answer.sentences
            for v in s.verdicts
        ],
        dtype=np.float32,
    )
    evaluated = evaluate_pairs(
        bundled,
        [EvalPair(p, c, NliLabel.SUPPORT, f"pair:{i}") for i, (p, c) in enumerate(app_pairs)],
        dataset="parity",
        system="bundled",
        granularity=granularity,
    )
    np.testing.assert_array_equal(app_probs, evaluated.probs)
    spans = verify_pairs(bundled, app_pairs, granularity=granularity).spans
    assert [v.evidence_span for s in answer.sentences for v in s.verdicts] == list(spans)


@pytest.mark.parametrize("k", [0, -1])
def test_k_below_one_is_refused_not_replaced_by_the_default(k: int) -> None:
    session, gen, _, _ = _session(ANSWER_PIECES)
    with pytest.raises(SettingsError, match=rf"invalid setting k: {k}; ask for 1 or more"):
        session.ask(object(), "Do cats sleep?", k=k)  # type: ignore[arg-type]
    assert gen.calls == []


# -- what reaches the prompt: reference lists left out, duplicates dropped, a token budget --


def _long(i: int, words: int = 60, doc: int | None = None) -> Passage:
    """A passage of ``words`` distinct words (its own vocabulary: no near-duplicate)."""
    text = " ".join(f"w{i}x{j}" for j in range(words - 1)) + " end."
    return dataclasses.replace(
        _passage(i, text, 0.6),
        doc_id=DocId(doc if doc is not None else i),
        sentence_spans=((0, len(text)),),
    )


class GpuGenerator(FakeGenerator):
    gpu_offload = True


def _budget_session(
    passages: Sequence[Passage], generator: FakeGenerator, cpu: int, gpu: int
) -> AskSession:
    settings = Settings(
        generation=GenerationSettings(prompt_passage_tokens=cpu, prompt_passage_tokens_gpu=gpu),
        verify=VerifySettings(premise="passage", abstain_threshold=0.25),
    )
    return AskSession(
        settings,
        generator=generator,
        verifier=FakeVerifier(),
        retriever_factory=lambda c, s: FakeRetriever(passages),
        splitter=_splitter,
    )


def test_the_prompt_holds_what_fits_the_budget_numbered_as_the_answer() -> None:
    offered = [_long(1), _long(2), _long(3), _long(4)]
    # each costs 60 words + a 5-word source line + 2 (FakeGenerator counts words)
    gen = FakeGenerator(("w2x0 end [2].",))
    session = _budget_session(offered, gen, cpu=2 * 67 + 30, gpu=4 * 67)
    detailed = session.ask_detailed(object(), "q", k=4)  # type: ignore[arg-type]
    answer, prompt = detailed.answer, detailed.prompt
    assert prompt is not None
    assert answer.passages == prompt.passages == (offered[0], offered[1])  # 30 < MIN_PART
    assert prompt.left_out == 2
    grammar = gen.calls[0]["grammar"]
    assert 'num ::= "2" | "1"' in grammar  # only the given passages can be cited
    user = gen.calls[0]["messages"][1].content
    assert "[2] (source: doc2.pdf, p. 2)" in user and "[3]" not in user
    (sentence,) = answer.sentences
    assert sentence.citations == (2,) and sentence.verdicts[0].evidence == offered[1].text


def test_the_answer_says_how_many_passages_the_reading_budget_let_through() -> None:
    offered = [_long(1), _long(2), _long(3), _long(4)]
    gen = FakeGenerator(("w2x0 end [2].",))
    answer = _budget_session(offered, gen, cpu=2 * 67 + 30, gpu=4 * 67).ask(
        object(),  # type: ignore[arg-type]
        "q",
        k=4,
    )
    assert (len(answer.passages), answer.passages_left_out) == (2, 2)
    assert passages_given_text(answer) == "2 of 4 passages given (reading budget)"
    # Kept with the answer: a reopened answer says the same.
    data = answer_to_dict(answer)
    assert data["passages_left_out"] == 2
    assert answer_from_dict(data) == answer
    assert answer_to_dict(answer_from_dict(data)) == data
    # Every passage fits a larger budget: nothing is said to be left out.
    whole = _budget_session(offered, FakeGenerator(("w2x0 end [2].",)), 4000, 4000).ask(
        object(),  # type: ignore[arg-type]
        "q",
        k=4,
    )
    assert whole.passages_left_out == 0
    assert passages_given_text(whole) == "4 passages given"
    # An answer kept before the count existed reads back as nothing left out.
    del data["passages_left_out"]
    assert answer_from_dict(data).passages_left_out == 0


def test_a_gpu_generator_gets_the_larger_budget() -> None:
    offered = [_long(1), _long(2), _long(3), _long(4)]
    gen = GpuGenerator(("w1x0 end [1].",))
    answer = _budget_session(offered, gen, cpu=2 * 67, gpu=4 * 67).ask(
        object(),  # type: ignore[arg-type]
        "q",
        k=4,
    )
    assert answer.passages == tuple(offered)
    assert 'num ::= "4" | "3" | "2" | "1"' in gen.calls[0]["grammar"]


def test_near_duplicates_are_dropped_and_k_passages_still_given() -> None:
    copy = dataclasses.replace(_long(1), chunk_id=ChunkId(99), doc_id=DocId(99))
    offered = [_long(1), copy, _long(2), _long(3), _long(4)]
    gen = FakeGenerator(("w3x0 end [3].",))
    session = _budget_session(offered, gen, cpu=4000, gpu=4000)
    answer = session.ask(object(), "q", k=3)  # type: ignore[arg-type]
    assert answer.passages == (offered[0], offered[2], offered[3])
    assert answer.sentences[0].verdicts[0].evidence == offered[3].text


def test_reference_passages_are_left_out_unless_the_setting_says_otherwise() -> None:
    ref = dataclasses.replace(_long(1), is_reference=True)
    offered = [ref, _long(2), _long(3)]
    gen = FakeGenerator(("w2x0 end [1].",))
    session = _budget_session(offered, gen, cpu=4000, gpu=4000)
    assert session.ask(object(), "q", k=2).passages == (offered[1], offered[2])  # type: ignore[arg-type]
    session.settings = dataclasses.replace(
        session.settings, retrieval=RetrievalSettings(exclude_references=False)
    )
    assert session.ask(object(), "q", k=2).passages == (ref, offered[1])  # type: ignore[arg-type]


HEPARIN_PAPER = "bmc_trauma_2010_dvt_prophylaxis_review.pdf"
HEPARIN_QUESTION = (
    "Is heparin-induced thrombocytopenia more frequent with unfractionated heparin than with "
    "low-molecular-weight heparin?"
)


@pytest.mark.slow
def test_reference_chunks_of_a_real_paper_stay_searchable_but_out_of_the_prompt() -> None:
    """The issue's heparin case: a real ingest of the review (bundled embedder) tags its
    reference list; search still finds those chunks, the answer prompt built by the session
    leaves them out and is filled with body text (the generator is a fake: control flow)."""
    settings = Settings(verify=VerifySettings(premise="passage", abstain_threshold=-1.0))
    with Collection.open("heparin", create=True, settings=settings) as collection:
        report = collection.add_paths([DOCS_CLEAN / HEPARIN_PAPER])
        assert report.chunks_indexed == 34
        records = collection.chunks(range(1, 100))
        tagged = sorted(r.chunk.ordinal for r in records.values() if r.chunk.is_reference)
        assert tagged == list(range(9, 33))  # as tests/unit/ingest/test_references.py expects

        searched = Retriever(collection, settings.retrieval).search(HEPARIN_QUESTION, k=10)
        assert sum(p.is_reference for p in searched) >= 5  # reference lists outrank the body

        gen = FakeGenerator(("Not in the passages.",))
        session = AskSession(settings, generator=gen)
        detailed = session.ask_detailed(collection, HEPARIN_QUESTION, k=10)
    prompt = detailed.prompt
    assert prompt is not None
    assert prompt.passages == detailed.answer.passages
    assert prompt.passages and not any(p.is_reference for p in prompt.passages)
    given_ordinals = {records[int(p.chunk_id)].chunk.ordinal for p in prompt.passages}
    assert given_ordinals <= {0, 1, 2, 3, 4, 5, 6, 7, 8, 33}  # body text (and the last page)
    user = gen.calls[0]["messages"][1].content
    assert "J Lab\nClin Med 1996, 128:376-83." not in user
    assert "Warkentin TE" not in user


class _CountingVerifier(FakeVerifier):
    """A fake verifier that counts :meth:`load` calls."""

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0

    def load(self) -> None:
        self.loads += 1


def test_prepare_locates_the_generator_then_loads_the_verifier_reporting_each_step() -> None:
    ver = _CountingVerifier()
    session = AskSession(Settings(), generator=FakeGenerator(()), verifier=ver)
    reports: list[Progress] = []
    session.prepare(progress=reports.append)
    assert ver.loads == 1
    assert reports == [
        Progress(PREPARE_STAGE, 0, 2, "models", "locating the generator…"),
        Progress(PREPARE_STAGE, 1, 2, "models", "loading the verifier…"),
        Progress(PREPARE_STAGE, 2, 2, "models"),
    ]


def test_prepare_for_a_claim_check_leaves_the_generator_which_fails_fast_when_asked() -> None:
    ver = _CountingVerifier()
    missing = Settings(models=ModelSettings(generator="no-such-generator"))
    session = AskSession(missing, verifier=ver)
    reports: list[Progress] = []
    session.prepare(generator=False, progress=reports.append)
    assert ver.loads == 1
    assert [(p.done, p.total, p.message) for p in reports] == [
        (0, 1, "loading the verifier…"),
        (1, 1, ""),
    ]
    with pytest.raises(ModelNotFound):
        session.prepare()
    assert ver.loads == 1  # the missing generator stopped it first


def test_prepare_stops_before_any_step_when_cancelled() -> None:
    ver = _CountingVerifier()
    session = AskSession(Settings(), generator=FakeGenerator(()), verifier=ver)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        session.prepare(cancel=cancel)
    assert ver.loads == 0


def test_a_claim_is_checked_without_its_citation_markers_and_needs_words() -> None:
    assert claim_to_check("Heparin reduced DVT [2].") == "Heparin reduced DVT."
    with pytest.raises(EmptyClaim, match="nothing to check"):
        claim_to_check(" [1][2] .")
    session, *_ = _session(())
    with pytest.raises(EmptyClaim):
        session.check_claim(object(), "[3]")  # type: ignore[arg-type]


def test_a_claim_check_names_the_models_that_made_it() -> None:
    """Issue 29: a check is kept in the history and audited like an answer, so it carries the
    identities of its models as an answer does."""
    session, *_ = _session(())
    session.set_identity("verifier", {"name": "fake-nli", "path": "", "sha256": "00"})
    result = session.check_claim(object(), "Cats sleep [1].")  # type: ignore[arg-type]
    assert result.claim == "Cats sleep." and result.documents == ()
    # the verifier that made it; not the generator, which a check does not use
    assert result.models == {"verifier": {"name": "fake-nli", "path": "", "sha256": "00"}}
    assert "generator" in session.model_identities()


def test_the_server_address_kept_with_each_answer_holds_no_password() -> None:
    """Issue 30, row 12: the generator's identity goes into every answer and audit record;
    it names the server without the credentials of its address (no request is made)."""
    server = ServerSettings(base_url="http://admin:hunter2@127.0.0.1:9/v1", model="m")
    session = AskSession(Settings(server=server))
    assert type(session.generator).__name__ == "ServerGenerator"
    assert session.model_identities()["generator"] == {
        "name": "m",
        "path": "http://***@127.0.0.1:9/v1",
        "sha256": "",
    }


def test_reranking_reorders_the_passages_given_and_no_pair_is_classified_twice() -> None:
    settings = Settings(
        retrieval=RetrievalSettings(rerank=True, rerank_candidates=3, rerank_weight=1.0),
        verify=VerifySettings(premise="sentences", abstain_threshold=0.25, conflict_search=False),
    )
    session, _gen, ver, ret = _session(("Birds sing in spring [1].",), settings)
    stages: list[str] = []
    answer = session.ask(
        object(),  # type: ignore[arg-type]
        "Birds sing in spring.",
        k=2,
        progress=lambda p: stages.append(p.stage),
    )
    assert ret.calls == [("Birds sing in spring.", 6, False)]  # twice N, before dedupe
    assert [int(p.chunk_id) for p in answer.passages] == [3, 1]  # the evidence first
    assert answer.passages[0].evidence == pytest.approx(0.95)
    assert "rerank" in answer.timings_ms and stages.index("rerank") < stages.index("generate")
    assert answer.sentences[0].label is SentenceLabel.SUPPORTED
    # The sentence is the question: its pair with passage 3 was read while reranking.
    pairs = [pair for batch in ver.batches for pair in batch]
    assert len(pairs) == len(set(pairs))
    assert ("Birds sing in spring.", "Birds sing in spring.") in ver.batches[0]
