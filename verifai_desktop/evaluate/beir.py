"""Read BEIR-format retrieval datasets and turn their corpus into VerifAI documents.

A BEIR folder (Thakur et al., "BEIR: A Heterogeneous Benchmark for Zero-shot Evaluation of
Information Retrieval Models", NeurIPS 2021 Datasets and Benchmarks) holds::

    corpus.jsonl      {"_id", "title", "text", ...} one document per line
    queries.jsonl     {"_id", "text", ...} one query per line
    qrels/<split>.tsv query-id <TAB> corpus-id <TAB> score, with a header line

BEIR's own evaluation concatenates a document's title and text; :func:`to_document` does the
same (title, blank line, text) so BM25 and the embedder both see the title. Retrieval returns
chunks (passages); :func:`rank_documents` turns them into a document ranking where a document
scores by its best chunk (max-pooling, the usual passage-to-document aggregation, e.g. MaxP in
Dai & Callan, SIGIR 2019).
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from verifai_desktop.domain import DocFormat, Document, Location, LocationKind, Passage, Section
from verifai_desktop.errors import ParseError
from verifai_desktop.store.sources import BENCHMARK_SOURCE_PREFIX

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BeirDocument:
    """One corpus entry.

    Attributes:
        doc_id: BEIR corpus id (``"_id"``), a string.
        title: title, may be empty.
        text: body text (for SciFact, the abstract).
    """

    doc_id: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class BeirDataset:
    """A loaded BEIR split.

    Attributes:
        root: the BEIR folder.
        split: qrels split name (``"test"``, ``"train"``, ``"dev"``).
        corpus: the corpus, in file order.
        queries: query id -> query text, only queries judged in this split, in qrels order.
        qrels: query id -> corpus id -> graded relevance.
    """

    root: Path
    split: str
    corpus: tuple[BeirDocument, ...]
    queries: Mapping[str, str]
    qrels: Mapping[str, Mapping[str, int]]

    @property
    def name(self) -> str:
        """Dataset name: the folder name, or its parent's when the folder is called ``beir``."""
        return self.root.parent.name if self.root.name == "beir" else self.root.name


def _read_jsonl(path: Path) -> Iterator[dict[str, object]]:
    if not path.is_file():
        raise ParseError(
            path, "file not found; a BEIR folder needs corpus.jsonl, queries.jsonl and qrels/"
        )
    with path.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ParseError(path, f"line {line_no} is not JSON ({exc.msg})") from exc
            if not isinstance(row, dict) or "_id" not in row:
                raise ParseError(path, f'line {line_no} has no "_id" field')
            yield row


def load_corpus(path: Path) -> tuple[BeirDocument, ...]:
    """Read ``corpus.jsonl``.

    Raises:
        ParseError: the file is missing, a line is not JSON or has no ``_id``, or ids repeat.
    """
    docs: list[BeirDocument] = []
    seen: set[str] = set()
    for row in _read_jsonl(path):
        doc_id = str(row["_id"])
        if doc_id in seen:
            raise ParseError(path, f"corpus id {doc_id!r} appears twice")
        seen.add(doc_id)
        docs.append(BeirDocument(doc_id, str(row.get("title") or ""), str(row.get("text") or "")))
    return tuple(docs)


