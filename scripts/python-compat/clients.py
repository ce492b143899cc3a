"""Client behaviours of the official Python clients through muscle-mem, beyond a plain create().

Each check sends one request twice: a miss that reaches the model, then (once the answer is recorded) the
same request again, a hit. It prints one JSON line: {"name", "outcomes", "expect", "same"}, where "same" says
whether the hit's content equals the miss's byte for byte where the client exposes it.
Usage: clients.py CHAT_BASE RESPONSES_BASE KEY_PREFIX
"""
import asyncio
import json
import sys
import time

import anthropic
import httpx
import openai
from google import genai
from google.genai import types

CHAT_BASE, RESPONSES_BASE, PREFIX = sys.argv[1], sys.argv[2], sys.argv[3]
ORDER = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
TOOLS = [{"type": "function", "function": {"name": "get_order", "parameters": ORDER}}]


def shipped_history(order):
    """A chat history whose next answer is text: the order was looked up and is only shipped."""
    return [
        {"role": "user", "content": f"Please refund order #{order}."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": json.dumps({"order_id": order})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps({"order_id": order, "status": "shipped", "amount": 12.5})},
    ]


class Seen:
    """httpx response hooks (sync and async) that keep each model call's cache outcome and the last request sent."""

    def __init__(self):
        self.outcomes = []
        self.statuses = []
        self.last = None

    def _keep(self, response):
        if response.request.method == "POST":
            self.outcomes.append(response.headers.get("muscle-mem-cache"))
            self.statuses.append(response.status_code)
            request = response.request
            self.last = (str(request.url), {k: v for k, v in request.headers.items() if k.lower() not in ("content-length", "host")}, request.content)

    def hooks(self):
        return {"response": [self._keep]}

    def async_hooks(self):
        async def keep(response):
            self._keep(response)

        return {"response": [keep]}

    def wait_recorded(self):
        """Re-sends the last request with only-if-cached until the Worker answers it from the tree (the
        recording lands after the miss's response)."""
        url, headers, content = self.last
        deadline = time.time() + 10
        while time.time() < deadline:
            if httpx.post(url, headers={**headers, "cache-control": "only-if-cached"}, content=content).status_code == 200:
                return
            time.sleep(0.05)
        raise RuntimeError(f"not recorded in time: {url}")


def report(name, outcomes, expect, same):
    print(json.dumps({"name": name, "outcomes": outcomes, "expect": expect, "same": same}), flush=True)


def chat_raw_response():
    seen = Seen()
    client = openai.OpenAI(api_key=f"{PREFIX}-raw", base_url=f"{CHAT_BASE}/v1", max_retries=0, http_client=openai.DefaultHttpxClient(event_hooks=seen.hooks()))
    body = dict(model="gpt-py-raw", messages=[{"role": "user", "content": "Please refund order #R-1."}], tools=TOOLS)
    headers, calls = [], []
    for run in range(2):
        raw = client.chat.completions.with_raw_response.create(**body)
        headers.append(raw.headers.get("muscle-mem-cache"))
        message = raw.parse().choices[0].message
        calls.append([(c.function.name, c.function.arguments) for c in message.tool_calls or []])
        if run == 0:
            seen.wait_recorded()
    same = headers == seen.outcomes and len(calls[0]) == 1 and calls[0] == calls[1]
    report("openai with_raw_response (a tool call)", seen.outcomes, ["miss", "hit"], same)


def chat_retry():
    """The upstream answers the first call 503: the client's retry is a miss (the 503 was never recorded), then a hit."""
    seen = Seen()
    client = openai.OpenAI(api_key=f"{PREFIX}-retry", base_url=f"{CHAT_BASE}/v1", max_retries=2, http_client=openai.DefaultHttpxClient(event_hooks=seen.hooks()))
    body = dict(model="gpt-py-retry", messages=shipped_history("T-5"))
    contents = []
    for run in range(2):
        contents.append(client.chat.completions.create(**body).choices[0].message.content)
        if run == 0:
            seen.wait_recorded()
    same = seen.statuses == [503, 200, 200] and "shipped" in contents[0] and contents[0] == contents[1]
    report("openai max_retries over an upstream 503", seen.outcomes, ["miss", "miss", "hit"], same)


def chat_streaming_response_usage():
    seen = Seen()
    client = openai.OpenAI(api_key=f"{PREFIX}-sse", base_url=f"{CHAT_BASE}/v1", max_retries=0, http_client=openai.DefaultHttpxClient(event_hooks=seen.hooks()))
    body = dict(model="gpt-py-sse", messages=shipped_history("S-1"), stream=True, stream_options={"include_usage": True})
    texts, usages = [], []
    for run in range(2):
        with client.chat.completions.with_streaming_response.create(**body) as response:
            chunks = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: {")]
        texts.append("".join((c["choices"][0]["delta"].get("content") or "") for c in chunks if c["choices"]))
        usages.append([c["usage"] for c in chunks if c.get("usage")])
        if run == 0:
            seen.wait_recorded()
    same = "shipped" in texts[0] and texts[0] == texts[1] and len(usages[0]) == 1 and usages[0] == usages[1]
    report("openai with_streaming_response, include_usage", seen.outcomes, ["miss", "hit"], same)


async def chat_async_stream_helper():
    seen = Seen()
    client = openai.AsyncOpenAI(api_key=f"{PREFIX}-async", base_url=f"{CHAT_BASE}/v1", max_retries=0, http_client=openai.DefaultAsyncHttpxClient(event_hooks=seen.async_hooks()))
    body = dict(model="gpt-py-async", messages=shipped_history("A-9"))
    finals, deltas = [], []
    for run in range(2):
        async with client.chat.completions.stream(**body) as stream:
            got = []
            async for event in stream:
                if event.type == "content.delta":
                    got.append(event.delta)
            final = await stream.get_final_completion()
        finals.append(final.choices[0].message.content)
        deltas.append("".join(got))
        if run == 0:
            await asyncio.to_thread(seen.wait_recorded)
    same = "shipped" in finals[0] and finals[0] == finals[1] and deltas[0] == deltas[1] == finals[0]
    report("openai AsyncOpenAI chat.completions.stream", seen.outcomes, ["miss", "hit"], same)


async def anthropic_async():
    seen = Seen()
    client = anthropic.AsyncAnthropic(api_key=f"{PREFIX}-ant-async", base_url=CHAT_BASE, max_retries=0, http_client=anthropic.DefaultAsyncHttpxClient(event_hooks=seen.async_hooks()))
    params = dict(model="claude-py-async", max_tokens=256, tools=[{"name": "get_order", "input_schema": ORDER}], messages=[{"role": "user", "content": "Please refund order #B-2."}])
    raw = await client.messages.with_raw_response.create(**params)
    contents = [[b.model_dump(exclude={"id"}) for b in (await raw.parse()).content]]
    await asyncio.to_thread(seen.wait_recorded)
    # The same call through the streaming helper: a hit recorded from a JSON answer, streamed.
    texts = []
    async with client.messages.stream(**params) as stream:
        async for text in stream.text_stream:
            texts.append(text)
        message = await stream.get_final_message()
    contents.append([b.model_dump(exclude={"id"}) for b in message.content])
    same = len(contents[0]) == 2 and contents[0] == contents[1] and "".join(texts) == "".join(b["text"] for b in contents[0] if b["type"] == "text")
    report("anthropic AsyncAnthropic with_raw_response, then messages.stream", seen.outcomes, ["miss", "hit"], same)


async def gemini_async():
    seen = Seen()
    client = genai.Client(api_key=f"{PREFIX}-gm-async", http_options=types.HttpOptions(base_url=CHAT_BASE, async_client_args={"event_hooks": seen.async_hooks()}))
    decl = [types.FunctionDeclaration(name="get_order", parameters_json_schema=ORDER)]
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=decl)], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    contents = [types.Content(role="user", parts=[types.Part(text="Please refund order #G-3.")])]
    parts = []
    for run in range(2):
        answer = await client.aio.models.generate_content(model="gemini-py-async", contents=contents, config=config)
        parts.append([p.model_dump(exclude_none=True) for p in answer.candidates[0].content.parts])
        if run == 0:
            await asyncio.to_thread(seen.wait_recorded)
    report("google-genai client.aio generate_content", seen.outcomes, ["miss", "hit"], len(parts[0]) == 2 and parts[0] == parts[1])


