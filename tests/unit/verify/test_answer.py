"""verify/answer.py: every sentence against every passage given, re-citation, offsets.

Control flow with the word-overlap fake verifier of test_pipeline; re-citation with the real
bundled verifier on a real collection is in tests/unit/test_recite_real.py.
"""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.generate import test_focus as focus_test
from tests.unit.test_pipeline import PASSAGES, FakeVerifier, _passage
from verifai_desktop.codec import answer_to_dict
from verifai_desktop.domain import SentenceLabel
from verifai_desktop.presentation import answer_to_markdown, recitation_note
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.answer import MAX_CITATIONS, verify_answer
from verifai_desktop.verify.claims import with_citations
from verifai_desktop.verify.nli import OnnxVerifier

ON = VerifySettings(premise="sentences")
OFF = dataclasses.replace(ON, recite=False)


def _verify(text: str, thresholds: VerifySettings = ON, passages=PASSAGES):  # type: ignore[no-untyped-def]
    verifier = FakeVerifier()
    result = verify_answer(verifier, text, passages, thresholds)  # the ingest splitter
    return result, verifier


def test_a_sentence_citing_the_wrong_passage_is_re_cited_to_the_one_that_holds_it() -> None:
    text = "Cats sleep a lot. [1] Dogs bark at night. [3] Birds sing. [3]"
    result, verifier = _verify(text)
    # one batch per sentence: each against the 3 passages, every window
    assert [{claim for _, claim in batch} for batch in verifier.batches] == [
        {"Cats sleep a lot."},
        {"Dogs bark at night."},
        {"Birds sing."},
    ]
    first, dogs, birds = result.sentences
    assert not first.recited and first.citations == (1,) and first.cited_by_generator is None
    assert dogs.recited
    assert dogs.citations == (2,) and dogs.cited_by_generator == (3,)
    assert dogs.label is SentenceLabel.SUPPORTED
    assert dogs.generator_label is SentenceLabel.NO_EVIDENCE
    assert [v.passage_number for v in dogs.generator_verdicts] == [3]
    assert [v.passage_number for v in dogs.verdicts] == [2]
    assert dogs.verdicts[0].evidence == "Dogs bark at night."
    assert dogs.supported_by == ((2, pytest.approx(0.9)),)
    assert dogs.text == "Dogs bark at night. [2]"
    assert not birds.recited and birds.citations == (3,)  # "sing" is in passage 3 only
    # the answer text carries the corrected marker; the generated text is kept
    assert result.text == "Cats sleep a lot. [1] Dogs bark at night. [2] Birds sing. [3]"
    assert result.generated_text == text
    for s in result.sentences:
        assert result.text[s.char_start : s.char_end] == s.text


def test_an_answer_its_citations_support_is_left_as_generated() -> None:
    text = "Cats sleep a lot. [1] Dogs bark at night. [2]"
    result, _ = _verify(text)
    assert result.text == text and result.generated_text is None
    assert [s.label for s in result.sentences] == [SentenceLabel.SUPPORTED] * 2
    assert not any(s.recited for s in result.sentences)
    assert result.sentences[0].supported_by == ((1, pytest.approx(0.9)),)


def test_a_contradicting_citation_wins_over_support_elsewhere() -> None:
    # passage 2 says "Dogs never sleep"; passage 4 supports "Dogs sleep"
    passages = (*PASSAGES, _passage(4, "Dogs sleep all day. Dogs sleep.", 0.5))
    result, _ = _verify("Dogs sleep. [2]", passages=passages)
    (s,) = result.sentences
    assert s.label is SentenceLabel.CONTRADICTED and not s.recited
    assert s.citations == (2,)
    assert [n for n, _ in s.supported_by] == [4]  # the support is still reported


def test_a_sentence_no_passage_supports_keeps_its_label_and_citations() -> None:
    result, _ = _verify("Fish swim fast. [1]")
    (s,) = result.sentences
    assert s.label is SentenceLabel.NO_EVIDENCE and s.citations == (1,) and not s.recited
    assert s.supported_by == ()
    assert result.generated_text is None


def test_an_uncited_sentence_gets_the_citation_that_supports_it() -> None:
    result, _ = _verify("Birds sing in spring.")
    (s,) = result.sentences
    assert s.recited and s.citations == (3,) and s.cited_by_generator == ()
    assert s.generator_label is SentenceLabel.UNREFERENCED
    assert s.label is SentenceLabel.SUPPORTED
    assert result.text == "Birds sing in spring. [3]"
    assert recitation_note(s) == (
        "Re-cited: the generator cited no passage; the evidence is in [3]."
    )


