"""A reference library ingested into a collection (issue 43): entries' files indexed with
their metadata kept in the catalog, entries without a file listed with their reason, search by
``author:``/``year:``/``title:``, changed and removed entries taken in on the next run. Real
files parsed for real, the hashing fake embedder (control flow only)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import DOCS_CLEAN
from tests.unit.fakes import HashEmbedder
from verifai_desktop.domain import DocStatus
from verifai_desktop.retrieve import Retriever
from verifai_desktop.settings import RetrievalSettings, Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.library import LIBRARIES_KEY, ingest_sources
from verifai_desktop.store.writer import Outcome

BIB = """@article{lee2024md,
  author = {Lee, Ada and Smith, Bo},
  title = {Deep Rules Introduction},
  journal = {Notes}, year = {2024},
  file = {Full Text:sub/../intro.md:text/markdown},
}
@misc{wang2019claims,
  author = {Wang, Lucy Lu},
  title = {COVID claims},
  year = {2019},
  file = {/ABSOLUTE/claims.txt},
}
@book{nofile2001,
  author = {Nobody, Ann}, title = {Missing}, year = {2001},
}
"""


def _library(tmp_path: Path, bib_text: str = BIB) -> Path:
    shutil.copy(DOCS_CLEAN / "deep_rules_02_intro.md", tmp_path / "intro.md")
    (tmp_path / "sub").mkdir(exist_ok=True)  # the .bib names ../ paths through it
    shutil.copy(DOCS_CLEAN / "scifact_covid_claims.txt", tmp_path / "claims.txt")
    bib = tmp_path / "library.bib"
    bib.write_text(bib_text.replace("/ABSOLUTE", str(tmp_path)), encoding="utf-8")
    return bib


def test_bib_ingest_keeps_metadata_lists_refusals_and_searches_fields(
    tmp_path: Path, fake_settings: Settings, fake_embedder: HashEmbedder
) -> None:
    bib = _library(tmp_path)
    with Collection.open("lib", create=True, settings=fake_settings) as col:
        report = ingest_sources(col, [bib])
        assert [(Path(o.source).name, o.status) for o in report.outcomes] == [
            ("intro.md", Outcome.INDEXED),
            ("claims.txt", Outcome.INDEXED),
            ("library.bib#nofile2001", Outcome.FAILED),
        ]
        refused = col.document(f"{bib}#nofile2001")
        assert refused is not None and refused.status is DocStatus.FAILED
        assert refused.reason == "entry 'nofile2001' of library.bib: no file attached"
        assert refused.title == "Missing"
        refs = col.references_of(str(bib))
        assert sorted(r.key for r in refs.values()) == ["lee2024md", "nofile2001", "wang2019claims"]
        followed = col.metadata(LIBRARIES_KEY)
        assert list(followed) == [str(bib)]
        assert followed[str(bib)]["device"] == bib.stat().st_dev
        assert followed[str(bib)]["zotero_collection"] is None
        assert str(followed[str(bib)]["last_sync"]).endswith("+00:00")
        assert col.metadata("roots") in ({}, {"roots": []})  # the attachments are not roots

        retriever = Retriever(col, RetrievalSettings(k=50, mode="lexical"))
        lee = retriever.search("author:lee")
        assert lee and {p.path.name for p in lee} == {"intro.md"}
        assert all(p.reference is not None and p.reference.key == "lee2024md" for p in lee)
        assert {p.path.name for p in retriever.search("year:2018-2019")} == {"claims.txt"}
        assert {p.path.name for p in retriever.search('title:"covid claims" covid')} == {
            "claims.txt"
        }
        assert retriever.search("author:nobody") == ()
        hybrid = Retriever(col, RetrievalSettings(k=50, mode="hybrid"))
        assert {p.path.name for p in hybrid.search("author:wang covid")} == {"claims.txt"}

        # Unchanged: nothing written; an entry's metadata changed and another removed.
        again = ingest_sources(col, [bib])
        assert {o.status for o in again.outcomes} == {Outcome.SKIPPED}
        bib.write_text(
            _library(tmp_path)
            .read_text(encoding="utf-8")
            .replace("Lee, Ada", "Young, Ada")
            .split("@misc")[0],
            encoding="utf-8",
        )
        changed = ingest_sources(col, [bib])
        assert [(Path(o.source).name, o.status) for o in changed.outcomes] == [
            ("intro.md", Outcome.SKIPPED),
            ("claims.txt", Outcome.REMOVED),
            ("library.bib#nofile2001", Outcome.REMOVED),
        ]
        assert col.document(str(tmp_path / "claims.txt")) is None
        assert {p.path.name for p in retriever.search("author:young")} == {"intro.md"}
        assert retriever.search("author:lee") == ()
