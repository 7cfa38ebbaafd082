"""store/history.py and serialize.answer_from_dict: answers kept byte for byte, reopened as
verified, documents changed since, readers' judgements and their export for training."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from tests.unit.test_codec import ANSWER, PASSAGES, SENTENCES
from verifai_desktop.codec import answer_from_dict, answer_to_dict, answer_to_json, settings_for
from verifai_desktop.domain import (
    Answer,
    AnswerSentence,
    ChunkId,
    DocId,
    Evidence,
    Location,
    LocationKind,
    NliLabel,
    Passage,
    SentenceLabel,
    Verdict,
)
from verifai_desktop.errors import BadRecord, HistoryNotFound
from verifai_desktop.settings import Settings, VerifySettings
from verifai_desktop.store.history import (
    Feedback,
    History,
    changed_documents,
    feedback_records,
    quoted_documents,
)

MODELS_DIR = Path(__file__).resolve().parents[3] / "models"

CONFLICT = Passage(
    ChunkId(40), DocId(9), Path("/docs/other.pdf"), "Other trial", "Aspirin raised stroke risk.",
    0, 27, Location(LocationKind.PAGE, 2), ((0, 27),),
)  # fmt: skip

RECITED = AnswerSentence(
    SENTENCES[0].text, SENTENCES[0].char_start, SENTENCES[0].char_end, (1,),
    SENTENCES[0].verdicts, SentenceLabel.SUPPORTED,
    cited_by_generator=(2,),
    generator_verdicts=(
        Verdict(2, NliLabel.NO_EVIDENCE, 0.1, 0.1, 0.8, PASSAGES[1].text, (0, 39)),
    ),
    generator_label=SentenceLabel.NO_EVIDENCE,
    supported_by=((1, 0.93),),
    conflicts=(Evidence(CONFLICT, Verdict(0, NliLabel.CONTRADICT, 0.02, 0.9, 0.08,
                                          CONFLICT.text, (0, 27))),),
)  # fmt: skip

RICH = dataclasses.replace(
    ANSWER,
    sentences=(RECITED, *SENTENCES[1:]),
    generated_text=ANSWER.text.replace("[1]", "[2]", 1),
    abstained=False,
)
SETTINGS = Settings(verify=VerifySettings(support_threshold=0.6, conflict_budget=4))


@pytest.mark.parametrize("answer", [ANSWER, RICH], ids=["plain", "recited-with-conflict"])
def test_an_answer_reads_back_exactly(answer: Answer) -> None:
    text = answer_to_json(answer, SETTINGS)
    data = json.loads(text)
    back = answer_from_dict(data)
    assert back == answer
    assert answer_to_json(back, settings_for(data)) == text


def test_reading_refuses_another_schema_and_damage() -> None:
    data = answer_to_dict(ANSWER)
    with pytest.raises(BadRecord, match="schema"):
        answer_from_dict({**data, "schema": "verifai.answer/9"})
    broken = {**data, "sentences": [{"text": "no offsets"}]}
    with pytest.raises(BadRecord, match="KeyError"):
        answer_from_dict(broken)


def test_history_keeps_answers_byte_for_byte_newest_first(tmp_path: Path) -> None:
    docs = quoted_documents(RICH, {"/docs/aspirin.pdf": "a" * 64})
    assert docs == {"/docs/aspirin.pdf": "a" * 64, "/docs/dvt.md": "", "/docs/other.pdf": ""}
    with History(tmp_path) as history:
        first = history.add(ANSWER, SETTINGS, {}, created=1000.0)
        second = history.add(RICH, SETTINGS, docs, created=2000.0)
        assert [a.answer_id for a in history.answers()] == [second, first]
        saved = history.get(second)
        assert saved is not None and history.last() == saved
    with History(tmp_path) as reopened:  # kept on disk
        again = reopened.get(second)
        assert again is not None
        assert again.answer_json == answer_to_json(RICH, SETTINGS)
        assert again.answer() == RICH
        assert again.answer_settings().verify.support_threshold == 0.6
        assert again.documents == docs
        assert again.settings["verify"]["conflict_budget"] == 4
        assert "ui" not in again.settings
        assert again.question == RICH.question


def test_delete_and_clear(tmp_path: Path) -> None:
    with History(tmp_path) as history:
        ids = [history.add(ANSWER, SETTINGS, {}) for _ in range(3)]
        history.set_feedback(Feedback(ids[0], 0, 1, "SUPPORT", "right"))
        assert history.delete(ids[0]) is True
        assert history.delete(ids[0]) is False
        assert history.feedback() == []  # its feedback goes with it
        assert history.clear() == 2
        assert history.answers() == [] and history.last() is None


def test_changed_documents_compares_the_files_sha256(tmp_path: Path) -> None:
    from verifai_desktop.hashing import sha256_file

    kept = tmp_path / "kept.txt"
    edited = tmp_path / "edited.txt"
    gone = tmp_path / "gone.txt"
    for f in (kept, edited, gone):
        f.write_text(f"text of {f.name}\n", encoding="utf-8")
    docs = {str(f): sha256_file(f) for f in (kept, edited, gone)}
    with History(tmp_path) as history:
        saved = history.get(history.add(ANSWER, SETTINGS, docs))
    assert saved is not None
    assert changed_documents(saved) == []
    edited.write_text("edited since\n", encoding="utf-8")
    gone.unlink()
    found = {c.path: c.reason for c in changed_documents(saved)}
    assert found == {str(edited): "changed", str(gone): "missing"}


def test_feedback_is_validated_and_replaced(tmp_path: Path) -> None:
    with History(tmp_path) as history:
        answer_id = history.add(RICH, SETTINGS, {})
        with pytest.raises(HistoryNotFound):
            history.set_feedback(Feedback(answer_id + 1, 0, 1, "SUPPORT", "right"))
        with pytest.raises(ValueError, match="wrong"):
            history.set_feedback(Feedback(answer_id, 0, 1, "SUPPORT", "right", NliLabel.SUPPORT))
        history.set_feedback(Feedback(answer_id, 1, 2, "CONTRADICT", "right"))
        history.set_feedback(Feedback(answer_id, 1, 2, "CONTRADICT", "wrong", NliLabel.SUPPORT))
        [only] = history.feedback(answer_id)
        assert (only.verdict, only.label) == ("wrong", NliLabel.SUPPORT)


def test_feedback_export_is_read_back_by_the_training_loader(tmp_path: Path) -> None:
    with History(tmp_path) as history:
        answer_id = history.add(RICH, SETTINGS, {})
        history.set_feedback(Feedback(answer_id, 0, 1, "SUPPORT", "right"))
        history.set_feedback(Feedback(answer_id, 1, 2, "CONTRADICT", "wrong", NliLabel.NO_EVIDENCE))
        history.set_feedback(Feedback(answer_id, 2, 0, "unreferenced", "flagged", note="vague"))
        history.set_feedback(Feedback(answer_id, 1, 2, "CONTRADICT", "wrong"))  # replaces
        history.set_feedback(Feedback(answer_id, 0, 1, "SUPPORT", "right"))
        records, skipped = feedback_records(history, collection="trials")
    assert skipped == 2  # the flag, and "wrong" without the right label
    assert records == [
        {
            "premise": "Aspirin lowered stroke risk in women.",
            "hypothesis": "Aspirin lowers stroke risk.",
            "label": "SUPPORT",
            "source": "feedback",
            "split": "train",
            "id": f"feedback:trials:{answer_id}:0:1",
        }
    ]
    path = tmp_path / "feedback.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    sys.path.insert(0, str(MODELS_DIR))
    try:
        import pool
    finally:
        sys.path.remove(str(MODELS_DIR))
    [pair] = pool.load_jsonl(path, "extra")
    assert (pair.premise, pair.hypothesis, pair.label, pair.source) == (
        "Aspirin lowered stroke risk in women.",
        "Aspirin lowers stroke risk.",
        "SUPPORT",
        "feedback",
    )