def test_partial_support_keeps_the_supporting_citation_first() -> None:
    passages = (*PASSAGES, _passage(4, "Cats purr when happy. Cats sleep a lot.", 0.5))
    result, _ = _verify("Cats purr when happy. [3][1]", passages=passages)
    (s,) = result.sentences
    assert s.generator_label is SentenceLabel.PARTIALLY_SUPPORTED
    assert s.recited and s.citations == (1, 4) and s.cited_by_generator == (3, 1)
    assert s.label is SentenceLabel.SUPPORTED
    assert recitation_note(s) == (
        "Re-cited: the generator cited [3][1] (partially supported); the evidence is in [1][4]."
    )


def test_re_citation_names_at_most_max_citations_passages() -> None:
    passages = tuple(_passage(i, "Cats sleep a lot.", 0.5) for i in range(1, 6))
    passages = (_passage(1, "Birds sing.", 0.5), *passages[1:])
    result, _ = _verify("Cats sleep a lot. [1]", passages=passages)
    (s,) = result.sentences
    assert len(s.citations) == MAX_CITATIONS == 3
    assert len(s.supported_by) == 4  # every supporter reported, strongest first


def test_with_recite_off_only_cited_pairs_are_verified() -> None:
    text = "Cats sleep a lot. [1] Dogs bark at night. [3]"
    result, verifier = _verify(text, OFF)
    cited = {"Cats sleep a lot.": PASSAGES[0].text, "Dogs bark at night.": PASSAGES[2].text}
    assert verifier.batches[0]
    for premise, claim in verifier.batches[0]:
        assert premise in cited[claim]  # a window of the cited passage only
    assert result.generated_text is None
    assert result.sentences[1].label is SentenceLabel.NO_EVIDENCE
    assert all(s.supported_by == () for s in result.sentences)


def test_the_json_and_markdown_show_the_correction() -> None:
    from verifai_desktop.domain import Answer

    text = "Dogs bark at night. [3]"
    result, _ = _verify(text)
    answer = Answer(
        question="q",
        text=result.text,
        sentences=result.sentences,
        passages=PASSAGES,
        generated_text=result.generated_text,
    )
    data = answer_to_dict(answer)
    assert data["answer"] == "Dogs bark at night. [2]"
    assert data["generated_answer"] == text
    (s,) = data["sentences"]
    assert s["recited"] is True
    assert s["citations"] == [2] and s["cited_by_generator"] == [3]
    assert s["generator_label"] == "no_evidence" and s["label"] == "supported"
    assert [v["passage"] for v in s["generator_verdicts"]] == [3]
    assert s["supported_by"] == [{"passage": 2, "p_support": pytest.approx(0.9)}]
    assert data["thresholds"]["recite"] is True
    md = answer_to_markdown(answer)
    assert "Dogs bark at night. [2]" in md
    assert "Re-cited: the generator cited [3] (no evidence); the evidence is in [2]." in md


@pytest.mark.parametrize(
    ("text", "numbers", "expected"),
    [
        ("Claim. [3]", (2,), "Claim. [2]"),
        ("Claim. [3][1]", (1, 4), "Claim. [1][4]"),
        ("Claim [3] here.", (2,), "Claim here. [2]"),
        ("Claim.", (5,), "Claim. [5]"),
        ("Claim. [2]", (), "Claim."),
    ],
)
def test_with_citations(text: str, numbers: tuple[int, ...], expected: str) -> None:
    assert with_citations(text, numbers) == expected


# PubMedQA PMID 16498158 (PQA-L, MIT), the results chunk of a dev figure question (f-4).
KETAMINE = (
    "Hypersalivation occurred in 11.4% of patients given atropine compared with 30.8% given "
    "placebo (odds ratio (OR) 0.29, 95% confidence interval (CI) 0.09 to 0.91). A transient "
    "rash was observed in 22.7% of the atropine group compared with 5.1% of the placebo group "
    "(OR 5.44, 95% CI 1.11 to 26.6). Vomiting during recovery occurred in 9.1% of atropine "
    "patients compared with 25.6% of placebo patients (OR 0.29, 95% CI 0.09 to 1.02). There "
    "was a trend towards better tolerance in the placebo group. No patient experienced "
    "serious side effects."
)
RASH = (
    "A transient rash occurred in 22.7% of the atropine group compared with 5.1% of the "
    "placebo group (OR 5.44, 95% CI 1.11 to 26.6). [1]"
)


def test_a_window_of_the_supporting_passage_about_another_measure_is_no_conflict(
    bundled: OnnxVerifier,
) -> None:
    """Issue 39, item 5: the generator's sentence restates the passage's rash figures; the
    vomiting window of the same passage was shown beside it as "conflicting evidence" (a rule's
    red, the verifier reading it as bearing on the claim neither way). Conflicting windows of a
    supporting passage pass the same relevance gate as other passages (real bundled verifier)."""
    (sentence,) = verify_answer(bundled, RASH, [focus_test._passage(1, KETAMINE)], ON).sentences
    assert sentence.label is SentenceLabel.SUPPORTED
    assert "transient" in sentence.verdicts[0].evidence
    assert sentence.conflicts == ()
