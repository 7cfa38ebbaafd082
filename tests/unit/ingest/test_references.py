"""Reference lists: the citation-entry scorer on real lines, the classifier on real papers.

Every sentence below is copied from a document in ``shared/data/docs/clean`` as the parser
and sentence splitter give it (line breaks included).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from tests.conftest import DOCS_CLEAN
from verifai_desktop.domain import Chunk
from verifai_desktop.ingest.chunking import chunk_document
from verifai_desktop.ingest.parse import parse_file
from verifai_desktop.ingest.references import (
    SECTION_SHARE,
    STANDALONE_SHARE,
    citation_share,
    heading_path_is_references,
    is_reference_heading,
    looks_like_citation,
    reference_flags,
    tag_references,
)

CITATION_SENTENCES = (
    # BMC / Vancouver (bmc_trauma_2010_dvt_prophylaxis_review.pdf)
    "Geerts WH, Jay RM, Code KI, Chen E, Szalai JP, Saibil EA, Hamilton PA: A\ncomparison of "
    "low-dose heparin with low-molecular-weight heparin as\nprophylaxis against venous "
    "thromboembolism after major trauma.",
    "N\nEngl J Med 1996, 335:701-7.",
    "J Lab\nClin Med 1996, 128:376-83.",
    "Warkentin TE, Levine MN, Hirsh J, Horsewood P, Roberts RS, Gent M,\nKelton JG: "
    "Heparin-induced thrombocytopenia in patients treated with\nlow-molecular-weight heparin or "
    "unfractionated heparin.",
    # Biochemical Society (clin_sci_2014_fragment_based_design.pdf)
    "Natesh, R., Schwager, S. L., Sturrock, E. D. and Acharya, K. R.",
    "Nature 421, 551\u2013554\n6",
    "J. Mol.",
    "Biol.",
    # ACL (acl2020_specter.pdf)
    "Alexis Conneau, Douwe Kiela, Holger Schwenk, Lo¨\u0131c\nBarrault, and Antoine Bordes.",
    "In EMNLP.",
    "BMC Bioinformatics, 11:492\u2013492.",
    # JMLR (mlhc2017_futoma_gp_rnn_sepsis.pdf)
    "S. Hochreiter and J. Schmidhuber.",
    "Neural Computation, 9(8):1735\u201380,\n1997.",
    "AAAI, 2015.",
    "W. Hoiles and M. van der Schaar.",
    # ACM (arxiv_2203.00130_paper_plain_medical_papers.pdf)
    "Journal of Health Psychology 11 (2006), 269 \u2013 282.",
    # APA (int_psychogeriatrics_2014.pdf)
    "Paykel, E. (1997).",
    "Psychological Medicine, 27, 301\u2013310.",
    # PLOS / Manubot (ten_quick_tips_deep_learning_biology.docx)
    "Cho J, Lee K, Shin E, Choy G, Do S.",
    "doi:10.1109/jproc.2017.2761740",
    "2017;105: 2295\u20132329.",
    # PeerJ (peerj_cs_2017_vespa_evolutionary_analysis.pdf)
    "BMC Bioinformatics 5:113 DOI 10.1186/1471-2105-5-113.",
)

BODY_SENTENCES = (
    # in-text citations: numeric ranges, author-year, Pandoc keys
    "Without thromboprophylaxis, overall DVT rates\nexceed 50% [1-3].",
    "In studies involving non-trauma patients with permanent retrievable filters, filter "
    "migration occurred between\n3% and 8%, and IVC occlusion rates were reported\nbetween 4% "
    "and 15% [72-75,77,78].",
    "Pharmacologic anticoagulation using LMWHs is the\nrecommended primary thromboprophylaxis "
    "modality in\ntrauma patients.",
    "Thr496 is located on the border of the S2 and S1 subsites [6].",
    "Another related line of work is graphbased representation learning methods (Bruna et "
    "al.,\n2014; Kipf and Welling, 2017; Hamilton et al.,\n2017a,b; Wu et al., 2019a,b).",
    "4. SIF The SIF method of Arora et al. (2017) is",
    "Choudhury et al. [24]",
    "Participants reported liking the Key Questions for quickly finding\nand understanding "
    "relevant information (P2, 4, 7-10, 13, 18-20).",
    "In recent years, the number of projects and publications implementing deep learning in "
    "biology has risen tremendously [@doi:10.1089/omi.2018.0097; "
    "@doi:10.1007/978-981-15-3383-9_54; @doi:10.3390/info11040193].",
    # a solvent ratio is not volume:pages
    "The residue was purified by silica\ngel chromatography using dichloromethane/isopropanol "
    "(95:5)\nas eluent and yielded a mixture of diastereoisomers.",
    # one-word headings with a full stop are not journal abbreviations
    "Results.",
    "Discussion.",
)


@pytest.mark.parametrize("sentence", CITATION_SENTENCES)
def test_real_citation_fragments_look_like_citations(sentence: str) -> None:
    assert looks_like_citation(sentence)


@pytest.mark.parametrize("sentence", BODY_SENTENCES)
def test_real_body_sentences_do_not(sentence: str) -> None:
    assert not looks_like_citation(sentence)


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("References", True),
        ("REFERENCES", True),
        ("7. References", True),
        ("VII References", True),
        ("Bibliography", True),
        ("Literature Cited", True),
        ("Works cited", True),
        ("Reference list", True),
        ("References and notes", True),
        ("Reference", False),  # a table column in acl2020_s2orc.pdf
        ("references:", False),  # a YAML key in pandoc_MANUAL.txt
        ("The references were screened by two reviewers", False),
        ("Methods", False),
    ],
)
def test_reference_headings(heading: str, expected: bool) -> None:
    assert is_reference_heading(heading) is expected


def test_heading_paths() -> None:
    assert heading_path_is_references("Ten Quick Tips for Deep Learning in Biology > References")
    assert heading_path_is_references("Paper > Bibliography > Books")
    assert not heading_path_is_references("Data > Claims > Explanation of cited_doc_ids")
    assert not heading_path_is_references("")


def _chunks(name: str, count_tokens: Callable[[str], int]) -> tuple[Chunk, ...]:
    doc = parse_file(DOCS_CLEAN / name)
    return chunk_document(doc, count_tokens=count_tokens, max_tokens=256)


# Hand-checked on the chunks of these files (all-MiniLM-L6-v2 chunking, 256 word pieces): the
# reference-list chunks, in chunk ordinals. Everything else is body text, front matter, page
# footers, publisher boilerplate or an appendix, and must not be flagged.
HAND_CHECKED = {
    # Vancouver list after "References"; the last chunk is BioMed Central's advertisement.
    "bmc_trauma_2010_dvt_prophylaxis_review.pdf": (34, [*range(9, 33)]),
    # "REFERENCES" with a copyright footer (47) inside; a supplement with its own list (93-94)
    # after chemistry (63-91) whose ratios and NMR data are not citations.
    "clin_sci_2014_fragment_based_design.pdf": (95, [*range(39, 47), *range(48, 60), 93, 94]),
    # ACL style with the appendix (59-66) after the list.
    "acl2020_specter.pdf": (67, [*range(45, 59)]),
    # DOCX: the "References" heading path.
    "ten_quick_tips_deep_learning_biology.docx": (89, [*range(58, 89)]),
    # Markdown with Pandoc in-text citation keys ([@doi:...]) and no reference list.
    "deep_rules_03_when_to_use_dl.md": (13, []),
}


@pytest.mark.parametrize("name", sorted(HAND_CHECKED))
def test_reference_chunks_of_real_documents(name: str, count_tokens: Callable[[str], int]) -> None:
    chunks = tag_references(_chunks(name, count_tokens))
    n_chunks, expected = HAND_CHECKED[name]
    assert len(chunks) == n_chunks
    assert [c.ordinal for c in chunks if c.is_reference] == expected
    # the tag is the classifier's verdict and the chunks are otherwise unchanged
    assert [dataclasses.replace(c, is_reference=False) for c in chunks] == list(
        _chunks(name, count_tokens)
    )


def test_heparin_paper_body_and_references(count_tokens: Callable[[str], int]) -> None:
    """The issue's example: the reference list of the heparin review outranked its body text."""
    chunks = tag_references(_chunks("bmc_trauma_2010_dvt_prophylaxis_review.pdf", count_tokens))
    by_phrase = {
        phrase: [c.is_reference for c in chunks if phrase in " ".join(c.text.split())]
        for phrase in (
            "J Lab Clin Med 1996, 128:376-83.",
            "Warkentin TE, Levine MN, Hirsh J",
            "The risks of heparin include bleeding and heparin induced thrombocytopenia.",
            "In this review we calculated the risk of bleeding and HIT to be 3.9% and 0.7%",
        )
    }
    assert by_phrase == {  # a sentence of chunk overlap can put a phrase in two chunks
        "J Lab Clin Med 1996, 128:376-83.": [True, True],
        "Warkentin TE, Levine MN, Hirsh J": [True],
        "The risks of heparin include bleeding and heparin induced thrombocytopenia.": [
            False,
            False,
        ],
        "In this review we calculated the risk of bleeding and HIT to be 3.9% and 0.7%": [False],
    }
    shares = [citation_share(c.text, c.sentence_spans) for c in chunks]
    assert max(s for s, c in zip(shares, chunks, strict=True) if not c.is_reference) < (
        SECTION_SHARE
    )


