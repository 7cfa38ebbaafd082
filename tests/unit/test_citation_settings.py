"""The ``[citations]`` settings (issue 43): checked when settings are read; followed by the
exports, the claim check's Markdown/HTML and ``verifai search`` (author-year where a document
came from a reference library, the file name where it did not; numbers throughout when the
style is numeric)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN
from tests.unit.test_citations import _passage
from verifai_desktop.answer_files import write_answer
from verifai_desktop.check_view import check_to_html, check_to_markdown, write_check
from verifai_desktop.cli import main
from verifai_desktop.cli.check_cmd import render_check
from verifai_desktop.domain import (
    Answer,
    AnswerSentence,
    CheckResult,
    DocumentVerdict,
    Evidence,
    NliLabel,
    SentenceLabel,
    Verdict,
)
from verifai_desktop.errors import SettingsError
from verifai_desktop.settings import CitationSettings, Settings, load_settings, save_settings


def test_load_settings_checks_the_citation_style(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('[citations]\nstyle = "numeric"\ncsl_style = "chicago-author-date"\n')
    assert load_settings(path).citations == CitationSettings("numeric", "chicago-author-date")
    path.write_text('[citations]\nstyle = "harvard"\n')
    with pytest.raises(SettingsError, match=r"citations\.style.*author-year, numeric"):
        load_settings(path)
    path.write_text('[citations]\ncsl_style = "no-such-style"\n')
    with pytest.raises(SettingsError, match=r"citations\.csl_style.*no CSL style named"):
        load_settings(path)
    path.write_text(f'[citations]\ncsl_style = "{tmp_path / "mine.csl"}"\n')
    with pytest.raises(SettingsError, match=r"mine\.csl does not exist"):
        load_settings(path)
    assert load_settings(tmp_path / "none.toml").citations == CitationSettings()


def _answer() -> Answer:
    passages = (
        _passage("/d/acl2020_specter.pdf", 3, "cohan2020specter"),
        _passage("/d/notes.pdf", 2, None),
    )
    text = "SPECTER embeds papers [1, 2]."
    sentence = AnswerSentence(
        text=text,
        char_start=0,
        char_end=len(text),
        citations=(1, 2),
        verdicts=(),
        label=SentenceLabel.SUPPORTED,
    )
    return Answer(question="q", text=text, sentences=(sentence,), passages=passages)


def test_exports_follow_the_citation_settings(tmp_path: Path) -> None:
    answer = _answer()
    md = write_answer(answer, tmp_path / "a.md").read_text(encoding="utf-8")
    assert "(Cohan et al., 2020, p. 3; notes.pdf, p. 2)" in md and "## References" in md
    numeric = CitationSettings(style="numeric")
    md = write_answer(answer, tmp_path / "n.md", citations=numeric).read_text(encoding="utf-8")
    assert "papers [1, 2]" in md and "References" not in md
    html = write_answer(answer, tmp_path / "n.html", citations=numeric).read_text("utf-8")
    assert "Cohan et al." not in html


def _check() -> CheckResult:
    cited, plain = (
        _passage("/d/acl2020_specter.pdf", 3, "cohan2020specter"),
        _passage("/d/notes.pdf", 2, None),
    )
    verdict = Verdict(1, NliLabel.SUPPORT, 0.9, 0.05, 0.05, "Some text.", (0, 10))
    found = (Evidence(cited, verdict), Evidence(plain, verdict))
    docs = tuple(
        DocumentVerdict(ev.passage.doc_id, ev.passage.path, "t", "SUPPORT", ev) for ev in found
    )
    return CheckResult("SPECTER embeds papers.", found, (), docs, 2)


def test_claim_checks_name_sources_author_year(tmp_path: Path) -> None:
    result = _check()
    md = check_to_markdown(result)
    assert "1. Cohan et al., 2020, p. 3 — t" in md and "2. notes.pdf, p. 2 — t" in md
    assert "<b>Cohan et al., 2020, p. 3</b>" in check_to_html(result)
    numeric = CitationSettings(style="numeric")
    assert "1. acl2020_specter.pdf, p. 3 — t" in check_to_markdown(result, numeric)
    written = write_check(result, tmp_path / "c.md", citations=numeric)
    assert "Cohan et al." not in written.read_text(encoding="utf-8")


def test_verifai_check_prints_sources_author_year(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one line per passage
    result = _check()
    render_check(result)
    lines = capsys.readouterr().out.splitlines()
    assert "  supports     Cohan et al., 2020, p. 3 — t" in lines
    assert "  supports     notes.pdf — t" in lines  # a document without an entry: its file
    passages = [line for line in lines if " S=0.90 " in line]
    assert passages == [
        "  Cohan et al., 2020, p. 3  S=0.90 C=0.05 N=0.05: “Some text.”",
        "  notes.pdf, p. 2  S=0.90 C=0.05 N=0.05: “Some text.”",
    ]
    render_check(result, CitationSettings(style="numeric"))
    out = capsys.readouterr().out
    assert "  acl2020_specter.pdf, p. 3  S=0.90" in out and "Cohan et al." not in out


def test_search_names_library_documents_author_year(
    tmp_path: Path, fake_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(fake_settings)
    shutil.copy(DOCS_CLEAN / "deep_rules_02_intro.md", tmp_path / "intro.md")
    shutil.copy(DOCS_CLEAN / "scifact_covid_claims.txt", tmp_path / "claims.txt")
    bib = tmp_path / "library.bib"
    bib.write_text(
        "@article{lee2024md, author = {Lee, Ada and Smith, Bo}, title = {Deep Rules},"
        " journal = {Notes}, year = {2024}, file = {intro.md}}\n",
        encoding="utf-8",
    )
    assert main(["ingest", str(bib), str(tmp_path / "claims.txt"), "-c", "lib"]) == 0
    capsys.readouterr()
    assert main(["search", "author:lee deep learning", "-c", "lib", "--mode", "lexical"]) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if ".md" in r or ".txt" in r]
    assert rows and all("(Lee & Smith, 2024)  intro.md" in r for r in rows)
    assert main(["search", "covid", "-c", "lib", "--mode", "lexical", "-k", "50"]) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if "claims.txt" in r]
    assert rows and not any("(" in r.split("claims.txt")[0] for r in rows)
    save_settings(replace(fake_settings, citations=CitationSettings(style="numeric")))
    assert main(["search", "author:lee", "-c", "lib", "--mode", "lexical"]) == 0
    assert "Lee & Smith" not in capsys.readouterr().out
