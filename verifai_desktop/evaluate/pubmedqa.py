"""The PubMedQA data of `verifai eval answers`: questions, abstracts as documents, the collection.

PubMedQA PQA-L (``ori_pqal.json``): each PMID has a question, the CONTEXTS of its abstract and
a gold ``final_decision``. The CONTEXTS of a PMID are joined into one document whose source key
is ``pubmedqa:<pmid>``; :func:`build_collection` keeps a collection holding exactly the
abstracts asked over. The runner is :mod:`verifai_desktop.evaluate.answers`; scoring is in
:mod:`verifai_desktop.evaluate.answer_metrics`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from verifai_desktop.domain import (
    DocFormat,
    Document,
    Location,
    LocationKind,
    Passage,
    Progress,
    Section,
)
from verifai_desktop.errors import DatasetError
from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.writer import ingest_documents

KEY_PREFIX = "pubmedqa:"


@dataclass(frozen=True, slots=True)
class PubMedQAItem:
    """One PubMedQA (PQA-L) question.

    Attributes:
        pmid: PubMed id of the question's abstract.
        question: the question (the article title as a question).
        contexts: the abstract's paragraphs without its conclusion.
        final_decision: gold ``yes`` / ``no`` / ``maybe``.
    """

    pmid: str
    question: str
    contexts: tuple[str, ...]
    final_decision: str


def load_pubmedqa(path: Path) -> tuple[PubMedQAItem, ...]:
    """Read ``ori_pqal.json`` (PMID -> {QUESTION, CONTEXTS, final_decision, ...}), file order.

    Raises:
        DatasetError: not readable JSON of that shape.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        items = tuple(
            PubMedQAItem(
                str(pmid),
                str(v["QUESTION"]),
                tuple(str(c) for c in v["CONTEXTS"]),
                str(v["final_decision"]).lower(),
            )
            for pmid, v in data.items()
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DatasetError(path, str(exc)) from exc
    return items


def to_document(item: PubMedQAItem) -> Document:
    """The abstract as a one-section document whose path is its source key."""
    text = "\n\n".join(c.strip() for c in item.contexts)
    return Document(
        path=Path(f"{KEY_PREFIX}{item.pmid}"),
        format=DocFormat.TXT,
        title=f"PMID {item.pmid}",
        text=text,
        sections=(
            Section(0, len(text), Location(LocationKind.SECTION, heading=f"PMID {item.pmid}")),
        ),
    )


def passage_pmid(passage: Passage) -> str | None:
    """PMID of a passage from a PubMedQA collection (its path is ``pubmedqa:<pmid>``)."""
    name = str(passage.path).replace("\\", "/").rsplit("/", 1)[-1]
    return name[len(KEY_PREFIX) :] if name.startswith(KEY_PREFIX) else None


def build_collection(
    name: str,
    items: Sequence[PubMedQAItem],
    *,
    settings: Settings,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> int:
    """Create or update collection ``name`` to hold exactly the abstracts of ``items``.

    Unchanged abstracts are skipped by the ingest (same text hash). Returns the document count.
    """
    keys = {f"{KEY_PREFIX}{it.pmid}" for it in items}

    def docs() -> Iterator[tuple[str, Document]]:
        for it in items:
            yield f"{KEY_PREFIX}{it.pmid}", to_document(it)

    with Collection.open(name, create=True, settings=settings) as collection:
        stale = [rec.source for rec in collection.documents() if rec.source not in keys]
        if stale:
            collection.remove_sources(stale)
        ingest_documents(collection, docs(), progress=progress, cancel=cancel, total=len(items))
        return len(collection.documents())


def held_out_corpus(
    corpus: Sequence[PubMedQAItem], asked: Sequence[PubMedQAItem]
) -> tuple[tuple[PubMedQAItem, ...], frozenset[str]]:
    """The held-out mode's corpus: ``corpus`` without the own abstract of every other question
    asked (the 1st, 3rd, ...); returns it and the PMIDs removed."""
    held = frozenset(it.pmid for it in asked[0::2])
    return tuple(it for it in corpus if it.pmid not in held), held
