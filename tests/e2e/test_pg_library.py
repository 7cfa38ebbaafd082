"""A reference library in a team collection (issue 43): `ingest_sources` into the PostgreSQL
store keeps each entry in ``doc_references`` (its authors, year and title as columns, under the
documents' row-level security), ``author:``/``year:``/``title:`` terms restrict the search to
the documents whose entry matches, passages carry their entry (author-year citations), and an
edited library is followed. A real PostgreSQL with pgvector (pgserver), the bundled embedder."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN
from tests.e2e.pg import Server, team_server
from tests.unit.store.test_library import BIB
from verifai_desktop.citations import Citer
from verifai_desktop.retrieve import Retriever
from verifai_desktop.settings import CitationSettings, RetrievalSettings
from verifai_desktop.store.library import ingest_sources
from verifai_desktop.store.pg.store import PgStore
from verifai_desktop.store.writer import Outcome

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A PostgreSQL server with pgvector and the roles of :mod:`tests.e2e.pg`."""
    with team_server(tmp_path_factory.mktemp("pgdata")) as server:
        yield server


def _names(store: PgStore, query: str, mode: str = "lexical") -> set[str]:
    retriever = Retriever(store, RetrievalSettings(k=50, mode=mode))  # type: ignore[arg-type]
    return {p.path.name for p in retriever.search(query)}


def test_a_library_in_a_team_collection(pg: Server, tmp_path: Path) -> None:
    shutil.copy(DOCS_CLEAN / "deep_rules_02_intro.md", tmp_path / "intro.md")
    shutil.copy(DOCS_CLEAN / "scifact_covid_claims.txt", tmp_path / "claims.txt")
    (tmp_path / "sub").mkdir()
    bib = tmp_path / "library.bib"
    bib.write_text(BIB.replace("/ABSOLUTE", str(tmp_path)), encoding="utf-8")
    with PgStore.open(pg.url("vowner"), "lib", create=True, acl="team_a") as store:
        report = ingest_sources(store, [bib])
        assert [(Path(o.source).name, o.status) for o in report.outcomes] == [
            ("intro.md", Outcome.INDEXED),
            ("claims.txt", Outcome.INDEXED),
            ("library.bib#nofile2001", Outcome.FAILED),
        ]
        refs = store.references_of(str(bib))
        assert sorted(r.key for r in refs.values()) == ["lee2024md", "nofile2001", "wang2019claims"]
    assert sorted(pg.rows("SELECT authors, year, title FROM verifai_lib.doc_references")) == [
        ("lee smith", 2024, "Deep Rules Introduction"),
        ("nobody", 2001, "Missing"),
        ("wang", 2019, "COVID claims"),
    ]

    with PgStore.open(pg.url("alice"), "lib") as alice:  # team_a reads them
        retriever = Retriever(alice, RetrievalSettings(k=50, mode="lexical"))
        lee = retriever.search("author:lee deep learning")
        assert lee and {p.path.name for p in lee} == {"intro.md"}
        assert all(p.reference is not None and p.reference.key == "lee2024md" for p in lee)
        assert Citer(lee, CitationSettings()).label(lee[0]).startswith("Lee & Smith, 2024")
        assert _names(alice, "author:lee") == {"intro.md"}
        assert _names(alice, "year:2018-2019") == {"claims.txt"}
        assert _names(alice, 'title:"covid claims" covid') == {"claims.txt"}
        assert _names(alice, "author:nobody") == set()
        assert _names(alice, "author:wang covid", "hybrid") == {"claims.txt"}
    with PgStore.open(pg.url("bob"), "lib") as bob:  # team_b reads nothing of them
        assert _names(bob, "author:lee") == set() and _names(bob, "covid") == set()

    # Edited: an author changed, an entry removed; followed by the next ingest.
    text = bib.read_text(encoding="utf-8").replace("Lee, Ada", "Young, Ada")
    bib.write_text(text.split("@misc")[0], encoding="utf-8")
    with PgStore.open(pg.url("vowner"), "lib", acl="team_a") as store:
        changed = ingest_sources(store, [bib])
        assert [(Path(o.source).name, o.status) for o in changed.outcomes] == [
            ("intro.md", Outcome.SKIPPED),
            ("claims.txt", Outcome.REMOVED),
            ("library.bib#nofile2001", Outcome.REMOVED),
        ]
        assert _names(store, "author:young") == {"intro.md"}
        assert _names(store, "author:lee") == set()
    assert pg.rows("SELECT authors FROM verifai_lib.doc_references") == [("young smith",)]
