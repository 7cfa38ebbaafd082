"""generate/openai_server.py against a scripted HTTP server on 127.0.0.1 (control flow: the
grammar refused and dropped, the API key, errors; the real server test is in tests/e2e)."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from verifai_desktop.domain import ChunkId, DocId, Location, LocationKind, Passage
from verifai_desktop.errors import RemoteGeneratorError, SettingsError
from verifai_desktop.generate.openai_server import (
    ServerGenerator,
    is_local,
    leaves_machine_warning,
)
from verifai_desktop.generate.prompt import ChatMessage, build_answer_prompt
from verifai_desktop.settings import ModelSettings, ServerSettings

PIECES = ["Aspirin lowers", " stroke risk.", " [1]"]


class Scripted(ThreadingHTTPServer):
    """Answers /v1/chat/completions with :data:`PIECES` as server-sent events; refuses a
    request holding ``grammar`` with HTTP 400 when ``refuse_grammar`` is set."""

    refuse_grammar = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[tuple[dict[str, Any], dict[str, str]]] = []
        self.raw_bodies: list[bytes] = []


class Handler(BaseHTTPRequestHandler):
    server: Scripted

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.raw_bodies.append(raw)
        body = json.loads(raw)
        self.server.requests.append((body, {k.lower(): v for k, v in self.headers.items()}))
        if self.server.refuse_grammar and "grammar" in body:
            payload = json.dumps({"error": {"message": "unknown field: grammar"}}).encode()
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for piece in PIECES:
            chunk = {
                "id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
            }  # fmt: skip
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")


@pytest.fixture
def scripted() -> Iterator[Scripted]:
    server = Scripted()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _generator(server: Scripted, **kwargs: Any) -> ServerGenerator:
    port = server.server_address[1]
    settings = ServerSettings(base_url=f"http://127.0.0.1:{port}/v1", model="m", **kwargs)
    return ServerGenerator(settings, ModelSettings(max_answer_tokens=64))


MESSAGES = [ChatMessage("system", "Cite passages."), ChatMessage("user", "Does aspirin help?")]


def test_streams_with_the_grammar_and_the_key_from_the_environment(
    scripted: Scripted, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERIFAI_API_KEY", "sk-test")
    gen = _generator(scripted)
    assert list(gen.stream(MESSAGES, grammar="root ::= x")) == PIECES
    [(body, headers)] = scripted.requests
    assert body["grammar"] == "root ::= x" and body["stream"] is True
    assert body["model"] == "m" and body["max_tokens"] == 64 and body["temperature"] == 0
    assert body["messages"][1] == {"role": "user", "content": "Does aspirin help?"}
    assert headers["authorization"] == "Bearer sk-test"


def test_a_source_whose_name_is_not_utf8_is_sent_as_strict_utf8_json(scripted: Scripted) -> None:
    """Issue 30, row 1: a passage from ``caf\\xe9/r\\xe9sum\\xe9 \\xff.txt`` (Latin-1 bytes)
    once crashed the OpenAI client's JSON; the request body is now strict UTF-8 JSON naming
    the file escaped."""
    text = "Aspirin lowers the risk of stroke."
    passage = Passage(
        ChunkId(1), DocId(1), Path(os.fsdecode(b"/docs/caf\xe9/r\xe9sum\xe9 \xff.txt")), "t",
        text, 0, len(text), Location(LocationKind.PAGE, 2), ((0, len(text)),),
    )  # fmt: skip
    gen = _generator(scripted)
    prompt = build_answer_prompt(
        "What lowers stroke risk?", [passage], count_tokens=gen.count_tokens, max_prompt_tokens=900
    )
    assert list(gen.stream(prompt.messages)) == PIECES
    [raw] = scripted.raw_bodies
    body = json.loads(raw.decode("utf-8"))  # strict: no lone surrogate escapes either
    user = body["messages"][1]["content"]
    assert "[1] (source: r\\xe9sum\\xe9 \\xff.txt, p. 2)\nAspirin lowers" in user
    assert "\\udc" not in raw.decode("utf-8")


def test_auto_drops_a_refused_grammar_for_good(scripted: Scripted) -> None:
    scripted.refuse_grammar = True
    gen = _generator(scripted, constrain="auto")
    assert gen.complete(MESSAGES, grammar="root ::= x") == "".join(PIECES)
    assert gen.complete(MESSAGES, grammar="root ::= x") == "".join(PIECES)
    sent = [("grammar" in body) for body, _ in scripted.requests]
    assert sent == [True, False, False]  # refused once, then never sent again
    assert "unknown field" in gen.invalid_constraint


def test_an_explicit_grammar_refused_is_an_error(scripted: Scripted) -> None:
    scripted.refuse_grammar = True
    gen = _generator(scripted, constrain="grammar")
    with pytest.raises(RemoteGeneratorError, match="HTTP 400"):
        gen.complete(MESSAGES, grammar="root ::= x")


def test_guided_grammar_for_vllm(scripted: Scripted) -> None:
    _generator(scripted, constrain="guided_grammar").complete(MESSAGES, grammar="g")
    [(body, _)] = scripted.requests
    assert body["guided_grammar"] == "g" and "grammar" not in body


def test_a_server_that_is_not_running_says_so() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gen = ServerGenerator(
        ServerSettings(base_url=f"http://127.0.0.1:{port}/v1", model="m"), ModelSettings()
    )
    with pytest.raises(RemoteGeneratorError, match=r"cannot connect.*is the server running"):
        gen.complete(MESSAGES)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_a_password_in_the_base_url_is_never_shown(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 30, row 12: the real client against a closed port; the error names the server
    without its credentials, and nothing logged holds them."""
    port = _free_port()
    gen = ServerGenerator(
        ServerSettings(base_url=f"http://admin:hunter2-secret@127.0.0.1:{port}/v1", model="m"),
        ModelSettings(),
    )
    with caplog.at_level("DEBUG"), pytest.raises(RemoteGeneratorError) as info:
        gen.complete(MESSAGES)
    message = str(info.value)
    assert message.startswith(f"the generation server at http://***@127.0.0.1:{port}/v1 failed: ")
    assert "cannot connect" in message
    for shown in (message, info.value.base_url, info.value.reason, caplog.text):
        assert "hunter2" not in shown and "admin" not in shown
    url = "https://admin:hunter2@api.example.com/v1"
    assert "hunter2" not in leaves_machine_warning(url)
    assert leaves_machine_warning(url).startswith("Answers are generated by the server at ")


def test_a_timeout_the_client_cannot_wait_for_is_refused_up_front() -> None:
    """Issue 30, row 11: ``timeout_s = 1e308`` was accepted, then the request raised
    ``OverflowError``."""
    settings = ServerSettings(base_url=f"http://127.0.0.1:{_free_port()}/v1", model="m")
    for bad in (1e308, float("inf"), 0.0):
        with pytest.raises(SettingsError, match=r"server\.timeout_s: .*; use a number of seconds"):
            ServerGenerator(dataclasses.replace(settings, timeout_s=bad), ModelSettings())


def test_which_hosts_are_local() -> None:
    for url in ("http://127.0.0.1:8080/v1", "http://localhost:11434/v1", "http://[::1]:8000/v1"):
        assert is_local(url) and leaves_machine_warning(url) == ""
    for url in ("https://api.example.com/v1", "http://192.168.1.20:8000/v1"):
        assert not is_local(url)
        assert "leave this machine" in leaves_machine_warning(url)
    assert leaves_machine_warning("") == ""