def load_queries(path: Path) -> dict[str, str]:
    """Read ``queries.jsonl`` into query id -> text.

    Raises:
        ParseError: the file is missing or a line is not JSON or has no ``_id``.
    """
    return {str(row["_id"]): str(row.get("text") or "") for row in _read_jsonl(path)}


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Read a ``qrels/<split>.tsv`` file (header line, then query-id, corpus-id, score).

    Raises:
        ParseError: the file is missing or a row is malformed.
    """
    if not path.is_file():
        raise ParseError(
            path, "qrels file not found; pass --split with a split that has qrels/<split>.tsv"
        )
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t")
        for line_no, row in enumerate(reader, start=1):
            if not row or (line_no == 1 and not row[-1].strip().lstrip("-").isdigit()):
                continue  # header or blank line
            if len(row) < 3:
                raise ParseError(path, f"line {line_no} needs query-id, corpus-id and score")
            try:
                grade = int(row[2])
            except ValueError as exc:
                raise ParseError(
                    path, f"line {line_no}: score {row[2]!r} is not an integer"
                ) from exc
            qrels.setdefault(row[0], {})[row[1]] = grade
    return qrels


def load_beir(root: Path, split: str = "test") -> BeirDataset:
    """Load a BEIR folder for one split.

    Args:
        root: folder with ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.
        split: qrels split.

    Returns:
        The dataset; ``queries`` holds only the queries judged in ``split``.

    Raises:
        ParseError: a file is missing or malformed, or a judged query has no text.
    """
    root = Path(root)
    corpus = load_corpus(root / "corpus.jsonl")
    all_queries = load_queries(root / "queries.jsonl")
    qrels = load_qrels(root / "qrels" / f"{split}.tsv")
    missing = [qid for qid in qrels if qid not in all_queries]
    if missing:
        raise ParseError(
            root / "queries.jsonl",
            f"{len(missing)} queries of split {split!r} are missing (e.g. {missing[0]!r})",
        )
    queries = {qid: all_queries[qid] for qid in qrels}
    log.info("BEIR %s/%s: %d documents, %d queries", root, split, len(corpus), len(queries))
    return BeirDataset(root=root, split=split, corpus=corpus, queries=queries, qrels=qrels)


def source_key(doc_id: str) -> str:
    """Catalog source key of a BEIR document (``"beir:<corpus id>"``)."""
    return f"{BENCHMARK_SOURCE_PREFIX}{doc_id}"


def doc_id_from_key(key: str) -> str | None:
    """Inverse of :func:`source_key`; ``None`` when ``key`` is not a BEIR key."""
    key = key.replace("\\", "/").rsplit("/", 1)[-1]  # tolerate keys stored as paths
    if not key.startswith(BENCHMARK_SOURCE_PREFIX):
        return None
    return key[len(BENCHMARK_SOURCE_PREFIX) :]


def document_text(doc: BeirDocument, *, include_title: bool = True) -> str:
    """Text indexed for a corpus entry: ``title + "\\n\\n" + text`` (BEIR convention)."""
    if include_title and doc.title.strip():
        return f"{doc.title.strip()}\n\n{doc.text.strip()}"
    return doc.text.strip()


def to_document(doc: BeirDocument, *, include_title: bool = True) -> Document:
    """A BEIR corpus entry as a one-section :class:`Document` (plain text, heading = title).

    ``Document.path`` is the relative path ``beir:<id>`` (the source key), so passages map
    back to corpus ids without a catalog lookup.
    """
    text = document_text(doc, include_title=include_title)
    location = Location(LocationKind.SECTION, heading=doc.title.strip())
    return Document(
        path=Path(source_key(doc.doc_id)),
        format=DocFormat.TXT,
        title=doc.title.strip() or doc.doc_id,
        text=text,
        sections=(Section(0, len(text), location),),
    )


def iter_documents(
    corpus: Iterable[BeirDocument], *, include_title: bool = True
) -> Iterator[tuple[str, Document]]:
    """``(source key, Document)`` pairs for ``ingest_documents``."""
    for doc in corpus:
        yield source_key(doc.doc_id), to_document(doc, include_title=include_title)


def corpus_fingerprint(corpus: Sequence[BeirDocument], *, include_title: bool = True) -> str:
    """SHA-256 (hex) over the ids and indexed texts of a corpus, order-independent.

    Used to tell whether an existing collection already holds exactly this corpus.
    """
    digest = hashlib.sha256()
    for doc in sorted(corpus, key=lambda d: d.doc_id):
        digest.update(doc.doc_id.encode("utf-8"))
        digest.update(b"\x00")
        digest.update(document_text(doc, include_title=include_title).encode("utf-8"))
        digest.update(b"\x01")
    return digest.hexdigest()


def rank_documents(
    passages: Iterable[Passage],
    *,
    doc_key: Callable[[Passage], str | None],
    score: Callable[[Passage], float] = lambda p: p.fused_score,
    depth: int = 100,
) -> list[str]:
    """Document ranking from passages: each document scores by its best passage (max).

    Args:
        passages: retrieved passages, any order.
        doc_key: maps a passage to its corpus id (``None`` drops the passage).
        score: the passage score to rank by (default: the fused score).
        depth: how many documents to keep.

    Returns:
        Up to ``depth`` corpus ids, best first; ties go to the document whose best passage
        came first in ``passages`` (the retriever's own order).
    """
    best: dict[str, tuple[float, int]] = {}
    for order, passage in enumerate(passages):
        key = doc_key(passage)
        if key is None:
            continue
        value = score(passage)
        if key not in best or value > best[key][0]:
            best[key] = (value, best[key][1] if key in best else order)
    ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[1][1]))
    return [key for key, _ in ranked[:depth]]
