"""The "Team collection" dialog: a collection on a PostgreSQL server, added to the library.

The form (server, port, database, user, collection, TLS mode, root certificate) becomes a
store URL without a password (:func:`~verifai_desktop.store.pg.team.team_url`). "Test
connection" connects and opens the collection on the task runner's reader pool, as using it
would (:func:`~verifai_desktop.store.pg.team.check_connection`), and says what failed -- the
server unreachable, TLS, authentication, pgvector missing, the collection's schema version
(:data:`~verifai_desktop.ui.errors.STORE_FAILURES` words each) -- or that it connected, with
the TLS mode in use. "Save" lists it (:func:`~verifai_desktop.store.pg.team.save_team`: the URL
and the name, never the password).

The password typed is kept in the system keyring when "Remember in the system keyring" is
ticked (the entry ``verifai --store`` reads too,
:func:`~verifai_desktop.store.pg.credentials.keep_password`), else in this process's memory
until the app quits (:func:`session_password`); it is never written to settings, logs, the
history or audit records.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.errors import MissingExtra, SettingsError, StoreUnavailable, VerifaiError
from verifai_desktop.store.pg.credentials import keep_password
from verifai_desktop.store.pg.team import (
    DEFAULT_PORT,
    SSLMODES,
    ConnectionCheck,
    TeamCollection,
    check_connection,
    save_team,
    team_url,
)
from verifai_desktop.ui.errors import describe_error
from verifai_desktop.ui.tasks import Task, TaskContext, TaskRunner

_SESSION_PASSWORDS: dict[str, str] = {}  # keyring user name -> password, this process only

OK_STYLE = "color:#1d5c2a"
FAILED_STYLE = "color:#8a1c1c"
TESTING_TEXT = "Connecting…"
MIN_WIDTH_PX = 580  # the explanation and the messages read in a few lines


def session_password(name: str) -> str | None:
    """The password given in this session for the store ``name`` (its keyring user name), or
    None: a :data:`~verifai_desktop.store.pg.credentials.PasswordPrompt` for the app."""
    return _SESSION_PASSWORDS.get(name)


HISTORY_TEXT = (
    "Your questions and answers are kept on the server: other users cannot read them, the "
    "collection's owner and the server's administrators can."
)
"""Who can read a team collection's history (README, "What the server enforces")."""


def connection_text(check: ConnectionCheck, collection: str) -> str:
    """What a successful connection test says: the server, the TLS mode in use, the
    collection's documents (or that adding files creates it), and who can read the history."""
    tls = "encrypted" if check.encrypted else "not encrypted"
    if check.socket:
        tls += " (a Unix socket on this machine: TLS is not used there)"
    found = (
        f"No collection “{collection}” on this server yet: adding files creates it (you own it)."
        if check.documents is None
        else f"Collection “{collection}”: {check.documents} document(s) you may read."
    )
    return (
        f"Connected to {check.server}.\nTLS: sslmode={check.sslmode}, {tls}.\n{found}\n"
        f"{HISTORY_TEXT}"
    )


def failure_text(exc: BaseException) -> str:
    """What a failed connection test or save says: for a server that cannot be used (or
    psycopg missing) the kind of failure, the reason and what to do; else the error's message
    (a field of the form)."""
    if isinstance(exc, SettingsError) and exc.reason.startswith("Give "):
        return exc.reason  # the form's empty fields, in words (TeamDialog.missing)
    if not isinstance(exc, StoreUnavailable | MissingExtra):
        return str(exc)
    report = describe_error(exc)
    return f"{report.title}: {report.message}" + (f"\n{report.remedy}" if report.remedy else "")


