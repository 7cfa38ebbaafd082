"""The ingest run (store/writer.py): real small files parsed for real, the fake embedder.

The embedder is the hashing fake (control flow only: statuses, chunk counts, skips, removal);
chunk counts follow from its 32-token limit. Real-model ingest is in tests/e2e.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN
from tests.unit.fakes import HashEmbedder
from tests.unit.permissions import run_where_bits_apply
from verifai_desktop.domain import DocFormat, DocStatus, Progress
from verifai_desktop.errors import Cancelled, CollectionBusy
from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.writer import FileOutcome, Outcome

MD = "deep_rules_02_intro.md"
TXT = "scifact_covid_claims.txt"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder with two small real documents from docs/clean, a dot-file and an image."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in (MD, TXT):
        shutil.copy(DOCS_CLEAN / name, docs / name)
    (docs / ".hidden.md").write_text("never picked up", encoding="utf-8")
    (docs / "photo.png").write_bytes(b"\x89PNG not a document")
    return docs


def _summary(outcomes: tuple[FileOutcome, ...]) -> list[tuple[str, Outcome, int]]:
    return [(Path(o.source).name, o.status, o.chunk_count) for o in outcomes]


def test_first_run_indexes_then_unchanged_files_are_skipped(
    folder: Path, fake_settings: Settings, fake_embedder: HashEmbedder
) -> None:
    with Collection.open("w", create=True, settings=fake_settings) as col:
        first = col.add_paths([folder])
        # Sorted by name; the dot-file is ignored and .png is not a document suffix.
        assert _summary(first.outcomes) == [
            (MD, Outcome.INDEXED, 32),
            (TXT, Outcome.INDEXED, 29),
        ]
        assert [(o.format, o.stored_status, o.reason) for o in first.outcomes] == [
            (DocFormat.MD, DocStatus.INDEXED, ""),
            (DocFormat.TXT, DocStatus.INDEXED, ""),
        ]
        assert first.counts == {"indexed": 2}
        assert first.chunks_indexed == col.catalog.num_chunks() == len(col.vectors) == 61
        assert col.lexical.num_chunks() == 61
        assert [(Path(r.source).name, r.status, r.chunk_count) for r in col.documents()] == [
            (MD, DocStatus.INDEXED, 32),
            (TXT, DocStatus.INDEXED, 29),
        ]
        assert col.is_consistent()
        calls = fake_embedder.calls

        again = col.add_paths([folder])
        assert _summary(again.outcomes) == [(MD, Outcome.SKIPPED, 32), (TXT, Outcome.SKIPPED, 29)]
        assert [o.stored_status for o in again.outcomes] == [DocStatus.INDEXED] * 2
        assert again.counts == {"skipped": 2} and again.chunks_indexed == 0

        # A new mtime with the same bytes is recognised by its sha256: still skipped.
        st = (folder / TXT).stat()
        os.utime(folder / TXT, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        touched = col.add_paths([folder / TXT])
        assert _summary(touched.outcomes) == [(TXT, Outcome.SKIPPED, 29)]
        assert fake_embedder.calls == calls  # nothing was embedded again
        assert col.catalog.num_chunks() == 61


def test_changed_file_is_replaced_and_a_file_gone_from_the_folder_removed(
    folder: Path, fake_settings: Settings
) -> None:
    with Collection.open("w", create=True, settings=fake_settings) as col:
        col.add_paths([folder])
        (folder / TXT).write_text("Masks reduce COVID-19 transmission.\n", encoding="utf-8")
        (folder / MD).unlink()
        report = col.add_paths([folder])
        assert _summary(report.outcomes) == [
            (TXT, Outcome.INDEXED, 1),
            (MD, Outcome.REMOVED, 0),
        ]
        assert report.outcomes[1].stored_status is None
        assert report.counts == {"indexed": 1, "removed": 1}
        assert [Path(r.source).name for r in col.documents()] == [TXT]
        assert col.catalog.num_chunks() == len(col.vectors) == col.lexical.num_chunks() == 1
        assert col.is_consistent()


def test_bad_files_are_recorded_with_their_reason(
    tmp_path: Path, folder: Path, fake_settings: Settings
) -> None:
    empty = folder / "empty.txt"
    empty.write_bytes(b"")
    missing = tmp_path / "nowhere.pdf"
    with Collection.open("w", create=True, settings=fake_settings) as col:
        report = col.add_paths([empty, missing])
        assert [
            (Path(o.source).name, o.status, o.reason, o.stored_status) for o in report.outcomes
        ] == [
            ("empty.txt", Outcome.FAILED, "empty file (0 bytes)", DocStatus.FAILED),
            ("nowhere.pdf", Outcome.FAILED, "file not found", None),
        ]
        # The failure is in the catalog (so it is shown), the missing path is not.
        assert [(Path(r.source).name, r.status, r.reason) for r in col.documents()] == [
            ("empty.txt", DocStatus.FAILED, "empty file (0 bytes)")
        ]
        assert col.catalog.num_chunks() == 0
        # Unchanged, the failed file is not retried.
        assert [o.status for o in col.add_paths([empty]).outcomes] == [Outcome.SKIPPED]


def test_progress_and_cancel_between_files(folder: Path, fake_settings: Settings) -> None:
    cancel = threading.Event()
    seen: list[tuple[str, int, int | None, str]] = []

    def progress(p: Progress) -> None:
        if p.stage == "files":
            seen.append((p.stage, p.done, p.total, p.message))
            if p.done == 1:
                cancel.set()  # while the second file is announced: stop before the third

    (folder / "third.md").write_text("# Third\n\nA third document.\n", encoding="utf-8")
    with Collection.open("w", create=True, settings=fake_settings) as col:
        with pytest.raises(Cancelled):
            col.add_paths([folder], progress=progress, cancel=cancel)
        assert seen == [("files", 0, 3, MD), ("files", 1, 3, TXT)]
        assert [Path(r.source).name for r in col.documents()] == [MD, TXT]
        assert col.is_consistent()


def test_a_second_writer_is_refused(folder: Path, fake_settings: Settings) -> None:
    with Collection.open("w", create=True, settings=fake_settings) as col:
        col.add_paths([folder / MD])
        with Collection.open("w", settings=fake_settings) as other, pytest.raises(CollectionBusy):
            other.add_paths([folder / TXT])


def test_written_outcomes_are_the_document_statuses() -> None:
    assert {s: Outcome.written(s) for s in DocStatus} == {
        DocStatus.INDEXED: Outcome.INDEXED,
        DocStatus.NEEDS_OCR: Outcome.NEEDS_OCR,
        DocStatus.ENCRYPTED: Outcome.ENCRYPTED,
        DocStatus.EMPTY: Outcome.EMPTY,
        DocStatus.FAILED: Outcome.FAILED,
    }
    assert {o.value for o in Outcome} - {s.value for s in DocStatus} == {"skipped", "removed"}


def test_a_file_name_that_is_not_utf8_is_indexed_stored_faithfully_and_rerun(
    folder: Path, fake_settings: Settings
) -> None:
    """A name with bytes 0xff 0xfe (invalid UTF-8) once aborted the whole run in the catalog."""
    bad = os.path.join(os.fsencode(folder), b"bad\xff\xfe.txt")
    with open(bad, "wb") as fh:
        fh.write(b"Undecodable names are still documents.\n")
    with Collection.open("w", create=True, settings=fake_settings) as col:
        report = col.add_paths([folder])
        assert [(os.fsencode(Path(o.source).name), o.status) for o in report.outcomes] == [
            (b"bad\xff\xfe.txt", Outcome.INDEXED),
            (MD.encode(), Outcome.INDEXED),
            (TXT.encode(), Outcome.INDEXED),
        ]
        # The exact bytes come back from the catalog, and its title is readable text.
        record = col.catalog.document(os.fsdecode(bad))
        assert record is not None and os.fsencode(record.source) == bad
        assert (record.status, record.chunk_count, record.title) == (
            DocStatus.INDEXED,
            1,
            "bad\\xff\\xfe",
        )
        assert [os.fsencode(r.source) for r in col.documents()][-1] == bad
        # Re-runs find it unchanged, and remove it once it is gone.
        assert [o.status for o in col.add_paths([folder]).outcomes] == [Outcome.SKIPPED] * 3
        os.unlink(bad)
        gone = col.add_paths([folder])
        assert [(os.fsencode(o.source), o.status) for o in gone.outcomes][-1] == (
            bad,
            Outcome.REMOVED,
        )
        assert col.catalog.document(os.fsdecode(bad)) is None
        assert col.catalog.num_chunks() == len(col.vectors) == col.lexical.num_chunks() == 61


def test_a_fifo_is_never_opened_and_gets_a_status(folder: Path, fake_settings: Settings) -> None:
    """A FIFO named x.txt once hung the run: the main process opened it to hash it."""
    fifo = folder / "x.txt"
    os.mkfifo(fifo)
    reason = "not a regular file (a named pipe (FIFO)); only regular files are read"
    with Collection.open("w", create=True, settings=fake_settings) as col:
        reports = []
        run = threading.Thread(target=lambda: reports.append(col.add_paths([folder])))
        run.start()
        run.join(timeout=60.0)
        if run.is_alive():  # the regression: unblock the reader, then fail
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            run.join()
            pytest.fail("ingest blocked on a FIFO")
        (report,) = reports
        assert [(Path(o.source).name, o.status, o.reason) for o in report.outcomes] == [
            (MD, Outcome.INDEXED, ""),
            (TXT, Outcome.INDEXED, ""),
            ("x.txt", Outcome.FAILED, reason),
        ]
        assert col.catalog.document(str(fifo)) is not None
        assert [(r.status, r.reason) for r in col.documents() if r.source == str(fifo)] == [
            (DocStatus.FAILED, reason)
        ]
        generation = col.generation()
        again = col.add_paths([folder])
        assert [(o.status, o.stored_status, o.reason) for o in again.outcomes][-1] == (
            Outcome.SKIPPED,
            DocStatus.FAILED,
            reason,
        )
        assert col.generation() == generation  # nothing written for it again


_INGEST_SCRIPT = """
import json, sys
from pathlib import Path
from tests.unit.fakes import FAKE_NAME, HashEmbedder
from verifai_desktop.index import embedder
from verifai_desktop.settings import ModelSettings, Settings
from verifai_desktop.store.collection import Collection