def test_a_list_without_heading_needs_the_standalone_share() -> None:
    """Outside a reference section only a chunk made mostly of entries is flagged."""
    entries = "\n".join(CITATION_SENTENCES)
    body = "\n".join(BODY_SENTENCES[:4])
    assert citation_share(entries) >= STANDALONE_SHARE
    assert citation_share(body) == 0.0
    assert reference_flags([(body, "", None), (entries, "", None), (body, "", None)]) == (
        False,
        True,
        False,
    )


def test_a_reference_section_ends_after_two_body_chunks() -> None:
    """Under a "References" line the bar is lower; one body chunk (a page footer) does not end
    the section, two in a row do."""
    entries = "\n".join(CITATION_SENTENCES)
    body = "\n".join(BODY_SENTENCES[:4])
    mixed = "S. Hochreiter and J. Schmidhuber.\n" + BODY_SENTENCES[0]
    assert SECTION_SHARE <= citation_share(mixed) < STANDALONE_SHARE
    heading = (BODY_SENTENCES[0] + "\nReferences\n" + entries, "", None)
    assert reference_flags([heading, (body, "", None), (mixed, "", None)]) == (True, False, True)
    assert reference_flags(
        [heading, (mixed, "", None), (body, "", None), (body, "", None), (mixed, "", None)]
    ) == (True, True, False, False, False)


def test_heading_chunk_counts_only_when_the_list_fills_it() -> None:
    long_body = "\n".join(BODY_SENTENCES[:3] * 3)
    entries = "\n".join(CITATION_SENTENCES[:3])
    assert reference_flags([(long_body + "\nReferences\n" + entries, "", None)]) == (False,)
    assert reference_flags([(BODY_SENTENCES[0] + "\nREFERENCES\n" + entries, "", None)]) == (True,)


def test_heading_path_flags_whatever_the_text() -> None:
    """DOCX/MD/EPUB: a chunk under a "References" heading is a reference chunk even when its
    entries carry no cue (a bare title), and the next heading ends the section."""
    title_only = "Deep learning for computational biology."
    assert not looks_like_citation(title_only)
    assert reference_flags(
        [(title_only, "Paper > References", None), (title_only, "Paper > Appendix", None)]
    ) == (True, False)