INTRO_TEXT = (
    "A team collection lives on a PostgreSQL server your team shares: everyone given access "
    "asks questions of the same documents, and each person's questions and answers stay their "
    "own. The server needs PostgreSQL with the pgvector extension (CREATE EXTENSION vector, "
    "run once by its administrator); this app needs its postgres option (pip install "
    "'verifai-desktop[postgres]'). Ask your administrator for the values below."
)
TIPS: dict[str, str] = {
    "host": (
        "The server's name or address, as your administrator gives it (db.example.org, "
        "10.0.0.5), or the folder of a local PostgreSQL socket (/var/run/postgresql)"
    ),
    "port": "The server's port: 5432 unless your administrator says otherwise",
    "database": "The database on the server that holds the team's collections",
    "user": "Your PostgreSQL user name (role) on that server",
    "collection": (
        "The collection's name on the server: lowercase letters, digits and _ (papers, "
        "trial_reports). A name not there yet is created when you add files (you own it)"
    ),
    "sslrootcert": (
        "The file of the root certificate the server's certificate must be signed by (.crt or "
        ".pem, from your administrator); empty: ~/.postgresql/root.crt"
    ),
    "password": (
        "Your PostgreSQL password; empty: it is read from PGPASSWORD, ~/.pgpass or the system "
        "keyring. Never written to the settings, the logs or the history"
    ),
    "remember": "Keep the password in the system keyring, for the next time the app starts",
    "test": "Connect with these values and say what works: the server, TLS, your access, "
    "pgvector and the collection",
}
"""The tooltip of each field of the form (and of its label)."""
MISSING_TEXT: dict[str, str] = {
    "host": "Give the server's name or address (ask your administrator), e.g. db.example.org.",
    "database": "Give the database that holds the team's collections (ask your administrator).",
    "user": "Give your user name on the server (ask your administrator).",
    "collection": (
        "Give the collection's name: lowercase letters, digits and _, e.g. papers. A new name "
        "is created when you add files."
    ),
}
"""What an empty field says, in the form's order."""


