"""Author-year citations, bibliographies and BibTeX of cited entries (issue 43): citeproc-py
with the APA 7th edition CSL style, checked against the strings APA prescribes for these
entries; the cited entries' BibTeX read back unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifai_desktop.citations import (
    Citer,
    answer_html,
    answer_markdown,
    cited_bibtex,
    printed_page,
)
from verifai_desktop.domain import (
    Answer,
    AnswerSentence,
    ChunkId,
    DocId,
    Location,
    LocationKind,
    Passage,
    SentenceLabel,
)
from verifai_desktop.errors import SettingsError
from verifai_desktop.ingest.bibtex import read_bibtex
from verifai_desktop.settings import CitationSettings

LIBRARY = Path(__file__).resolve().parents[1] / "data" / "library" / "docs_clean.bib"


def _passage(path: str, page: int, key: str | None) -> Passage:
    refs = {e.reference.key: e.reference for e in read_bibtex(LIBRARY)}
    return Passage(
        chunk_id=ChunkId(page),
        doc_id=DocId(1),
        path=Path(path),
        title="t",
        text="Some text.",
        char_start=0,
        char_end=10,
        location=Location(LocationKind.PAGE, page),
        sentence_spans=((0, 10),),
        reference=refs[key] if key else None,
    )


@pytest.fixture
def passages() -> tuple[Passage, ...]:
    return (
        _passage("/d/acl2020_specter.pdf", 3, "cohan2020specter"),
        _passage("/d/notes.pdf", 2, None),
        _passage("/d/int_psychogeriatrics_2014.pdf", 149, "sundstrom2014stressful"),
        _passage("/d/acl2020_specter.pdf", 5, "cohan2020specter"),
    )


def test_apa_in_text_citations_and_file_names_without_an_entry(
    passages: tuple[Passage, ...],
) -> None:
    citer = Citer(passages, CitationSettings())
    assert citer.label(passages[0]) == "Cohan et al., 2020, p. 3"
    assert citer.label(passages[1]) == "notes.pdf, p. 2"
    assert citer.label(passages[2]) == "Sundström et al., 2014, p. 149"
    assert citer.cite([1, 3]) == "(Cohan et al., 2020, p. 3; Sundström et al., 2014, p. 149)"
    assert citer.text("SPECTER embeds papers [1, 2]. It works [4].") == (
        "SPECTER embeds papers (Cohan et al., 2020, p. 3; notes.pdf, p. 2). "
        "It works (Cohan et al., 2020, p. 5)."
    )
    numeric = Citer(passages, CitationSettings(style="numeric"))
    assert numeric.text("It works [1, 2].") == "It works [1, 2]."
    assert numeric.label(passages[0]) == "acl2020_specter.pdf, p. 3"


def test_apa_bibliography_in_text_markdown_and_html(passages: tuple[Passage, ...]) -> None:
    citer = Citer(passages, CitationSettings())
    assert citer.bibliography(passages) == [
        "Cohan, A., Feldman, S., Beltagy, I., Downey, D., & Weld, D. S. (2020). SPECTER: "
        "Document-level Representation Learning using Citation-informed Transformers. "
        "Proceedings of the 58th Annual Meeting of the Association for Computational "
        "Linguistics, 2270\u20132282. https://doi.org/10.18653/v1/2020.acl-main.207",
        "Sundström, A., Rönnlund, M., Adolfsson, R., & Nilsson, L.-G. (2014). Stressful life "
        "events are not associated with the development of dementia. International "
        "Psychogeriatrics, 26(1), 147\u2013154. https://doi.org/10.1017/S1041610213001804",
    ]
    markdown = citer.bibliography(passages[2:3], "markdown")
    assert markdown == [
        "Sundström, A., Rönnlund, M., Adolfsson, R., & Nilsson, L.-G. (2014). Stressful life "
        "events are not associated with the development of dementia. *International "
        "Psychogeriatrics*, *26*(1), 147\u2013154. https://doi.org/10.1017/S1041610213001804"
    ]
    assert citer.bibliography(passages[1:2]) == []


def test_exports_cite_author_year_and_end_with_references(
    passages: tuple[Passage, ...],
) -> None:
    text = "SPECTER embeds papers [1]."
    sentence = AnswerSentence(text, 0, len(text), (1,), (), SentenceLabel.SUPPORTED)
    answer = Answer("What is SPECTER?", text, (sentence,), passages[:2])
    md = answer_markdown(answer)
    assert "SPECTER embeds papers (Cohan et al., 2020, p. 3)." in md
    assert md.endswith(
        "## References\n\nCohan, A., Feldman, S., Beltagy, I., Downey, D., & Weld, D. S. (2020)."
        " SPECTER: Document-level Representation Learning using Citation-informed Transformers."
        " *Proceedings of the 58th Annual Meeting of the Association for Computational "
        "Linguistics*, 2270\u20132282. https://doi.org/10.18653/v1/2020.acl-main.207\n"
    )
    page = answer_html(answer)
    assert "(Cohan et al., 2020, p. 3)" in page
    assert page.index("(Cohan et al., 2020, p. 3)") < page.index("<h2>References</h2>")
    assert page.index("<h2>References</h2>") < page.index("</body>")


def test_cited_entries_bibtex_round_trip(passages: tuple[Passage, ...], tmp_path: Path) -> None:
    bibtex = cited_bibtex(passages)
    originals = {e.reference: e for e in read_bibtex(LIBRARY)}
    by_key = {ref.key: ref for ref in originals}
    # The original entries, unchanged, each once, in order of first citation.
    assert bibtex == (
        by_key["cohan2020specter"].bibtex + "\n\n" + by_key["sundstrom2014stressful"].bibtex + "\n"
    )
    written = tmp_path / "cited.bib"
    written.write_text(bibtex, encoding="utf-8")
    again = read_bibtex(written)
    assert [e.reference.key for e in again] == ["cohan2020specter", "sundstrom2014stressful"]
    assert [e.reference.csl_json for e in again] == [
        by_key["cohan2020specter"].csl_json,
        by_key["sundstrom2014stressful"].csl_json,
    ]


def test_a_style_that_does_not_exist_is_a_settings_error(passages: tuple[Passage, ...]) -> None:
    with pytest.raises(SettingsError, match="no CSL style named 'nope'"):
        Citer(passages, CitationSettings(csl_style="nope"))


def test_a_pdf_page_is_cited_by_the_number_printed_on_it(shared_data: Path) -> None:
    """Page 3 of the file is page 149 of the journal (the PDF's page labels); the app still
    opens page 3. A PDF whose labels count from 0, and one without labels, keep the file's
    page."""
    clean = shared_data / "docs" / "clean"
    article = next(clean.rglob("int_psychogeriatrics_2014.pdf"))
    citer = Citer((_passage(str(article), 3, "sundstrom2014stressful"),), CitationSettings())
    assert citer.label(citer.passages[0]) == "Sundström et al., 2014, p. 149"
    assert printed_page(article, 3) == "149"
    assert (
        printed_page(next(clean.rglob("bmc_health_serv_res_2014_quality_improvement.pdf")), 3)
        is None
    )
    assert printed_page(next(clean.rglob("acl2020_specter.pdf")), 3) is None
    assert printed_page(clean / "missing.pdf", 3) is None