def responses_stream_helper():
    seen = Seen()
    client = openai.OpenAI(api_key=f"{PREFIX}-resp-stream", base_url=f"{RESPONSES_BASE}/v1", max_retries=0, http_client=openai.DefaultHttpxClient(event_hooks=seen.hooks()))
    tools = [{"type": "function", "name": "get_order", "parameters": ORDER}]
    body = dict(model="gpt-py-resp-stream", input="Please refund order #C-4.", tools=tools)
    got = []
    for run in range(2):
        with client.responses.stream(**body) as stream:
            deltas = [e.delta for e in stream if e.type in ("response.output_text.delta", "response.function_call_arguments.delta")]
            final = stream.get_final_response()
        calls = [(i.name, i.arguments) for i in final.output if i.type == "function_call"]
        got.append((final.output_text, calls, "".join(deltas)))
        if run == 0:
            seen.wait_recorded()
    report("openai responses.stream", seen.outcomes, ["miss", "hit"], len(got[0][1]) == 1 and got[0] == got[1])


if __name__ == "__main__":
    chat_raw_response()
    chat_retry()
    chat_streaming_response_usage()
    asyncio.run(chat_async_stream_helper())
    asyncio.run(anthropic_async())
    asyncio.run(gemini_async())
    responses_stream_helper()
