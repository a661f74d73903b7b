"""`reverie bench llm --model ID`: our model API against a plain llama.cpp loop.

Figures, all on the same model file and settings (threads, context, batch):
- prefill and decode tokens/s through LocalClient (worker process, streaming
  channel, our sampler loop) and through a plain low-level llama_cpp loop
  (llama_decode + a greedy sampler, no Python wrapper) in this process;
- time to first token of a prompt sharing a ~1,500-token prefix (a system
  prompt with MEMORY.md) with the previous one, against the first;
- structured output: decode tokens/s with a small JSON schema through our API
  (the catalog's json_mode; fast grammar and retry both measured) against free
  decoding, and llama.cpp's plain grammar sampler for reference.
Targets: decode_ratio >= 0.95, ttft_ratio <= 0.3, json_ratio >= 0.8.
Last line: `llm model=ID decode_ratio=... ttft_ratio=... json_ratio=...`.
"""
from __future__ import annotations

import json
import random
import statistics
import time

SCHEMA = {
    "type": "object",
    "properties": {
        "facts": {"type": "array", "maxItems": 3, "items": {
            "type": "object",
            "properties": {"text": {"type": "string", "maxLength": 80},
                           "section": {"enum": ["User profile", "Preferences", "Decisions", "Learnings", "Projects"]}},
            "required": ["text", "section"], "additionalProperties": False}},
    },
    "required": ["facts"], "additionalProperties": False,
}
NOTES = ("Maya prefers green tea in the afternoon. The Orchard sensor project ships CSV exports per farm. "
         "Jonas is on call in December. Device 17 reports UTC timestamps since firmware 2.4.")
WORDS = ("memory agent session daily log decision preference project sensor farm export tea coffee firmware "
         "timezone summary compaction flush dream bullet source provenance review archive retention").split()


def register(sub) -> None:
    p = sub.add_parser("llm", help="model API vs a plain llama.cpp loop: decode, prefix-reuse TTFT, JSON speed")
    p.add_argument("--model", default="smollm2-135m-instruct-q4_1", help="catalog id or .gguf path")
    p.add_argument("--prompt-tokens", type=int, default=128, help="prompt length for prefill/decode")
    p.add_argument("--decode-tokens", type=int, default=64)
    p.add_argument("--prefix-tokens", type=int, default=1500, help="shared prefix for the TTFT figure")
    p.add_argument("--json-tokens", type=int, default=200, help="max tokens of a structured reply")
    p.add_argument("--json-runs", type=int, default=3, help="structured prompts per mode")
    p.add_argument("--repeat", type=int, default=5, help="pairs of decode runs (ours, plain)")
    p.add_argument("--context", type=int, default=4096)
    p.add_argument("--threads", type=int, default=0, help="0 = physical cores")
    p.add_argument("--no-naive-grammar", action="store_true", help="skip llama.cpp's plain grammar sampler figure")
    p.set_defaults(func=cmd_bench_llm)


def filler(tokens_wanted: int, seed: int, count=None) -> str:
    """Memory-file-like bullets of about `tokens_wanted` tokens (`count`: the model's own counter)."""
    rng = random.Random(seed)
    lines: list[str] = []
    count = count or (lambda text: len(text) // 4)
    while True:
        for _ in range(2):
            line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))
            lines.append(f"- {line.capitalize()} <!-- id:m-{rng.randrange(16**4):04x} -->")
        text = "\n".join(lines)
        if count(text) >= tokens_wanted:
            return text


def decode_messages(prompt_tokens: int, seed: int, count=None) -> list[dict]:
    return [{"role": "system", "content": "You rewrite notes.\n" + filler(prompt_tokens, seed, count)},
            {"role": "user", "content": "Write a long, detailed story about these notes."}]


def json_messages(i: int) -> list[dict]:
    return [{"role": "system", "content": "You extract durable facts from notes for a memory file."},
            {"role": "user", "content": f"Notes ({i}): {NOTES}\nReturn the facts as JSON."}]


