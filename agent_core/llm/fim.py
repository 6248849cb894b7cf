"""Fill-in-the-middle: which dialect an endpoint speaks, and the FIM tokens of the code model families.

A code model trained for fill-in-the-middle writes the code between a prefix
and a suffix when its prompt is laid out with its family's special tokens
(Qwen2.5-Coder: `<|fim_prefix|>{before}<|fim_suffix|>{after}<|fim_middle|>`).
How an OpenAI-compatible endpoint lets a client do that differs:

- `tokens`: the legacy completions endpoint (`/v1/completions`) passes the
  prompt to the model as it is, so the FIM tokens written into the prompt
  work (llama.cpp's and llama-cpp-python's servers, vLLM, LM Studio); the
  `suffix` parameter is ignored there (the model just continues the prompt);
- `suffix`: the endpoint builds the FIM prompt itself from `prompt` and
  `suffix` with the model's own template (Ollama);
- `chat`: no fill-in-the-middle; the caller asks in a chat message for only
  the missing lines.

`choose_fim` decides from what is known about the endpoint and the model
(the bundled server, a detected server's product, the model's name); the
`fim` setting overrides it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

FimDialect = Literal["tokens", "suffix", "chat"]
FIM_DIALECTS: tuple[FimDialect, ...] = ("tokens", "suffix", "chat")
OLLAMA_PORT = 11434


@dataclass(frozen=True)
class FimTokens:
    """A model family's fill-in-the-middle prompt layout."""

    family: str
    prefix: str
    suffix: str
    middle: str
    stops: tuple[str, ...] = ()  # tokens that end a middle (the model's end-of-text and file separators)
    repo_name: str = ""  # the tokens of the family's repository-level layout (other files before the one with
    file_sep: str = ""  # the hole); "" when the family has none

    def prompt(self, before: str, after: str, path: str = "", files: tuple[tuple[str, str], ...] = ()) -> str:
        """The raw completion prompt asking for the text between `before` and `after` (prefix, suffix, middle).
        With `files` ((path, text) of other files) and a family that has a repository-level layout, those files
        come first, then `path`'s prefix, suffix and middle."""
        fim = f"{self.prefix}{before}{self.suffix}{after}{self.middle}"
        if not files or not self.file_sep:
            return fim
        others = "".join(f"{self.file_sep}{name}\n{text.rstrip()}\n" for name, text in files)
        return f"{self.repo_name}project\n{others}{self.file_sep}{path}\n{fim}"


# (words in the model's name, lowercased; the family's tokens), most specific first.
_FAMILIES: tuple[tuple[tuple[str, ...], FimTokens], ...] = (
    (("qwen", "coder"), FimTokens("Qwen2.5-Coder", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>",
                                  ("<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|repo_name|>"),
                                  "<|repo_name|>", "<|file_sep|>")),
    (("codegemma",), FimTokens("CodeGemma", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>",
                               ("<|file_separator|>",))),
    (("starcoder",), FimTokens("StarCoder", "<fim_prefix>", "<fim_suffix>", "<fim_middle>",
                               ("<|endoftext|>", "<file_sep>"))),
    (("deepseek", "coder"), FimTokens("DeepSeek-Coder", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>",
                                      ("<｜end▁of▁sentence｜>",))),
    (("codellama",), FimTokens("CodeLlama", "<PRE> ", " <SUF>", " <MID>", ("<EOT>",))),
)


def fim_tokens(model: str) -> FimTokens | None:
    """The FIM tokens of `model`'s family, from its name (None: not a known FIM-trained family)."""
    name = model.lower().replace("-", "").replace("_", "")
    for words, tokens in _FAMILIES:
        if all(word in name for word in words):
            return tokens
    return None


QWEN_TOKENS = _FAMILIES[0][1]  # the bundled model's family


@dataclass(frozen=True)
class FimSpec:
    """How to ask an endpoint for a middle: its dialect, for "tokens" the model family's tokens, and how many
    raw completions of one prompt it writes at once (`parallel`: asked at the same time, they cost little more than
    one; a server says so in PARALLEL_HEADER, and any other gets one request at a time: a llama-cpp-python server
    left at its defaults cuts a streamed answer short when a second request comes)."""

    dialect: FimDialect
    tokens: FimTokens | None = None
    parallel: int = 1


PARALLEL_HEADER = "x-agentls-parallel"  # the bundled server's (local_model/batched_server.py) word on it
MAX_PARALLEL = 16


def said_parallel(value: str | None) -> int:
    """The number of completions of one prompt a server says (PARALLEL_HEADER) it decodes together, at most
    MAX_PARALLEL; 1 when it says nothing usable."""
    try:
        return max(1, min(int(value or "1"), MAX_PARALLEL))
    except ValueError:
        return 1


def _is_ollama(base_url: str, server_name: str | None) -> bool:
    if server_name is not None:
        return server_name == "Ollama"
    try:
        return urlsplit(base_url).port == OLLAMA_PORT
    except ValueError:
        return False


def choose_fim(
    setting: str, *, base_url: str, model: str, bundled: bool = False, server_name: str | None = None
) -> FimSpec:
    """How to ask `model` at `base_url` for a middle.

    `setting` is the `fim` setting ("auto" decides here); `bundled`: the endpoint is agentls' own
    llama-cpp-python server (a Qwen2.5-Coder model); `server_name`: the product of a server detected on
    loopback (detect.py). Ollama builds the FIM prompt itself (`suffix`); any other server given a model of
    a known FIM family takes the family's tokens in a raw prompt; anything else gets a chat prompt. A
    `tokens` setting for a model of no known family uses Qwen2.5-Coder's tokens.
    """
    tokens = fim_tokens(model) or (QWEN_TOKENS if bundled or setting == "tokens" else None)
    if setting in FIM_DIALECTS:
        return FimSpec(setting, tokens if setting == "tokens" else None)
    if not bundled and _is_ollama(base_url, server_name):
        return FimSpec("suffix")
    return FimSpec("tokens", tokens) if tokens is not None else FimSpec("chat")
