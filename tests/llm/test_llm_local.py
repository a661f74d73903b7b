"""The llama.cpp worker client with the real bundled models (SmolLM2 135M, Gemma 3 270M)."""
from __future__ import annotations

import os
import signal
import threading
import time

import jsonschema
import pytest

from tests.support.gguf import GEMMA, MODELS, SMOL, gguf_bytes, huge_gguf
from core.cancel import CancelToken, Cancelled
from core.config import ModelSettings
from core.errors import ContextOverflowError, ModelError, ModelNotFoundError, ModelWorkerCrashed
from core.llm import open_client
from core.llm.structured import StructuredOutputError

CHAT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
EXPECTED = {
    SMOL: "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    GEMMA: "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n",
}
FACTS = {"type": "object", "properties": {
    "facts": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 60}},
    "topic": {"enum": ["tea", "work", "travel"]}}, "required": ["facts", "topic"], "additionalProperties": False}


def client_for(model_id: str, **values):
    return open_client(ModelSettings(**{"model": model_id, "context_length": 2048, **values}))


@pytest.fixture(scope="module", params=MODELS)
def llm(request):
    client = client_for(request.param)
    yield client
    client.close()


@pytest.fixture(scope="module")
def smol():
    client = client_for(SMOL)
    yield client
    client.close()


def ask(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def test_each_model_gets_its_own_chat_template(llm):
    prompt, count = llm.render_prompt(CHAT)
    assert prompt == EXPECTED[llm.model_id]
    head = llm.prompt_head(CHAT)
    if llm.model_id == GEMMA:
        assert head[0] == 2 and head[1] != 2, "exactly one <bos>"
        assert head[1] == 105, "<start_of_turn> is one special token, not text"
    else:
        assert head[0] == 1, "<|im_start|> is one special token"
    assert count == llm.complete(CHAT, max_tokens=1, temperature=0.0).prompt_tokens
    default_system, _ = llm.render_prompt(ask("Hi"))
    if llm.model_id == SMOL:   # SmolLM2's own template adds its default system prompt
        assert default_system.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")


def test_complete_streams_tokens_and_reports_counts_and_timing(llm):
    pieces: list[str] = []
    reply = llm.complete(ask("Name a colour."), max_tokens=12, temperature=0.0, on_token=pieces.append)
    assert reply.text and "".join(pieces) == reply.text
    assert 1 <= reply.completion_tokens <= 12 and reply.prompt_tokens > 5
    assert reply.finish_reason in ("stop", "length") and reply.model == llm.model_id
    assert reply.seconds >= reply.ttft_seconds > 0 and reply.decode_tps >= 0
    assert llm.context_length == 2048


def test_count_tokens_uses_the_models_own_tokenizer(llm, smol):
    assert llm.count_tokens("") == 0 and llm.count_tokens("Hello there") >= 2
    chinese = "我喜欢喝绿茶，不喜欢咖啡。周末我们去公园散步。"
    if llm.model_id == GEMMA:   # a 262k vocabulary covers Chinese; SmolLM2's falls back to bytes
        assert llm.count_tokens(chinese) < smol.count_tokens(chinese)


def test_stop_strings_end_the_reply(smol):
    reply = smol.complete(ask("List five fruits, one per line."), max_tokens=40, temperature=0.0, stop=["\n"])
    assert "\n" not in reply.text and reply.finish_reason == "stop"


def test_structured_output_with_the_grammar_always_validates(llm):
    for topic in ("my tea habits", "a trip to Lisbon"):
        reply = llm.complete(ask(f"Write facts about {topic} as JSON."), max_tokens=120, temperature=0.0,
                             json_schema=FACTS)
        jsonschema.validate(reply.parsed, FACTS)
        assert reply.extra["json_mode"] == "grammar"


@pytest.mark.slow
@pytest.mark.parametrize("model_id", MODELS)
def test_structured_output_by_retry_validates_or_fails_clearly(model_id):
    client = client_for(model_id, json_mode="retry")
    try:
        for topic in ("tea", "work"):
            reply = client.complete(ask(f"Facts about {topic}."), max_tokens=120, temperature=0.0, json_schema=FACTS)
            jsonschema.validate(reply.parsed, FACTS)
            assert 1 <= reply.extra["attempts"] <= 3
    finally:
        client.close()


def test_keywords_the_grammar_cannot_enforce_are_validated(smol):
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3, "maximum": 4}},
              "required": ["n"]}
    try:
        reply = smol.complete(ask("Pick a number."), max_tokens=20, temperature=0.0, json_schema=schema)
    except StructuredOutputError as exc:
        assert "schema" in str(exc)
    else:
        assert reply.parsed["n"] in (3, 4)
    with pytest.raises(ModelError, match="schema itself is invalid"):
        smol.complete(ask("x"), max_tokens=5, json_schema={"type": "no-such-type"})