embedder._CACHE[FAKE_NAME] = HashEmbedder()
settings = Settings(models=ModelSettings(embedder=FAKE_NAME))
with Collection.open("w", create=True, settings=settings) as col:
    report = col.add_paths([Path(sys.argv[1])])
print(json.dumps([(Path(o.source).name, o.status.value, o.reason) for o in report.outcomes]))
"""


def _ingest_as_non_root(folder: Path) -> list[list[str]]:
    """Ingest ``folder`` in a subprocess where the permission bits apply, as root or not
    (:func:`tests.unit.permissions.run_where_bits_apply`)."""
    proc = run_where_bits_apply(_INGEST_SCRIPT, str(folder))
    assert proc.returncode == 0, proc.stderr[-2000:]
    outcomes: list[list[str]] = json.loads(proc.stdout.splitlines()[-1])
    return outcomes


def test_unreadable_folders_get_a_status_and_nothing_under_them_is_removed(
    folder: Path, fake_settings: Settings
) -> None:
    """Re-ingest once crashed with PermissionError when an ingested subfolder became
    unreadable, and a chmod 000 folder on first ingest was skipped with no status."""
    sub = folder / "sub"
    sub.mkdir()
    shutil.move(folder / TXT, sub / TXT)
    with Collection.open("w", create=True, settings=fake_settings) as col:
        assert col.add_paths([folder]).counts == {"indexed": 2}
    locked = folder / "locked"  # never ingested, unreadable from the start
    locked.mkdir()
    (locked / "secret.md").write_text("# Secret\n\nNot readable.\n", encoding="utf-8")
    reason = "folder cannot be read (permission denied); its files were skipped"
    try:
        for path in (sub, locked):
            path.chmod(0)
        outcomes = _ingest_as_non_root(folder)
    finally:
        for path in (sub, locked):
            path.chmod(stat.S_IRWXU)
    assert outcomes == [
        [MD, "skipped", ""],
        ["locked", "failed", reason],
        ["sub", "failed", reason],
    ]
    with Collection.open("w", settings=fake_settings) as col:
        # Nothing was removed because it could not be read.
        assert [(Path(r.source).name, r.status) for r in col.documents()] == [
            (MD, DocStatus.INDEXED),
            (TXT, DocStatus.INDEXED),
        ]
        assert col.catalog.num_chunks() == len(col.vectors) == 61
        # Readable again: the new file is indexed, the kept one is unchanged.
        report = col.add_paths([folder])
        assert _summary(report.outcomes) == [
            (MD, Outcome.SKIPPED, 32),
            ("secret.md", Outcome.INDEXED, 1),
            (TXT, Outcome.SKIPPED, 29),
        ]


def test_a_link_out_of_the_chosen_folders_is_not_followed(
    tmp_path: Path, folder: Path, fake_settings: Settings
) -> None:
    """A symlink in an ingested folder to a file elsewhere (e.g. /etc/passwd) was indexed."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    private = elsewhere / "private.txt"
    private.write_text("Private words outside the chosen folder.\n", encoding="utf-8")
    (folder / "leak.txt").symlink_to(private)
    (folder / "inside.md").symlink_to(folder / MD)  # a link within the folder is followed
    reason = (
        f"a link to {private}, outside the folders chosen; not followed "
        "(setting ingest.follow_external_links)"
    )
    with Collection.open("w", create=True, settings=fake_settings) as col:
        report = col.add_paths([folder])
        assert [(Path(o.source).name, o.status, o.reason) for o in report.outcomes] == [
            (MD, Outcome.INDEXED, ""),
            ("inside.md", Outcome.INDEXED, ""),
            ("leak.txt", Outcome.FAILED, reason),
            (TXT, Outcome.INDEXED, ""),
        ]
        leak = col.catalog.document(str(folder / "leak.txt"))
        assert leak is not None and (leak.status, leak.chunk_count) == (DocStatus.FAILED, 0)
        assert col.catalog.num_chunks() == 32 + 32 + 29
        # Unchanged on the next run, and followed when the setting says so.
        assert [o.status for o in col.add_paths([folder]).outcomes] == [Outcome.SKIPPED] * 4
        followed = col.add_paths([folder], follow_external_links=True)
        assert [(Path(o.source).name, o.status) for o in followed.outcomes][2] == (
            "leak.txt",
            Outcome.INDEXED,
        )
        # Both folders chosen: the link stays inside them (and the target is a file of its own).
        col.add_paths([folder])
        both = col.add_paths([folder, elsewhere])
        assert [(Path(o.source).name, o.status) for o in both.outcomes] == [
            (MD, Outcome.SKIPPED),
            ("inside.md", Outcome.SKIPPED),
            ("leak.txt", Outcome.INDEXED),
            (TXT, Outcome.SKIPPED),
            ("private.txt", Outcome.INDEXED),
        ]


