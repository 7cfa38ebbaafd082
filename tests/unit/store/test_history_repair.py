"""A damaged answer history (issue 30, row 7): real SQLite damage (4 KB of random bytes written
into the file's data pages), the clear error every command gives, and `verifai repair` keeping
every answer that can still be read.

A real collection (the hashing fake embedder only stands in for the model) with a real
history of :data:`N_ANSWERS` answers and a judgement of every fifth.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import sqlite3
import stat
from pathlib import Path

import pytest

from tests.unit.test_codec import ANSWER
from verifai_desktop.cli import main
from verifai_desktop.settings import Settings, collections_dir
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import collection_history
from verifai_desktop.store.history import Feedback, History, SavedAnswer
from verifai_desktop.store.history_repair import DAMAGED_PREFIX, repair_history
from verifai_desktop.store.repair import repair_collection

N_ANSWERS = 40
PAGE = 4096
HINT = "(`verifai repair --history --collection kept`)"


def _fill(folder: Path) -> dict[int, SavedAnswer]:
    """:data:`N_ANSWERS` answers (a judgement of every fifth); returns them by id."""
    with History(folder) as history:
        for i in range(N_ANSWERS):
            answer = dataclasses.replace(ANSWER, question=f"Question {i}: {'why ' * 300}?")
            answer_id = history.add(answer, Settings(), {"/docs/aspirin.pdf": f"{i:064x}"})
            if i % 5 == 0:
                history.set_feedback(Feedback(answer_id, 0, 1, "SUPPORT", "right"))
        return {a.answer_id: a for a in history.answers()}


def _pages(path: Path, kinds: tuple[str, ...]) -> list[int]:
    """The numbers of the ``answers`` table's pages of ``kinds`` (``leaf``, ``overflow``,
    ``internal``), in file order."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    marks = ", ".join("?" * len(kinds))
    pages = [
        r[0]
        for r in db.execute(
            f"SELECT pageno FROM dbstat WHERE name = 'answers' AND pagetype IN ({marks}) "
            "ORDER BY pageno",
            kinds,
        )
    ]
    db.close()
    return pages


def _overwrite(path: Path, page: int) -> None:
    """Write 4 KB of random bytes over page ``page`` (1-based) of ``path``."""
    with path.open("r+b") as fh:
        fh.seek((page - 1) * PAGE)
        fh.write(random.Random(7).randbytes(PAGE))