def test_overflow_is_raised_before_generation(smol):
    small = client_for(SMOL, context_length=256)
    try:
        streamed: list[str] = []
        long_text = "The quick brown fox jumps over the lazy dog. " * 60
        with pytest.raises(ContextOverflowError) as caught:
            small.complete(ask(long_text), max_tokens=10, on_token=streamed.append)
        assert caught.value.prompt_tokens > 256 and caught.value.context_length == 256 and not streamed
        with pytest.raises(ContextOverflowError, match="context length exceeded"):
            small.complete(ask("Hello"), max_tokens=250)   # the prompt fits, the reply would not
        assert small.complete(ask("Hello"), max_tokens=5).text is not None, "the client still works"
    finally:
        small.close()


def test_cancel_stops_between_tokens_and_keeps_the_worker(smol):
    token, pieces = CancelToken(), []

    def on_token(piece):
        pieces.append(piece)
        if len(pieces) == 3:
            token.cancel("person pressed stop")

    smol.complete(ask("Hi"), max_tokens=2)
    pid = smol.worker_pid
    with pytest.raises(Cancelled, match="person pressed stop"):
        smol.complete(ask("Tell me a long story about a dragon."), max_tokens=200, temperature=0.0,
                      on_token=on_token, cancel=token)
    assert 3 <= len(pieces) < 20 and smol.worker_pid == pid, "stopped in the loop, not killed"
    assert smol.complete(ask("Say yes."), max_tokens=4).completion_tokens >= 1
    with pytest.raises(Cancelled):
        smol.complete(ask("Hi"), max_tokens=4, cancel=token)   # already cancelled: nothing runs


def test_cancel_during_a_long_prompt_kills_the_worker_after_the_deadline():
    client = client_for(SMOL, context_length=8192, cancel_deadline_s=0.3)
    try:
        client.load()
        pid = client.worker_pid
        token = CancelToken()
        threading.Timer(0.5, token.cancel, args=("stop now",)).start()
        started = time.monotonic()
        with pytest.raises(Cancelled, match="did not stop within"):
            client.complete(ask("Summarise: " + "memory sensor farm export " * 1400), max_tokens=8, cancel=token)
        assert time.monotonic() - started < 10
        assert client.worker_pid is None
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        assert client.complete(ask("Say hi."), max_tokens=4).completion_tokens >= 1, "a fresh worker answers"
    finally:
        client.close()


def _killed_mid_reply(smol, sig: int, after: int) -> tuple[int, ModelWorkerCrashed]:
    """Send `sig` to the worker once `after` pieces of a reply have arrived: (the old worker's pid, the
    error the caller got)."""
    smol.complete(ask("Hi"), max_tokens=2)
    pid = smol.worker_pid
    seen = []

    def kill_mid_reply(piece):
        seen.append(piece)
        if len(seen) == after:
            os.kill(pid, sig)

    with pytest.raises(ModelWorkerCrashed, match=signal.Signals(sig).name) as crashed:
        smol.complete(ask("Count from one to fifty."), max_tokens=100, on_token=kill_mid_reply)
    return pid, crashed.value


def test_a_killed_worker_is_a_clear_error_and_the_next_call_works(smol):
    pid, _ = _killed_mid_reply(smol, signal.SIGKILL, after=2)
    assert smol.complete(ask("Say hi."), max_tokens=4).completion_tokens >= 1
    assert smol.worker_pid not in (None, pid)
    os.kill(smol.worker_pid, signal.SIGKILL)   # killed while idle: the next call does not even notice
    time.sleep(0.2)
    assert smol.count_tokens("a fresh worker counts this") > 0


