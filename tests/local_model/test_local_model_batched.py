"""The bundled server (local_model/batched_server.py) on the real bundled model: the completions of one prompt
asked at once are decoded together and each answered as it would be alone, llama-cpp-python's own server still
answers everything else, and the context it leaves serves the next request as before.

scripts/test.sh installs llama-cpp-python's server and fetches the model (`agentls model fetch`) first."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.local_model import serve as srv
from agent_core.local_model.batched_server import Batching, plain_job
from agent_core.local_model.fetch import installed_model
from agent_core.settings import Settings

PROMPT = "<|fim_prefix|>def add(a, b):\n    return<|fim_suffix|>\n\n\ndef sub(a, b):\n    return a - b\n<|fim_middle|>"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[srv.RunningServer]:
    config = srv.ServerConfig(model_path=installed_model(Settings().local_model), alias="bundled", n_ctx=2048,
                              threads=1, batch_threads=2)
    running = srv.start_server(config, tmp_path_factory.mktemp("batched"))
    yield running
    running.stop()


def _client(server: srv.RunningServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.base_url, api_key="none", timeout=120, max_retries=0)


async def _streamed(client: openai.AsyncOpenAI, **request) -> tuple[str, str | None, int | None]:
    text, reason, tokens = "", None, None
    stream = await client.completions.create(model="bundled", stream=True, stream_options={"include_usage": True},
                                             **request)
    async for chunk in stream:
        if chunk.choices:
            text += chunk.choices[0].text
            reason = chunk.choices[0].finish_reason or reason
        if chunk.usage is not None:
            tokens = chunk.usage.completion_tokens
    return text, reason, tokens


def _batches(server: srv.RunningServer) -> list[int]:
    lines = Path(server.state.log_path).read_text(errors="replace").splitlines()
    return [int(line.split()[1]) for line in lines if line.startswith("batched_server: ")]


def _reads(server: srv.RunningServer) -> list[tuple[int, int]]:
    """Per batch: (prompt tokens read, prompt tokens), as the server logs them."""
    lines = Path(server.state.log_path).read_text(errors="replace").splitlines()
    return [(int(line.split()[3]), int(line.split()[5])) for line in lines
            if line.startswith("batched_server prompt: ")]


def _fim(name: str, lines: int) -> str:
    """A fill-in-the-middle prompt whose code before the hole is `lines` functions, all named after `name`."""
    before = "".join(f"def {name}_{i}(value):\n    return value * {i} + {len(name)}\n\n\n" for i in range(lines))
    return f"<|fim_prefix|>{before}def {name}_add(a, b):\n    return<|fim_suffix|>\n\n\ndef sub(a, b):\n" \
           f"    return a - b\n<|fim_middle|>"


async def test_the_client_hears_that_the_server_writes_four_at_once(server):
    settings = Settings(base_url=server.base_url, model="qwen2.5-coder-1.5b", request_timeout_s=60)
    async with OpenAIChatClient(settings) as client:
        spec = await client.fim_spec("coder")
    assert (spec.dialect, spec.parallel) == ("tokens", 4)


async def test_four_requests_of_one_prompt_are_decoded_together_each_as_alone(server):
    async with _client(server) as client:
        alone = await _streamed(client, prompt=PROMPT, max_tokens=12, temperature=0, stop=["\n"])
        before = len(_batches(server))
        together = await asyncio.gather(*(_streamed(client, prompt=PROMPT, max_tokens=12, temperature=0, stop=["\n"])
                                          for _ in range(4)))

    assert alone[0].strip() == "a + b" and alone[1] == "stop" and alone[2] is not None and 0 < alone[2] <= 12
    assert list(together) == [alone] * 4, "greedy: the same answer, reason and usage as alone"
    assert _batches(server)[before:] == [4], "one batch of the four"


async def test_each_sequence_keeps_its_own_stops_cap_and_temperature(server):
    async with _client(server) as client:
        capped, stopped, *warm = await asyncio.gather(
            _streamed(client, prompt=PROMPT, max_tokens=2, temperature=0),
            _streamed(client, prompt=PROMPT, max_tokens=12, temperature=0, stop=["+"]),
            *(_streamed(client, prompt=PROMPT, max_tokens=12, temperature=1.0, seed=seed) for seed in (1, 2)))
        whole = await client.completions.create(model="bundled", prompt=PROMPT, max_tokens=12, temperature=0,
                                                stop=["+"])

    assert capped[1:] == ("length", 2)
    assert stopped[0].strip() == "a" and stopped[1] == "stop", "the stop string is cut off"
    assert all(reason in ("stop", "length") for _, reason, _ in warm)
    assert (whole.choices[0].text, whole.choices[0].finish_reason) == (stopped[0], "stop"), "unstreamed alike"
    assert whole.usage is not None and whole.usage.prompt_tokens > 10


async def test_llama_cpp_python_s_own_server_answers_the_rest_from_the_context_left(server):
    async with _client(server) as client:
        batched = await asyncio.gather(*(_streamed(client, prompt=PROMPT, max_tokens=12, temperature=0, stop=["\n"])
                                         for _ in range(2)))
        # logprobs: not a plain completion, so llama-cpp-python's own completion answers it, reusing the prompt
        # the batch left in the context
        own = await client.completions.create(model="bundled", prompt=PROMPT, max_tokens=12, temperature=0,
                                              stop=["\n"], logprobs=1)
        chat = await client.chat.completions.create(model="bundled", max_tokens=4, temperature=0,
                                                    messages=[{"role": "user", "content": "Say yes."}])

    assert own.choices[0].text == batched[0][0] == batched[1][0]
    assert own.choices[0].logprobs is not None, "answered by llama-cpp-python's server"
    assert chat.choices[0].message.content


async def test_a_client_that_closes_its_stream_leaves_the_others_and_the_server_going(server):
    async def closed_early(client: openai.AsyncOpenAI) -> str:
        stream = await client.completions.create(model="bundled", prompt=PROMPT, max_tokens=40, temperature=0.8,
                                                 seed=5, stream=True)
        async for chunk in stream:
            await stream.close()
            return chunk.choices[0].text
        return ""

    async with _client(server) as client:
        first, *rest = await asyncio.gather(
            closed_early(client), *(_streamed(client, prompt=PROMPT, max_tokens=12, temperature=0, stop=["\n"])
                                    for _ in range(3)))
        after = await _streamed(client, prompt=PROMPT, max_tokens=12, temperature=0, stop=["\n"])

    assert first, "its first piece came"
    assert rest == [after] * 3 and after[0].strip() == "a + b"


async def test_a_prompt_asked_again_after_another_reads_only_what_the_kept_one_does_not_share(server):
    """The context keeps the cells of earlier prompts (batch_decoder.Kept): a prompt asked again after another
    is not read again, one sharing its start reads only its own end, and each answer is what it was."""
    first, other = _fim("alpha", 12), _fim("beta", 12)
    near = first.replace("def sub(a, b)", "def mul(a, b)")
    async with _client(server) as client:
        before = len(_reads(server))
        answers = [await _streamed(client, prompt=prompt, max_tokens=8, temperature=0, stop=["\n"])
                   for prompt in (first, other, first, near)]
    reads = _reads(server)[before:]

    assert answers[0] == answers[2] and answers[0][0].strip() == "a + b"
    (read_first, total), (read_other, _), (read_again, again), (read_near, near_total) = reads
    assert read_first > 200 and read_other > 200, "two prompts that share no start: each read whole"
    assert (read_again, again) == (1, total), "asked again: only the last token, whose logits are the answer's"
    assert 1 < read_near < near_total / 4, "the same start: only its own end"


async def test_llama_cpp_python_s_own_handler_lets_the_kept_prompts_go_and_answers_stay_right(server):
    """Its completion trims every sequence of the cache to its own prompt, so the kept ones are let go before it
    runs: the prompt kept before it is read whole after it, and answered as before."""
    first, other = _fim("gamma", 10), _fim("delta", 10)
    async with _client(server) as client:
        answer = await _streamed(client, prompt=first, max_tokens=8, temperature=0, stop=["\n"])
        await _streamed(client, prompt=other, max_tokens=8, temperature=0, stop=["\n"])
        own = await client.completions.create(model="bundled", prompt=other, max_tokens=8, temperature=0,
                                              stop=["\n"], logprobs=1)  # not plain: llama-cpp-python's own
        before = len(_reads(server))
        again = await _streamed(client, prompt=first, max_tokens=8, temperature=0, stop=["\n"])
    [(read, total)] = _reads(server)[before:]

    assert own.choices[0].logprobs is not None
    assert again == answer
    assert read >= total - 2, "nothing kept: read (nearly) whole"


async def test_the_kept_prompts_give_way_to_a_batch_that_needs_their_cells(server):
    """Five prompts of ~600 tokens in a 2,048-token context: the oldest kept ones are let go as each batch needs
    the room, every request is answered, and each answer asked again is the same."""
    prompts = [_fim(name, 30) for name in ("one", "two", "three", "four", "five")]
    async with _client(server) as client:
        firsts = [await _streamed(client, prompt=prompt, max_tokens=8, temperature=0, stop=["\n"])
                  for prompt in prompts]
        before = len(_reads(server))
        seconds = [await _streamed(client, prompt=prompt, max_tokens=8, temperature=0, stop=["\n"])
                   for prompt in reversed(prompts)]
    reads = _reads(server)[before:]

    assert all(total > 500 for _, total in reads)
    assert seconds == firsts[::-1]
    assert reads[0][0] == 1, "the last one asked is still there"
    assert reads[-1][0] > 500, "the first one asked was let go for the room"


@pytest.mark.parametrize("body, plain", [
    ({"model": "m", "prompt": "x", "max_tokens": 5, "temperature": 0.3, "seed": 1, "stop": ["\n"], "stream": True,
      "stream_options": {"include_usage": True}}, True),
    ({"prompt": "x", "stop": "\n"}, True),
    ({"prompt": "x", "suffix": "y"}, False),
    ({"prompt": "x", "logprobs": 1}, False),
    ({"prompt": "x", "n": 2}, False),
    ({"prompt": ["x", "y"]}, False),
    ({"prompt": "", "max_tokens": 5}, False),
    ({"prompt": "x", "stop": [1]}, False),
    ({"prompt": "x", "max_tokens": "many"}, False),
    ({"prompt": "x", "max_tokens": None}, False),
])
def test_only_a_plain_prompt_completion_is_decoded_by_the_batching_layer(body, plain):
    job = plain_job(json.dumps(body).encode())
    assert (job is not None) == plain
    if job is not None and body.get("seed") == 1:
        (request, stream, usage) = job
        assert (request.max_tokens, request.temperature, request.seed, request.stop, stream, usage) == \
            (5, 0.3, 1, ["\n"], True, True)


async def test_a_request_whose_client_went_away_is_let_go_without_an_answer():
    """Before any token: its job is dropped from the batch, and its handler returns (nothing would ever answer it:
    uvicorn's `send` to a gone client returns quietly, so a handler left waiting would stay for good)."""
    body = json.dumps({"prompt": "def f():", "max_tokens": 4, "stream": True}).encode()
    messages: list[dict] = [{"type": "http.request", "body": body, "more_body": False}, {"type": "http.disconnect"}]

    async def receive() -> dict:
        if messages:
            return messages.pop(0)
        await asyncio.Event().wait()  # nothing more from this client
        return {}

    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    def no_model() -> Iterator[object]:
        raise AssertionError("a batch of no request loads no model")
        yield

    layer = Batching(app=None, proxy=no_model)
    await asyncio.wait_for(layer({"type": "http", "method": "POST", "path": "/v1/completions"}, receive, send), 5)
    assert sent == []
    assert layer.worker is not None
    await asyncio.wait_for(layer.worker, 5)
    assert layer.pending == [], "dropped, with no model loaded for it"
