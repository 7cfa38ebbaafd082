"""The team collections the app lists (store/pg/team.py): the URL built from the form, the key
the app names one by, and the list kept in ``team_collections.toml`` (never a password)."""

from __future__ import annotations

import re
import stat
from typing import Any

import pytest

from verifai_desktop.errors import InvalidCollectionName, SettingsError
from verifai_desktop.store.pg.team import (
    TeamCollection,
    forget_team,
    is_team_key,
    load_teams,
    save_team,
    team_of,
    team_url,
    teams_path,
)


def _url(**change: Any) -> str:
    """The URL of the form filled for alice on db.example.org, with ``change``."""
    form: dict[str, Any] = {"host": "db.example.org", "port": 5432, "database": "docs"}
    return team_url(**(form | {"user": "alice", "sslmode": "verify-full"} | change))


def test_the_url_encodes_every_part_and_brackets_an_ipv6_address() -> None:
    url = _url(host="::1", database="team docs", user="al ice")
    assert url == "postgresql://al%20ice@[::1]:5432/team%20docs?sslmode=verify-full"
    assert TeamCollection(url, "handbook").sslmode == "verify-full"
    assert TeamCollection("postgresql://alice@db/docs", "handbook").sslmode == "prefer"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"host": ""}, "invalid setting server: give the server of the PostgreSQL store"),
        ({"database": " "}, "invalid setting database: give the database of the PostgreSQL store"),
        ({"port": 0}, "invalid setting port: 0 is not a port; use 1 to 65535 (PostgreSQL: 5432)"),
        (
            {"sslmode": "on"},
            "invalid setting sslmode: 'on' is not one of verify-full, verify-ca, require, "
            "prefer, allow, disable",
        ),
    ],
)
def test_a_form_missing_a_part_says_which(change: dict[str, Any], message: str) -> None:
    with pytest.raises(SettingsError) as err:
        _url(**change)
    assert str(err.value) == message


def test_the_key_names_the_url_and_the_collection() -> None:
    team = TeamCollection(_url(), "handbook")
    assert team.key == "postgresql://alice@db.example.org:5432/docs?sslmode=verify-full#handbook"
    assert is_team_key(team.key) and not is_team_key("handbook")
    assert team_of(team.key) == team
    with pytest.raises(SettingsError):
        team_of("postgresql://alice@db/docs")


def test_the_list_keeps_urls_and_names_only_user_only() -> None:
    first = TeamCollection(_url(), "handbook")
    second = TeamCollection(_url(sslmode="require"), "policies")
    assert load_teams() == []
    save_team(first)
    save_team(second)
    save_team(first)  # listed once, last
    assert load_teams() == [second, first]
    assert stat.S_IMODE(teams_path().stat().st_mode) == 0o600
    with pytest.raises(SettingsError, match="the URL holds a password"):
        save_team(TeamCollection("postgresql://alice:secret@db/docs", "handbook"))
    with pytest.raises(SettingsError, match="the URL holds a password"):
        save_team(TeamCollection("postgresql://alice@db/docs?password=secret", "handbook"))
    with pytest.raises(InvalidCollectionName):
        save_team(TeamCollection(first.url, "Hand Book"))
    assert "secret" not in teams_path().read_text(encoding="utf-8")
    forget_team(second.key)
    assert load_teams() == [first]


def test_a_damaged_list_is_a_clear_error() -> None:
    teams_path().parent.mkdir(parents=True, exist_ok=True)
    teams_path().write_text("[[collection]]\nurl = 'mysql://db'\nname = 'x'\n", encoding="utf-8")
    with pytest.raises(SettingsError, match=re.escape("expected url = 'postgresql://...', name")):
        load_teams()
    teams_path().write_text("[[collection", encoding="utf-8")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_teams()
