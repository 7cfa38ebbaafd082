"""codec.py: the verifai.answer/4 schema and reading it back (older answers included), one
passage schema; presentation.py: Markdown/HTML, the unsure label and verdict flags, export
formats."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import stat
from pathlib import Path

import pytest

from verifai_desktop.answer_files import EXPORT_FORMATS, format_for_path, write_answer
from verifai_desktop.codec import (
    ANSWER_SCHEMA,
    CHECK_SCHEMA,
    answer_from_dict,
    answer_to_dict,
    answer_to_json,
    check_to_dict,
    passage_to_dict,
    settings_for,
)
from verifai_desktop.domain import (
    Answer,
    AnswerSentence,
    CheckResult,
    ChunkId,
    DocId,
    DocumentVerdict,
    Evidence,
    Location,
    LocationKind,
    NliLabel,
    Passage,
    SentenceLabel,
    ShownLabel,
    Verdict,
)
from verifai_desktop.errors import ExportFailed, UnsupportedExportFormat
from verifai_desktop.presentation import (
    CHECK_VERDICT_LABEL,
    CHECK_VERDICT_TEXT,
    LABEL_STYLES,
    answer_to_html,
    answer_to_markdown,
    document_verdict_note,
    flag_lines,
    injection_warning,
    ocr_note,
    sentence_css,
    sentence_probability,
    unsure_guess,
)
from verifai_desktop.recognition import Recognition, WordBox
from verifai_desktop.settings import Settings, VerifySettings

P1 = "The weather was mild. Aspirin lowered stroke risk in women."
P2 = "Heparin reduced DVT in trauma patients."
TEXT = "Aspirin lowers stroke risk [1]. Heparin increased DVT [2]. A summary."

PASSAGES = (
    Passage(
        ChunkId(11), DocId(3), Path("/docs/aspirin.pdf"), "Aspirin trial", P1, 100, 100 + len(P1),
        Location(LocationKind.PAGE, 4), ((0, 21), (22, len(P1))),
        lexical_score=1.0, semantic_score=0.5, fused_score=0.85, raw_lexical=7.5,
        raw_semantic=0.61,
    ),
    Passage(
        ChunkId(12), DocId(4), Path("/docs/dvt.md"), "DVT review", P2, 0, len(P2),
        Location(LocationKind.SECTION, heading="Results"), ((0, len(P2)),), fused_score=0.4,
    ),
)  # fmt: skip

SENTENCES = (
    AnswerSentence(
        TEXT[0:31], 0, 31, (1,),
        (Verdict(1, NliLabel.SUPPORT, 0.93, 0.02, 0.05, P1[22:], (22, len(P1))),),
        SentenceLabel.SUPPORTED,
    ),
    AnswerSentence(
        TEXT[32:58], 32, 58, (2,),
        (Verdict(2, NliLabel.CONTRADICT, 0.05, 0.88, 0.07, P2, (0, len(P2))),),
        SentenceLabel.CONTRADICTED,
    ),
    AnswerSentence(TEXT[59:], 59, len(TEXT), (), (), SentenceLabel.UNREFERENCED),
)  # fmt: skip

ANSWER = Answer(
    question="Does aspirin lower stroke risk?",
    text=TEXT,
    sentences=SENTENCES,
    passages=PASSAGES,
    timings_ms={"retrieve": 5.0, "total": 50.0},
    models={"verifier": {"name": "verifai-minilm-nli", "sha256": "ab"}},
)

PASSAGE_KEYS = {
    "number", "chunk_id", "doc_id", "path", "file", "title", "location", "char_start",
    "char_end", "scores", "text", "sentence_spans", "instruction_cues", "is_reference",
}  # fmt: skip


def test_answer_dict_has_exactly_the_documented_keys() -> None:
    data = answer_to_dict(ANSWER, Settings(verify=VerifySettings(support_threshold=0.6)))
    assert set(data) == {
        "schema", "question", "answer", "generated_answer", "abstained", "abstain_reason",
        "sentences",
        "label_counts", "passages", "passages_left_out", "timings_ms", "models", "thresholds",
    }  # fmt: skip
    assert data["generated_answer"] == data["answer"] == TEXT
    assert data["schema"] == ANSWER_SCHEMA == "verifai.answer/4"
    assert data["thresholds"] == {
        "support": 0.6, "contradict": 0.5, "abstain": 0.25, "recite": True,
        "conflict_search": True, "conflict_budget": 6, "second_opinion": False,
    }  # fmt: skip
    sentences = data["sentences"]
    assert isinstance(sentences, list)
    assert set(sentences[0]) == {
        "index", "text", "char_start", "char_end", "citations", "invalid_citations", "label",
        "probability", "verdicts", "recited", "cited_by_generator", "generator_label",
        "generator_verdicts", "supported_by", "conflicts",
    }  # fmt: skip
    assert sentences[0]["recited"] is False
    assert sentences[0]["cited_by_generator"] == sentences[0]["citations"]
    assert sentences[0]["generator_label"] == sentences[0]["label"]
    assert set(sentences[0]["verdicts"][0]) == {
        "passage", "label", "probability", "p_support", "p_contradict", "p_no_evidence",
        "evidence", "evidence_char_start", "evidence_char_end", "shown", "flags",
    }  # fmt: skip
    assert (sentences[0]["verdicts"][0]["shown"], sentences[0]["verdicts"][0]["flags"]) == (
        None,
        [],
    )
    assert [s["label"] for s in sentences] == ["supported", "contradicted", "unreferenced"]
    assert [s["probability"] for s in sentences] == pytest.approx([0.93, 0.88, 0.0])
    assert data["label_counts"] == {
        "supported": 1, "partially_supported": 0, "contradicted": 1, "no_evidence": 0,
        "unreferenced": 1, "unsure": 0,
    }  # fmt: skip
    passages = data["passages"]
    assert isinstance(passages, list)
    assert [set(p) for p in passages] == [PASSAGE_KEYS, PASSAGE_KEYS]
    assert passages[0]["scores"] == {
        "fused": 0.85, "lexical": 1.0, "semantic": 0.5, "raw_lexical": 7.5, "raw_semantic": 0.61,
    }  # fmt: skip
    assert passages[0]["location"] == {"kind": "page", "number": 4, "heading": "", "label": "p. 4"}


def test_offsets_round_trip_through_json() -> None:
    data = json.loads(answer_to_json(ANSWER))
    assert data == answer_to_dict(ANSWER)
    for s in data["sentences"]:
        assert data["answer"][s["char_start"] : s["char_end"]] == s["text"]
        for v in s["verdicts"]:
            passage = data["passages"][v["passage"] - 1]["text"]
            assert passage[v["evidence_char_start"] : v["evidence_char_end"]] == v["evidence"]
    assert (
        data["sentences"][0]["verdicts"][0]["evidence"] == "Aspirin lowered stroke risk in women."
    )


def test_one_passage_schema_for_answers_and_search() -> None:
    data = answer_to_dict(ANSWER)
    passages = data["passages"]
    assert isinstance(passages, list)
    assert passage_to_dict(PASSAGES[1], 2) == passages[1]
    assert passage_to_dict(PASSAGES[0], 7)["number"] == 7
    assert passage_to_dict(PASSAGES[0], 1)["file"] == "aspirin.pdf"


def test_markdown_and_html_carry_labels_evidence_and_sources() -> None:
    md = answer_to_markdown(ANSWER)
    assert "Aspirin lowers stroke risk [1]. **[✓ Supported, 0.93]**" in md
    assert "Heparin increased DVT [2]. **[✗ Contradicted, 0.88]**" in md
    assert "A summary. **[○ Unreferenced]**" in md
    assert '"Aspirin lowered stroke risk in women."' in md
    assert "[1] Aspirin trial — aspirin.pdf, p. 4" in md
    page = answer_to_html(ANSWER)
    assert page.startswith("<!DOCTYPE html>")
    assert 'class="sentence supported"' in page and 'class="sentence contradicted"' in page
    assert "The weather was mild. <mark>Aspirin lowered stroke risk in women.</mark>" in page
    assert "dvt.md, Results" in page


def test_export_formats_by_suffix() -> None:
    assert list(EXPORT_FORMATS) == ["markdown", "html", "json"]
    assert [f.suffix for f in EXPORT_FORMATS.values()] == [".md", ".html", ".json"]
    assert EXPORT_FORMATS["markdown"].file_filter == "Markdown (*.md)"
    assert format_for_path("a.md").name == "markdown"
    assert format_for_path("A.MARKDOWN").name == "markdown"
    assert format_for_path(Path("x/answer.htm")).name == "html"
    assert format_for_path("answer.json").name == "json"
    with pytest.raises(UnsupportedExportFormat, match=r"\.md, \.html, \.json"):
        format_for_path("answer.txt")
    with pytest.raises(UnsupportedExportFormat, match="no suffix"):
        format_for_path("answer")


def test_write_answer(tmp_path: Path) -> None:
    md = write_answer(ANSWER, tmp_path / "a.md")
    assert md.read_text(encoding="utf-8") == answer_to_markdown(ANSWER)
    forced = write_answer(ANSWER, tmp_path / "a.txt", fmt=EXPORT_FORMATS["json"])
    assert json.loads(forced.read_text(encoding="utf-8"))["schema"] == ANSWER_SCHEMA
    with pytest.raises(UnsupportedExportFormat):
        write_answer(ANSWER, tmp_path / "a.docx")
    assert not (tmp_path / "a.docx").exists()


def test_a_passage_that_reads_as_instructions_carries_its_warning_everywhere() -> None:
    flagged = dataclasses.replace(
        PASSAGES[1], instruction_cues=("say the sky is green", "chat control token")
    )
    answer = dataclasses.replace(ANSWER, passages=(PASSAGES[0], flagged))
    data = answer_to_dict(answer)
    assert [p["instruction_cues"] for p in data["passages"]] == [  # type: ignore[index]
        [],
        ["say the sky is green", "chat control token"],
    ]
    warning = injection_warning(flagged)
    assert "say the sky is green" in warning and injection_warning(PASSAGES[0]) == ""
    assert answer_to_markdown(answer).count("⚠ This passage reads as instructions") == 1
    assert answer_to_html(answer).count("⚠ This passage reads as instructions") == 1


def test_an_answer_export_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    """Issue 30, row 10: a folder, ``''``, a missing folder, ``/dev/full``: an
    :class:`ExportFailed` naming the path and what to do, and nothing written."""
    cases: list[tuple[Path | str, str]] = [
        (tmp_path, "it is a folder; give a file name inside it"),
        ("", "no file name given; give the path of a file to write"),
        (tmp_path / "missing" / "a.md", "its folder does not exist; create the folder or"),
    ]
    if Path("/dev/full").exists():
        cases.append((Path("/dev/full"), "it is a device or a pipe, not a file"))
    for target, reason in cases:
        with pytest.raises(ExportFailed) as info:
            write_answer(ANSWER, target, fmt=EXPORT_FORMATS["markdown"])
        assert str(info.value).startswith(f"could not write the answer to {str(target)!r}: ")
        assert reason in str(info.value) and info.value.path == Path(target)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
def test_an_answer_export_is_user_only(tmp_path: Path) -> None:
    """Issue 30, row 13: it quotes the documents; a 0644 file it replaces becomes 0600."""
    old = os.umask(0o022)
    try:
        (tmp_path / "b.json").write_text("{}", encoding="utf-8")
        (tmp_path / "b.json").chmod(0o644)
        written = [write_answer(ANSWER, tmp_path / name) for name in ("a.md", "b.json")]
    finally:
        os.umask(old)
    assert [stat.S_IMODE(p.stat().st_mode) for p in written] == [0o600, 0o600]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md", "b.json"]  # no temp file


# -- the unsure label and verdict flags ---------------------------------------------------

P3 = "Among the 480 women treated, aspirin lowered stroke risk by 12% over ten years."
FLAG = "the figure 21% is not stated for the same subject in the evidence"
UNSURE_TEXT = "Aspirin lowered stroke risk by 21% [1]. Heparin reduced DVT [2]."
UNSURE_PASSAGES = (
    dataclasses.replace(
        PASSAGES[0], text=P3, char_end=100 + len(P3), sentence_spans=((0, len(P3)),)
    ),
    PASSAGES[1],
)
UNSURE_VERDICT = Verdict(
    1, NliLabel.SUPPORT, 0.72, 0.08, 0.20, P3, (0, len(P3)), ShownLabel.UNSURE, (FLAG,)
)
UNSURE_ANSWER = Answer(
    question="By how much did aspirin lower stroke risk?",
    text=UNSURE_TEXT,
    sentences=(
        AnswerSentence(
            UNSURE_TEXT[:39], 0, 39, (1,), (UNSURE_VERDICT,), SentenceLabel.UNSURE
        ),
        AnswerSentence(
            UNSURE_TEXT[40:], 40, len(UNSURE_TEXT), (2,),
            (Verdict(2, NliLabel.SUPPORT, 0.95, 0.01, 0.04, P2, (0, len(P2)), ShownLabel.SUPPORT),),
            SentenceLabel.SUPPORTED,
        ),
    ),
    passages=UNSURE_PASSAGES,
    timings_ms={"total": 40.0},
    models={"verifier": {"name": "verifai-minilm-nli", "sha256": "ab"}},
)  # fmt: skip


def test_shown_labels_flags_and_unsure_round_trip_exactly() -> None:
    text = answer_to_json(UNSURE_ANSWER)
    data = json.loads(text)
    first = data["sentences"][0]
    assert first["label"] == "unsure"
    assert first["probability"] == pytest.approx(0.72)  # the best guess's probability
    assert first["verdicts"][0]["shown"] == "UNSURE"
    assert first["verdicts"][0]["flags"] == [FLAG]
    assert data["sentences"][1]["verdicts"][0] == {
        **data["sentences"][1]["verdicts"][0], "shown": "SUPPORT", "flags": [],
    }  # fmt: skip
    assert data["label_counts"]["unsure"] == 1 and data["label_counts"]["supported"] == 1
    back = answer_from_dict(data)
    assert back == UNSURE_ANSWER
    assert back.sentences[0].verdicts[0].flags == (FLAG,)
    assert answer_to_json(back, settings_for(data)) == text


def test_an_answer_written_before_shown_labels_reads_back() -> None:
    """A ``verifai.answer/3`` record (kept in a history before this schema): its verdicts
    have no ``shown`` and no ``flags``; they read back as None and ()."""
    old = answer_to_dict(ANSWER)
    old["schema"] = "verifai.answer/3"
    for sentence in old["sentences"]:  # type: ignore[attr-defined]
        for verdict in sentence["verdicts"]:
            del verdict["shown"], verdict["flags"]
    old = json.loads(json.dumps(old))
    assert "shown" not in old["sentences"][0]["verdicts"][0]
    back = answer_from_dict(old)
    assert back == ANSWER
    assert [(v.shown, v.flags) for s in back.sentences for v in s.verdicts] == [
        (None, ()),
        (None, ()),
    ]
    assert answer_to_dict(back)["schema"] == ANSWER_SCHEMA


def test_malformed_flags_or_shown_are_a_bad_record() -> None:
    from verifai_desktop.errors import BadRecord

    for bad in ("UNSURE", [3], None):
        data = answer_to_dict(UNSURE_ANSWER)
        data["sentences"][0]["verdicts"][0]["flags"] = bad  # type: ignore[index]
        with pytest.raises(BadRecord, match="the saved answer"):
            answer_from_dict(data)
    data = answer_to_dict(UNSURE_ANSWER)
    data["sentences"][0]["verdicts"][0]["shown"] = "MAYBE"  # type: ignore[index]
    with pytest.raises(BadRecord, match="'MAYBE' is not a valid ShownLabel"):
        answer_from_dict(data)


def test_unsure_has_its_own_neutral_style() -> None:
    unsure = LABEL_STYLES[SentenceLabel.UNSURE]
    assert (unsure.title, unsure.glyph, unsure.underline) == ("Unsure", "≈", "double")
    others = [s for label, s in LABEL_STYLES.items() if label is not SentenceLabel.UNSURE]
    assert unsure.color_hex not in {s.color_hex for s in others}
    assert unsure.underline not in {s.underline for s in others}
    assert unsure.glyph not in {s.glyph for s in others}
    red, green, blue = (int(unsure.color_hex[i : i + 2], 16) for i in (1, 3, 5))
    assert blue > red and blue > green  # a blue-grey: neither green nor red
    assert unsure.description == "the verifier cannot tell; its best guess is in the hover card"
    assert sentence_css(SentenceLabel.UNSURE) == (
        "color:#3f6e8c;text-decoration:underline double #3f6e8c;text-underline-offset:3px"
    )


def test_exports_give_an_unsure_sentence_its_best_guess_and_every_flag() -> None:
    sentence = UNSURE_ANSWER.sentences[0]
    assert unsure_guess(sentence) == "best guess: supported, p 0.72"
    assert unsure_guess(UNSURE_ANSWER.sentences[1]) == ""  # supported: no guess to give
    md = answer_to_markdown(UNSURE_ANSWER)
    assert (
        "Aspirin lowered stroke risk by 21% [1]. **[≈ Unsure — best guess: supported, p 0.72]**"
    ) in md
    assert "   - [1] aspirin.pdf, p. 4 — support 0.72 · contradict 0.08 · no evidence 0.20: " in md
    assert f"\n     - Held back: {FLAG}\n" in md
    assert md.count("Held back:") == 1  # the supported sentence's verdict has no flag
    assert md.splitlines()[-1].startswith("Legend: ") and "≈ Unsure; ○" in md.splitlines()[-1]
    page = answer_to_html(UNSURE_ANSWER)
    assert 'class="sentence unsure"' in page
    assert 'title="Unsure — best guess: supported, p 0.72"' in page
    assert f"<br><em>Held back: {FLAG}</em>" in page
    assert "— ≈ Unsure (best guess: supported, p 0.72)<ul>" in page


SUPPORTING = Evidence(
    PASSAGES[1],
    Verdict(0, NliLabel.SUPPORT, 0.95, 0.01, 0.04, P2, (0, len(P2)), ShownLabel.SUPPORT),
)
UNSURE_CHECK = CheckResult(
    "Aspirin lowered stroke risk by 21%.",
    (SUPPORTING,),
    (),
    (
        DocumentVerdict(
            DocId(3), Path("/docs/aspirin.pdf"), "Aspirin trial", "UNSURE",
            Evidence(UNSURE_PASSAGES[0], dataclasses.replace(UNSURE_VERDICT, passage_number=0)),
        ),
        DocumentVerdict(DocId(4), Path("/docs/dvt.md"), "DVT review", "SUPPORT", SUPPORTING),
    ),
    12,
)  # fmt: skip
"""A claim check: one document unsure (its passage's verdict held back by :data:`FLAG`), one
supporting."""


def test_a_check_writes_an_unsure_document_with_its_flags() -> None:
    data = json.loads(json.dumps(check_to_dict(UNSURE_CHECK)))
    assert data["schema"] == CHECK_SCHEMA == "verifai.check/3"
    unsure, supports = data["documents"]
    assert (unsure["label"], supports["label"]) == ("UNSURE", "SUPPORT")
    assert unsure["evidence"]["verdict"]["shown"] == "UNSURE"
    assert unsure["evidence"]["verdict"]["flags"] == [FLAG]
    assert supports["evidence"]["verdict"]["flags"] == []
    assert CHECK_VERDICT_TEXT["UNSURE"] == "unsure"
    assert CHECK_VERDICT_LABEL["UNSURE"] is SentenceLabel.UNSURE
    doc = UNSURE_CHECK.documents[0]
    assert document_verdict_note(doc) == "best guess: supported, p 0.72"
    supported = dataclasses.replace(doc, label="SUPPORT")
    assert document_verdict_note(supported) == "probability 0.72"


ODD_RAW = b"/docs/caf\xe9/r\xe9sum\xe9 \xff.txt"
ODD_PATH = Path(os.fsdecode(ODD_RAW))
ODD_SHOWN = "/docs/caf\\xe9/r\\xe9sum\\xe9 \\xff.txt"
ODD_ANSWER = dataclasses.replace(
    ANSWER, passages=(dataclasses.replace(PASSAGES[0], path=ODD_PATH), PASSAGES[1])
)
"""An answer citing a file whose folder and name are Latin-1 bytes, not UTF-8."""


def test_a_name_that_is_not_utf8_is_shown_escaped_and_read_back_exactly() -> None:
    """Issue 30, row 2: the answer JSON (``ask --json``, the history, audit records) and a
    claim check's JSON are strict UTF-8; the exact bytes come back from ``path_bytes_b64``."""
    text = answer_to_json(ODD_ANSWER)
    text.encode("utf-8")  # no lone surrogate, so no raw 0xFF or \udcff in the output
    odd, plain = json.loads(text)["passages"]
    assert (odd["path"], odd["file"]) == (ODD_SHOWN, "r\\xe9sum\\xe9 \\xff.txt")
    assert base64.b64decode(odd["path_bytes_b64"]) == ODD_RAW
    assert "path_bytes_b64" not in plain and plain["path"] == "/docs/dvt.md"
    assert answer_from_dict(json.loads(text)) == ODD_ANSWER  # the exact path again

    check = dataclasses.replace(
        UNSURE_CHECK,
        documents=(
            dataclasses.replace(UNSURE_CHECK.documents[0], path=ODD_PATH),
            UNSURE_CHECK.documents[1],
        ),
    )
    document = json.loads(json.dumps(check_to_dict(check), ensure_ascii=False))["documents"][0]
    assert document["path"] == ODD_SHOWN
    assert base64.b64decode(document["path_bytes_b64"]) == ODD_RAW


def test_a_recognised_passage_carries_its_ocr_provenance_and_reads_back() -> None:
    """Issue 28: text read by OCR says so (engine, mean confidence, word boxes) in every
    passage object; a passage from a text layer has no ``ocr`` key, as before."""
    ocr = Recognition("tesseract", 0.9, (WordBox(0, 7, 72.0, 90.0, 120.5, 101.0, 0.9),))
    scanned = dataclasses.replace(PASSAGES[1], ocr=ocr)
    answer = dataclasses.replace(ANSWER, passages=(PASSAGES[0], scanned))
    data = json.loads(answer_to_json(answer))
    assert "ocr" not in data["passages"][0]
    assert data["passages"][1]["ocr"] == {
        "engine": "tesseract",
        "confidence": 0.9,
        "words": [[0, 7, 72.0, 90.0, 120.5, 101.0, 0.9]],
    }
    assert answer_from_dict(data).passages == answer.passages
    assert ocr_note(scanned) == "recognised text (OCR, tesseract, mean confidence 90%)"
    assert ocr_note(PASSAGES[0]) == ""


def test_a_verdict_a_rule_shows_red_names_why_and_is_not_held_back() -> None:
    reason = 'the figure 493: the passage gives 733 here ("733 per million")'
    red = Verdict(1, NliLabel.SUPPORT, 0.8, 0.1, 0.1, shown=ShownLabel.CONTRADICT, flags=(reason,))
    assert flag_lines(red) == (f"Contradicted: {reason}",)
    held = dataclasses.replace(red, shown=ShownLabel.UNSURE)
    assert flag_lines(held) == (f"Held back: {reason}",)
    parts = dataclasses.replace(red, flags=('part 2 of 2, "it fails": contradicted', reason))
    assert flag_lines(parts) == ('Part 2 of 2, "it fails": contradicted', f"Contradicted: {reason}")
    # red by a rule: the verifier's P(CONTRADICT) does not back the label, so none is shown
    sentence = AnswerSentence("S [1].", 0, 6, (1,), (red,), SentenceLabel.CONTRADICTED)
    assert sentence_probability(sentence) is None
    by_guess = dataclasses.replace(red, label=NliLabel.CONTRADICT, p_contradict=0.8, p_support=0.1)
    assert sentence_probability(dataclasses.replace(sentence, verdicts=(by_guess,))) == 0.8
