"""Audit records that cannot be edited unnoticed (issue 30, rows 8 and 9).

`verifai audit check` verifies the whole record: its Ed25519 signature (this install's key or
another one's, ``--key`` to require one), the fields it derives from the answer it holds, the
collection's history of that answer, and the quoted spans against the documents. A file that
is not a valid record is one ``error:`` line and exit status 2, never a traceback.

A real collection of two real text files (the hashing fake embedder only stands in for the
model) with a real history; the answer is made by hand, its passages real spans of the
documents' extracted text.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import re
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import needs_tesseract
from tests.unit.ingest.test_ocr import scanned_top_of_paper
from tests.unit.ingest.test_ocr_images import pptx_with_scan
from verifai_desktop.audit import MAX_RECORD_BYTES, key_path, sign_record
from verifai_desktop.audit.signing import fingerprint, known_keys, known_keys_path
from verifai_desktop.cli import main
from verifai_desktop.domain import (
    Answer,
    AnswerSentence,
    ChunkId,
    DocId,
    Location,
    LocationKind,
    NliLabel,
    Passage,
    SentenceLabel,
    ShownLabel,
    Verdict,
)
from verifai_desktop.ingest.ocr import OcrOptions
from verifai_desktop.ingest.parse import ParserPool
from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import collection_history
from verifai_desktop.store.history import quoted_documents

ASPIRIN = (
    "Aspirin trial.\n\nThe weather was mild during the trial. Aspirin lowered stroke risk in "
    "women over sixty-five. Bleeding was rare.\n\nA second paragraph about follow-up visits "
    "that lasted ten years in total.\n"
)
HEPARIN = "DVT review.\n\nHeparin reduced DVT in trauma patients. It was given daily.\n"
TEXT = "Aspirin lowers stroke risk [1]. Heparin increased DVT [2]. A summary."


def _span(text: str, needle: str) -> tuple[int, int]:
    start = text.index(needle)
    return start, start + len(needle)


def _passage(number: int, path: Path, text: str, needle: str) -> Passage:
    start, end = _span(text, needle)
    return Passage(
        ChunkId(number), DocId(number), path, path.stem, needle, start, end,
        Location(LocationKind.SECTION, heading=path.stem), ((0, len(needle)),),
    )  # fmt: skip


@pytest.fixture
def docs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """The two documents and their extracted text (as the check reads them again)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    found = {}
    with ParserPool() as pool:
        for name, content in (("aspirin.txt", ASPIRIN), ("heparin.txt", HEPARIN)):
            path = folder / name
            path.write_text(content, encoding="utf-8")
            found[name] = (path, pool.parse(path).text)
    return found


FLAG = "the evidence is about women over sixty-five; the sentence names no such group"


def _answer(docs: dict[str, tuple[Path, str]], *, shown: bool) -> Answer:
    """The answer kept: with ``shown``, sentence 1 unsure (its verdict held back by
    :data:`FLAG`) and every verdict's shown label; without, as made before shown labels."""
    (p1, t1), (p2, t2) = docs["aspirin.txt"], docs["heparin.txt"]
    passages = (
        _passage(1, p1, t1, "The weather was mild during the trial. Aspirin lowered stroke risk "
                 "in women over sixty-five."),
        _passage(2, p2, t2, "Heparin reduced DVT in trauma patients."),
    )  # fmt: skip
    e1 = passages[0].text.index("Aspirin")
    first = Verdict(
        1, NliLabel.SUPPORT, 0.93, 0.02, 0.05, passages[0].text[e1:], (e1, len(passages[0].text))
    )
    second = Verdict(
        2, NliLabel.CONTRADICT, 0.05, 0.88, 0.07, passages[1].text, (0, len(passages[1].text))
    )
    label = SentenceLabel.SUPPORTED
    if shown:
        first = dataclasses.replace(first, shown=ShownLabel.UNSURE, flags=(FLAG,))
        second = dataclasses.replace(second, shown=ShownLabel.CONTRADICT)
        label = SentenceLabel.UNSURE
    sentences = (
        AnswerSentence(TEXT[0:31], 0, 31, (1,), (first,), label),
        AnswerSentence(TEXT[32:58], 32, 58, (2,), (second,), SentenceLabel.CONTRADICTED),
        AnswerSentence(TEXT[59:], 59, len(TEXT), (), (), SentenceLabel.UNREFERENCED),
    )
    return Answer(
        question="Does aspirin lower stroke risk?",
        text=TEXT,
        sentences=sentences,
        passages=passages,
        timings_ms={"total": 50.0},
        models={"verifier": {"name": "verifai-minilm-nli", "sha256": "ab"}},
    )


