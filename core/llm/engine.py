"""The llama.cpp engine: one Llama object, its KV cache, and the token loop.

Runs inside the worker process only (core/llm/worker.py). It renders and
counts prompts, reuses the KV cache of the longest shared prefix between
calls, samples in C, streams text, honours stop strings, and does
grammar-constrained decoding the fast way: sample freely, check only the
chosen token against the grammar, and constrain the candidates only when the
model's own choice is rejected (what llama.cpp's common sampler does). A full
grammar pass over a 262k vocabulary per token is what made Gemma 3 about ten
times slower with a schema.
"""
from __future__ import annotations

import codecs
import contextlib
import ctypes
import math
import os
import time
from dataclasses import dataclass
from typing import Callable

from core.llm.templates import TURN_ENDS, ChatTemplate, template_for

# Environment for any process that runs llama.cpp, set before llama_cpp is first imported.
# OpenMP's default spin-waiting between graphs collapses decoding when the cores are shared
# (GUI, embedding model, other programs): measured on 2 busy cores, SmolLM2 decoded at
# 2-3 tok/s with 2 spinning threads, 15-17 tok/s with passive waiting, 16-18 with one thread.
LLAMA_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}

RESAMPLE_TOP = 256      # rejected token: try the grammar on this many best candidates before the whole vocabulary


@dataclass
class EngineConfig:
    path: str
    n_ctx: int
    n_gpu_layers: int
    n_threads: int
    chat_format: str = "gguf"
    n_batch: int = 512
    seed: int = 0


@dataclass
class Generation:
    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    finish_reason: str = "stop"
    prefill_seconds: float = 0.0
    ttft_seconds: float = 0.0
    seconds: float = 0.0
    grammar_rejections: int = 0
    decode_cpu_seconds: float = 0.0   # CPU time of this process after the first token (all threads)


@contextlib.contextmanager
def llama_defaults():
    """Patch llama-cpp-python's defaults for what its constructor does not expose.

    - Flash attention: it maps flash_attn=True/False to ENABLED/DISABLED and offers no
      AUTO; ENABLED points at AUTO while a context is made (pass flash_attn=True).
    - Weight repacking ("extra buffer types"): off where the CPU advertises AMX and
      llama.cpp was built with AMX code (a native build on such a CPU; scripts/setup.sh
      builds without it). ggml's AMX matmul faults (SIGILL on a tile instruction or
      SIGSEGV in ggml_backend_amx_mul_mat, on the first prompt of more than one token,
      whatever the model) on virtual machines that list AMX, as on the machines this
      was written on. REVERIE_LLAMA_EXTRA_BUFTS=1 turns repacking back on where AMX
      works, =0 turns it off everywhere.
    Only for the worker (and servers we start): both are single-threaded at load time.
    """
    import llama_cpp.llama_cpp as lib

    saved_fa, saved_params = lib.LLAMA_FLASH_ATTN_TYPE_ENABLED, lib.llama_model_default_params
    lib.LLAMA_FLASH_ATTN_TYPE_ENABLED = lib.LLAMA_FLASH_ATTN_TYPE_AUTO
    if not extra_buffers_ok():
        def params():
            value = saved_params()
            value.use_extra_bufts = False
            return value
        lib.llama_model_default_params = params
    try:
        yield
    finally:
        lib.LLAMA_FLASH_ATTN_TYPE_ENABLED, lib.llama_model_default_params = saved_fa, saved_params


def extra_buffers_ok() -> bool:
    flag = os.environ.get("REVERIE_LLAMA_EXTRA_BUFTS", "")
    if flag:
        return flag not in ("0", "false", "no")
    return not (cpu_has_amx() and build_has_amx())


def extra_buffers_forced() -> bool:
    """REVERIE_LLAMA_EXTRA_BUFTS turns repacking on although this CPU lists AMX."""
    flag = os.environ.get("REVERIE_LLAMA_EXTRA_BUFTS", "")
    return bool(flag) and flag not in ("0", "false", "no") and cpu_has_amx()


def build_has_amx() -> bool:
    """Whether this llama.cpp was compiled with AMX code (it reports AMX_INT8 = 1); True when it cannot say."""
    try:
        import llama_cpp

        return b"AMX_INT8 = 1" in llama_cpp.llama_print_system_info()
    except Exception:
        return True


def cpu_has_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return "amx_tile" in line.split()
    except OSError:
        pass
    return False


