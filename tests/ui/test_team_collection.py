"""The library's "Team collection" entry (ui/team_dialog.py) against a real PostgreSQL 16 with
pgvector started from ``pgserver`` (:mod:`tests.e2e.pg`): the form's URL (never the password),
"Test connection" succeeding and failing for each reason, saving, listing, opening, searching
and the history of a team collection through the store.

One server serves the module; ``vowner`` owns collection ``handbook`` (one file of docs/clean,
one answer in vowner's history) and ``future`` (a schema version this app cannot read).
"""

from __future__ import annotations

import logging
import socket
import tomllib
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import keyring
import pytest
from PySide6.QtWidgets import QDialogButtonBox, QFormLayout
from pytestqt.qtbot import QtBot

from tests.conftest import DOCS_CLEAN
from tests.e2e.pg import MemoryKeyring, Server, team_server, tls_refused
from tests.unit.test_codec import ANSWER
from verifai_desktop.retrieve import Retriever
from verifai_desktop.settings import RetrievalSettings, Settings, settings_path
from verifai_desktop.store.pg.credentials import KEYRING_SERVICE
from verifai_desktop.store.pg.store import PgStore
from verifai_desktop.store.pg.team import SSLMODES, TeamCollection, teams_path
from verifai_desktop.store.writer import ingest_paths
from verifai_desktop.ui import team_dialog
from verifai_desktop.ui.errors import STORE_FAILURES
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.tasks import TaskRunner
from verifai_desktop.ui.team_dialog import HISTORY_TEXT, MISSING_TEXT, OK_STYLE, TeamDialog

pytest.importorskip(
    "pgserver", reason="pgserver is not installed (the test extra): no PostgreSQL to test with"
)
pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")

TIMEOUT_MS = 60_000
FILE = "deep_rules_09_overfitting.md"
PASSWORD = "Kx7-team-secret-42"
WRONG = "not-the-password-9"


@pytest.fixture(scope="module")
def pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The server, with collections ``handbook`` and ``future`` and role ``dana`` (asked a
    password on the socket)."""
    with team_server(tmp_path_factory.mktemp("pgdata")) as server:
        with PgStore.open(server.url("vowner"), "handbook", create=True) as store:
            ingest_paths(store, [DOCS_CLEAN / FILE])
            with store.history() as history:
                history.add(ANSWER, Settings(), {})
        PgStore.open(server.url("vowner"), "future", create=True).close()
        server.psql(
            "UPDATE verifai_future.schema_version SET version = 99;"
            f"CREATE ROLE dana LOGIN PASSWORD '{PASSWORD}';"
        )
        hba = server.pgdata / "pg_hba.conf"
        hba.write_text("local all dana scram-sha-256\n" + hba.read_text())
        server.psql("SELECT pg_reload_conf();")
        yield server


@pytest.fixture
def kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[MemoryKeyring]:
    """An empty system keyring, no password from libpq's own sources, none given before."""
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no_pgpass"))
    monkeypatch.setattr(team_dialog, "_SESSION_PASSWORDS", {})
    previous = keyring.get_keyring()
    memory = MemoryKeyring()
    keyring.set_keyring(memory)
    try:
        yield memory
    finally:
        keyring.set_keyring(previous)


def _dialog(qtbot: QtBot, **fields: str | int) -> TeamDialog:
    dialog = TeamDialog(TaskRunner())
    qtbot.addWidget(dialog)
    _fill(dialog, **fields)
    return dialog


def _fill(dialog: TeamDialog, **fields: str | int) -> None:
    for name, value in fields.items():
        widget = getattr(dialog, name)
        if name == "port":
            widget.setValue(value)
        elif name == "sslmode":
            widget.setCurrentText(value)
        else:
            widget.setText(value)