def _keep_and_export(
    fake_settings: Settings, answer: Answer, out: Path, *, old_schema: bool = False
) -> Path:
    """Collection ``kept`` holding the documents, ``answer`` in its history (with
    ``old_schema``, stored as a ``verifai.answer/3`` record: verdicts without ``shown`` and
    ``flags``), and its audit record exported by `verifai audit export` to ``out``."""
    folder = answer.passages[0].path.parent
    with Collection.open("kept", create=True, settings=fake_settings) as collection:
        collection.add_paths([folder])
        sha = {d.source: d.sha256 for d in collection.documents()}
    assert set(sha) == {str(p.path) for p in answer.passages}
    with collection_history("kept") as history:
        history.add(answer, Settings(), quoted_documents(answer, sha))
        path = history.path
    if old_schema:
        with contextlib.closing(sqlite3.connect(path)) as db, db:
            (text,) = db.execute("SELECT answer_json FROM answers").fetchone()
            data = json.loads(text)
            data["schema"] = "verifai.answer/3"
            for sentence in data["sentences"]:
                for verdict in sentence["verdicts"]:
                    del verdict["shown"], verdict["flags"]
            db.execute("UPDATE answers SET answer_json = ?", (json.dumps(data, indent=2),))
    assert main(["audit", "export", "-c", "kept", "--last", "-o", str(out)]) == 0
    return out


@pytest.fixture
def record_path(fake_settings: Settings, docs: dict[str, tuple[Path, str]], tmp_path: Path) -> Path:
    """Collection ``kept`` holding the documents, one answer in its history (an unsure
    sentence among them), and that answer's audit record exported by `verifai audit export`."""
    return _keep_and_export(fake_settings, _answer(docs, shown=True), tmp_path / "audit.json")