def test_the_external_links_setting_defaults_to_off(tmp_path: Path) -> None:
    from verifai_desktop.settings import load_settings

    assert Settings().ingest.follow_external_links is False
    path = tmp_path / "settings.toml"
    path.write_text("[ingest]\nfollow_external_links = true\n", encoding="utf-8")
    assert load_settings(path).ingest.follow_external_links is True


def test_a_file_over_the_chunk_limit_is_refused_with_its_count_and_retried_when_it_fits(
    tmp_path: Path, fake_settings: Settings
) -> None:
    """Issue 14: a 50 MB one-line text file made 32k chunks and stalled a run for 50 minutes."""
    docs = tmp_path / "docs"
    docs.mkdir()
    # One line, no sentence breaks: like the 50 MB file, at a scale a unit test can embed.
    (docs / "one_line.txt").write_text(" ".join(f"token{i}" for i in range(6000)), encoding="utf-8")
    (docs / "small.txt").write_text("A normal note is indexed as usual.\n", encoding="utf-8")
    big = str(docs / "one_line.txt")
    with Collection.open("limit", create=True, settings=fake_settings) as col:
        first = {
            Path(o.source).name: o for o in col.add_paths([docs], max_chunks_per_file=5).outcomes
        }
        assert first["small.txt"].status is Outcome.INDEXED
        refused = first["one_line.txt"]
        assert (refused.status, refused.chunk_count) == (Outcome.FAILED, 0)
        assert refused.reason.startswith("too large: ")
        assert "over the limit of 5 per file (setting ingest.max_chunks_per_file)" in refused.reason
        assert col.catalog.document(big).status is DocStatus.FAILED  # type: ignore[union-attr]
        assert col.catalog.num_chunks() == 1  # only small.txt's
        # Unchanged and still over the limit: skipped, not parsed again.
        again = {
            Path(o.source).name: o for o in col.add_paths([docs], max_chunks_per_file=5).outcomes
        }
        assert again["one_line.txt"].status is Outcome.SKIPPED
        # A higher limit takes it without the file changing.
        third = {
            Path(o.source).name: o
            for o in col.add_paths([docs], max_chunks_per_file=10_000).outcomes
        }
        assert third["one_line.txt"].status is Outcome.INDEXED
        assert third["one_line.txt"].chunk_count > 5
        assert third["small.txt"].status is Outcome.SKIPPED


def test_the_chunk_limit_setting_is_validated(tmp_path: Path) -> None:
    from verifai_desktop.errors import SettingsError
    from verifai_desktop.settings import load_settings

    path = tmp_path / "settings.toml"
    path.write_text("[ingest]\nmax_chunks_per_file = 0\n", encoding="utf-8")
    with pytest.raises(SettingsError, match=r"ingest\.max_chunks_per_file"):
        load_settings(path)
    assert Settings().ingest.max_chunks_per_file == 10_000
