"""Fixtures of the verification tests: the real bundled verifier, loaded once per module."""

from __future__ import annotations

import pytest

from verifai_desktop.verify.nli import OnnxVerifier, get_verifier


@pytest.fixture(scope="module")
def bundled() -> OnnxVerifier:
    """The bundled NLI verifier (ONNX Runtime, CPU), loaded."""
    verifier = get_verifier("bundled")
    verifier.load()
    return verifier