def _test(qtbot: QtBot, dialog: TeamDialog) -> tuple[bool, str]:
    with qtbot.waitSignal(dialog.reported, timeout=TIMEOUT_MS) as shown:
        dialog.test_button.click()
    ok, text = shown.args or (False, "")
    assert text == dialog.message.text()
    return bool(ok), str(text)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_form_gives_the_store_url_without_the_password(qtbot: QtBot) -> None:
    from psycopg.conninfo import conninfo_to_dict

    dialog = _dialog(
        qtbot,
        host="db.example.org",
        port=5433,
        database="docs",
        user="alice",
        collection="handbook",
        sslrootcert="/etc/ssl/team-root.crt",
        password=PASSWORD,
    )
    assert [dialog.sslmode.itemText(i) for i in range(dialog.sslmode.count())] == list(SSLMODES)
    assert dialog.sslmode.currentText() == "verify-full"
    url = (
        "postgresql://alice@db.example.org:5433/docs?sslmode=verify-full"
        "&sslrootcert=%2Fetc%2Fssl%2Fteam-root.crt"
    )
    assert dialog.team() == TeamCollection(url, "handbook")
    assert conninfo_to_dict(url) == {
        "user": "alice",
        "host": "db.example.org",
        "port": "5433",
        "dbname": "docs",
        "sslmode": "verify-full",
        "sslrootcert": "/etc/ssl/team-root.crt",
    }
    _fill(dialog, host="/run/postgresql", port=5432, sslmode="prefer", sslrootcert="")
    assert dialog.team().url == (
        "postgresql://alice@/docs?host=%2Frun%2Fpostgresql&port=5432&sslmode=prefer"
    )
    _fill(dialog, host=" ")
    assert dialog.on_test_clicked() is None
    assert dialog.message.text() == MISSING_TEXT["host"]


def test_the_empty_dialog_explains_itself_and_every_field(qtbot: QtBot) -> None:
    dialog = TeamDialog(TaskRunner())
    qtbot.addWidget(dialog)
    intro = dialog.intro.text()
    assert "PostgreSQL with the pgvector extension" in intro
    assert "verifai-desktop[postgres]" in intro
    form = dialog.findChild(QFormLayout)
    assert form is not None
    for row in range(form.rowCount()):
        label = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
        if label is not None and label.widget() is not None and label.widget().text():
            assert label.widget().toolTip() != "", label.widget().text()
    for field in (dialog.host, dialog.port, dialog.database, dialog.user, dialog.collection,
                  dialog.sslmode, dialog.sslrootcert, dialog.browse_button, dialog.password,
                  dialog.remember, dialog.test_button):  # fmt: skip
        assert field.toolTip() != "", field.objectName() or type(field).__name__
    # Test connection on the empty form: a sentence per empty field, nothing technical.
    assert dialog.on_test_clicked() is None
    text = dialog.message.text()
    assert text == " ".join(MISSING_TEXT[k] for k in ("host", "database", "user", "collection"))
    assert "invalid setting" not in text
    dialog.buttons.accepted.emit()  # Save says the same, and saves nothing
    assert dialog.message.text() == text and not dialog.result()


def test_a_connection_test_succeeds_and_shows_the_tls_mode(
    qtbot: QtBot, pg: Server, kept: MemoryKeyring
) -> None:
    dialog = _dialog(qtbot, host=pg.host, database="postgres", user="vowner", collection="handbook")
    ok, text = _test(qtbot, dialog)
    assert ok, text
    assert text == (
        f"Connected to vowner@{pg.host}:5432/postgres.\n"
        "TLS: sslmode=verify-full, not encrypted (a Unix socket on this machine: TLS is not "
        "used there).\n"
        "Collection “handbook”: 1 document(s) you may read.\n"
        "Your questions and answers are kept on the server: other users cannot read them, the "
        "collection's owner and the server's administrators can."
    )
    assert dialog.message.styleSheet() == OK_STYLE
    _fill(dialog, collection="newcomers")
    assert _test(qtbot, dialog)[1].endswith(
        "No collection “newcomers” on this server yet: adding files creates it (you own it).\n"
        + HISTORY_TEXT
    )


FAILURES = {
    "unreachable": "cannot reach the server",
    "tls": "the TLS connection failed",
    "authentication": "the server refused the password given for dana@",
    "extension": "the pgvector extension is not installed in this database",
    "schema": "collection schema version 99 is newer than this app reads",
}


