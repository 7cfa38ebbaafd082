"""Frozen dataclasses for everything that flows through VerifAI Desktop.

Offsets are half-open ``[start, end)`` character offsets (Python ``str`` indices) and each
field says into which text it points. Page, slide and chapter numbers are 1-based.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NewType

from verifai_desktop.recognition import Recognition
from verifai_desktop.reference import Reference

CITATION_NUMBERS = r"\d+(?:\s*[,;]\s*\d+)*"
"""Regular expression of the numbers inside one citation marker (``1``, ``1, 3``, ``1; 3``)."""

CITATION_RE = re.compile(rf"\[\s*({CITATION_NUMBERS})\s*\]")
"""One bracketed group of citation numbers in an answer: ``[1]``, ``[1, 3]``, ``[1; 3]``,
``[ 2 ]``; the one pattern every reader of citation markers uses (verification, history, the
answer view). Group 1 holds the numbers."""


def strip_citations(text: str) -> str:
    """``text`` without citation markers (:data:`CITATION_RE`), spacing before punctuation
    repaired: the claim an answer sentence makes."""
    stripped = CITATION_RE.sub("", text)
    stripped = re.sub(r"\s+([.,;:!?])", r"\1", stripped)
    return re.sub(r"\s{2,}", " ", stripped).strip()


DocId = NewType("DocId", int)
"""Row id of a document in a collection's catalog (SQLite ``documents.doc_id``)."""

ChunkId = NewType("ChunkId", int)
"""Row id of a chunk in a collection's catalog; also its key in the HNSW and BM25 indexes."""


class DocFormat(enum.StrEnum):
    """File formats the ingest pipeline reads."""

    PDF = "pdf"
    DOCX = "docx"
    PPTX = "pptx"
    EPUB = "epub"
    MD = "md"
    TXT = "txt"


class DocStatus(enum.StrEnum):
    """State of one document in a collection's catalog (what its last ingest found).

    A run's per-file result is :class:`verifai_desktop.store.writer.Outcome`, which adds
    ``skipped`` and ``removed`` to these.
    """

    INDEXED = "indexed"
    NEEDS_OCR = "needs_ocr"  # no text layer (scanned); nothing indexed
    ENCRYPTED = "encrypted"  # password needed; nothing indexed
    EMPTY = "empty"  # parsed fine but holds no text (e.g. a deck with no slides)
    FAILED = "failed"  # broken, truncated, unsupported; ``reason`` says why


class LocationKind(enum.StrEnum):
    """What a :class:`Location` number counts."""

    PAGE = "page"
    SLIDE = "slide"
    CHAPTER = "chapter"
    SECTION = "section"  # DOCX/MD/TXT: heading path only, no number


@dataclass(frozen=True, slots=True)
class Location:
    """Where in a document a piece of text sits.

    Attributes:
        kind: what ``number`` counts.
        number: 1-based page, slide or chapter number; ``None`` for ``SECTION``.
        heading: heading path (``"Methods > Statistics"``) or chapter/slide title; may be empty.
    """

    kind: LocationKind
    number: int | None = None
    heading: str = ""

    def as_dict(self) -> dict[str, str | int | None]:
        """JSON-ready form: ``kind``, ``number``, ``heading`` and the human ``label``."""
        return {
            "kind": self.kind.value,
            "number": self.number,
            "heading": self.heading,
            "label": self.label(),
        }

    def label(self) -> str:
        """Short human label, e.g. ``"p. 3"``, ``"slide 2"``, ``"ch. 4 Down the Rabbit-Hole"``."""
        prefix = {
            LocationKind.PAGE: "p.",
            LocationKind.SLIDE: "slide",
            LocationKind.CHAPTER: "ch.",
            LocationKind.SECTION: "",
        }[self.kind]
        parts = [p for p in (prefix, str(self.number) if self.number is not None else "") if p]
        head = " ".join(parts)
        if self.heading:
            return f"{head} {self.heading}".strip() if head else self.heading
        return head


