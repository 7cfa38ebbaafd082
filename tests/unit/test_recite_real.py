"""Re-citation and contradiction search with the real bundled verifier and embedder on real
documents (the generator is scripted: it writes a chosen sentence and cites a chosen
passage, which is what these tests are about)."""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN
from verifai_desktop.cli import main
from verifai_desktop.codec import CHECK_SCHEMA, answer_to_dict
from verifai_desktop.domain import Answer, Progress, SentenceLabel
from verifai_desktop.generate.prompt import ChatMessage
from verifai_desktop.pipeline import AskSession
from verifai_desktop.retrieve import Retriever
from verifai_desktop.settings import (
    GenerationSettings,
    RetrievalSettings,
    Settings,
    VerifySettings,
    save_settings,
)
from verifai_desktop.store.collection import Collection
from verifai_desktop.verify.answer import verify_answer
from verifai_desktop.verify.nli import get_verifier

pytestmark = pytest.mark.slow

DVT_REVIEW = "bmc_trauma_2010_dvt_prophylaxis_review.pdf"
QUESTION = "How often is pulmonary embolism a cause of death after trauma?"
CLAIM = (
    "PE is the third leading cause of death in injured patients who survive beyond the "
    "first day of admission."
)
HOLDER = "third leading cause of death"  # the review's own sentence, page 1
CONTRADICTION = (
    "In our registry, PE was a rare cause of death in injured patients who survived beyond "
    "the first day of admission."
)
_SOURCE_RE = re.compile(
    r"^\[(\d+)\] \(source: [^)]*\)\n(.*?)(?=^\[\d+\] \(source:|\Z)", re.M | re.S
)


class ScriptedGenerator:
    """Writes ``CLAIM`` and cites the passage ``choose`` picks among those in the prompt."""

    def __init__(self, choose: Callable[[dict[int, str]], int]) -> None:
        self.choose = choose
        self.given: dict[int, str] = {}

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
        user = messages[-1].content
        self.given = {int(n): text for n, text in _SOURCE_RE.findall(user)}
        yield f"{CLAIM} [{self.choose(self.given)}]"


def _registry_note(folder: Path) -> Path:
    """A second document made of real sentences of the review's methods plus one sentence
    that contradicts the review's page-1 statement."""
    note = folder / "registry_note.md"
    note.write_text(
        "# Trauma registry note\n\n"
        "All scientific publications discussing the use of biochemical, mechanical, and IVC "
        "filter prophylaxis for the prevention of DVT after trauma were identified using "
        "PubMed, EMBASE, and Medline. "
        f"{CONTRADICTION} "
        "Only English language publications were included.\n",
        encoding="utf-8",
    )
    return note


RISK_QUERY = "pulmonary embolism morbidity and mortality after deep venous thrombosis"


def _risk_note(folder: Path) -> Path:
    """A third document of real sentences of the review (its introduction) that speaks of
    pulmonary embolism without the page-1 statement: a passage that lacks the claim."""
    note = folder / "risk_note.md"
    note.write_text(
        "# Risk of thrombosis after trauma\n\n"
        "Multisystem traumatic injury is a significant risk factor for the development of a "
        "deep venous thrombosis (DVT). Without thromboprophylaxis, overall DVT rates exceed "
        "50%. Although DVT alone is not life-threatening, a resulting pulmonary embolism (PE) "
        "carries potentially significant morbidity and mortality.\n",
        encoding="utf-8",
    )
    return note


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Collection]:
    folder = tmp_path_factory.mktemp("docs")
    shutil.copy(DOCS_CLEAN / DVT_REVIEW, folder / DVT_REVIEW)
    _registry_note(folder)
    _risk_note(folder)
    with Collection.open("trauma", create=True) as c:
        report = c.add_paths([folder])
        assert report.chunks_indexed > 30
        yield c


def _session(choose: Callable[[dict[int, str]], int]) -> tuple[AskSession, ScriptedGenerator]:
    settings = Settings(
        retrieval=RetrievalSettings(k=6),
        generation=GenerationSettings(prompt_passage_tokens=6000),  # all six passages given
        verify=VerifySettings(abstain_threshold=-1.0, premise="sentences"),
    )
    gen = ScriptedGenerator(choose)
    return AskSession(settings, generator=gen), gen


def _holder(given: dict[int, str]) -> int:
    return next(n for n, text in given.items() if HOLDER in text)


