"""Document sources: a benchmark key is told from a file path by one prefix, kept as stored."""

from __future__ import annotations

from verifai_desktop.store.sources import BENCHMARK_SOURCE_PREFIX, is_file_source


def test_benchmark_keys_are_no_file_sources() -> None:
    assert BENCHMARK_SOURCE_PREFIX == "beir:"  # in existing catalogs and histories: fixed
    assert not is_file_source("beir:4983")
    assert is_file_source("/home/ana/papers/beir-survey.pdf")
    assert is_file_source("C:\\papers\\beir:notes.txt")