@dataclass(frozen=True, slots=True)
class Section:
    """A contiguous run of a document's text with one location (a page, a slide, a chapter).

    Attributes:
        char_start: start offset into ``Document.text``.
        char_end: end offset (exclusive) into ``Document.text``.
        location: where this section is in the original file.
        ocr: set when the text was recognised from a page image or an embedded image (OCR),
            word offsets into ``Document.text``; ``None`` for a text layer.
    """

    char_start: int
    char_end: int
    location: Location
    ocr: Recognition | None = None


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed file: its whole text plus the sections that map text offsets to locations.

    Attributes:
        path: absolute path of the source file.
        format: file format.
        title: document title (metadata title, first heading, or file name).
        text: the full extracted text; sections index into it.
        sections: sections in reading order, non-overlapping, offsets into ``text``.
        unrecognised: ``(page number, reason)`` of each page without a text layer that OCR
            did not read (off, over a limit, unreadable image); its text is missing.
        unread_images: ``(image, reason)`` of each image placed in a DOCX, PPTX or EPUB,
            large enough to hold text, that OCR did not read; ``image`` names it in the file
            and says where it is (``"ppt/media/image2.png on slide 3"``).
    """

    path: Path
    format: DocFormat
    title: str
    text: str
    sections: tuple[Section, ...]
    unrecognised: tuple[tuple[int, str], ...] = ()
    unread_images: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Chunk:
    """A sentence-aligned window of a document, the unit that is indexed and retrieved.

    Attributes:
        ordinal: 0-based position of the chunk within its document.
        text: the chunk text, equal to ``document.text[char_start:char_end]``.
        char_start: start offset into ``Document.text``.
        char_end: end offset (exclusive) into ``Document.text``.
        location: location of the chunk's first character.
        sentence_spans: ``(start, end)`` offsets of each sentence, into ``text`` (the chunk).
        is_reference: part of a reference list or bibliography (:mod:`.ingest.references`);
            searchable, left out of answer prompts by default.
        ocr: set for text recognised by OCR (its section's, word offsets into ``text``).
    """

    ordinal: int
    text: str
    char_start: int
    char_end: int
    location: Location
    sentence_spans: tuple[tuple[int, int], ...]
    is_reference: bool = False
    ocr: Recognition | None = None


@dataclass(frozen=True, slots=True)
class Passage:
    """A retrieved chunk with its scores, as handed to the generator and the verifier.

    Attributes:
        chunk_id: catalog id of the chunk.
        doc_id: catalog id of its document.
        path: source file.
        title: document title.
        text: chunk text.
        char_start: start offset of the chunk into its document's text.
        char_end: end offset (exclusive) into its document's text.
        location: where the chunk starts in the file.
        sentence_spans: sentence offsets into ``text``.
        lexical_score: BM25 score divided by the top BM25 score of the query (0..1), 0 if absent.
        semantic_score: cosine similarity divided by the top cosine of the query, 0 if absent.
        fused_score: the score the passage was ranked by (weighted sum or RRF, per mode).
        raw_lexical: unnormalised BM25 score (``None`` if the lexical engine did not return it).
        raw_semantic: unnormalised cosine similarity (``None`` if the vector engine did not).
        instruction_cues: phrases in ``text`` that read as instructions to an AI (prompt
            injection; :func:`verifai_desktop.ingest.injection.instruction_cues`), ``()`` if none.
        is_reference: the chunk is part of a reference list or bibliography
            (``Chunk.is_reference``); answer prompts leave such passages out by default.
        ocr: the chunk's OCR provenance (``Chunk.ocr``): shown as recognised text.
        evidence: ``P(SUPPORT) + P(CONTRADICT)`` of the passage's deciding window for the
            query, 0..1, when evidence-aware reranking read it (:mod:`.rerank`), else ``None``.
        reference: its document's reference-manager entry (cited author-year), or ``None``.
    """

    chunk_id: ChunkId
    doc_id: DocId
    path: Path
    title: str
    text: str
    char_start: int
    char_end: int
    location: Location
    sentence_spans: tuple[tuple[int, int], ...]
    lexical_score: float = 0.0
    semantic_score: float = 0.0
    fused_score: float = 0.0
    raw_lexical: float | None = None
    raw_semantic: float | None = None
    instruction_cues: tuple[str, ...] = ()
    is_reference: bool = False
    ocr: Recognition | None = None
    evidence: float | None = None
    reference: Reference | None = None

    def sentences(self) -> tuple[str, ...]:
        """The passage's sentences as strings."""
        return tuple(self.text[s:e] for s, e in self.sentence_spans)

    def source_label(self) -> str:
        """``"file.pdf, p. 3"``: the file name and the location label (also how the answer
        prompt names a passage's source)."""
        where = self.location.label()
        return f"{self.path.name}, {where}" if where else self.path.name


class NliLabel(enum.StrEnum):
    """Verifier output classes, as in VerifAI's SciFact transformation."""

    SUPPORT = "SUPPORT"
    CONTRADICT = "CONTRADICT"
    NO_EVIDENCE = "NO_EVIDENCE"


class SentenceLabel(enum.StrEnum):
    """Label of one answer sentence, after the VerifAI paper's colour scheme."""

    SUPPORTED = "supported"
    PARTIALLY_SUPPORTED = "partially_supported"
    CONTRADICTED = "contradicted"
    NO_EVIDENCE = "no_evidence"
    UNREFERENCED = "unreferenced"
    UNSURE = "unsure"
    """The verifier cannot tell: its best guess is below that label's threshold, or a check
    (a figure not stated for the same subject, a negation the evidence lacks) blocked it.
    Shown in a neutral style, never green or red; the hover card gives the best guess."""


class ShownLabel(enum.StrEnum):
    """What the app shows for one (claim, passage) verdict, after the per-label thresholds
    and the deterministic checks (:func:`verifai_desktop.verify.labels.shown_label`);
    ``verifai eval verifier`` reports these as ``shown_labels``."""

    SUPPORT = "SUPPORT"
    CONTRADICT = "CONTRADICT"
    NO_EVIDENCE = "NO_EVIDENCE"
    UNSURE = "UNSURE"


def label_counts(labels: Iterable[SentenceLabel]) -> dict[SentenceLabel, int]:
    """How many sentences carry each label (every label present, zeros included)."""
    counts = dict.fromkeys(SentenceLabel, 0)
    for label in labels:
        counts[label] += 1
    return counts


@dataclass(frozen=True, slots=True)
class Claim:
    """An answer sentence used as an NLI hypothesis against one cited passage (the premise).

    Attributes:
        text: the sentence text with citation markers removed.
        passage_number: 1-based number of the cited passage in the prompt.
    """

    text: str
    passage_number: int


@dataclass(frozen=True, slots=True)
class Verdict:
    """The verifier's decision on one (claim, passage) pair.

    Attributes:
        passage_number: 1-based number of the cited passage.
        label: argmax label.
        p_support: probability of SUPPORT (0..1).
        p_contradict: probability of CONTRADICT (0..1).
        p_no_evidence: probability of NO_EVIDENCE (0..1).
        evidence: the premise window that decided the verdict (:func:`.verify.check.verify_pairs`;
            the whole passage at passage granularity).
        evidence_span: offsets of ``evidence`` into the passage text.
        shown: what the app shows for the pair (thresholds and checks applied,
            :func:`verifai_desktop.verify.labels.shown_label`); ``None`` on verdicts made
            before shown labels existed (then the plain thresholds decide).
        flags: why a check held the verdict back, in the user's words (e.g. ``"the figure
            12% is not stated for the same subject in the evidence"``); empty when none did.
    """

    passage_number: int
    label: NliLabel
    p_support: float
    p_contradict: float
    p_no_evidence: float
    evidence: str = ""
    evidence_span: tuple[int, int] = (0, 0)
    shown: ShownLabel | None = None
    flags: tuple[str, ...] = ()

    @property
    def probability(self) -> float:
        """Probability of the chosen label."""
        return {
            NliLabel.SUPPORT: self.p_support,
            NliLabel.CONTRADICT: self.p_contradict,
            NliLabel.NO_EVIDENCE: self.p_no_evidence,
        }[self.label]


def label_probability(label: SentenceLabel, verdicts: Sequence[Verdict]) -> float:
    """The probability that backs a sentence's label, for display (0..1).

    ``supported``: the weakest P(SUPPORT) of its citations; ``partially_supported``: the
    strongest P(SUPPORT); ``contradicted``: the strongest P(CONTRADICT); ``no_evidence``: the
    strongest P(NO_EVIDENCE); ``unsure``: the probability of the best guess of its strongest
    verdict (:attr:`Verdict.probability`); ``unreferenced`` (or no verdicts): 0.
    """
    if not verdicts or label is SentenceLabel.UNREFERENCED:
        return 0.0
    if label is SentenceLabel.UNSURE:
        return max(verdicts, key=lambda v: max(v.p_support, v.p_contradict)).probability
    if label is SentenceLabel.SUPPORTED:
        return min(v.p_support for v in verdicts)
    if label is SentenceLabel.PARTIALLY_SUPPORTED:
        return max(v.p_support for v in verdicts)
    if label is SentenceLabel.CONTRADICTED:
        return max(v.p_contradict for v in verdicts)
    return max(v.p_no_evidence for v in verdicts)


@dataclass(frozen=True, slots=True)
class Evidence:
    """One passage of the collection and the verifier's verdict on a claim against it.

    Attributes:
        passage: the passage (anywhere in the collection).
        verdict: the deciding window's verdict; ``verdict.passage_number`` is the passage's
            citation number in the answer when it was given to the generator, else 0.
    """

    passage: Passage
    verdict: Verdict

    @property
    def strength(self) -> float:
        """``max(P(SUPPORT), P(CONTRADICT))``: how strongly the passage decides the claim."""
        return max(self.verdict.p_support, self.verdict.p_contradict)


TOKEN_COUNTS = ("prompt_tokens", "generated_tokens")
"""``Answer.timings_ms`` keys counting tokens read (chat template included) and sampled."""


@dataclass(frozen=True, slots=True)
class AnswerSentence:
    """One sentence of a generated answer.

    Attributes:
        text: the sentence as generated, citation markers included.
        char_start: start offset into ``Answer.text``.
        char_end: end offset (exclusive) into ``Answer.text``.
        citations: 1-based passage numbers cited by the sentence, in order, without repeats.
        verdicts: one verdict per citation, same order.
        label: the sentence label derived from the verdicts.
        invalid_citations: cited numbers that name no given passage (dropped from
            ``citations``; always empty under the citation grammar).
        cited_by_generator: the generator's own citations when the sentence was re-cited
            (``citations`` then names the passages that support it and ``text`` carries
            their markers); ``None`` when the citations are the generator's.
        generator_verdicts: when re-cited, the verdicts on the generator's citations.
        generator_label: when re-cited, the label those verdicts gave.
        supported_by: every passage given that supports the sentence, as
            ``(passage number, P(SUPPORT))``, strongest first (empty when only the cited
            passages were verified, ``verify.recite`` off).
        conflicts: passages that contradict the sentence although its label is not
            ``contradicted``: passages given but not cited, and passages elsewhere in the
            collection (contradiction search, :mod:`verifai_desktop.contradictions`),
            strongest P(CONTRADICT) first.
    """

    text: str
    char_start: int
    char_end: int
    citations: tuple[int, ...]
    verdicts: tuple[Verdict, ...]
    label: SentenceLabel
    invalid_citations: tuple[int, ...] = ()
    cited_by_generator: tuple[int, ...] | None = None
    generator_verdicts: tuple[Verdict, ...] = ()
    generator_label: SentenceLabel | None = None
    supported_by: tuple[tuple[int, float], ...] = ()
    conflicts: tuple[Evidence, ...] = ()

    @property
    def recited(self) -> bool:
        """Whether verification replaced the generator's citations."""
        return self.cited_by_generator is not None

    @property
    def claim(self) -> str:
        """The claim the sentence makes: its text without citation markers (the NLI
        hypothesis, :func:`strip_citations`)."""
        return strip_citations(self.text)

    @property
    def generator_citations(self) -> tuple[int, ...]:
        """The citations as the generator wrote them."""
        return self.citations if self.cited_by_generator is None else self.cited_by_generator


class AbstainReason(enum.StrEnum):
    """Why an answer was declined (``Answer.abstain_reason``; its value is what the JSON of an
    answer, the history and the audit record hold)."""

    NONE = ""
    """Not abstained."""
    RETRIEVAL = "retrieval"
    """Nothing retrieved was close enough; nothing was generated (``sentences`` empty)."""
    UNSUPPORTED = "unsupported"
    """Refused by evidence: an answer was generated and verified but no sentence is supported,
    so it is shown only on request (``sentences`` and ``text`` kept)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A verified answer to a question over a collection.

    Attributes:
        question: the user's question.
        text: the whole answer text.
        sentences: the answer split into sentences, offsets into ``text``.
        passages: the passages given to the generator, ``passages[i]`` is citation ``[i + 1]``.
        abstained: True when the app declines to answer (``abstain_reason`` says why).
        timings_ms: wall time per stage in milliseconds (``retrieve``, ``generate``, ``verify``),
            and the token counts of :data:`TOKEN_COUNTS` (tokens, not milliseconds).
        models: identity of each model used (role -> name and sha256).
        generated_text: the answer as generated when re-citation changed its citation
            markers (``text`` carries the corrected ones); ``None`` when unchanged.
        abstain_reason: why it abstained (:class:`AbstainReason`), ``NONE`` when not.
        passages_left_out: passages retrieved (of the ``k`` asked for) but not given to the
            generator because its reading budget (``generation.prompt_passage_tokens``) was
            used up; 0 when every one was given.
    """

    question: str
    text: str
    sentences: tuple[AnswerSentence, ...]
    passages: tuple[Passage, ...]
    abstained: bool = False
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    models: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    generated_text: str | None = None
    abstain_reason: AbstainReason = AbstainReason.NONE
    passages_left_out: int = 0

    @property
    def refused_by_evidence(self) -> bool:
        """Whether an answer was generated but declined because no sentence is supported."""
        return self.abstained and self.abstain_reason == AbstainReason.UNSUPPORTED

    @property
    def not_found(self) -> bool:
        """Whether it abstained because nothing retrieved was close enough (nothing written)."""
        return self.abstained and not self.refused_by_evidence

    def closest_verdict(self, sentence: AnswerSentence) -> Verdict | None:
        """The strongest verdict on ``sentence`` against a passage given to the generator.

        Candidates are the verdicts on its citations, on the generator's own citations when it
        was re-cited, and on the passages given that contradict it (``conflicts`` numbered in
        the answer); strength is ``max(P(SUPPORT), P(CONTRADICT))``, as
        :attr:`Evidence.strength`.

        Returns:
            The verdict, or ``None`` when the sentence has none (it cites no passage).
        """
        candidates = [
            *sentence.verdicts,
            *sentence.generator_verdicts,
            *(ev.verdict for ev in sentence.conflicts),
        ]
        given = [v for v in candidates if 1 <= v.passage_number <= len(self.passages)]
        return max(given, key=lambda v: max(v.p_support, v.p_contradict), default=None)

    def label_counts(self) -> dict[SentenceLabel, int]:
        """How many of its sentences carry each label (:func:`label_counts`)."""
        return label_counts(s.label for s in self.sentences)


@dataclass(frozen=True, slots=True)
class Progress:
    """A progress report from long-running core work.

    Attributes:
        stage: short stage name (``"parse"``, ``"embed"``, ``"index"``, ``"generate"``).
        done: units done so far.
        total: units in all, ``None`` if unknown.
        unit: what is counted (``"files"``, ``"chunks"``, ``"tokens"``).
        message: human-readable detail, e.g. the current file name.
        passages: passages the report makes known, best first: those retrieved for a
            question (stage ``"retrieve"``, when done) or given to its generator (stage
            ``"prompt"``), so that a front end can show them before the answer is written.
    """

    stage: str
    done: int
    total: int | None
    unit: str = ""
    message: str = ""
    passages: tuple[Passage, ...] = ()


CheckLabel = Literal["SUPPORT", "CONTRADICT", "NO_EVIDENCE", "UNSURE"]
"""What one document says about a claim, as a whole (:class:`DocumentVerdict`)."""


@dataclass(frozen=True, slots=True)
class DocumentVerdict:
    """What one document says about a claim: the label of its strongest passage.

    Attributes:
        doc_id: catalog id.
        path: source file.
        title: document title.
        label: the shown label (:class:`ShownLabel` value) of its strongest passage (highest
            :attr:`Evidence.strength`): ``SUPPORT`` or ``CONTRADICT`` when it passes that
            label's threshold and no check holds it back, ``UNSURE`` when the verifier's best
            guess falls short of that, else ``NO_EVIDENCE``.
        evidence: that strongest passage.
    """

    doc_id: DocId
    path: Path
    title: str
    label: CheckLabel
    evidence: Evidence

    @property
    def probability(self) -> float:
        """The probability of :attr:`label`, from the strongest passage's verdict (0..1); for
        ``UNSURE``, the probability of the verifier's best guess."""
        v = self.evidence.verdict
        if self.label == "SUPPORT":
            return v.p_support
        if self.label == "CONTRADICT":
            return v.p_contradict
        if self.label == "UNSURE":
            return v.probability
        return v.p_no_evidence


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The collection's evidence on one claim (``verifai check``, the app's claim check).

    Attributes:
        claim: the claim checked.
        supporting: passages with P(SUPPORT) >= the support threshold, strongest first.
        contradicting: passages with P(CONTRADICT) >= the contradict threshold, strongest first.
        documents: one verdict per document among the candidates, decided ones first.
        candidates: passages verified (the budget's worth).
        models: identity of each model used (role -> name and sha256), as in
            :attr:`Answer.models`; empty when not recorded.
    """

    claim: str
    supporting: tuple[Evidence, ...]
    contradicting: tuple[Evidence, ...]
    documents: tuple[DocumentVerdict, ...]
    candidates: int
    models: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
