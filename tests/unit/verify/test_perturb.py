"""Perturbation pairs: each kind on hand-written and real SciFact passages changes only where it
should, gold labels follow the kind, and sampling is deterministic and spread over passages."""

from __future__ import annotations

import difflib
import random
import re

import pytest

from tests.unit.verify.test_numbers import scifact_abstracts
from verifai_desktop.domain import NliLabel
from verifai_desktop.verify.numbers import find_numbers
from verifai_desktop.verify.perturb import (
    GOLD,
    PerturbKind,
    PerturbPair,
    perturb_passage,
    sample_pairs,
)

K = PerturbKind
# SciFact corpus abstracts that, between them, give every kind (ids in corpus.jsonl)
REAL_IDS = ("4983", "87758", "152245", "169264", "207972", "301866", "341324", "344240")
NUMBER = re.compile(r"[-\u2212]?\d+(?:[,.·\u00a0 ]\d+)*")
NEGATION_WORDS = {"not", "no", "did", "does", "do", "cannot"}
AIM_OPENINGS = ("We tested whether ", "We hypothesised that ", "We sought to determine whether ",
                "This study aimed to examine whether ", "We asked whether ")  # fmt: skip
IRREGULAR = {
    ("lead", "led"),
    ("rise", "rose"),
    ("fall", "fell"),
    ("grow", "grew"),
    ("find", "found"),
}


def one(text: str, kind: PerturbKind, seed: int = 0) -> PerturbPair:
    (pair,) = perturb_passage(text, source="doc", rng=random.Random(seed), kinds={kind})
    return pair


def tokens(text: str) -> list[str]:
    signed = r"(?<![\w.])[-\u2212]\d+(?:[.,·]\d+)*"  # "-0.39" is one figure
    return re.findall(rf"{signed}|\w+(?:[-.,·']\w+)*|[^\w\s]", text.lower())


def changes(pair: PerturbPair) -> tuple[list[str], list[str]]:
    """Tokens of the original left out of the hypothesis, and tokens put in."""
    a, b = tokens(pair.original), tokens(pair.hypothesis)
    removed: list[str] = []
    added: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            removed += a[i1:i2]
            added += b[j1:j2]
    return removed, added


def inflects(base: str, form: str) -> bool:
    forms = {base + "d", base + "ed", base + "s", base + "es", base[:-1] + "ied", base[:-1] + "ies"}
    forms.add(base + base[-1:] + "ed")  # "occurred"
    return form in forms or (base, form) in IRREGULAR


def is_swap(pair: PerturbPair) -> bool:
    """Whether the hypothesis is the original with two whole words or phrases exchanged, the
    changed span running from the start of the first to the end of the second."""
    s, e = pair.changed_span
    mid, changed = pair.original[s:e], pair.hypothesis[s:e]

    def boundary(k: int) -> bool:  # between words, or between a figure and its unit ("2.1m")
        a, b = pair.original[k - 1 : k], pair.original[k : k + 1]
        return not (a.isalnum() and b.isalnum() and a.isdigit() == b.isdigit())

    def whole(a: int, b: int) -> bool:
        return boundary(a) and boundary(b)

    for i in range(1, len(mid)):
        for j in range(1, len(mid) - i + 1):
            x, gap, y = mid[:i], mid[i : len(mid) - j], mid[len(mid) - j :]
            if x != y and changed == y + gap + x and whole(s, s + i) and whole(e - j, e):
                return True
    return False


def check_pair(pair: PerturbPair, text: str) -> None:
    """The pair's contract, per kind (the module docstring's "only where it should")."""
    assert pair.label is GOLD[pair.kind]
    assert pair.original in text
    if pair.kind in (K.UNCHANGED, K.AIM):
        assert pair.hypothesis == pair.original and pair.changed_span == (0, 0)
        if pair.kind is K.UNCHANGED:
            assert pair.premise == text
        else:
            start = text.index(pair.original)
            end = len(pair.premise) - (len(text) - start - len(pair.original))
            aim = pair.premise[start:end]
            assert (
                pair.premise[:start] == text[:start]
                and pair.premise[end:] == text[start + len(pair.original) :]
            )
            body = re.sub(r"^[A-Z][a-z]+(?: [a-z]+)?, ", "", pair.original)  # "However, ..."
            assert aim.startswith(AIM_OPENINGS) and aim.endswith(body[1:])
        return
    assert pair.premise == text and pair.hypothesis != pair.original
    s, e = pair.changed_span
    tail = len(pair.hypothesis) - e
    assert 0 <= s < e <= len(pair.hypothesis)
    assert pair.hypothesis[:s] == pair.original[:s]
    assert pair.hypothesis[e:] == pair.original[len(pair.original) - tail :]
    removed, added = changes(pair)
    if pair.kind in (K.NUMBER_SWAP, K.NUMBER_CHANGE):  # one whole figure, nothing else
        end = len(pair.original) - tail
        old, new = pair.original[s:end], pair.hypothesis[s:e]
        assert NUMBER.fullmatch(old) and NUMBER.fullmatch(new) and old != new, (old, new)
        assert not (pair.original[s - 1 : s] + pair.original[end : end + 1]).isdigit()
    elif pair.kind is K.ITEM_SWAP:
        assert len(pair.hypothesis) == len(pair.original) and is_swap(pair), pair.hypothesis
    elif pair.kind is K.NEGATION_INSERT:
        assert "not" in added or "cannot" in added
        for word in removed:  # "increased" -> "did not increase", "can" -> "cannot"
            assert word == "can" or any(inflects(b, word) for b in added), (removed, added)
        assert set(added) - set(removed) <= NEGATION_WORDS | {"cannot"} | {
            b for b in added if any(inflects(b, w) for w in removed)
        }
    else:  # NEGATION_REMOVE: "was not" -> "was", "did not increase" -> "increased", "no" -> "a"
        assert set(removed) & (NEGATION_WORDS | {"cannot"}) or any(
            w.startswith("non") for w in removed
        )
        for word in added:
            assert word in {"a", "an", "can", "significant", "significantly"} or any(
                inflects(b, word) for b in removed
            ), (removed, added)