def _check(
    capsys: pytest.CaptureFixture[str], path: Path, *extra: str
) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["audit", "check", str(path), "--json", *extra])
    out, err = capsys.readouterr()
    assert err == ""
    return code, json.loads(out)


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _save(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _kinds(found: dict[str, Any]) -> set[str]:
    return {p["kind"] for p in found["problems"]}


def _details(found: dict[str, Any], kind: str) -> list[str]:
    return [p["detail"] for p in found["problems"] if p["kind"] == kind]


def test_an_exported_record_is_signed_and_checks_ok(
    record_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = _load(record_path)
    assert record["public_key"].startswith("ed25519:") and record["signature"]
    code, found = _check(capsys, record_path)
    assert code == 0, found
    assert found["signed_by"] == "this install"
    assert found["history"] == "the same as answer 1 in the collection's history"
    assert (found["quotes_checked"], found["documents_checked"]) == (2, 2)
    assert main(["audit", "check", str(record_path)]) == 0
    assert capsys.readouterr().out.startswith(
        f"ok: signed by this install's key {record['public_key']}; history: the same as answer 1"
    )


SIGNED_EDIT = "the signature does not match the content"


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (
            lambda r: r["sentences"][0].__setitem__("probability", 0.51),
            "the probability of sentence 1 (sentences[0].probability): 0.51 in the record, 0.93 in",
        ),
        (
            lambda r: r["sentences"][0]["verdicts"][0].__setitem__("p_support", 0.99),
            "the p_support of verdict 1 of sentence 1 (sentences[0].verdicts[0].p_support): 0.99",
        ),
        (
            lambda r: r["sentences"][1].__setitem__("label", "supported"),
            'the label of sentence 2 (sentences[1].label): "supported" in the record, '
            '"contradicted" in',
        ),
        (
            lambda r: r.__setitem__("answer", "Aspirin cures everything [1]."),
            'the answer text (answer): "Aspirin cures everything [1]." in the record',
        ),
        (
            lambda r: r["sentences"][0]["verdicts"][0].__setitem__("shown", "SUPPORT"),
            'the shown of verdict 1 of sentence 1 (sentences[0].verdicts[0].shown): "SUPPORT" '
            'in the record, "UNSURE" in',
        ),
        (
            lambda r: r["sentences"][0]["verdicts"][0].pop("shown"),
            "the shown of verdict 1 of sentence 1 (sentences[0].verdicts[0].shown): nothing in "
            'the record, "UNSURE" in',
        ),
        (
            lambda r: r["sentences"][0]["verdicts"][0].__setitem__("flags", []),
            "the flags of verdict 1 of sentence 1 (sentences[0].verdicts[0].flags): 0 item(s) in "
            "the record, 1 in",
        ),
        (
            lambda r: r["sentences"][0]["verdicts"][0]["flags"].__setitem__(0, "checked"),
            "the flags of verdict 1 of sentence 1 (sentences[0].verdicts[0].flags[0]): "
            f'"checked" in the record, "{FLAG}" in',
        ),
        (
            lambda r: r["sentences"][1]["verdicts"][0]["flags"].append("no figure"),
            "the flags of verdict 1 of sentence 2 (sentences[1].verdicts[0].flags): 1 item(s) in "
            "the record, 0 in",
        ),
    ],
    ids=[
        "probability", "verdict-probability", "label", "answer-text", "shown", "shown-removed",
        "flags-emptied", "flag-reworded", "flag-added",
    ],
)  # fmt: skip
def test_an_edited_answer_field_is_reported(
    record_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, named: str
) -> None:
    """Row 8: changed probabilities, labels, answer text; issue 26: a verdict's shown label
    or its flags changed, removed or added."""
    record = _load(record_path)
    edit(record)
    _save(record_path, record)
    code, found = _check(capsys, record_path)
    assert code == 1
    assert _details(found, "signature_invalid")[0].startswith(SIGNED_EDIT)
    assert any(d.startswith(named) for d in _details(found, "edited")), found
    assert any(d.startswith(named) for d in _details(found, "history_differs")), found
    assert found["signed_by"] == "nobody"


def test_a_record_holds_each_verdicts_shown_label_and_flags(record_path: Path) -> None:
    """Issue 26: the unsure sentence, its best guess's verdict and what held it back are in
    the record and in its readable page."""
    record = _load(record_path)
    first, second = (s["verdicts"][0] for s in record["sentences"][:2])
    assert [s["label"] for s in record["sentences"]] == ["unsure", "contradicted", "unreferenced"]
    assert record["sentences"][0]["probability"] == 0.93  # the best guess's probability
    assert (first["label"], first["shown"], first["flags"]) == ("SUPPORT", "UNSURE", [FLAG])
    assert (second["label"], second["shown"], second["flags"]) == ("CONTRADICT", "CONTRADICT", [])
    page = record_path.with_suffix(".html").read_text(encoding="utf-8")
    assert "<td style='color:#3f6e8c'>≈ Aspirin lowers stroke risk [1].</td><td>Unsure" in page
    assert "[1] SUPPORT, shown UNSURE — support 0.93" in page
    assert f"<br><em>Held back: {FLAG}</em>" in page
    assert "[2] CONTRADICT — support 0.05" in page  # shown as the verifier said: not repeated


