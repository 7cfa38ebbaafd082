"""Reference libraries as sources (issue 43): BibTeX (JabRef's own example file and the hand-
written metadata of docs/clean), the ``file`` field as Zotero, Better BibTeX, JabRef and
Mendeley write it, CSL-JSON, and a Zotero data folder built from Zotero's schema, read while
another connection holds Zotero's exclusive lock."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN
from tests.unit.ingest.zotero_db import build_zotero
from verifai_desktop.errors import ParseError
from verifai_desktop.ingest.bibtex import file_field_paths, read_bibtex, read_csl_json
from verifai_desktop.ingest.library import is_library, library_root, read_library
from verifai_desktop.ingest.zotero import read_zotero

LIBRARY = Path(__file__).resolve().parents[2] / "data" / "library"
SPECTER = DOCS_CLEAN / "acl2020_specter.pdf"
S2ORC = DOCS_CLEAN / "acl2020_s2orc.pdf"


@pytest.mark.parametrize(
    ("value", "paths"),
    [
        # Zotero's own BibTeX export: description:path:mime, ';' between attachments.
        (
            "Full Text PDF:files/12/Cohan - 2020.pdf:application/pdf;"
            "Snapshot:files/13/page.html:text/html",
            ["files/12/Cohan - 2020.pdf", "files/13/page.html"],
        ),
        # Better BibTeX: plain absolute paths.
        (
            "/home/u/Zotero/storage/AB12CD34/a.pdf;/home/u/Zotero/storage/EF56/b.pdf",
            ["/home/u/Zotero/storage/AB12CD34/a.pdf", "/home/u/Zotero/storage/EF56/b.pdf"],
        ),
        # JabRef: escaped colon and backslashes of a Windows path.
        (":C\\:\\\\papers\\\\x.pdf:PDF", ["C:\\papers\\x.pdf"]),
        # Mendeley: $\backslash$ for the Windows backslash, leading '/' dropped on Linux.
        (":C$\\backslash$:/Users/p/x.pdf:pdf", ["C:/Users/p/x.pdf"]),
        (":home/p/Mendeley Desktop/x.pdf:pdf", ["home/p/Mendeley Desktop/x.pdf"]),
        ("HKO2007.pdf:HKO2007.pdf:PDF", ["HKO2007.pdf"]),
        ("", []),
    ],
)
def test_file_field_paths_of_each_reference_manager(value: str, paths: list[str]) -> None:
    assert file_field_paths(value) == paths


def test_jabref_example_file_entries_metadata_and_refusals(tmp_path: Path) -> None:
    bib = tmp_path / "jabref.bib"
    shutil.copy(LIBRARY / "jabref-pdf-field-upgrade.bib", bib)
    # JabRef's own test file names these attachments relative to the .bib file.
    fen_pdf = tmp_path / "Fen2010 - From the Resource to the Business Process Risk Level.pdf"
    shutil.copy(SPECTER, fen_pdf)
    entries = read_bibtex(bib)
    assert [e.reference.key for e in entries] == ["Fen2010", "HKO2007", "LVOS2009"]
    fen, hko, lvos = entries
    assert fen.files == (fen_pdf,)
    assert fen.reason == ""
    assert (fen.reference.authors, fen.reference.year) == (("Fenz",), 2010)
    assert fen.reference.title == "From the Resource to the Business Process Risk Level"
    assert fen.reference.item()["page"] == "100-109"
    assert fen.reference.bibtex.startswith("@InProceedings{Fen2010,\n  Title")
    assert hko.files == ()
    missing = tmp_path / "HKO2007.pdf"
    assert hko.reason == f"entry 'HKO2007' of jabref.bib: attached file {missing} not found"
    assert lvos.reason == (
        "entry 'LVOS2009' of jabref.bib: only a web link (http://www.informatik.hu-berlin.de/"
        "top/download/publications/LohmannVOS2008_ijbpim.pdf), no file on this computer"
    )
    assert lvos.reference.item()["DOI"] == "10.1504/IJBPIM.2009.026986"
    assert lvos.reference.authors == ("Lohmann", "Verbeek", "Ouyang", "Stahl")
    assert lvos.source == f"{bib}#LVOS2009"


def test_docs_clean_bib_points_at_every_paper_with_real_metadata() -> None:
    entries = read_library(LIBRARY / "docs_clean.bib")
    assert len(entries) == 11
    assert all(e.reason == "" and len(e.files) == 1 and e.files[0].is_file() for e in entries)
    by_key = {e.reference.key: e.reference for e in entries}
    specter = by_key["cohan2020specter"]
    assert specter.authors == ("Cohan", "Feldman", "Beltagy", "Downey", "Weld")
    assert specter.title.startswith("SPECTER: Document-level")
    assert by_key["sundstrom2014stressful"].authors[:2] == ("Sundström", "Rönnlund")
    assert by_key["ammar2018literature"].item()["author"][21] == {
        "family": "van Zuylen",
        "given": "Madeleine",
    }


def test_bibtex_accents_organisations_and_a_broken_entry(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@string{acl = {Proceedings of ACL}}\n"
        "@inproceedings{who2021,\n"
        '  author = {{World Health Organization} and M{\\"u}ller, J{\\"o}rg},\n'
        "  title = {Caf\\'e {DNA}}, booktitle = acl, date = {2021-05-03},\n}\n"
        "@article{broken,\n  author = {x\n",
        encoding="utf-8",
    )
    who, broken = read_bibtex(bib)
    item = who.reference.item()
    assert item["author"] == [
        {"literal": "World Health Organization"},
        {"family": "Müller", "given": "Jörg"},
    ]
    assert (item["title"], item["container-title"]) == ("Café DNA", "Proceedings of ACL")
    assert item["issued"] == {"date-parts": [[2021, 5]]}
    assert who.reason == "entry 'who2021' of refs.bib: no file attached"
    assert broken.reason == "entry at line 6 of refs.bib is not valid BibTeX"


def test_a_file_that_is_not_bibtex_is_a_parse_error(tmp_path: Path) -> None:
    bib = tmp_path / "empty.bib"
    bib.write_text("just text, no entries\n", encoding="utf-8")
    with pytest.raises(ParseError, match="no BibTeX entry in the file"):
        read_bibtex(bib)


def test_csl_json_items_with_a_file(tmp_path: Path) -> None:
    shutil.copy(SPECTER, tmp_path / "specter.pdf")
    path = tmp_path / "refs.json"
    items = [
        {
            "id": "cohan2020",
            "type": "paper-conference",
            "title": "SPECTER",
            "author": [{"family": "Cohan", "given": "Arman"}],
            "issued": {"date-parts": [[2020]]},
            "file": "specter.pdf",
        },
        {"id": "nofile", "type": "book", "title": "No file"},
    ]
    path.write_text(json.dumps(items), encoding="utf-8")
    assert is_library(path)
    first, second = read_csl_json(path)
    assert first.files == (tmp_path / "specter.pdf",)
    assert "file" not in first.reference.item()
    assert first.reference.bibtex == (
        "@inproceedings{cohan2020,\n  title = {SPECTER},\n  author = {Cohan, Arman},\n"
        "  year = {2020},\n}"
    )
    assert second.reason == "entry 'nofile' of refs.json: no file attached"
    path.write_text('{"not": "csl"}', encoding="utf-8")
    with pytest.raises(ParseError, match="not CSL-JSON"):
        read_csl_json(path)


@pytest.fixture
def zotero(tmp_path: Path) -> Path:
    return build_zotero(tmp_path / "Zotero", SPECTER, S2ORC)


def test_zotero_items_creators_dates_and_attachments(zotero: Path) -> None:
    assert is_library(zotero) and is_library(zotero / "zotero.sqlite")
    assert library_root(zotero / "zotero.sqlite") == zotero.resolve()
    entries = read_zotero(zotero)
    assert [e.reference.key for e in entries] == ["AAAA1111", "BBBB2222", "CCCC3333"]
    specter, s2orc, book = entries
    assert specter.files == (zotero / "storage" / "PDF11111" / "paper.pdf",)
    assert specter.reference.item() == {
        "id": "AAAA1111",
        "type": "article-journal",
        "title": "SPECTER: Document-level Representation Learning",
        "container-title": "Proceedings of ACL",
        "DOI": "10.18653/v1/2020.acl-main.207",
        "issued": {"date-parts": [[2020, 7]]},
        "author": [
            {"family": "Cohan", "given": "Arman"},
            {"family": "Feldman", "given": "Sergey"},
        ],
    }
    assert s2orc.files == (S2ORC,)
    assert (book.files, book.reason) == ((), "entry 'CCCC3333' of zotero.sqlite: no file attached")


def test_zotero_collection_takes_in_its_subcollections(zotero: Path) -> None:
    assert [e.reference.key for e in read_zotero(zotero, collection="Thesis")] == [
        "AAAA1111",
        "BBBB2222",
    ]
    assert [e.reference.key for e in read_zotero(zotero, collection="Chapter 2")] == ["BBBB2222"]
    with pytest.raises(ParseError, match="no Zotero collection named 'Nope'"):
        read_zotero(zotero, collection="Nope")


def test_zotero_database_is_read_while_zotero_holds_its_lock(zotero: Path) -> None:
    database = zotero / "zotero.sqlite"
    before = database.read_bytes()
    zotero_app = sqlite3.connect(str(database), isolation_level=None)
    zotero_app.execute("PRAGMA locking_mode=EXCLUSIVE")
    zotero_app.execute("BEGIN EXCLUSIVE")  # as Zotero holds it while it runs
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            sqlite3.connect(str(database), timeout=0.1).execute("SELECT 1 FROM items").fetchall()
        assert len(read_zotero(zotero)) == 3
    finally:
        zotero_app.execute("ROLLBACK")
        zotero_app.close()
    assert database.read_bytes() == before  # never written
    assert sorted(p.name for p in zotero.iterdir()) == ["storage", "zotero.sqlite"]
