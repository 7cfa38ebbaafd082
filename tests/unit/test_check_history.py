"""Claim checks kept in the history like answers (issue 29): read back exactly as made, an entry
of their own kind beside the answers, kept by `verifai check` and listed by `verifai history`,
with an audit record that `verifai audit check` verifies against the documents.

A real collection of two real text files (the hashing fake embedder only stands in for the
model) with a real history; the check is made by hand, its passages real spans of the
documents' extracted text. `verifai check` runs with a stand-in session (control flow only:
the verifier is not run).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_audit import ASPIRIN, HEPARIN, _passage
from tests.unit.test_keep import FakeCollection
from verifai_desktop.audit import sign_record
from verifai_desktop.audit_view import record_to_html
from verifai_desktop.cli import check_cmd, main
from verifai_desktop.codec import (
    CHECK_SCHEMA,
    check_from_dict,
    check_to_dict,
    settings_for,
)
from verifai_desktop.domain import (
    CheckResult,
    DocId,
    DocumentVerdict,
    Evidence,
    NliLabel,
    ShownLabel,
    Verdict,
)
from verifai_desktop.errors import BadRecord, IndexCorrupt
from verifai_desktop.ingest.parse import ParserPool
from verifai_desktop.keep import keep_in_history
from verifai_desktop.settings import Settings, VerifySettings
from verifai_desktop.store.base import CollectionStore
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import collection_history
from verifai_desktop.store.history import Feedback, History, keep_answer, quoted_documents

CLAIM = "Aspirin lowers stroke risk."
FLAG = "the evidence is about women over sixty-five; the claim names no such group"
MODELS = {"verifier": {"name": "verifai-minilm-nli", "sha256": "ab"}}


@pytest.fixture
def docs(tmp_path: Path) -> tuple[tuple[Path, str], tuple[Path, str]]:
    """Two documents and their extracted text (as the audit check reads them again)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    found = []
    with ParserPool() as pool:
        for name, content in (("aspirin.txt", ASPIRIN), ("heparin.txt", HEPARIN)):
            path = folder / name
            path.write_text(content, encoding="utf-8")
            found.append((path, pool.parse(path).text))
    return found[0], found[1]


def _check(docs: tuple[tuple[Path, str], tuple[Path, str]]) -> CheckResult:
    """The aspirin document supports the claim (its verdict held back to unsure by
    :data:`FLAG` in the document list); the heparin one says nothing about it."""
    (p1, t1), (p2, t2) = docs
    aspirin = _passage(1, p1, t1, "Aspirin lowered stroke risk in women over sixty-five.")
    heparin = _passage(2, p2, t2, "Heparin reduced DVT in trauma patients.")
    supports = Evidence(
        aspirin,
        Verdict(0, NliLabel.SUPPORT, 0.91, 0.03, 0.06, aspirin.text, (0, len(aspirin.text)),
                ShownLabel.SUPPORT),
    )  # fmt: skip
    held = Evidence(
        aspirin, dataclasses.replace(supports.verdict, shown=ShownLabel.UNSURE, flags=(FLAG,))
    )
    silent = Evidence(
        heparin,
        Verdict(0, NliLabel.NO_EVIDENCE, 0.1, 0.1, 0.8, heparin.text, (0, len(heparin.text)),
                ShownLabel.NO_EVIDENCE),
    )  # fmt: skip
    return CheckResult(
        CLAIM,
        (supports,),
        (),
        (
            DocumentVerdict(DocId(1), p1, "Aspirin trial", "UNSURE", held),
            DocumentVerdict(DocId(2), p2, "DVT review", "NO_EVIDENCE", silent),
        ),
        7,
        models=MODELS,
    )


STRICT = Settings(verify=VerifySettings(support_threshold=0.8, contradict_threshold=0.75))


def test_a_check_reads_back_as_it_was_made(docs: Any) -> None:
    check = _check(docs)
    data = json.loads(json.dumps(check_to_dict(check, STRICT)))
    assert data["schema"] == CHECK_SCHEMA
    assert data["models"] == MODELS and data["thresholds"]["support"] == 0.8
    assert check_from_dict(data) == check
    assert check_to_dict(check_from_dict(data), settings_for(data)) == data
    # A check written before models and thresholds were (schema /2) reads without models.
    old = {k: v for k, v in data.items() if k not in ("models", "thresholds")}
    assert check_from_dict({**old, "schema": "verifai.check/2"}) == dataclasses.replace(
        check, models={}
    )
    with pytest.raises(BadRecord, match=r"its schema is 'verifai\.answer/4'"):
        check_from_dict({**data, "schema": "verifai.answer/4"})
    data["documents"][0]["label"] = "MAYBE"
    with pytest.raises(BadRecord, match="MAYBE"):
        check_from_dict(data)


