"""Generation on an OpenAI-compatible server, for real: llama-cpp-python's server on 127.0.0.1
with the bundled model, asked through the whole pipeline (retrieval, generation under the
citation grammar sent as ``grammar``, verification)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN
from verifai_desktop import modelstore
from verifai_desktop.codec import answer_to_json
from verifai_desktop.names import name_from_json
from verifai_desktop.pipeline import AskSession
from verifai_desktop.settings import ServerSettings, Settings
from verifai_desktop.store.collection import Collection

pytestmark = pytest.mark.slow

ALIAS = "bundled-qwen"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server with the bundled generator; its base URL."""
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server] (test extra)")
    gguf = modelstore.resolve(modelstore.BUNDLED_GENERATOR, "generator").path
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
                "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(port),
                "--n_ctx", "4096", "--n_threads", "2",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=5) as r:
                    models = json.load(r)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the server did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
        assert [m["id"] for m in models["data"]] == [ALIAS]
        yield base
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.fixture(scope="module")
def collection(server: str) -> Iterator[Collection]:
    """The SPECTER paper, ingested (under the first test's ``VERIFAI_HOME``)."""
    with Collection.open("served", create=True) as c:
        c.add_paths([DOCS_CLEAN / "acl2020_specter.pdf"])
        yield c


@pytest.mark.parametrize("constrain", ["auto", "grammar"])
def test_an_answer_generated_by_the_server_is_cited_and_verified(
    server: str, collection: Collection, constrain: str
) -> None:
    server_settings = ServerSettings(base_url=server, model=ALIAS, constrain=constrain)  # type: ignore[arg-type]
    settings = dataclasses.replace(Settings(), server=server_settings)
    session = AskSession(settings)
    answer = session.ask(collection, "What does SPECTER use citations for?", k=3)
    assert not answer.abstained or answer.abstain_reason == "unsupported"
    assert answer.models["generator"] == {"name": ALIAS, "path": server, "sha256": ""}
    assert answer.sentences, answer.text
    for s in answer.sentences:  # the grammar held: every sentence cites a given passage
        assert s.generator_citations and s.invalid_citations == ()
        assert all(1 <= n <= len(answer.passages) for n in s.citations)
        assert [v.passage_number for v in s.verdicts] == list(s.citations)
    generator = session.generator
    assert getattr(generator, "invalid_constraint", None) == ""  # the server took the grammar


def test_without_constraint_citations_are_parsed_and_checked(
    server: str, collection: Collection
) -> None:
    settings = dataclasses.replace(
        Settings(), server=ServerSettings(base_url=server, model=ALIAS, constrain="none")
    )
    answer = AskSession(settings).ask(collection, "What does SPECTER use citations for?", k=3)
    assert answer.text
    for s in answer.sentences:
        assert all(1 <= n <= len(answer.passages) for n in s.citations)
        assert not set(s.citations) & set(s.invalid_citations)


def test_a_source_named_in_latin1_goes_to_the_server_and_back(server: str, tmp_path: Path) -> None:
    """Issue 30, row 1: a passage from a file whose folder and name are Latin-1 bytes once
    crashed the OpenAI client's JSON request (``surrogates not allowed``). Through the real
    server the request goes out as UTF-8, the answer comes back, and its JSON names the file
    escaped with the exact bytes recoverable."""
    raw_folder = os.path.join(os.fsencode(tmp_path), b"caf\xe9")
    os.mkdir(raw_folder)
    raw = os.path.join(raw_folder, b"r\xe9sum\xe9 \xff.md")
    shutil.copyfile(DOCS_CLEAN / "deep_rules_09_overfitting.md", raw)
    settings = dataclasses.replace(
        Settings(), server=ServerSettings(base_url=server, model=ALIAS, constrain="grammar")
    )
    with Collection.open("odd-served", create=True) as collection:
        collection.add_paths([Path(os.fsdecode(raw_folder))])
        answer = AskSession(settings).ask(collection, "What is overfitting?", k=2)
    assert answer.passages and {p.path for p in answer.passages} == {Path(os.fsdecode(raw))}
    assert answer.sentences, answer.text
    data = json.loads(answer_to_json(answer, settings).encode("utf-8"))  # strict UTF-8
    path, shown = os.fsdecode(raw), f"{tmp_path}/caf\\xe9/r\\xe9sum\\xe9 \\xff.md"
    for passage in data["passages"]:
        assert passage["path"] == shown and name_from_json(passage, "path") == path