def plain_loop(llm, tokens: list[int], count: int) -> dict:
    """Prefill and `count` greedy tokens with llama.cpp's C API only."""
    import llama_cpp.llama_cpp as lib

    ctx = llm._ctx.ctx
    lib.llama_memory_clear(lib.llama_get_memory(ctx), True)
    sampler = lib.llama_sampler_init_greedy()
    try:
        started = time.perf_counter()
        for i in range(0, len(tokens), llm.n_batch):
            chunk = (lib.llama_token * len(tokens[i:i + llm.n_batch]))(*tokens[i:i + llm.n_batch])
            # the batch only points at `chunk`: keep it referenced until llama_decode returns
            if lib.llama_decode(ctx, lib.llama_batch_get_one(chunk, len(chunk))) != 0:
                raise RuntimeError("llama_decode failed on the prompt")
        token = lib.llama_sampler_sample(sampler, ctx, -1)
        first = time.perf_counter()
        cpu_first = time.process_time()
        one = (lib.llama_token * 1)()
        for _ in range(count - 1):
            one[0] = token
            if lib.llama_decode(ctx, lib.llama_batch_get_one(one, 1)) != 0:
                raise RuntimeError("llama_decode failed")
            token = lib.llama_sampler_sample(sampler, ctx, -1)
        done = time.perf_counter()
        cpu = time.process_time() - cpu_first
    finally:
        lib.llama_sampler_free(sampler)
    return {"prefill_tps": len(tokens) / max(first - started, 1e-9),
            "decode_tps": (count - 1) / max(done - first, 1e-9),
            "cpu_ms_per_token": 1000 * cpu / max(count - 1, 1)}


def naive_grammar(llm, tokens: list[int], gbnf: str, max_tokens: int) -> float:
    """Decode tokens/s with llama.cpp's own grammar sampler in the chain (every token checked against the vocabulary)."""
    import llama_cpp
    import llama_cpp.llama_cpp as lib

    grammar = llama_cpp.LlamaGrammar.from_string(gbnf, verbose=False)
    llm.reset()
    count, first = 0, None
    for token in llm.generate(tokens, temp=0.0, grammar=grammar, reset=True):
        if first is None:
            first = time.perf_counter()
        if lib.llama_vocab_is_eog(llm._model.vocab, token) or count + 1 >= max_tokens:
            break
        count += 1
    return count / max(time.perf_counter() - first, 1e-9) if first and count else 0.0


def json_round(client, i: int, max_tokens: int, totals: dict) -> None:
    """Prompt i free, then with the schema in each mode; adds to totals[mode] = [tokens, seconds, attempts, valid].

    Structured speed is effective: the accepted reply's tokens over all time after the first
    token, so a retry's prompt and wasted tokens count against it.
    """
    reply = client.complete(json_messages(i), max_tokens=max_tokens, temperature=0.0)
    totals["free"][0] += reply.completion_tokens
    totals["free"][1] += reply.extra["decode_seconds"]
    free_tps = reply.decode_tps
    for mode in ("grammar", "retry"):
        client.json_mode = mode
        try:
            reply = client.complete(json_messages(i), max_tokens=max_tokens, temperature=0.0, json_schema=SCHEMA)
        except Exception as exc:   # StructuredOutputError: an invalid run
            print(f"  json {mode} run {i}: no valid reply ({exc})")
            continue
        row = totals[mode]
        row[0] += reply.extra["reply_tokens"]
        row[1] += reply.extra["after_first_token_seconds"]
        row[2] += reply.extra.get("attempts", 1)
        row[3] += 1
        effective = reply.extra["reply_tokens"] / max(reply.extra["after_first_token_seconds"], 1e-9)
        totals.setdefault(f"{mode}_ratios", []).append(effective / free_tps if free_tps else 0.0)


