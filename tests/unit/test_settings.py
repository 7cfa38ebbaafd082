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


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[retrieval]\nrrf_k = 0\n", "invalid setting retrieval.rrf_k: 0; use a whole number"),
        ("[retrieval]\nrrf_k = -5\n", "invalid setting retrieval.rrf_k: -5; use a whole number"),
        ("[retrieval]\nk = 0\n", "invalid setting retrieval.k: 0; use a whole number of 1"),
        ("[retrieval]\ncandidates = -1\n", "invalid setting retrieval.candidates: -1;"),
        ("[retrieval]\nlexical_weight = nan\n", "retrieval.lexical_weight: nan; use a number"),
        ("[retrieval]\nsemantic_weight = -0.3\n", "retrieval.semantic_weight: -0.3; use a"),
        ("[retrieval]\nlexical_weight = inf\n", "retrieval.lexical_weight: inf; use a number"),
        ("[verify]\npremise = 'words'\n", "verify.premise: 'words'; use one of passage, sentences"),
        (
            "[verify]\nsupport_threshold = 1.5\n",
            "verify.support_threshold: 1.5; use a number from 0 to 1",
        ),
        ("[verify]\ncontradict_threshold = -0.1\n", "verify.contradict_threshold: -0.1; use a"),
        (
            "[verify]\nabstain_threshold = 2.0\n",
            "verify.abstain_threshold: 2.0; use a number from -1",
        ),
        ("[retrieval]\nmode = 'fuzzy'\n", "retrieval.mode: 'fuzzy'; use one of hybrid, rrf"),
        (
            "[retrieval]\nexclude_references = 'yes'\n",
            "invalid setting settings.retrieval.exclude_references: expected bool, got 'yes'",
        ),
        (
            "[generation]\nprompt_passage_tokens = 50\n",
            "generation.prompt_passage_tokens: 50; use a whole number of 128 tokens or more",
        ),
        (
            "[generation]\nprompt_passage_tokens_gpu = 0\n",
            "generation.prompt_passage_tokens_gpu: 0; use a whole number of 128 tokens or more",
        ),
        (
            "[generation]\nquote_first = 'yes'\n",
            "invalid setting settings.generation.quote_first: expected bool, got 'yes'",
        ),
        (
            "[generation]\nprompt_passage_tokens = 1500.5\n",
            "settings.generation.prompt_passage_tokens: expected int, got 1500.5",
        ),
        # Issue 30, row 11: upper bounds, so a huge value is refused here, not crashed on later.
        (
            "[server]\ntimeout_s = 1e308\n",
            "invalid setting server.timeout_s: 1e+308; use a number of seconds from 1 to 3600",
        ),
        ("[server]\ntimeout_s = inf\n", "server.timeout_s: inf; use a number of seconds from 1"),
        ("[server]\ntimeout_s = 0.5\n", "server.timeout_s: 0.5; use a number of seconds from 1"),
        ("[retrieval]\nk = 10001\n", "retrieval.k: 10001; use a whole number from 1 to 10000"),
        (
            "[retrieval]\ncandidates = 1000000000\n",
            "retrieval.candidates: 1000000000; use a whole number from 1 to 10000",
        ),
        ("[retrieval]\nrrf_k = 99999\n", "retrieval.rrf_k: 99999; use a whole number from 1"),
        (
            "[generation]\nprompt_passage_tokens_gpu = 10000000\n",
            "generation.prompt_passage_tokens_gpu: 10000000; use a whole number from 128 to "
            "1048576 tokens",
        ),
        (
            "[ingest]\nmax_chunks_per_file = 9999999999\n",
            "ingest.max_chunks_per_file: 9999999999; use a whole number from 1 to 1000000",
        ),
        (
            "[ingest]\nocr_engine = 'abbyy'\n",
            "ingest.ocr_engine: 'abbyy'; use one of tesseract, rapidocr, off",
        ),
        ("[ingest]\nocr_dpi = 50\n", "ingest.ocr_dpi: 50; use a whole number of 72 dpi or more"),
        (
            "[ingest]\nocr_max_pixels = 1000\n",
            "ingest.ocr_max_pixels: 1000; use a whole number of 1000000 or more",
        ),
        (
            "[models]\ncontext_tokens = 99999999\n",
            "models.context_tokens: 99999999; use a whole number from 512 to 1048576 tokens",
        ),
        (
            "[models]\nmax_answer_tokens = 0\n",
            "models.max_answer_tokens: 0; use a whole number of 1 tokens or more",
        ),
        ("[models]\nn_gpu_layers = -2\n", "models.n_gpu_layers: -2; use a whole number of -1"),
        (
            "[server]\nbase_url = 'ftp://user:hunter2@host/v1'\n",
            "server.base_url: 'ftp://***@host/v1'; use an http:// or https:// address",
        ),
    ],
)
def test_out_of_range_settings_name_key_value_and_what_is_allowed(
    tmp_path: Path, body: str, message: str
) -> None:
    p = tmp_path / "s.toml"
    p.write_text(body)
    with pytest.raises(SettingsError) as info:
        st.load_settings(p)
    assert message in str(info.value)


def test_edge_values_are_accepted(tmp_path: Path) -> None:
    p = tmp_path / "s.toml"
    p.write_text(
        "[retrieval]\nk = 1\nrrf_k = 1\nlexical_weight = 0\nsemantic_weight = 1\n"
        "[verify]\nsupport_threshold = 1.0\ncontradict_threshold = 0.0\nabstain_threshold = -1.0\n"
    )
    s = st.load_settings(p)
    assert (s.retrieval.rrf_k, s.verify.abstain_threshold) == (1, -1.0)
    p.write_text(
        "[retrieval]\nk = 10000\ncandidates = 10000\n[server]\ntimeout_s = 3600\n"
        "[models]\nn_gpu_layers = -1\ncontext_tokens = 512\nmax_answer_tokens = 32768\n"
        "[ingest]\nmax_chunks_per_file = 1000000\n"
    )
    s = st.load_settings(p)
    assert (s.retrieval.k, s.server.timeout_s, s.models.context_tokens) == (10000, 3600.0, 512)


def test_generation_budgets_default_and_round_trip(tmp_path: Path) -> None:
    defaults = st.Settings()
    assert defaults.retrieval.exclude_references is True
    assert (
        defaults.generation.passage_budget(gpu=False),
        defaults.generation.passage_budget(gpu=True),
    ) == (700, 4000)
    p = tmp_path / "s.toml"
    p.write_text(
        "[retrieval]\nexclude_references = false\n"
        "[generation]\nprompt_passage_tokens = 900\nprompt_passage_tokens_gpu = 6000\n"
    )
    loaded = st.load_settings(p)
    assert loaded.retrieval.exclude_references is False
    assert loaded.generation == st.GenerationSettings(900, 6000)
    assert st.load_settings(st.save_settings(loaded, tmp_path / "again.toml")) == loaded


def test_generation_settings_are_checked_when_built_in_code() -> None:
    with pytest.raises(SettingsError, match="prompt_passage_tokens: True; use a whole number"):
        st.check_generation(st.GenerationSettings(prompt_passage_tokens=True))
    with pytest.raises(SettingsError, match=r"retrieval\.exclude_references: 1; use true or false"):
        st.check_retrieval(st.RetrievalSettings(exclude_references=1))  # type: ignore[arg-type]