class TeamDialog(QDialog):
    """Add a team collection (a PostgreSQL store) to the library.

    Signals:
        saved(str): the team collection was listed; its key (``URL#NAME``).
        reported(bool, str): a result was shown under the form (a connection test's or a
            failed save's): good news or not, and the text.
    """

    saved = Signal(str)
    reported = Signal(bool, str)

    def __init__(self, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Team collection")
        self.setObjectName("teamDialog")
        self.setMinimumWidth(MIN_WIDTH_PX)
        self.runner = runner
        self.test_task: Task[ConnectionCheck] | None = None
        self.host = QLineEdit()
        self.host.setPlaceholderText("db.example.org")
        self.port = QSpinBox()
        self.port.setRange(1, 65535)
        self.port.setValue(DEFAULT_PORT)
        self.database = QLineEdit()
        self.user = QLineEdit()
        self.collection = QLineEdit()
        self.collection.setPlaceholderText("lowercase letters, digits and _")
        self.sslmode = QComboBox()
        self.sslmode.addItems(SSLMODES)
        self.sslmode.setToolTip(
            "verify-full: encrypted, and the server's certificate must be signed by the root "
            "certificate and issued to the server's name (the safe choice)"
        )
        self.sslrootcert = QLineEdit()
        self.sslrootcert.setPlaceholderText("default: ~/.postgresql/root.crt")
        self.browse_button = QPushButton("Browse…")
        cert_row = QHBoxLayout()
        cert_row.addWidget(self.sslrootcert, 1)
        cert_row.addWidget(self.browse_button)
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setPlaceholderText("empty: PGPASSWORD, ~/.pgpass or the system keyring")
        self.remember = QCheckBox("Remember in the system keyring")
        self.test_button = QPushButton("Test connection")
        self.message = QLabel("")
        self.message.setObjectName("teamTestResult")
        self.message.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.intro = QLabel(INTRO_TEXT)
        self.intro.setObjectName("teamIntro")
        self.intro.setWordWrap(True)
        self.intro.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        for name, widget in (
            ("host", self.host),
            ("port", self.port),
            ("database", self.database),
            ("user", self.user),
            ("collection", self.collection),
            ("sslrootcert", self.sslrootcert),
            ("password", self.password),
            ("remember", self.remember),
            ("test", self.test_button),
        ):
            widget.setToolTip(TIPS[name])
        self.browse_button.setToolTip(TIPS["sslrootcert"])
        form = QFormLayout()
        for text, field, tip in (
            ("Server:", self.host, TIPS["host"]),
            ("Port:", self.port, TIPS["port"]),
            ("Database:", self.database, TIPS["database"]),
            ("User:", self.user, TIPS["user"]),
            ("Collection:", self.collection, TIPS["collection"]),
            ("TLS mode (sslmode):", self.sslmode, self.sslmode.toolTip()),
            ("Root certificate:", cert_row, TIPS["sslrootcert"]),
            ("Password:", self.password, TIPS["password"]),
        ):
            label = QLabel(text)
            label.setToolTip(tip)
            form.addRow(label, field)
        form.addRow("", self.remember)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addLayout(form)
        layout.addWidget(self.test_button)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.browse_button.clicked.connect(self.on_browse_clicked)
        self.test_button.clicked.connect(self.on_test_clicked)
        self.buttons.accepted.connect(self.on_save_clicked)
        self.buttons.rejected.connect(self.reject)

    def missing(self) -> list[str]:
        """What each empty field of the form needs, in words (:data:`MISSING_TEXT`)."""
        values = {
            "host": self.host.text(),
            "database": self.database.text(),
            "user": self.user.text(),
            "collection": self.collection.text(),
        }
        return [MISSING_TEXT[k] for k, v in values.items() if not v.strip()]

    def team(self) -> TeamCollection:
        """The team collection the form names (its URL without the password).

        Raises:
            SettingsError: a field is empty or out of range.
        """
        missing = self.missing()
        if missing:
            raise SettingsError("team collection", " ".join(missing))
        url = team_url(
            host=self.host.text(),
            port=self.port.value(),
            database=self.database.text(),
            user=self.user.text(),
            sslmode=self.sslmode.currentText(),
            sslrootcert=self.sslrootcert.text(),
        )
        return TeamCollection(url, self.collection.text().strip())

    def _show(self, ok: bool, text: str) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(OK_STYLE if ok else FAILED_STYLE)
        self._fit_height()
        self.reported.emit(ok, text)

    def _fit_height(self) -> None:
        """Grow to show every line of the wrapped texts (Qt does not for a shown dialog)."""
        layout = self.layout()
        if layout is not None:
            need = layout.heightForWidth(self.width()) if layout.hasHeightForWidth() else 0
            self.resize(self.width(), max(self.height(), need, self.sizeHint().height()))

    @Slot()
    def on_browse_clicked(self) -> None:
        """Pick the root certificate file."""
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Root certificate of the server",
            str(Path.home()),
            "Certificates (*.crt *.pem);;All files (*)",
        )
        if path:
            self.sslrootcert.setText(path)

    @Slot()
    def on_test_clicked(self) -> Task[ConnectionCheck] | None:
        """Connect with the form's values on the reader pool; the result is shown below."""
        try:
            team = self.team()
        except VerifaiError as exc:
            self._show(False, failure_text(exc))
            return None
        typed = self.password.text()

        def prompt(name: str) -> str | None:
            return typed or session_password(name)

        def work(ctx: TaskContext) -> ConnectionCheck:
            return check_connection(team, password_prompt=prompt)

        self.test_button.setEnabled(False)
        self.message.setStyleSheet("")
        self.message.setText(TESTING_TEXT)
        task = self.runner.submit("test team connection", work)
        self.test_task = task
        task.succeeded.connect(lambda check: self._show(True, connection_text(check, team.name)))
        task.failed.connect(lambda exc: self._show(False, failure_text(exc)))
        task.finished.connect(lambda: self.test_button.setEnabled(True))
        return task

    @Slot()
    def on_save_clicked(self) -> None:
        """List the team collection and keep the password typed (the keyring when asked,
        else memory); a form that names none, or a failure to write, is shown instead."""
        try:
            team = self.team()
            save_team(team)
            note = self._keep_password(team)
        except (VerifaiError, OSError) as exc:
            self._show(False, failure_text(exc))
            return
        self.saved.emit(team.key)
        if note:
            self._show(False, f"Saved; the password is kept until the app quits: {note}.")
        else:
            self.accept()

    def _keep_password(self, team: TeamCollection) -> str:
        """Keep the password typed, if any; '' or why the keyring did not keep it."""
        password = self.password.text()
        if not password:
            return ""
        name = team.account()
        _SESSION_PASSWORDS[name] = password
        return keep_password(name, password) if self.remember.isChecked() else ""