def test_a_check_is_a_history_entry_of_its_own_kind(docs: Any, tmp_path: Path) -> None:
    from tests.unit.test_codec import ANSWER

    check = _check(docs)
    (p1, _t1), (p2, _t2) = docs
    with History(tmp_path) as history:
        answer_id = history.add(ANSWER, Settings(), {})
        check_id = history.add(check, STRICT, quoted_documents(check, {str(p1): "aa"}))
        saved, answered = history.scan().answers
        assert (saved.answer_id, answered.answer_id) == (check_id, answer_id)
        assert (saved.kind, answered.kind) == ("check", "answer")
        assert saved.question == CLAIM and saved.check() == check
        assert dict(saved.documents) == {str(p1): "aa", str(p2): ""}
        assert saved.answer_settings().verify.support_threshold == 0.8
        with pytest.raises(BadRecord, match="it is a claim check, not an answer"):
            saved.answer()
        with pytest.raises(BadRecord, match="it is an answer, not a claim check"):
            answered.check()
        with pytest.raises(ValueError, match="is a claim check: feedback is on answers"):
            history.set_feedback(Feedback(check_id, 0, 0, "SUPPORT", "right"))
    # Kept by the same policy as an answer: a history that cannot be written is a warning.
    damage = IndexCorrupt(tmp_path / "history.sqlite", "file is not a database")
    broken = FakeCollection(tmp_path, damage)
    kept = keep_in_history(broken, check, Settings())  # type: ignore[arg-type]
    assert kept.answer_id is None and kept.warning == (
        f"the claim check was not kept in the history of collection 'papers': {damage}"
    )


def _collection_with_docs(fake_settings: Settings, folder: Path) -> dict[str, str]:
    with Collection.open("kept", create=True, settings=fake_settings) as collection:
        collection.add_paths([folder])
        return {d.source: d.sha256 for d in collection.documents()}


def test_a_checks_audit_record_holds_until_a_document_changes(
    fake_settings: Settings, docs: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = _check(docs)
    (p1, _t1), _ = docs
    sha = _collection_with_docs(fake_settings, p1.parent)
    with Collection.open("kept", settings=fake_settings) as collection:
        keep_answer(collection, check, STRICT)
    out = tmp_path / "audit.json"
    assert main(["audit", "export", "-c", "kept", "--last", "-o", str(out)]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["kind"] == "check" and record["question"] == CLAIM
    assert "sentences" not in record and "answer" not in record
    assert [q["role"] for q in record["quotes"]] == ["checked", "checked"]
    assert {q["sha256"] for q in record["quotes"]} == set(sha.values())
    first = record["check"]["documents"][0]
    assert (first["label"], first["verdict"]["shown"], first["verdict"]["flags"]) == (
        "UNSURE",
        "UNSURE",
        [FLAG],
    )
    assert record["check"]["supporting"][0]["quote"] == first["verdict"]["quote"] == "q1"
    assert record["models"] == MODELS and record["thresholds"]["support"] == 0.8
    page = record_to_html(record)
    assert f"<b>Claim checked across the collection:</b> {CLAIM}" in page
    assert "≈ unsure (p = 0.91)" in page and f"Held back: {FLAG}" in page

    capsys.readouterr()
    assert main(["audit", "check", str(out), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["ok"] and found["quotes_checked"] == 2
    assert found["history"] == "the same as answer 1 in the collection's history"

    # A document verdict edited and the record signed again: named against the check it holds.
    edited = dict(record)
    edited["check"] = {**record["check"], "documents": [{**first, "label": "SUPPORT"}]}
    edited = sign_record({k: v for k, v in edited.items() if k != "signature"})
    out.write_text(json.dumps(edited), encoding="utf-8")
    assert main(["audit", "check", str(out), "--json"]) == 1
    kinds = {p["kind"] for p in json.loads(capsys.readouterr().out)["problems"]}
    assert kinds == {"edited", "history_differs"}

    # The quoted document is edited: the record no longer holds.
    out.write_text(json.dumps(record), encoding="utf-8")
    p1.write_text(ASPIRIN.replace("sixty-five", "seventy"), encoding="utf-8")
    assert main(["audit", "check", str(out), "--json"]) == 1
    kinds = {p["kind"] for p in json.loads(capsys.readouterr().out)["problems"]}
    assert kinds == {"hash_changed", "text_changed"}


class _Session:
    """Stands in for AskSession in `verifai check` (control flow only): checks at once."""

    result: CheckResult

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def check_claim(self, collection: CollectionStore, claim: str, **_kw: object) -> CheckResult:
        return dataclasses.replace(self.result, claim=claim)

    def settings_in_effect(self) -> Settings:
        return dataclasses.replace(self.settings, verify=STRICT.verify)


def test_verifai_check_keeps_the_check_and_history_lists_it(
    fake_settings: Settings,
    docs: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (p1, _t1), _ = docs
    _collection_with_docs(fake_settings, p1.parent)
    _Session.result = _check(docs)
    monkeypatch.setattr(check_cmd, "AskSession", _Session)
    assert main(["check", CLAIM, "-c", "kept", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    printed = json.loads(out)
    assert printed["thresholds"]["support"] == 0.8  # the thresholds it was checked with
    with collection_history("kept") as history:
        (saved,) = history.answers()
    assert saved.kind == "check" and saved.answer_json == out
    assert saved.check() == _Session.result

    assert main(["history", "-c", "kept"]) == 0
    assert capsys.readouterr().out == (
        f"   1  {saved.when()}  [claim check] {CLAIM}\n"
        "      1 document without evidence, 1 unsure · 7 passages checked\n"
    )
    assert main(["history", "-c", "kept", "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    assert (entry["kind"], entry["question"], entry["labels"]) == (
        "check",
        CLAIM,
        {"UNSURE": 1, "NO_EVIDENCE": 1},
    )
    assert entry["answer"] == printed
    # Feedback is on answers' verdicts: a check is refused with the reason.
    assert main(["feedback", "add", "-c", "kept", "--id", "1", "--sentence", "1", "--right"]) != 0
    assert "it is a claim check, not an answer" in capsys.readouterr().err
