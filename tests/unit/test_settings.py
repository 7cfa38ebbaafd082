from __future__ import annotations

from pathlib import Path

import pytest

from verifai_desktop import settings as st
from verifai_desktop.errors import SettingsError


def test_data_root_follows_verifai_home(verifai_home: Path) -> None:
    assert st.data_root() == verifai_home
    assert st.collections_dir() == verifai_home / "collections"


def test_round_trip_keeps_changed_values(tmp_path: Path) -> None:
    s = st.Settings(
        retrieval=st.RetrievalSettings(k=7, mode="rrf", lexical_weight=0.6, semantic_weight=0.4)
    )
    path = st.save_settings(s, tmp_path / "s.toml")
    assert st.load_settings(path) == s


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    assert st.load_settings(tmp_path / "absent.toml") == st.Settings()


def test_int_accepted_for_float(tmp_path: Path) -> None:
    p = tmp_path / "s.toml"
    p.write_text("[retrieval]\nlexical_weight = 1\n")
    assert st.load_settings(p).retrieval.lexical_weight == 1.0


@pytest.mark.parametrize(
    "body",
    [
        "[retrieval]\nk = 'ten'\n",
        "[retrieval]\nbogus = 1\n",
        "not toml [",
        "[retrieval]\nmode = 'fuzzy'\n",
    ],
)
def test_bad_settings_raise_clear_error(tmp_path: Path, body: str) -> None:
    p = tmp_path / "s.toml"
    p.write_text(body)
    with pytest.raises(SettingsError):
        st.load_settings(p)
