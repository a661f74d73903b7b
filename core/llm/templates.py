"""Chat templates: messages -> the exact prompt text the model was trained on.

A GGUF file usually carries its own Jinja template (tokenizer.chat_template);
some (the bundled Gemma 3 270M) carry none, so the catalog names one of ours.
Rendering happens here, not inside llama.cpp's chat handler, so that the
prompt can be counted before generation (overflow check), its prefix reused
across calls, and tests can check it.
"""
from __future__ import annotations

import json
from datetime import datetime

from core.errors import ModelError

CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# Gemma 3's own template (google/gemma-3-*-it): no system role; the system text
# opens the first user turn; the assistant is "model".
GEMMA = (
    "{{ bos_token }}"
    "{% if messages and messages[0]['role'] == 'system' %}"
    "{% set first_user_prefix = messages[0]['content'] + '\n\n' %}{% set loop_messages = messages[1:] %}"
    "{% else %}{% set first_user_prefix = '' %}{% set loop_messages = messages %}{% endif %}"
    "{% if loop_messages and loop_messages[0]['role'] != 'user' %}"
    "{{ '<start_of_turn>user\n' + first_user_prefix + '<end_of_turn>\n' }}{% set first_user_prefix = '' %}"
    "{% endif %}"
    "{% for message in loop_messages %}"
    "{% set role = 'model' if message['role'] == 'assistant' else 'user' %}"
    "{{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') }}"
    "{{ message['content'] | trim }}{{ '<end_of_turn>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}"
)

BUILTIN = {"chatml": CHATML, "gemma": GEMMA}
# Text that ends a turn, in case a model writes it instead of its end-of-generation token.
TURN_ENDS = {"chatml": ["<|im_end|>"], "gemma": ["<end_of_turn>"]}


def normalize_messages(messages: list[dict]) -> list[dict]:
    """Plain {role, content} strings every template can render.

    Agent transcripts carry None contents, tool calls and tool results; small
    models' templates know only system/user/assistant text.
    """
    out = []
    for message in messages:
        if not isinstance(message, dict) or "role" not in message:
            raise ModelError(f"a chat message must be a dict with a role, not {message!r:.80}")
        role = str(message["role"])
        content = message.get("content")
        if isinstance(content, list):   # OpenAI content parts: keep the text ones
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        content = "" if content is None else str(content)
        if message.get("tool_calls"):
            calls = json.dumps(message["tool_calls"], ensure_ascii=False)
            content = f"{content}\n[tool calls] {calls}".strip()
        if role == "tool":
            name = message.get("name") or message.get("tool_call_id") or "tool"
            role, content = "user", f"[tool result {name}]\n{content}"
        elif role not in ("system", "user", "assistant"):
            role = "user"
        out.append({"role": role, "content": content})
    return out


def template_for(chat_format: str, gguf_template: str) -> tuple[str, str]:
    """(template source, name) for a catalog chat_format and the file's own template."""
    if chat_format == "gguf":
        if gguf_template:
            return gguf_template, "gguf"
        return CHATML, "chatml"   # an arbitrary GGUF without a template: ChatML is the common default
    if chat_format in BUILTIN:
        return BUILTIN[chat_format], chat_format
    raise ModelError(f"unknown chat format {chat_format!r} (use gguf, chatml or gemma)")


class ChatTemplate:
    def __init__(self, source: str, *, bos_token: str = "", eos_token: str = "", name: str = "gguf"):
        import jinja2
        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        self.name = name
        self.bos_token = bos_token
        self.eos_token = eos_token
        env = ImmutableSandboxedEnvironment(loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True,
                                            extensions=[jinja2.ext.loopcontrols])
        env.filters["tojson"] = lambda x, indent=None, **_: json.dumps(x, ensure_ascii=False, indent=indent)
        env.globals["raise_exception"] = _raise
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        try:
            self._template = env.from_string(source)
        except jinja2.TemplateError as exc:
            raise ModelError(f"the model's chat template cannot be read ({exc})") from exc

    def render(self, messages: list[dict], add_generation_prompt: bool = True) -> str:
        import jinja2

        try:
            return self._template.render(messages=normalize_messages(messages), bos_token=self.bos_token,
                                         eos_token=self.eos_token, add_generation_prompt=add_generation_prompt)
        except jinja2.TemplateError as exc:
            raise ModelError(f"the chat template refused these messages: {exc}") from exc


def _raise(message: str):
    raise ModelError(f"the chat template refused these messages: {message}")
