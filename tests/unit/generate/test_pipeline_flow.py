"""Control flow of the ask pipeline with fakes behind the protocols (no models)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from verifai_desktop.domain import (
    ChunkId,
    DocId,
    Location,
    LocationKind,
    NliLabel,
    Passage,
    SentenceLabel,
)
from verifai_desktop.errors import Cancelled
from verifai_desktop.generate.prompt import ChatMessage
from verifai_desktop.pipeline import ABSTAIN_TEXT, AskSession, answer_to_dict
from verifai_desktop.settings import Settings, VerifySettings
from verifai_desktop.verify.labels import sentence_label


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
    def __init__(self, passages: Sequence[Passage]) -> None:
        self.passages = tuple(passages)
        self.calls: list[tuple[str, int]] = []

    def search(self, query: str, *, k: int) -> tuple[Passage, ...]:
        self.calls.append((query, k))
        return self.passages[:k]


class FakeGenerator:
    def __init__(self, pieces: Sequence[str]) -> None:
        self.pieces = tuple(pieces)
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
        cancel: threading.Event | None = None,
    ) -> Iterator[str]:
        self.calls.append({"messages": tuple(messages), "grammar": grammar})
        yield from self.pieces


class FakeVerifier:
    """SUPPORT when every claim word appears in the premise, CONTRADICT on 'never'."""

    def __init__(self) -> None:
        self.batches: list[list[tuple[str, str]]] = []

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


class FakeEmbedder:
    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().replace(".", "").split():
                out[i, hash(w) % 64] += 1
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)
        self.calls = getattr(self, "calls", 0) + 1
        return out


def _splitter(text: str) -> tuple[tuple[int, int], ...]:
    spans, start = [], 0
    for i, ch in enumerate(text):
        if ch == "." and (i + 1 == len(text) or text[i + 1] == " "):
            spans.append((start, i + 1))
            start = i + 2
    return tuple(spans)


def _session(pieces: Sequence[str], settings: Settings | None = None):  # type: ignore[no-untyped-def]
    gen, ver, emb, ret = (
        FakeGenerator(pieces),
        FakeVerifier(),
        FakeEmbedder(),
        FakeRetriever(PASSAGES),
    )
    session = AskSession(
        settings or Settings(verify=VerifySettings(premise="sentences", abstain_threshold=0.25)),
        generator=gen,
        verifier=ver,
        embedder=emb,
        retriever_factory=lambda c, s: ret,
        splitter=_splitter,
    )
    return session, gen, ver, emb, ret


ANSWER_PIECES = (
    "Cats sleep a lot [1].",
    " Dogs sleep [2][1].",
    " Dogs bark",
    " [2].",
    " Fish swim.",
)


def test_full_flow_labels_and_single_verifier_batch() -> None:
    session, gen, ver, emb, ret = _session(ANSWER_PIECES)
    tokens: list[str] = []
    answer = session.ask(object(), "Do cats sleep?", k=3, on_token=tokens.append)  # type: ignore[arg-type]
    assert ret.calls == [("Do cats sleep?", 3)]
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
    assert len(ver.batches) == 1  # every (sentence, passage) pair in one batch
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
    assert emb.calls == 1  # all evidence sentences embedded in one call
    assert set(answer.timings_ms) >= {"retrieve", "generate", "first_token", "verify", "total"}


def test_abstains_without_generating() -> None:
    settings = Settings(verify=VerifySettings(abstain_threshold=0.7))
    session, gen, ver, _, _ = _session(ANSWER_PIECES, settings)
    answer = session.ask(object(), "Do cats fly?", k=2)  # type: ignore[arg-type]
    assert answer.abstained
    assert answer.text == ABSTAIN_TEXT
    assert answer.passages == PASSAGES[:2]
    assert answer.sentences == ()
    assert gen.calls == [] and ver.batches == []


def test_cancel_stops_before_generation() -> None:
    session, gen, _, _, _ = _session(ANSWER_PIECES)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        session.ask(object(), "q", cancel=cancel)  # type: ignore[arg-type]
    assert gen.calls == []


def test_answer_json_has_the_documented_fields() -> None:
    session, *_ = _session(ANSWER_PIECES)
    answer = session.ask(object(), "Do cats sleep?", k=3)  # type: ignore[arg-type]
    data = answer_to_dict(answer, session.settings)
    assert data["schema"] == "verifai.answer/1"
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
