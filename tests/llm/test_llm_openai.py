"""The OpenAI-compatible client against a real server: llama_cpp.server with the bundled SmolLM2 on 127.0.0.1."""
from __future__ import annotations

import jsonschema
import pytest

from core.cancel import CancelToken, Cancelled
from core.config import ModelSettings
from core.errors import ContextOverflowError, ServerUnavailableError
from core.llm import open_client
from tests.support.llm_server import free_port, running_server

SCHEMA = {"type": "object", "properties": {"colour": {"enum": ["red", "green", "blue"]},
                                           "reason": {"type": "string", "maxLength": 60}},
          "required": ["colour", "reason"], "additionalProperties": False}


@pytest.fixture(scope="module")
def server(smol_path, tmp_path_factory):
    with running_server(smol_path, tmp_path_factory.mktemp("server") / "server.log", n_ctx=2048) as base:
        yield base


@pytest.fixture
def client(server):
    llm = open_client(ModelSettings(backend="openai", base_url=server, context_length=2048))
    yield llm
    llm.close()


def ask(text):
    return [{"role": "user", "content": text}]


def test_chat_streams_through_the_server(client):
    pieces = []
    reply = client.complete(ask("Say hello."), max_tokens=10, temperature=0.0, on_token=pieces.append)
    assert reply.text and "".join(pieces) == reply.text
    assert client.model_id == "smollm2", "the model name comes from the server's /models"
    assert reply.completion_tokens >= 1 and reply.prompt_tokens > 0 and reply.seconds >= reply.ttft_seconds > 0
    assert reply.extra["backend"] == "openai" and reply.finish_reason in ("stop", "length")


def test_structured_output_through_the_server_validates(client):
    for topic in ("the sea", "a forest"):
        reply = client.complete(ask(f"Pick a colour for {topic}; reply as JSON."), max_tokens=60,
                                temperature=0.0, json_schema=SCHEMA)
        jsonschema.validate(reply.parsed, SCHEMA)
    assert client._format in ("json_schema", "json_object"), "the server's own constrained decoding was used"


def test_tokens_are_counted_by_the_server_and_overflow_is_caught_before_sending(client, server):
    assert client.count_tokens("Hello there, general.") >= 3 and client._tokenizer == "extras"
    small = open_client(ModelSettings(backend="openai", base_url=server, context_length=64))
    with pytest.raises(ContextOverflowError) as caught:
        small.complete(ask("word " * 100), max_tokens=8)
    assert caught.value.prompt_tokens > 64 and caught.value.context_length == 64


def test_the_servers_own_overflow_error_is_recognised(server):
    lying = open_client(ModelSettings(backend="openai", base_url=server, context_length=100_000))
    with pytest.raises(ContextOverflowError, match="context"):
        lying.complete(ask("memory " * 3000), max_tokens=8)


def test_cancel_stops_the_stream(client):
    token, pieces = CancelToken(), []

    def on_token(piece):
        pieces.append(piece)
        if len(pieces) == 2:
            token.cancel("enough")

    with pytest.raises(Cancelled, match="enough"):
        client.complete(ask("Tell a long story."), max_tokens=200, on_token=on_token, cancel=token)
    assert len(pieces) < 50
    assert client.complete(ask("Hi"), max_tokens=3).completion_tokens >= 1


def test_a_server_that_is_down_is_a_clear_error():
    port = free_port()   # nothing listens there
    llm = open_client(ModelSettings(backend="openai", base_url=f"http://127.0.0.1:{port}/v1",
                                    server_model="any", request_timeout_s=5))
    with pytest.raises(ServerUnavailableError, match=f"127.0.0.1:{port}"):
        llm.complete(ask("Hi"), max_tokens=3)
    assert llm.count_tokens("four words right here") > 0, "falls back to the estimate"


def test_bad_settings_are_clear():
    from core.errors import ConfigError, ModelError

    with pytest.raises(ModelError, match="base_url"):
        open_client(ModelSettings(backend="openai", base_url="localhost:1234"))
    with pytest.raises(ConfigError, match="backend"):
        open_client(ModelSettings(backend="cloud"))