PASSAGE_NUMBERS = "Mortality was 12% in the treated group of patients. Readmission: 30%."


def test_number_swap_takes_another_figure_of_the_passage_with_the_same_unit() -> None:
    pair = one(PASSAGE_NUMBERS, K.NUMBER_SWAP)
    assert pair.hypothesis == "Mortality was 30% in the treated group of patients."
    assert pair.original == "Mortality was 12% in the treated group of patients."
    assert pair.changed_span == (14, 16) and pair.label is NliLabel.CONTRADICT
    assert pair.source == "doc" and pair.premise == PASSAGE_NUMBERS
    check_pair(pair, PASSAGE_NUMBERS)


def test_number_change_keeps_the_formatting_and_moves_the_value_10_to_50_percent() -> None:
    text = "The median follow-up was 12.5 months and 1,200 patients took part in total."
    for seed in range(20):
        pair = one(text, K.NUMBER_CHANGE, seed)
        check_pair(pair, text)
        (new,) = [m for m in find_numbers(pair.hypothesis) if m.span[0] == pair.changed_span[0]]
        old = 12.5 if new.unit == "months" else 1200.0
        assert 0.5 * old <= new.value <= 1.5 * old and new.value != old
        written = pair.hypothesis[slice(*pair.changed_span)]
        assert re.fullmatch(r"\d+\.\d" if old == 12.5 else r"\d{1,3}(,\d{3})*|\d{3}", written)


EXACT = [  # (kind, sentence, the only change it allows)
    (K.ITEM_SWAP, "Adverse events were nausea (12%) and headache (30%) in the treated group.",
     "Adverse events were nausea (30%) and headache (12%) in the treated group."),
    (K.ITEM_SWAP, "Exercise increased insulin sensitivity and decreased fasting glucose in adults.",
     "Exercise decreased insulin sensitivity and increased fasting glucose in adults."),
    (K.ITEM_SWAP, "Mortality was higher in smokers than in non-smokers.",
     "Mortality was higher in non-smokers than in smokers."),
    (K.NEGATION_INSERT, "Statin use was associated with lower mortality in older patients.",
     "Statin use was not associated with lower mortality in older patients."),
    (K.NEGATION_INSERT, "Daily exercise increased insulin sensitivity in older adults.",
     "Daily exercise did not increase insulin sensitivity in older adults."),
    (K.NEGATION_INSERT, "Metformin significantly reduces hepatic glucose output in patients.",
     "Metformin does not significantly reduce hepatic glucose output in patients."),
    (K.NEGATION_INSERT, "Vitamin D can reduce fracture risk in older women.",
     "Vitamin D cannot reduce fracture risk in older women."),
    (K.NEGATION_REMOVE, "Statin use was not associated with mortality in older patients.",
     "Statin use was associated with mortality in older patients."),
    (K.NEGATION_REMOVE, "Aspirin did not reduce the incidence of stroke in the trial.",
     "Aspirin reduced the incidence of stroke in the trial."),
    (K.NEGATION_REMOVE, "There was no significant difference between the two groups.",
     "There was a significant difference between the two groups."),
    (K.NEGATION_REMOVE, "No differences were found between the treated and control groups.",
     "Differences were found between the treated and control groups."),
    (K.NEGATION_REMOVE, "The effect of the drug on mortality was non-significant in the elderly.",
     "The effect of the drug on mortality was significant in the elderly."),
]  # fmt: skip