def tokenize_prompt(llm, prompt: str) -> list[int]:
    """A rendered prompt's tokens. The template writes the BOS text itself when the model
    wants one (Gemma); add it only if missing, never twice."""
    tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
    bos = llm.token_bos()
    if llm._model.add_bos_token() and bos >= 0 and (not tokens or tokens[0] != bos):
        tokens.insert(0, bos)
    return tokens


def load_llama(config: EngineConfig):
    """A Llama with our settings. Flash attention on llama.cpp's automatic choice."""
    import llama_cpp

    with llama_defaults():
        return llama_cpp.Llama(
            model_path=config.path, n_ctx=config.n_ctx, n_batch=config.n_batch, n_ubatch=config.n_batch,
            n_gpu_layers=config.n_gpu_layers, n_threads=config.n_threads, n_threads_batch=config.n_threads,
            flash_attn=True, swa_full=True,   # a full SWA cache keeps Gemma 3's shared prefixes reusable
            seed=config.seed, chat_format="chatml", verbose=False,
        )


class Engine:
    def __init__(self, config: EngineConfig):
        import llama_cpp.llama_cpp as lib

        self.lib = lib
        self.config = config
        started = time.perf_counter()
        self.llm = load_llama(config)
        self.load_seconds = time.perf_counter() - started
        self.vocab = self.llm._model.vocab
        self.n_ctx = self.llm.n_ctx()
        self.n_vocab = self.llm.n_vocab()
        meta = self.llm.metadata or {}
        source, self.template_name = template_for(config.chat_format, meta.get("tokenizer.chat_template", ""))
        self.bos_id = self.llm.token_bos()
        model = self.llm._model
        bos_text = model.token_get_text(self.bos_id) if self.bos_id >= 0 else ""
        eos_id = self.llm.token_eos()
        eos_text = model.token_get_text(eos_id) if eos_id >= 0 else ""
        self.template = ChatTemplate(source, bos_token=bos_text, eos_token=eos_text, name=self.template_name)
        self.turn_ends = TURN_ENDS.get(self.template_name, [])
        self._piece_buf = ctypes.create_string_buffer(256)

    # -- prompts ---------------------------------------------------------
    def render(self, messages: list[dict]) -> str:
        return self.template.render(messages)

    def prompt_tokens(self, prompt: str) -> list[int]:
        return tokenize_prompt(self.llm, prompt)

    def piece(self, token: int) -> bytes:
        """The bytes of one token (without special tokens' text)."""
        buf = self._piece_buf
        n = self.lib.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
        if n < 0:   # a longer piece than the buffer: llama.cpp says how long
            self._piece_buf = buf = ctypes.create_string_buffer(-n)
            n = self.lib.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
        return buf.raw[:n]

    def count(self, text: str) -> int:
        return len(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else 0

    # -- KV cache ----------------------------------------------------------
    def _reuse_prefix(self, tokens: list[int]) -> int:
        """Keep the KV cache of the longest prefix shared with the last call; returns its length."""
        llm = self.llm
        cached = llm.input_ids[: llm.n_tokens].tolist()
        shared = 0
        for a, b in zip(cached, tokens):
            if a != b:
                break
            shared += 1
        shared = min(shared, len(tokens) - 1)   # always decode at least one token for fresh logits
        if shared > 0 and llm._ctx.kv_cache_seq_rm(-1, shared, -1):
            llm.n_tokens = shared
            return shared
        llm.n_tokens = 0
        llm._ctx.kv_cache_clear()
        return 0

    # -- sampling ----------------------------------------------------------
    def _chain(self, temperature: float):
        from llama_cpp._internals import LlamaSampler

        chain = LlamaSampler()
        if temperature <= 0:
            chain.add_greedy()
        else:
            chain.add_top_k(40)
            chain.add_top_p(0.95, 1)
            chain.add_min_p(0.05, 1)
            chain.add_temp(temperature)
            chain.add_dist(self.config.seed or 0xC0FFEE)
        return chain

    def _grammar(self, gbnf: str):
        sampler = self.lib.llama_sampler_init_grammar(self.vocab, gbnf.encode("utf-8"), b"root")
        if not sampler:
            raise ValueError("llama.cpp could not compile the grammar for this JSON schema")
        return sampler

    def _allowed(self, grammar, token: int) -> bool:
        lib = self.lib
        one = (lib.llama_token_data * 1)(lib.llama_token_data(token, 1.0, 0.0))
        arr = lib.llama_token_data_array(one, 1, -1, False)
        lib.llama_sampler_apply(grammar, ctypes.byref(arr))
        return not math.isinf(arr.data[0].logit)

    def _constrained(self, grammar, chain) -> int:
        """The model's choice was rejected: sample among grammar-valid candidates instead."""
        import numpy as np

        lib = self.lib
        logits = np.ctypeslib.as_array(lib.llama_get_logits_ith(self.llm._ctx.ctx, -1), shape=(self.n_vocab,))
        for top in (RESAMPLE_TOP, self.n_vocab):
            ids = np.argpartition(-logits, top - 1)[:top] if top < self.n_vocab else np.arange(self.n_vocab)
            data = (lib.llama_token_data * len(ids))()
            view = np.ctypeslib.as_array(data).view(np.dtype([("id", np.int32), ("logit", np.float32),
                                                              ("p", np.float32)]))
            view["id"], view["logit"], view["p"] = ids, logits[ids], 0.0
            arr = lib.llama_token_data_array(data, len(ids), -1, False)
            lib.llama_sampler_apply(grammar, ctypes.byref(arr))
            if np.isfinite(view["logit"]).any():
                lib.llama_sampler_apply(chain.sampler, ctypes.byref(arr))
                return int(arr.data[arr.selected].id)
        raise ValueError("the grammar allows no token here")

    # -- generation --------------------------------------------------------
    def generate(self, tokens: list[int], *, max_tokens: int, temperature: float = 0.2,
                 stop: list[str] | None = None, gbnf: str | None = None,
                 emit: Callable[[str], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> Generation:
        lib, llm = self.lib, self.llm
        started = time.perf_counter()
        out = Generation(prompt_tokens=len(tokens))
        out.cached_tokens = self._reuse_prefix(tokens)
        stops = [s for s in (stop or []) + self.turn_ends if s]
        hold = max((len(s) for s in stops), default=0)
        chain = self._chain(temperature)
        grammar = self._grammar(gbnf) if gbnf else None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        text, sent = "", 0
        cpu_first = None
        try:
            pending = tokens[out.cached_tokens:]
            llm.eval(pending)
            out.prefill_seconds = time.perf_counter() - started
            while out.completion_tokens < max_tokens:
                if should_stop is not None and should_stop():
                    out.finish_reason = "cancelled"
                    break
                token = chain.sample(llm._ctx, -1)
                if grammar is not None:
                    if not self._allowed(grammar, token):
                        out.grammar_rejections += 1
                        token = self._constrained(grammar, chain)
                    lib.llama_sampler_accept(grammar, token)
                if out.completion_tokens == 0:
                    out.ttft_seconds = time.perf_counter() - started
                    cpu_first = time.process_time()
                if lib.llama_vocab_is_eog(self.vocab, token):
                    break
                out.completion_tokens += 1
                text += decoder.decode(self.piece(token))
                cut = _first_stop(text, stops, sent - hold)
                if cut is not None:
                    text = text[:cut]
                    break
                safe = len(text) - _held(text, stops, hold)
                if emit is not None and safe > sent:
                    emit(text[sent:safe])
                sent = max(sent, safe)
                if llm.n_tokens + 1 >= self.n_ctx:
                    out.finish_reason = "length"
                    break
                llm.eval([token])
            else:
                out.finish_reason = "length"
            text += decoder.decode(b"", final=True)
            if emit is not None and len(text) > sent:
                emit(text[sent:])
        finally:
            chain.close()
            if grammar is not None:
                lib.llama_sampler_free(grammar)
        out.text = text
        out.seconds = time.perf_counter() - started
        if cpu_first is not None:
            out.decode_cpu_seconds = time.process_time() - cpu_first
        if out.completion_tokens == 0:
            out.ttft_seconds = out.seconds
        return out


def _first_stop(text: str, stops: list[str], start: int) -> int | None:
    found = [i for i in (text.find(s, max(0, start)) for s in stops) if i >= 0]
    return min(found) if found else None


def _held(text: str, stops: list[str], hold: int) -> int:
    """How many trailing characters might be the start of a stop string (not streamed yet)."""
    for size in range(min(hold, len(text)), 0, -1):
        tail = text[-size:]
        if any(s.startswith(tail) for s in stops):
            return size
    return 0
