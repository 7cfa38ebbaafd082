"""A scientist's library end to end (issue 43): `verifai ingest library.bib` with two papers of
docs/clean (copies, beside a .bib of their real metadata taken from tests/data/library/
docs_clean.bib), then `verifai ask` with the real bundled embedder, generator and verifier cites
"(Cohan et al., 2020, p. N)", ends with the APA references, and `--bib` writes the cited
entries exactly as the .bib holds them; `verifai check` names the documents and passages it
found author-year too."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN
from tests.e2e.cli import run_verifai

pytestmark = pytest.mark.slow

LIBRARY = Path(__file__).resolve().parents[1] / "data" / "library" / "docs_clean.bib"
KEYS = {"cohan2020specter": "acl2020_specter.pdf", "lo2020s2orc": "acl2020_s2orc.pdf"}
QUESTION = "What does SPECTER use citations for?"
CLAIM = "SPECTER is pretrained on the citation graph."
NAMED = re.compile(r"(Cohan|Lo) et al\., 2020, p\. \d+")


def _entries(text: str) -> dict[str, str]:
    """The entries of a .bib text by key, each as written (from ``@`` to its closing brace)."""
    out = {}
    for chunk in re.split(r"\n(?=@)", text):
        m = re.match(r"@\w+\{([^,]+),", chunk.strip())
        if m:
            out[m.group(1)] = chunk.strip()
    return out


def _library(folder: Path) -> tuple[Path, dict[str, str]]:
    """A .bib of the two papers' real metadata, their files copied under ``pdfs/``."""
    (folder / "pdfs").mkdir(parents=True)
    entries = _entries(LIBRARY.read_text(encoding="utf-8"))
    kept = {}
    for key, name in KEYS.items():
        shutil.copy(DOCS_CLEAN / name, folder / "pdfs" / name)
        kept[key] = re.sub(
            r"file = \{[^}]*\}",
            f"file = {{Full Text PDF:pdfs/{name}:application/pdf}}",
            entries[key],
        )
    bib = folder / "library.bib"
    bib.write_text("\n\n".join(kept.values()) + "\n", encoding="utf-8")
    return bib, kept


def test_ask_cites_author_year_and_writes_the_cited_entries(tmp_path: Path) -> None:
    bib, entries = _library(tmp_path / "lib")
    ingest = run_verifai("ingest", str(bib), "-c", "papers")
    assert ingest.returncode == 0, ingest.stderr
    search = run_verifai("search", "author:cohan citations", "-c", "papers", "-k", "3")
    assert search.returncode == 0, search.stderr
    rows = [line for line in search.stdout.splitlines() if ".pdf" in line]
    assert rows and all("(Cohan et al., 2020, p. " in r for r in rows), search.stdout

    cited = tmp_path / "cited.bib"
    ask = run_verifai("ask", QUESTION, "-c", "papers", "--no-stream", "--bib", str(cited))
    assert ask.returncode == 0, ask.stderr
    out = ask.stdout
    assert re.search(r"\(Cohan et al\., 2020, p\. \d+", out), out
    assert "acl2020_specter.pdf, p." in out  # the sources list still names the file
    references = out.split("\nReferences\n", 1)[1]
    assert references.lstrip().startswith("Cohan, A., Feldman, S., Beltagy, I., Downey, D., & Weld")
    assert "https://doi.org/10.18653/v1/2020.acl-main.207" in references
    written = _entries(cited.read_text(encoding="utf-8"))
    assert "cohan2020specter" in written
    assert all(text == entries[key] for key, text in written.items())
    assert "cited entries written to" in ask.stderr


def test_check_names_documents_and_passages_author_year(tmp_path: Path) -> None:
    bib, _entries_kept = _library(tmp_path / "lib")
    ingest = run_verifai("ingest", str(bib), "-c", "papers")
    assert ingest.returncode == 0, ingest.stderr
    check = run_verifai("check", CLAIM, "-c", "papers")
    assert check.returncode == 0, check.stderr
    out = check.stdout
    documents = out.split("\nDocuments\n", 1)[1].split("\n\n", 1)[0].splitlines()
    named = [line for line in documents if line.startswith("  ") and " — " in line]
    assert len(named) == 2, out  # both papers, each by its entry, none by its file name
    assert all(NAMED.search(line) and ".pdf" not in line for line in named), out
    assert "Cohan et al., 2020, p." in " ".join(named)
    passages = [line for line in out.splitlines() if " S=" in line]
    assert passages and all(NAMED.match(line.strip()) for line in passages), out