def test_an_illegal_instruction_kills_only_the_worker_and_says_what_to_do(smol):
    """A llama.cpp built for another CPU (or AMX that faults) dies with SIGILL on its first step:
    the caller gets a ModelWorkerCrashed naming the cause and the rebuild, and the next call works."""
    pid, crashed = _killed_mid_reply(smol, signal.SIGILL, after=1)
    assert "CPU instruction this machine cannot run" in str(crashed)
    assert "REVERIE_REBUILD=1 bash scripts/setup.sh" in str(crashed)
    assert smol.complete(ask("Say hi."), max_tokens=4).completion_tokens >= 1
    assert smol.worker_pid not in (None, pid)


def test_an_idle_worker_unloads_and_comes_back():
    client = client_for(SMOL, idle_unload_s=1.0)
    try:
        client.complete(ask("Hi"), max_tokens=2)
        pid = client.worker_pid
        deadline = time.monotonic() + 20
        while client.worker_pid is not None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert client.worker_pid is None, "the worker exited after being idle"
        assert client.complete(ask("Hi again"), max_tokens=2).completion_tokens >= 1
        assert client.worker_pid not in (None, pid)
    finally:
        client.close()


def test_a_niced_worker_runs_below_the_caller_and_still_answers():
    client = client_for(SMOL, nice=7)
    try:
        assert client.complete(ask("Hi"), max_tokens=2).completion_tokens >= 1
        assert os.getpriority(os.PRIO_PROCESS, client.worker_pid) == os.getpriority(os.PRIO_PROCESS, 0) + 7
    finally:
        client.close()


def test_the_desktop_opens_its_model_niced(tmp_path):
    from core.workspace import Workspace
    from desktop.llm_access import APP_MODEL_NICE, default_factory

    ws = Workspace.create(tmp_path / "ws")
    client = default_factory(ws)
    try:
        assert client.settings.nice == APP_MODEL_NICE
    finally:
        client.close()


def test_a_shared_prefix_is_not_computed_again(smol):
    memory = "MEMORY.md:\n" + "\n".join(f"- Fact number {i} about the orchard sensors" for i in range(15))
    first = smol.complete([{"role": "system", "content": memory}, *ask("What is fact 3?")], max_tokens=2)
    second = smol.complete([{"role": "system", "content": memory}, *ask("And fact 7?")], max_tokens=2)
    shared = smol.render_prompt([{"role": "system", "content": memory}])[1]
    assert second.extra["cached_tokens"] >= shared - 2 and first.prompt_tokens > shared


def test_missing_corrupt_and_foreign_files_name_the_file(tmp_path, smol_path):
    cases = {}
    cases["missing"] = tmp_path / "missing.gguf"
    cases["truncated"] = tmp_path / "truncated.gguf"
    cases["truncated"].write_bytes(smol_path.read_bytes()[: 30 << 20])
    cases["not GGUF"] = tmp_path / "weights.bin"
    cases["not GGUF"].write_bytes(b"PK\x03\x04 a zip file, not weights" * 100)
    for expected, path in cases.items():
        with pytest.raises(ModelError, match=expected.split()[0]) as caught:
            open_client(ModelSettings(model=str(path)))
        assert str(path) in str(caught.value)
    with pytest.raises(ModelNotFoundError, match="not a catalog id"):
        open_client(ModelSettings(model="llama-9000"))


def test_a_model_too_large_for_memory_is_refused_before_loading(tmp_path):
    from models.fit import total_memory

    huge = huge_gguf(tmp_path / "huge.gguf", 2 * max(total_memory(), 1 << 30))
    with pytest.raises(ModelError, match="too large for this machine") as caught:
        open_client(ModelSettings(model=str(huge)))
    assert str(huge) in str(caught.value)


def test_a_file_llama_cpp_cannot_load_fails_clearly_and_nothing_else_breaks(tmp_path, smol):
    bad = tmp_path / "no-tensors.gguf"
    bad.write_bytes(gguf_bytes({"general.architecture": "llama", "llama.context_length": 512}, []))
    client = open_client(ModelSettings(model=str(bad), context_length=512))
    try:
        with pytest.raises(ModelError) as caught:
            client.complete(ask("Hi"), max_tokens=2)
        assert str(bad) in str(caught.value)
    finally:
        client.close()
    assert smol.complete(ask("Still there?"), max_tokens=3).completion_tokens >= 1