def _damage(path: Path) -> None:
    """Overwrite the middle one of the ``answers`` table's leaf and overflow pages."""
    pages = _pages(path, ("leaf", "overflow"))
    _overwrite(path, pages[len(pages) // 2])


def _n(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


@pytest.fixture
def folder(fake_settings: Settings) -> Path:
    """Collection ``kept``'s folder, with its history filled (:func:`_fill`)."""
    with Collection.open("kept", create=True, settings=fake_settings):
        pass
    return collections_dir() / "kept"


def test_a_damaged_history_is_a_clear_error_and_repair_keeps_every_readable_answer(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _fill(folder)
    history_file = folder / "history.sqlite"
    _damage(history_file)
    damaged_bytes = history_file.read_bytes()

    for args in (
        ["history", "-c", "kept"],
        ["history", "-c", "kept", "--json"],
        ["audit", "export", "-c", "kept", "--last", "-o", str(tmp_path / "record.json")],
        ["feedback", "add", "-c", "kept", "--id", "1", "--sentence", "1", "--right"],
    ):
        assert main(args) == 1, args
        out, err = capsys.readouterr()
        assert out == ""
        assert err.startswith(f"error: {history_file} is damaged (SQLite's ")
        assert err.endswith(f"(the damaged file is kept beside it) {HINT}\n")
    assert not (tmp_path / "record.json").exists()

    assert main(["repair", "--history", "-c", "kept"]) == 0
    lines = capsys.readouterr().out.splitlines()
    with collection_history("kept") as history:
        after = {a.answer_id: a for a in history.answers()}
        judged = {f.answer_id for f in history.feedback()}
    lost = sorted(set(before) - set(after))
    assert 1 <= len(lost) < 5  # one page of answers, no more
    assert after == {i: before[i] for i in before if i not in lost}  # byte for byte, same ids
    judged_before = {i for i in before if (i - 1) % 5 == 0}
    assert judged == judged_before - set(lost)
    assert lines[0] == (
        f"answer history of 'kept' repaired: kept {_n(len(after), 'answer')} and "
        f"{_n(len(judged), 'judgement')}; lost {_n(len(lost), 'answer')} and "
        f"{_n(len(judged_before & set(lost)), 'judgement')}"
    )
    assert lines[1].startswith("  it was damaged: SQLite's quick check failed: ")
    [aside] = folder.glob(f"{DAMAGED_PREFIX}*.sqlite")
    assert lines[2] == f"  the damaged file is kept as {aside}"
    assert aside.read_bytes() == damaged_bytes
    assert stat.S_IMODE(os.stat(aside).st_mode) == 0o600

    # The commands work again; a new answer never takes the id of one lost.
    flag = ["feedback", "add", "-c", "kept", "--id", str(min(after)), "--sentence", "1", "--flag"]
    assert main(flag) == 0
    assert capsys.readouterr().out == f"kept: answer {min(after)}, sentence 1, passage 0: flagged\n"
    with collection_history("kept") as history:
        assert history.add(ANSWER, Settings(), {}) == N_ANSWERS + 1
    assert main(["repair", "--history", "-c", "kept"]) == 0
    assert capsys.readouterr().out == (
        "the answer history of 'kept' is not damaged; nothing to repair\n"
    )


@pytest.mark.parametrize("page", ["root", "header"])
def test_rows_sqlite_cannot_reach_are_read_from_their_pages(folder: Path, page: str) -> None:
    """The answers table's root page overwritten (SQLite reaches none of its rows), or the
    file's first page (SQLite cannot even read its list of tables): every answer is still in
    an intact leaf page, and the repair keeps all of them."""
    before = _fill(folder)
    history_file = folder / "history.sqlite"
    _overwrite(history_file, _pages(history_file, ("internal",))[0] if page == "root" else 1)
    done = repair_history(folder)
    assert done is not None and done.answers_kept == N_ANSWERS
    # Whether some rows were lost is known only when SQLite could still read the table's ids.
    assert done.answers_lost == (0 if page == "root" else None)
    with collection_history("kept") as history:
        assert {a.answer_id: a for a in history.answers()} == before
        assert len(history.feedback()) == N_ANSWERS // 5


def test_one_row_with_broken_json_is_skipped_and_reported(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with History(folder) as history:
        ids = [history.add(ANSWER, Settings(), {}) for _ in range(3)]
    db = sqlite3.connect(folder / "history.sqlite")
    db.execute("UPDATE answers SET settings_json = '{broken' WHERE answer_id = ?", (ids[1],))
    db.commit()
    db.close()
    assert main(["history", "-c", "kept"]) == 0
    out, err = capsys.readouterr()
    assert [line.split()[0] for line in out.splitlines()[::2]] == [str(ids[2]), str(ids[0])]
    assert err == (
        "warning: 1 entry could not be read; if the file is damaged, `verifai repair --history "
        "--collection kept` keeps what can still be read\n"
        f"  answer {ids[1]}: its settings JSON is damaged (Expecting property name enclosed in "
        "double quotes: line 1 column 2 (char 1))\n"
    )
    assert main(["history", "-c", "kept", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "1 entry could not be read" in err
    assert [e["id"] for e in json.loads(out)] == [ids[2], ids[0]]


def test_repairing_the_collection_repairs_its_history_and_keeps_the_damaged_file(
    folder: Path, fake_settings: Settings, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Aspirin lowers stroke risk in women.\n", encoding="utf-8")
    with Collection.open("kept", settings=fake_settings) as collection:
        collection.add_paths([docs])
    before = _fill(folder)
    _damage(folder / "history.sqlite")
    report = repair_collection("kept", settings=fake_settings)
    assert report.history is not None and report.history.answers_lost
    assert report.history.answers_kept + report.history.answers_lost == len(before)
    assert [p.name for p in folder.glob(f"{DAMAGED_PREFIX}*.sqlite")] == [
        report.history.damaged_copy.name
    ]
    with collection_history("kept") as history:
        assert len(history.answers()) == report.history.answers_kept


def test_a_folder_in_the_history_s_place_is_damage_that_repair_sets_aside(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 41, row 13: ``history.sqlite`` replaced by a folder was an ``IsADirectoryError``
    traceback, and ``repair --history`` called it not damaged."""
    history_file = folder / "history.sqlite"
    history_file.unlink(missing_ok=True)  # none yet: the history is made on first use
    history_file.mkdir()
    (history_file / "notes.txt").write_text("kept as it was\n", encoding="utf-8")

    assert main(["history", "-c", "kept"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"error: {history_file} is damaged (it is a folder, not a SQLite file); repair the "
        "answer history of collection 'kept' to keep every answer that can still be read (the "
        f"damaged file is kept beside it) {HINT}\n"
    )

    assert main(["repair", "--history", "-c", "kept"]) == 0
    lines = capsys.readouterr().out.splitlines()
    [aside] = folder.glob(f"{DAMAGED_PREFIX}*")
    assert lines == [
        "answer history of 'kept' repaired: kept 0 answers and 0 judgements; lost an unknown "
        "number of answers and an unknown number of judgements",
        "  it was damaged: it is a folder, not a SQLite file",
        f"  the damaged folder is kept as {aside}",
    ]
    assert (aside / "notes.txt").read_text(encoding="utf-8") == "kept as it was\n"
    assert history_file.is_file()
    assert main(["history", "-c", "kept"]) == 0
    with collection_history("kept") as history:
        assert history.add(ANSWER, Settings(), {}) == 1
    assert main(["repair", "--history", "-c", "kept"]) == 0
    assert capsys.readouterr().out.endswith("is not damaged; nothing to repair\n")
