"""Collection names: folders stay safe, users name collections as they like (issue 13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifai_desktop.cli import main
from verifai_desktop.errors import CollectionExists, CollectionNotFound, InvalidCollectionName
from verifai_desktop.settings import Settings, collections_dir, save_settings
from verifai_desktop.store import naming
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import (
    delete_collection,
    existing_path,
    list_collections,
    rename_collection,
)
from verifai_desktop.store.repair import repair_collection


def test_slug_keeps_letters_digits_and_drops_the_rest() -> None:
    assert naming.slug("Grant proposals 2026") == "Grant-proposals-2026"
    assert naming.slug("Études / Q3") == "Etudes-Q3"
    assert naming.slug("../evil") == "evil"
    assert naming.slug("数据") == "collection"
    assert naming.is_folder_name(naming.slug("x" * 200))


@pytest.mark.parametrize("bad", ["", "   ", "a\nb", "tab\there", "esc\x1b[2J", "x" * 81])
def test_names_no_collection_can_have(bad: str, fake_settings: Settings) -> None:
    with pytest.raises(InvalidCollectionName):
        Collection.open(bad, create=True, settings=fake_settings)
    assert list_collections() == []


def test_a_name_with_spaces_gets_a_safe_folder_and_is_found_by_either_name(
    fake_settings: Settings,
) -> None:
    with Collection.open("Grant proposals", create=True, settings=fake_settings) as col:
        assert (col.name, col.display_name) == ("Grant-proposals", "Grant proposals")
    assert list_collections() == ["Grant-proposals"]
    assert [(n.folder, n.display) for n in naming.list_names()] == [
        ("Grant-proposals", "Grant proposals")
    ]
    for name in ("Grant proposals", "Grant-proposals", "  grant PROPOSALS "):
        with Collection.open(name) as col:
            assert col.display_name == "Grant proposals"
    # A second collection whose name makes the same folder gets its own.
    with Collection.open("Grant  proposals!", create=True, settings=fake_settings) as col:
        assert col.name == "Grant-proposals-2"
    # A path-like name is only a name: the folder stays inside the collections folder.
    with Collection.open("../evil", create=True, settings=fake_settings) as col:
        assert col.path == collections_dir() / "evil" and col.display_name == "../evil"
    with pytest.raises(CollectionNotFound):
        Collection.open("no such collection")


def test_rename_to_a_display_name_and_back(fake_settings: Settings) -> None:
    Collection.open("papers", create=True, settings=fake_settings).close()
    assert rename_collection("papers", "My papers") == "My-papers"
    assert existing_path("My papers") == collections_dir() / "My-papers"
    with Collection.open("My papers") as col:
        assert col.display_name == "My papers"
    # Only the display name changes when the folder already fits it.
    assert rename_collection("My papers", "My.papers") == "My.papers"
    with Collection.open("My.papers") as col:
        assert (col.name, col.display_name) == ("My.papers", "My.papers")
    Collection.open("Other one", create=True, settings=fake_settings).close()
    with pytest.raises(CollectionExists):
        rename_collection("My.papers", "other ONE")
    delete_collection("Other one")
    assert list_collections() == ["My.papers"]


def test_repair_keeps_the_display_name(fake_settings: Settings, tmp_path: Path) -> None:
    save_settings(fake_settings)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("A note about display names.\n", encoding="utf-8")
    with Collection.open("Team notes", create=True, settings=fake_settings) as col:
        col.add_paths([docs])
    repair_collection("Team notes", settings=fake_settings)
    with Collection.open("Team notes") as col:
        assert col.display_name == "Team notes" and len(col.documents()) == 1


def test_cli_collections_show_the_display_name(
    fake_settings: Settings, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    save_settings(fake_settings)
    note = tmp_path / "n.txt"
    note.write_text("Spaces in collection names work from the command line too.\n")
    assert main(["ingest", str(note), "-c", "Lab book 2026"]) == 0
    capsys.readouterr()
    assert main(["collections"]) == 0
    assert capsys.readouterr().out.split() == [
        "Lab", "book", "2026", "(Lab-book-2026)", "1", "documents", "1", "chunks",
    ]  # fmt: skip
    assert main(["collections", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["display_name"]) for r in rows] == [("Lab-book-2026", "Lab book 2026")]
    assert main(["search", "command line", "-c", "lab book 2026", "--mode", "lexical"]) == 0
    assert "n.txt" in capsys.readouterr().out