def test_a_sentence_citing_a_passage_without_it_is_re_cited_to_the_one_that_holds_it(
    collection: Collection,
) -> None:
    """The real retriever's passages for the question, an answer citing one of the review's
    passages that lacks the sentence, the real verifier: re-cited to the passage holding it."""
    settings = Settings(verify=VerifySettings(premise="sentences"))
    retriever = Retriever(collection, settings.retrieval)
    review = [p for p in retriever.search(QUESTION, k=10) if p.path.name == DVT_REVIEW]
    risk = [p for p in retriever.search(RISK_QUERY, k=10) if p.path.name == "risk_note.md"]
    passages = (risk[0], review[0])  # the generator is given the note first
    holders = {n for n, p in enumerate(passages, start=1) if HOLDER in p.text}
    lacking = [n for n, p in enumerate(passages, start=1) if HOLDER not in p.text]
    assert holders and lacking, [p.text[:40] for p in passages]
    wrong = lacking[0]
    generated = f"{CLAIM} [{wrong}]"
    verifier = get_verifier(settings.models.verifier)
    result = verify_answer(verifier, generated, passages, settings.verify)
    (s,) = result.sentences
    assert s.cited_by_generator == (wrong,)
    assert s.recited and s.label is SentenceLabel.SUPPORTED
    assert s.generator_label is SentenceLabel.NO_EVIDENCE
    assert s.citations and set(s.citations) <= holders  # only passages that hold it
    assert HOLDER in s.verdicts[0].evidence  # the deciding window is the review's sentence
    markers = "".join(f"[{n}]" for n in s.citations)
    assert result.text == f"{CLAIM} {markers}" == s.text
    assert result.generated_text == generated
    answer = Answer(QUESTION, result.text, result.sentences, passages,
                    generated_text=result.generated_text)  # fmt: skip
    (js,) = answer_to_dict(answer, settings)["sentences"]
    assert js["recited"] and js["cited_by_generator"] == [wrong]
    assert js["citations"] == list(s.citations)
    assert js["supported_by"][0]["passage"] == s.citations[0]


def test_a_document_that_contradicts_the_supported_sentence_is_surfaced(
    collection: Collection,
) -> None:
    session, _ = _session(_holder)
    answer = session.ask(collection, QUESTION)
    (s,) = answer.sentences
    assert s.label is SentenceLabel.SUPPORTED and not s.recited
    assert s.conflicts, "the registry note contradicts the sentence"
    top = s.conflicts[0]
    assert top.passage.path.name == "registry_note.md"
    assert top.verdict.evidence.strip() == CONTRADICTION
    assert top.verdict.p_contradict >= session.settings.verify.contradict_threshold
    given = {int(p.chunk_id) for p in answer.passages}
    for c in s.conflicts:  # a conflict is never one of the sentence's own citations
        assert c.verdict.passage_number not in s.citations
        assert (c.verdict.passage_number == 0) == (int(c.passage.chunk_id) not in given)
    (js,) = answer_to_dict(answer, session.settings)["sentences"]
    assert js["conflicts"][0]["file"] == "registry_note.md"
    assert js["conflicts"][0]["verdict"]["evidence"].strip() == CONTRADICTION


def test_verifai_check_json_names_both_documents(
    collection: Collection, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERIFAI_HOME", str(collection.path.parent.parent))  # the fixture's
    save_settings(Settings())
    assert main(["check", CLAIM, "--collection", "trauma", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == CHECK_SCHEMA == "verifai.check/3"
    assert set(data) == {"schema", "claim", "candidates", "documents", "supporting",
                         "contradicting", "models", "thresholds"}  # fmt: skip
    assert set(data["models"]) == {"verifier", "embedder"}  # what made the verdicts
    assert data["claim"] == CLAIM and data["candidates"] >= 2
    labels = {d["file"]: d["label"] for d in data["documents"]}
    assert labels[DVT_REVIEW] == "SUPPORT" and labels["registry_note.md"] == "CONTRADICT"
    assert labels.get("risk_note.md", "NO_EVIDENCE") == "NO_EVIDENCE"
    for d in data["documents"]:
        assert set(d) == {"doc_id", "path", "file", "title", "label", "probability", "evidence"}
        assert 0.5 <= d["probability"] <= 1.0
    assert HOLDER in data["supporting"][0]["verdict"]["evidence"]
    assert data["contradicting"][0]["verdict"]["evidence"].strip() == CONTRADICTION
    passage_keys = {"number", "chunk_id", "doc_id", "path", "file", "title", "location",
                    "char_start", "char_end", "scores", "text", "sentence_spans",
                    "instruction_cues", "is_reference", "verdict"}  # fmt: skip
    assert set(data["supporting"][0]) == passage_keys
    ev = data["contradicting"][0]
    start, end = ev["verdict"]["evidence_char_start"], ev["verdict"]["evidence_char_end"]
    assert ev["text"][start:end] == ev["verdict"]["evidence"]