def test_a_record_of_an_answer_kept_before_shown_labels_checks_ok(
    fake_settings: Settings,
    docs: dict[str, tuple[Path, str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An answer kept as ``verifai.answer/3`` (no ``shown``, no ``flags``) exports a record
    without them, as before, and that record checks whole against the history."""
    answer = _answer(docs, shown=False)
    path = _keep_and_export(fake_settings, answer, tmp_path / "old.json", old_schema=True)
    record = _load(path)
    assert record["answer_record"]["schema"] == "verifai.answer/3"
    kept = [v for s in record["answer_record"]["sentences"] for v in s["verdicts"]]
    entries = [v for s in record["sentences"] for v in s["verdicts"]]
    assert len(kept) == len(entries) == 2
    assert all("shown" not in v and "flags" not in v for v in (*kept, *entries))
    code, found = _check(capsys, path)
    assert code == 0, found
    assert found["history"] == "the same as answer 1 in the collection's history"
    record["sentences"][0]["verdicts"][0]["shown"] = "UNSURE"  # added afterwards: caught
    _save(path, record)
    code, found = _check(capsys, path)
    assert code == 1 and {"signature_invalid", "edited", "history_differs"} <= _kinds(found)


def test_emptied_quotes_are_reported(record_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Row 8: the quotes list emptied while sentences cite passages."""
    record = _load(record_path)
    record["quotes"] = []
    _save(record_path, record)
    code, found = _check(capsys, record_path)
    assert code == 1
    assert _kinds(found) == {"signature_invalid", "edited", "quotes_missing", "history_differs"}
    assert _details(found, "quotes_missing") == [
        "2 verdict(s) cite quotes the record does not hold (q1, q2; sentence 1 cites passage [1] "
        "through q1): its quotes were removed"
    ]
    assert _details(found, "edited") == [
        "the quoted spans (quotes): 0 item(s) in the record, 2 in the answer it holds "
        "(answer_record)"
    ]


def test_an_emptied_sha256_is_reported(
    record_path: Path, docs: dict[str, tuple[Path, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Row 8: a document's sha256 set to "" (in its quotes and in the document list)."""
    record = _load(record_path)
    aspirin = str(docs["aspirin.txt"][0])
    for item in (*record["quotes"], *record["documents"]):
        if item["path"] == aspirin:
            item["sha256"] = ""
    _save(record_path, record)
    code, found = _check(capsys, record_path)
    assert code == 1
    assert "signature_invalid" in _kinds(found)
    [no_hash] = [p for p in found["problems"] if p["kind"] == "no_hash"]
    assert no_hash["path"] == aspirin
    assert no_hash["detail"].startswith("the record gives no sha256 for this document")
    assert any('sha256: "" in the record' in d for d in _details(found, "history_differs"))


def test_a_quote_moved_to_another_real_span_is_reported(
    record_path: Path, docs: dict[str, tuple[Path, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Row 8: the quote reads true at its new offsets, so only the signature, the answer it
    holds and the history can tell."""
    record = _load(record_path)
    text = docs["aspirin.txt"][1]
    other = "A second paragraph about follow-up visits that lasted ten years in total."
    start, end = _span(text, other)
    [quote] = [q for q in record["quotes"] if q["id"] == "q1"]
    quote.update(
        char_start=start, char_end=end, text=other,
        evidence_char_start=start, evidence_char_end=end, evidence=other,
    )  # fmt: skip
    _save(record_path, record)
    code, found = _check(capsys, record_path)
    assert code == 1
    assert "text_changed" not in _kinds(found)  # the span is real
    assert "signature_invalid" in _kinds(found)
    assert any(
        d.startswith(f"quoted span 1 (quotes[0].char_start, moved to other offsets): {start} in")
        for d in _details(found, "edited")
    ), found


def test_a_quote_that_reads_differently_shows_where_the_versions_differ(
    record_path: Path, docs: dict[str, tuple[Path, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 41, row 16: both versions were cut to the same 79 characters, which the edit
    (past them) left alike; the finding now shows each around the first difference."""
    path, text = docs["aspirin.txt"]
    path.write_text(ASPIRIN.replace("sixty-five", "seventy"), encoding="utf-8")
    start, end = _span(
        text,
        "The weather was mild during the trial. Aspirin lowered stroke risk in women over "
        "sixty-five.",
    )
    code, found = _check(capsys, record_path)
    assert code == 1
    assert _kinds(found) == {"hash_changed", "text_changed"}
    assert _details(found, "text_changed") == [
        f"the passage at characters {start}-{end} differs from character {start + 82} on: it "
        "now reads “…ed stroke risk in women over seventy. Bl”, was “…ed stroke risk in women "
        "over sixty-five.”"
    ]


def test_a_record_re_signed_with_another_key_still_differs_from_the_history(
    record_path: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Row 8: answer edited consistently (answer_record too) and signed anew elsewhere."""
    record = _load(record_path)
    record["answer"] = record["answer_record"]["answer"] = "Aspirin cures everything [1]."
    monkeypatch.setenv("VERIFAI_HOME", str(tmp_path / "forger"))
    forged = sign_record(record)
    monkeypatch.setenv("VERIFAI_HOME", str(tmp_path / "verifai_home"))
    assert forged["public_key"] != record["public_key"]
    _save(record_path, forged)
    code, found = _check(capsys, record_path)
    assert code == 1
    assert found["signed_by"] == "another install"
    assert _kinds(found) == {"history_differs", "unknown_key"}
    assert found["history"] == "differs from answer 1 in the collection's history"
    assert _details(found, "history_differs")[0].startswith(
        'the answer text (answer): "Aspirin cures everything [1]." in the record, '
        '"Aspirin lowers stroke risk [1]. Heparin increased DVT [2]. A summary." in the '
        "collection's history"
    )
    code, found = _check(capsys, record_path, "--key", record["public_key"])
    assert code == 1 and "wrong_key" in _kinds(found)


def test_audit_key_prints_the_public_key_records_carry(
    record_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["audit", "key"]) == 0
    out, err = capsys.readouterr()
    public_key = _load(record_path)["public_key"]
    assert out == public_key + "\n"
    assert len(base64.b64decode(out.removeprefix("ed25519:").strip())) == 32
    assert err == f"(private key: {key_path()})\n"
    assert stat.S_IMODE(key_path().stat().st_mode) == 0o600
    assert stat.S_IMODE(key_path().parent.stat().st_mode) == 0o700
    assert main(["audit", "key"]) == 0 and capsys.readouterr().out == out  # kept, not remade


def test_a_record_is_verified_on_another_machine_with_its_public_key(
    record_path: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    public_key = _load(record_path)["public_key"]
    monkeypatch.setenv("VERIFAI_HOME", str(tmp_path / "elsewhere"))
    code, found = _check(capsys, record_path, "--key", public_key)
    assert code == 0, found
    assert found["signed_by"] == "another install" and found["public_key"] == public_key
    assert found["history"] == (
        "collection 'kept' is not on this machine; compared with the files only"
    )
    assert found["quotes_checked"] == 2
    assert main(["audit", "key"]) == 0
    own_key = capsys.readouterr().out.strip()
    assert own_key != public_key
    code, found = _check(capsys, record_path, "--key", own_key)
    assert code == 1
    assert _details(found, "wrong_key") == [
        f"it names the key {public_key}, not the key required ({own_key})"
    ]
    record = _load(record_path)
    record["sentences"][0]["probability"] = 0.2
    _save(record_path, record)
    code, found = _check(capsys, record_path, "--key", public_key)
    assert code == 1 and {"signature_invalid", "edited"} <= _kinds(found)


def _expect_bad(capsys: pytest.CaptureFixture[str], path: Path, reason: str) -> None:
    capsys.readouterr()
    assert main(["audit", "check", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"error: cannot read audit record {path}: {reason}\n"


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda r: r.pop("collection"), "field 'collection' is missing"),
        (lambda r: r["quotes"][0].pop("char_start"), "field 'quotes[0].char_start' is missing"),
        (lambda r: r["quotes"][1].pop("text"), "field 'quotes[1].text' is missing"),
        (
            lambda r: r["quotes"][0].__setitem__("char_start", "12"),
            "field 'quotes[0].char_start' is a text ('12'), expected a whole number",
        ),
        (
            lambda r: r["sentences"][0]["verdicts"][0].__setitem__("p_support", None),
            "field 'sentences[0].verdicts[0].p_support' is null, expected a number",
        ),
        (
            lambda r: r.__setitem__("sentences", {"0": 1}),
            "field 'sentences' is an object, expected a list",
        ),
        (
            lambda r: r["sentences"][0]["verdicts"][0].__setitem__("shown", "MAYBE"),
            "field 'sentences[0].verdicts[0].shown' is a text ('MAYBE'), expected one of "
            "SUPPORT, CONTRADICT, NO_EVIDENCE, UNSURE or null",
        ),
        (
            lambda r: r["sentences"][0]["verdicts"][0].__setitem__("flags", FLAG),
            f"field 'sentences[0].verdicts[0].flags' is a text ('{FLAG[:39]}…'), expected a list",
        ),
        (
            lambda r: r["sentences"][1]["verdicts"][0].__setitem__("flags", [12]),
            "field 'sentences[1].verdicts[0].flags[0]' is a number (12), expected a text",
        ),
        (
            lambda r: r["sentences"][0]["verdicts"][0].__setitem__("flags", [FLAG] * 17),
            "field 'sentences[0].verdicts[0].flags' holds 17 flags, more than 16",
        ),
        (
            lambda r: r["sentences"][0]["verdicts"][0].__setitem__("flags", ["x" * 1001]),
            "field 'sentences[0].verdicts[0].flags[0]' is 1001 characters long, more than 1000",
        ),
    ],
    ids=[
        "no-collection", "no-char_start", "no-text", "string-offset", "null-prob", "not-list",
        "bad-shown", "flags-text", "flag-number", "too-many-flags", "flag-too-long",
    ],
)  # fmt: skip
def test_a_record_missing_or_mistyping_a_field_is_a_clear_error(
    record_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, reason: str
) -> None:
    """Row 9: KeyError / ValueError tracebacks before."""
    record = _load(record_path)
    edit(record)
    _save(record_path, record)
    _expect_bad(capsys, record_path, reason)


def test_deeply_nested_json_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Row 9: 200,000-deep nesting raised RecursionError in the JSON parser."""
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    reason = "it nests objects or lists deeper than 32 levels; it is not an audit record"
    _expect_bad(capsys, path, reason)
    inner: dict[str, Any] = {}
    nested = {"schema": "verifai.audit/1", "x": inner}
    for _ in range(40):  # parses, but deeper than any record
        inner["x"] = inner = {}
    _save(path, nested)
    _expect_bad(capsys, path, reason)


def test_an_oversized_file_is_refused_before_parsing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Row 9: a file larger than the limit is not read whole."""
    path = tmp_path / "huge.json"
    with path.open("wb") as fh:
        fh.truncate(MAX_RECORD_BYTES + 1)  # sparse: no disk used
    _expect_bad(
        capsys,
        path,
        "it is larger than 32 MiB, far more than any record VerifAI writes; check that it is "
        "the right file",
    )
    assert os.path.getsize(path) == MAX_RECORD_BYTES + 1


def _ocr_answer(collection: Collection, paths: tuple[Path, ...]) -> Answer:
    """An answer whose sentence cites, for each of ``paths``, its first chunk read by OCR
    (as retrieval would pass it: the catalog's chunk)."""
    passages = []
    for path in paths:
        record = collection.document(str(path))
        assert record is not None
        chunks = collection.chunks(collection.document_chunk_ids(record.doc_id))
        rec = next(r for _, r in sorted(chunks.items()) if r.chunk.ocr is not None)
        c = rec.chunk
        passages.append(
            Passage(
                ChunkId(rec.chunk_id),
                DocId(rec.doc_id),
                path,
                rec.title,
                c.text,
                c.char_start,
                c.char_end,
                c.location,
                c.sentence_spans,
                ocr=c.ocr,
            )
        )
    verdicts = tuple(
        Verdict(n, NliLabel.SUPPORT, 0.9, 0.05, 0.05, p.text, (0, len(p.text)))
        for n, p in enumerate(passages, start=1)
    )
    text = "Venous thrombosis prophylaxis was reviewed [1][2]."
    sentence = AnswerSentence(text, 0, len(text), (1, 2), verdicts, SentenceLabel.SUPPORTED)
    return Answer(
        question="What was reviewed?",
        text=text,
        sentences=(sentence,),
        passages=tuple(passages),
        timings_ms={"total": 50.0},
        models={"verifier": {"name": "verifai-minilm-nli", "sha256": "ab"}},
    )


@needs_tesseract
def test_a_record_quoting_ocr_text_checks_ok_and_says_how_it_was_read(
    fake_settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Issue 41 row 4: a genuine record quoting a scanned PDF page and a PPTX picture, both
    read by Tesseract at ingest, failed `audit check`: it re-read them with OCR off
    ("unreadable") or without the picture's text ("text_changed")."""
    folder = tmp_path / "scans"
    folder.mkdir()
    scan = scanned_top_of_paper(folder / "paper_scan.pdf")
    deck = pptx_with_scan(folder / "deck.pptx")
    settings = dataclasses.replace(
        fake_settings, ingest=dataclasses.replace(fake_settings.ingest, ocr_dpi=200)
    )
    with Collection.open("kept", create=True, settings=settings) as collection:
        report = collection.add_paths([folder], ocr=OcrOptions.from_settings(settings.ingest))
        assert {o.status.value for o in report.outcomes} == {"indexed"}, report.outcomes
        answer = _ocr_answer(collection, (scan, deck))
        sha = {d.source: d.sha256 for d in collection.documents()}
    assert [p.ocr.engine if p.ocr else "" for p in answer.passages] == ["tesseract"] * 2
    with collection_history("kept") as history:
        history.add(answer, settings, quoted_documents(answer, sha))
    out = tmp_path / "audit.json"
    assert main(["audit", "export", "-c", "kept", "--last", "-o", str(out)]) == 0
    record = _load(out)
    versions = {p["ocr"]["version"] for p in record["answer_record"]["passages"]}
    assert len(versions) == 1 and re.fullmatch(r"\d+\.\d+.*", versions.pop())

    code, found = _check(capsys, out)
    assert code == 0, found
    assert (found["quotes_checked"], found["documents_checked"]) == (2, 2)
    assert found["notes"] == []
    code, found = _check(capsys, out, "--no-collection")
    assert code == 0, found

    # Checked where Tesseract is missing: the files are unchanged, so nothing was edited;
    # the quotes are compared with the text the collection stored, and the check says so.
    monkeypatch.setenv("PATH", str(tmp_path / "no_programs"))
    code, found = _check(capsys, out)
    assert code == 0, found
    version = record["answer_record"]["passages"][0]["ocr"]["version"]
    assert found["notes"] == [
        f"{scan}: the file is unchanged (same sha256), but it cannot be read again here "
        "(scanned page 1 not recognised: the Tesseract program is not installed (apt-get "
        "install tesseract-ocr); or set ingest.ocr_engine to rapidocr); its 1 quoted span(s) "
        "were compared with the text the collection stored at ingest, and read the same",
        f"{deck}: the file is unchanged (same sha256), but OCR reads it differently now "
        f"(tesseract {version} at ingest, tesseract is not installed here); its 1 quoted "
        "span(s) were compared with the text the collection stored at ingest, and read the same",
    ]
    code, found = _check(capsys, out, "--no-collection")
    assert code == 1
    assert _kinds(found) == {"not_reread"}
    assert [p["path"] for p in found["problems"]] == [str(scan), str(deck)]
    assert _details(found, "not_reread")[1] == (
        f"the file is unchanged (same sha256), but OCR reads it differently now (tesseract "
        f"{version} at ingest, tesseract is not installed here), so 1 quoted span(s) could not "
        "be confirmed; this is not a sign that it was edited: check on a machine that holds "
        f"its collection, or read it with tesseract {version} as its ingest did"
    )
    assert main(["audit", "check", str(out)]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0].startswith("ok: signed by this install's key")
    assert shown[1].startswith(f"  note: {scan}: the file is unchanged (same sha256)")


def test_a_record_re_signed_with_an_unknown_key_is_not_verified(
    record_path: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Issue 41 row 12: an edited record re-signed with another key, checked without the
    collection's history, read "ok: signed by another install's key"."""
    record = _load(record_path)
    record["answer"] = record["answer_record"]["answer"] = "Aspirin cures everything [1]."
    monkeypatch.setenv("VERIFAI_HOME", str(tmp_path / "forger"))
    forged = sign_record(record)
    monkeypatch.setenv("VERIFAI_HOME", str(tmp_path / "verifai_home"))
    _save(record_path, forged)
    code, found = _check(capsys, record_path, "--no-collection")
    assert code == 1
    assert _kinds(found) == {"unknown_key"}
    [detail] = _details(found, "unknown_key")
    assert detail.startswith(
        f"not verified: it is signed by a key this install does not know (fingerprint "
        f"{fingerprint(forged['public_key'])}); the signature holds"
    )
    assert main(["audit", "check", str(record_path), "--no-collection"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [
        f"not verified: unknown key {forged['public_key']}",
        f"  signed by: an unknown key {forged['public_key']}; history: not compared "
        "(--no-collection)",
    ]
    # Trusted by name (the exporting machine's `verifai audit key`): the signature holds.
    code, found = _check(capsys, record_path, "--no-collection", "--key", forged["public_key"])
    assert code == 0 and found["signed_by"] == "another install", found


def test_a_deleted_key_is_replaced_with_a_warning_and_its_records_still_check(
    record_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 41 row 12: the key file deleted was silently made anew, and the records it had
    signed then read as another install's."""
    old_key = _load(record_path)["public_key"]
    key_path().unlink()
    capsys.readouterr()
    again = record_path.with_name("again.json")
    assert main(["audit", "export", "-c", "kept", "--last", "-o", str(again)]) == 0
    err = capsys.readouterr().err
    new_key = _load(again)["public_key"]
    assert new_key != old_key
    assert err == (
        f"warning: the audit signing key {key_path()} was missing (deleted?); a new key was "
        f"made (fingerprint {fingerprint(new_key)}). Earlier key(s) {fingerprint(old_key)} "
        f"stay listed in {known_keys_path()}, so records they signed still check as this "
        "install's; if you did not delete it, find out who did\n"
    )
    assert known_keys() == (old_key, new_key)
    assert stat.S_IMODE(known_keys_path().stat().st_mode) == 0o600
    code, found = _check(capsys, record_path)
    assert code == 0 and found["signed_by"] == "this install (earlier key)", found
    assert main(["audit", "check", str(record_path)]) == 0
    assert capsys.readouterr().out.startswith(f"ok: signed by this install's earlier key {old_key}")
    assert main(["audit", "export", "-c", "kept", "--last", "-o", str(again)]) == 0
    assert capsys.readouterr().err == ""  # said once


def test_a_private_key_other_users_may_read_is_refused_for_signing(
    record_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 41 row 12: a 0644 private key was used without a word."""
    key_path().chmod(0o644)
    capsys.readouterr()
    out = record_path.with_name("again.json")
    assert main(["audit", "export", "-c", "kept", "--last", "-o", str(out)]) == 1
    assert capsys.readouterr().err.startswith(
        f"error: cannot use the audit signing key {key_path()}: its mode is 0644: other users "
        f"may read it, and anyone who did can sign records as this install. If no one else "
        f"could, make it private (chmod 600 {key_path()}); otherwise move it away"
    )
    assert not out.exists()
    code, found = _check(capsys, record_path)  # checking signs nothing: it still works
    assert code == 0, found
    key_path().chmod(0o600)
    assert main(["audit", "export", "-c", "kept", "--last", "-o", str(out)]) == 0