IMPOSSIBLE = [  # sentences a kind must leave alone, and why
    (K.ITEM_SWAP, "Doses of 10-20 mg were given to the older patients."),  # a range
    (K.ITEM_SWAP, "The mean age was 54.2 \u00b1 3.1 years in the whole cohort."),  # mean, spread
    (K.ITEM_SWAP, "In total 312 of 1,200 patients developed sepsis after surgery."),  # count, total
    (K.NEGATION_INSERT, "Statin use was not associated with mortality in older patients."),
    (K.NEGATION_INSERT, "We sought to determine whether statin use is associated with death."),
    (K.NEGATION_INSERT, "The increased risk persisted in all subgroups of the cohort."),
    (K.NEGATION_REMOVE, "The drug not only lowered blood pressure but also reduced mortality."),
]


@pytest.mark.parametrize(("kind", "text", "expected"), EXACT)
def test_a_hand_written_sentence_gets_its_one_change(
    kind: PerturbKind, text: str, expected: str
) -> None:
    pair = one(text, kind)
    assert pair.hypothesis == expected
    check_pair(pair, text)


@pytest.mark.parametrize(("kind", "text"), IMPOSSIBLE)
def test_a_change_that_would_not_flip_the_sentence_is_not_made(
    kind: PerturbKind, text: str
) -> None:
    assert perturb_passage(text, rng=random.Random(0), kinds={kind}) == ()


def test_item_swap_takes_neighbouring_items_of_a_list() -> None:
    text = "Tensile strength was 320 MPa for steel, 110 MPa for titanium and 45 MPa for aluminium."
    made = {one(text, K.ITEM_SWAP, seed) for seed in range(10)}
    assert {p.hypothesis for p in made} == {
        "Tensile strength was 110 MPa for steel, 320 MPa for titanium and 45 MPa for aluminium.",
        "Tensile strength was 320 MPa for steel, 45 MPa for titanium and 110 MPa for aluminium.",
    }
    assert {p.hypothesis[slice(*p.changed_span)] for p in made} == {
        "110 MPa for steel, 320",
        "45 MPa for titanium and 110",
    }


def test_aim_restates_the_finding_as_an_aim_in_the_premise() -> None:
    text = (
        "Cardiovascular disease is common. "
        "Statin use was associated with lower mortality in older patients. More work is needed."
    )
    finding = "Statin use was associated with lower mortality in older patients."
    aims = {one(text, K.AIM, seed).premise for seed in range(30)}
    body = "statin use was associated with lower mortality in older patients"
    assert aims == {text.replace(finding, f"{opening}{body}.") for opening in AIM_OPENINGS}
    pair = one(text, K.AIM)
    assert pair.hypothesis == pair.original == finding and pair.label is NliLabel.NO_EVIDENCE


def test_the_unchanged_pair_is_the_sentence_the_other_kinds_changed() -> None:
    text = (
        "Statin use was associated with 12% lower mortality in older patients. "
        "The cohort included people from many regions across the whole country. "
        "Readmission: 30%."
    )
    changed_sentence = "Statin use was associated with 12% lower mortality in older patients."
    for seed in range(10):
        pairs = perturb_passage(text, source="s", rng=random.Random(seed))
        assert [p.kind for p in pairs] == [K.UNCHANGED, K.NUMBER_SWAP, K.NUMBER_CHANGE,
                                           K.NEGATION_INSERT, K.AIM]  # fmt: skip
        assert {p.original for p in pairs} == {changed_sentence}
        assert pairs[0].hypothesis == changed_sentence and pairs[0].label is NliLabel.SUPPORT


def test_short_sentences_titles_and_long_sentences_are_skipped() -> None:
    text = "Statin use and mortality in older patients of the cohort\n\nIt was 12%. Short one."
    assert perturb_passage(text, rng=random.Random(0)) == ()
    long = "Statin use was associated with lower mortality " + "and more " * 30 + "in patients."
    assert perturb_passage(long, rng=random.Random(0)) == ()


def test_every_kind_on_real_abstracts_changes_only_where_it_should() -> None:
    made: set[PerturbKind] = set()
    for doc_id, text in scifact_abstracts(REAL_IDS).items():
        for seed in range(4):
            pairs = perturb_passage(text, source=doc_id, rng=random.Random(seed))
            assert len({p.kind for p in pairs}) == len(pairs)
            for pair in pairs:
                assert pair.source == doc_id
                check_pair(pair, text)
                made.add(pair.kind)
    assert made == set(PerturbKind)


def test_sample_pairs_is_deterministic_capped_and_spread_over_passages() -> None:
    passages = list(scifact_abstracts(REAL_IDS).items())
    pairs = sample_pairs(passages, n_per_kind=3, seed=7)
    assert pairs == sample_pairs(iter(passages), n_per_kind=3, seed=7)
    by_kind: dict[PerturbKind, list[str]] = {}
    for pair in pairs:
        by_kind.setdefault(pair.kind, []).append(pair.source)
    assert set(by_kind) == set(PerturbKind)
    for sources in by_kind.values():
        assert len(sources) == len(set(sources)) <= 3  # one pair of a kind per passage
    assert len(by_kind[K.UNCHANGED]) == 3
    assert sample_pairs(passages, n_per_kind=0, seed=7) == ()