@pytest.mark.parametrize("kind", list(FAILURES))
def test_each_way_a_connection_fails_is_named(
    qtbot: QtBot, pg: Server, kept: MemoryKeyring, kind: str
) -> None:
    fields: dict[str, str | int] = {
        "host": pg.host,
        "database": "postgres",
        "user": "vowner",
        "collection": "handbook",
    }
    if kind == "unreachable":
        fields |= {"host": "127.0.0.1", "port": _closed_port()}
    elif kind == "authentication":
        fields |= {"user": "dana", "password": WRONG}
    elif kind == "extension":
        fields |= {"user": "alice", "database": "novector"}
    elif kind == "schema":
        fields |= {"collection": "future"}
    with tls_refused() as port:
        if kind == "tls":
            fields |= {"host": "127.0.0.1", "port": port, "sslmode": "require"}
        ok, text = _test(qtbot, _dialog(qtbot, **fields))
    title, remedy = STORE_FAILURES[kind]
    assert not ok
    assert text.startswith(f"{title}: PostgreSQL store "), text
    assert FAILURES[kind] in text and text.endswith(f"\n{remedy}"), text
    assert WRONG not in text


def test_a_saved_team_collection_is_listed_opened_searched_and_keeps_no_password(
    qtbot: QtBot, pg: Server, kept: MemoryKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    window = MainWindow(Settings(), offer_sample=False)
    qtbot.addWidget(window)
    library = window.library
    dialog = library.collection_list.on_team_clicked()
    _fill(dialog, host=pg.host, database="postgres", user="vowner", collection="handbook")
    _fill(dialog, password=PASSWORD)
    dialog.remember.setChecked(True)
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()

    url = f"postgresql://vowner@/postgres?host={quote(pg.host, safe='')}&port=5432"
    key = f"{url}&sslmode=verify-full#handbook"
    account = f"vowner@{pg.host}:5432/postgres"
    assert dialog.message.text() == ""
    assert kept.kept == {(KEYRING_SERVICE, account): PASSWORD}  # the entry the CLI reads
    assert tomllib.loads(teams_path().read_text(encoding="utf-8")) == {
        "collection": [{"url": key.removesuffix("#handbook"), "name": "handbook"}]
    }
    rows = [library.collections.item(i).text() for i in range(library.collections.count())]
    assert rows == [f"handbook [team]\n{account} · sslmode=verify-full"]
    assert library.current == key and library.display_name() == "handbook [team]"
    assert not library.collection_list.rename_button.isEnabled()
    assert not library.collection_list.repair_button.isEnabled()

    # Opened through the store: its documents, a search, the role's history.
    qtbot.waitUntil(lambda: bool(library.table_rows()), timeout=TIMEOUT_MS)
    assert [r[:2] for r in library.table_rows()] == [(FILE, "indexed")]
    search = window.host.query(
        "search",
        key,
        lambda col, ctx: [
            p.path.name for p in Retriever(col, RetrievalSettings()).search("overfit", k=3)
        ],
    )
    qtbot.waitUntil(lambda: search.outcome in {"succeeded", "failed"}, timeout=TIMEOUT_MS)
    assert (search.error, search.result) == (None, [FILE] * 3)  # its three best chunks
    qtbot.waitUntil(lambda: bool(window.history.row_texts()), timeout=TIMEOUT_MS)
    assert [r.split("\n")[0] for r in window.history.row_texts()] == [ANSWER.question]

    saved = window.save_state()
    assert saved == settings_path()
    assert tomllib.loads(saved.read_text(encoding="utf-8"))["ui"]["last_collection"] == key
    for text in (saved.read_text(encoding="utf-8"), teams_path().read_text(encoding="utf-8")):
        assert PASSWORD not in text
    assert PASSWORD not in caplog.text

    # Deleting a team collection takes it off the list; the server keeps it.
    library.confirm = lambda title, text: True  # type: ignore[method-assign]
    library.on_delete_clicked()
    assert library.collections.count() == 0 and library.current == ""
    assert tomllib.loads(teams_path().read_text(encoding="utf-8")) == {"collection": []}
    with PgStore.open(pg.url("vowner"), "handbook") as store:
        assert [Path(d.source).name for d in store.documents()] == [FILE]