def cmd_bench_llm(args) -> int:
    import os

    from core.config import ModelSettings
    from core.llm.client import LocalClient
    from core.llm.engine import LLAMA_ENV, EngineConfig, load_llama, tokenize_prompt

    for key, value in LLAMA_ENV.items():   # the plain loop runs here: same environment as the worker
        os.environ.setdefault(key, value)

    settings = ModelSettings(model=args.model, context_length=args.context, n_threads=args.threads)
    client = LocalClient(settings)
    print(f"llm bench: model={client.model_id} file={client.path.name} threads={client.n_threads} "
          f"gpu_layers={client.n_gpu_layers} context={client.context_length} json_mode={client.json_mode}")
    try:
        client.load()
        # 1. decode and prefill: our API and the plain loop on the same prompt, in adjacent pairs
        #    (the order alternates); the ratio is the median of the pairs' ratios, so a burst of
        #    load from other processes does not decide it.
        llm = load_llama(EngineConfig(**client.engine_config()))
        ours = {"prefill_tps": 0.0, "decode_tps": 0.0}
        plain = {"prefill_tps": 0.0, "decode_tps": 0.0}
        ratios, cpu_pairs = [], []
        for r in range(max(1, args.repeat)):
            messages = decode_messages(args.prompt_tokens, 100 + r, client.count_tokens)   # fresh: nothing cached
            prompt_ids = tokenize_prompt(llm, client.render_prompt(messages)[0])
            run = plain_loop(llm, prompt_ids, args.decode_tokens) if r % 2 else None
            reply = client.complete(messages, max_tokens=args.decode_tokens, temperature=0.0)
            produced = max(2, reply.completion_tokens)
            if run is None or produced != args.decode_tokens:
                run = plain_loop(llm, prompt_ids, produced)
            mine = {"prefill_tps": reply.prompt_tokens / max(reply.extra["prefill_seconds"], 1e-9),
                    "decode_tps": reply.decode_tps}
            ours = {k: max(ours[k], mine[k]) for k in ours}
            plain = {k: max(plain[k], run[k]) for k in plain}
            ratios.append(mine["decode_tps"] / run["decode_tps"] if run["decode_tps"] else 0.0)
            # CPU time per token does not depend on how busy the machine is: a check on the ratio
            cpu_ours = 1000 * reply.extra["decode_cpu_seconds"] / max(produced - 1, 1)
            cpu_pairs.append((cpu_ours, run["cpu_ms_per_token"]))
            print(f"  pair {r}: prompt={reply.prompt_tokens} tokens, {produced} generated; "
                  f"ours prefill={mine['prefill_tps']:.1f} decode={mine['decode_tps']:.1f} tok/s "
                  f"({cpu_ours:.1f} CPU ms/token); plain prefill={run['prefill_tps']:.1f} "
                  f"decode={run['decode_tps']:.1f} tok/s ({run['cpu_ms_per_token']:.1f} CPU ms/token); "
                  f"ratio={ratios[-1]:.3f}")
        decode_ratio = statistics.median(ratios)
        print(f"prefill tok/s (best): ours={ours['prefill_tps']:.1f} plain={plain['prefill_tps']:.1f}; "
              f"decode tok/s (best): ours={ours['decode_tps']:.1f} plain={plain['decode_tps']:.1f}; "
              f"decode ratio (median of pairs)={decode_ratio:.3f}")
        cpu_ratio = statistics.median(p / o if o else 0.0 for o, p in cpu_pairs)
        print(f"decode CPU per token, plain/ours (median of pairs): {cpu_ratio:.3f} "
              "(1.0 = our loop costs no more CPU than llama.cpp's own)")

        # 2. prefix reuse: two prompts sharing a long system prompt (MEMORY.md)
        system = "You keep an agent's memory. MEMORY.md:\n" + filler(args.prefix_tokens, 7, client.count_tokens)
        first = client.complete([{"role": "system", "content": system},
                                 {"role": "user", "content": "What does the user prefer to drink?"}],
                                max_tokens=4, temperature=0.0)
        second = client.complete([{"role": "system", "content": system},
                                  {"role": "user", "content": "Which project ships CSV exports?"}],
                                 max_tokens=4, temperature=0.0)
        ttft_ratio = second.ttft_seconds / first.ttft_seconds if first.ttft_seconds else 0.0
        print(f"ttft: first={first.ttft_seconds:.3f} s ({first.prompt_tokens} prompt tokens), "
              f"second={second.ttft_seconds:.3f} s ({second.extra['cached_tokens']} tokens reused) ratio={ttft_ratio:.3f}")

        # 3. structured output against free decoding
        totals = {mode: [0, 0.0, 0, 0] for mode in ("free", "grammar", "retry")}
        for i in range(max(1, args.json_runs)):   # interleaved, as above
            json_round(client, i, args.json_tokens, totals)
        tps = {mode: totals[mode][0] / totals[mode][1] if totals[mode][1] else 0.0
               for mode in ("free", "grammar", "retry")}
        free_tps = tps["free"]
        for mode in ("grammar", "retry"):
            row = totals[mode]
            print(f"json {mode:<7}: {tps[mode]:.1f} tok/s effective, valid {row[3]}/{args.json_runs}, "
                  f"{row[2] / row[3] if row[3] else 0:.2f} attempts per reply")
        client.json_mode = chosen = (settings.json_mode or (client.entry.json_mode if client.entry else "grammar"))
        if not args.no_naive_grammar:
            from llama_cpp.llama_grammar import json_schema_to_gbnf

            json_prompt = tokenize_prompt(llm, client.render_prompt(json_messages(0))[0])
            naive = naive_grammar(llm, json_prompt, json_schema_to_gbnf(json.dumps(SCHEMA)), args.json_tokens)
            print(f"json llama.cpp grammar sampler (reference): {naive:.1f} tok/s")
        # median over prompts of (structured effective speed / free speed on the same prompt);
        # a prompt with no valid reply counts as 0
        per_prompt = totals.get(f"{chosen}_ratios", [])
        per_prompt += [0.0] * (max(1, args.json_runs) - len(per_prompt))
        json_ratio = statistics.median(per_prompt)
        print(f"json free decoding: {free_tps:.1f} tok/s; chosen mode {chosen}: "
              f"ratio (median of prompts)={json_ratio:.3f}")
        del llm
    finally:
        client.close()
    print(f"llm model={client.model_id} decode_ratio={decode_ratio:.3f} ttft_ratio={ttft_ratio:.3f} "
          f"json_ratio={json_ratio:.3f}")
    return 0

