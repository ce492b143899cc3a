"""More client behaviours of the official Python clients through muscle-mem (clients.py's sequel).

Same protocol as clients.py: each check prints one JSON line {"name", "outcomes", "expect", "same"}; a check
that raises prints its error in "outcomes" and "same": false (the others still run).
Usage: clients2.py CHAT_BASE RESPONSES_BASE KEY_PREFIX
"""
import asyncio
import io
import json
import os
import sys
import traceback

import anthropic
import httpx
import openai
import pydantic
from google import genai
from google.genai import errors, types

from clients import ORDER, TOOLS, Seen, report, shipped_history

CHAT_BASE, RESPONSES_BASE, PREFIX = sys.argv[1], sys.argv[2], sys.argv[3]


class Order(pydantic.BaseModel):
    order_id: str
    status: str
    amount: float
    note: str


CHECKS = []


def check(name, expect):
    """Registers a check (sync or async) that returns (outcomes, same)."""

    def wrap(fn):
        CHECKS.append((name, expect, fn))
        return fn

    return wrap


def run(name, expect, fn):
    """Runs one check; an exception is a failed check (the others still run)."""
    try:
        outcomes, same = asyncio.run(fn()) if asyncio.iscoroutinefunction(fn) else fn()
    except Exception as error:  # noqa: BLE001: any failure is the check's
        traceback.print_exc(file=sys.stderr)
        outcomes, same = [f"error: {type(error).__name__}: {str(error)[:200]}"], False
    report(name, outcomes, expect, same)


def paths(a, b, at=""):
    """Where two JSON-like values differ: one line per path, with each side's value."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [line for k in sorted(set(a) | set(b), key=str) for line in paths(a.get(k, "<absent>"), b.get(k, "<absent>"), f"{at}.{k}")]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return [line for i, (x, y) in enumerate(zip(a, b)) for line in paths(x, y, f"{at}[{i}]")]
    return [] if a == b else [f"{at or '.'}: miss {str(a)[:300]!r}, hit {str(b)[:300]!r}"]


def differ(a, b):
    """Says on stderr where a miss's content and its hit's differ (for the one reading a failure)."""
    for line in paths(a, b):
        print(line, file=sys.stderr)
    return a == b


def merged(events):
    """Events as (type, delta, index) with each run of same-typed deltas joined: a hit streams text in its own
    chunks, not the model's, so its events match the miss's once the deltas of a run are joined."""
    out = []
    for kind, delta, index in events:
        if out and delta is not None and out[-1][0] == kind and out[-1][2] == index and out[-1][1] is not None:
            out[-1] = (kind, out[-1][1] + delta, index)
        elif not (out and delta is None and out[-1] == (kind, None, index)):
            out.append((kind, delta, index))
    return out


def oai(seen, key, base=CHAT_BASE, **kw):
    return openai.OpenAI(api_key=f"{PREFIX}-{key}", base_url=f"{base}/v1", max_retries=0, http_client=openai.DefaultHttpxClient(event_hooks=seen.hooks()), **kw)


@check("openai chat.completions.parse(response_format=Pydantic): parsed equal", ["miss", "hit"])
def chat_parse():
    seen = Seen()
    client = oai(seen, "parse")
    got = []
    for run in range(2):
        answer = client.chat.completions.parse(model="gpt-py-parse", messages=[{"role": "user", "content": "Look up order #P-1 as JSON."}], response_format=Order)
        message = answer.choices[0].message
        got.append((message.content, message.parsed.model_dump()))
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, got[0][1]["note"] == "café ✓" and differ(got[0], got[1])


@check("openai chat.completions.stream(response_format=Pydantic): parsed, events (deltas joined) equal", ["miss", "hit"])
def chat_stream_parse():
    seen = Seen()
    client = oai(seen, "stream-parse")
    got = []
    for run in range(2):
        with client.chat.completions.stream(model="gpt-py-parse", messages=[{"role": "user", "content": "Look up order #P-2 as JSON."}], response_format=Order) as stream:
            events = merged([(e.type, getattr(e, "delta", None), None) for e in stream if e.type != "chunk"])
            final = stream.get_final_completion()
        got.append((final.choices[0].message.parsed.model_dump(), final.choices[0].message.content, events))
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, got[0][0]["order_id"] == "P-2" and differ(got[0], got[1])


@check("openai extra_body/extra_query/extra_headers: keyed (seed 8 after seed 7 is a miss)", ["miss", "hit", "miss"])
def chat_extras():
    seen = Seen()
    client = oai(seen, "extras")
    contents = []
    for run, seed in enumerate([7, 7, 8]):
        answer = client.chat.completions.create(
            model="gpt-py-extras", messages=shipped_history("E-1"), extra_body={"seed": seed}, extra_query={"trace": "py"}, extra_headers={"x-py-trace": "1"}
        )
        contents.append(answer.choices[0].message.content)
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, "shipped" in contents[0] and contents[0] == contents[1]


@check("openai image as a data URL: bypass (image parts are not keyed), every answer fresh", ["bypass", "bypass", "bypass"])
def chat_image():
    seen = Seen()
    client = oai(seen, "image")
    pngs = ["iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="]
    calls = []
    for png in [pngs[0], pngs[0], pngs[1]]:
        content = [{"type": "text", "text": "Refund the order on this receipt."}, {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}", "detail": "low"}}]
        message = client.chat.completions.create(model="gpt-py-image", messages=[{"role": "user", "content": content}], tools=TOOLS).choices[0].message
        calls.append([(c.id, c.function.arguments) for c in message.tool_calls or []])
    return seen.outcomes, all(len(c) == 1 for c in calls) and len({c[0][0] for c in calls}) == 3


@check("openai n=2 and logprobs=True: bypass (never a replay)", ["bypass", "bypass", "bypass", "bypass"])
def chat_bypassed():
    seen = Seen()
    client = oai(seen, "bypass")
    for _ in range(2):
        client.chat.completions.create(model="gpt-py-n", messages=shipped_history("N-1"), n=2)
    for _ in range(2):
        answer = client.chat.completions.create(model="gpt-py-n", messages=shipped_history("N-1"), logprobs=True, top_logprobs=2)
    return seen.outcomes, "shipped" in answer.choices[0].message.content


@check("openai AsyncOpenAI, 3 identical requests at once (asyncio.gather), then a 4th", ["miss", "hit", "hit", "hit"])
async def chat_gather():
    seen = Seen()
    client = openai.AsyncOpenAI(api_key=f"{PREFIX}-gather", base_url=f"{CHAT_BASE}/v1", max_retries=0, http_client=openai.DefaultAsyncHttpxClient(event_hooks=seen.async_hooks()))
    body = dict(model="gpt-py-gather", messages=shipped_history("Q-1"))
    answers = await asyncio.gather(*[client.chat.completions.create(**body) for _ in range(3)])
    await asyncio.to_thread(seen.wait_recorded)
    answers.append(await client.chat.completions.create(**body))
    contents = {a.choices[0].message.content for a in answers}
    # Single flight: one leader asks the model, the followers are served its answer (each says hit).
    seen.outcomes.sort(key=lambda o: o != "miss")
    return seen.outcomes, len(contents) == 1 and "shipped" in contents.pop()


@check("openai 429 with retry-after: relayed to the client, never recorded", ["miss", "miss", "hit"])
def chat_429():
    seen = Seen()
    client = oai(seen, "429")
    try:
        client.chat.completions.create(model="gpt-py-429", messages=shipped_history("L-1"))
        return seen.outcomes, False
    except openai.RateLimitError as error:
        retry_after = error.response.headers.get("retry-after")
    contents = []
    for run in range(2):
        contents.append(client.chat.completions.create(model="gpt-py-429", messages=shipped_history("L-1")).choices[0].message.content)
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, retry_after == "1" and seen.statuses == [429, 200, 200] and contents[0] == contents[1]


@check("openai responses.create(stream=True) with tools: events (deltas joined) equal", ["miss", "hit"])
def responses_stream_create():
    seen = Seen()
    client = oai(seen, "resp-sse", base=RESPONSES_BASE)
    tools = [{"type": "function", "name": "get_order", "parameters": ORDER}]
    got = []
    for run in range(2):
        events = list(client.responses.create(model="gpt-py-resp-sse", input="Please refund order #D-4.", tools=tools, stream=True))
        shape = merged([(e.type, getattr(e, "delta", None), getattr(e, "output_index", None)) for e in events])
        final = events[-1].response
        got.append((shape, [(i.type, getattr(i, "name", None), getattr(i, "arguments", None)) for i in final.output], final.output_text))
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, len(got[0][1]) == 2 and differ(got[0], got[1])


@check("openai responses.parse(text_format=Pydantic): output_parsed equal", ["miss", "hit"])
def responses_parse():
    seen = Seen()
    client = oai(seen, "resp-parse", base=RESPONSES_BASE)
    got = []
    for run in range(2):
        answer = client.responses.parse(model="gpt-py-resp-parse", input="Look up order #P-3 as JSON.", text_format=Order)
        got.append((answer.output_text, answer.output_parsed.model_dump()))
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, got[0][1]["note"] == "café ✓" and differ(got[0], got[1])


@check("raw JSON: ensure_ascii escapes and UTF-8 key alike; `1.0` then `1` keyed as sent (a miss)", ["miss", "hit", "miss"])
def ensure_ascii():
    seen = Seen()
    url = f"{CHAT_BASE}/v1/chat/completions"
    history = shipped_history("U-1")
    history[0]["content"] = "Please refund order #U-1, café crème ✓ 😀."
    body = {"model": "gpt-py-ascii", "messages": history, "temperature": 1.0}
    headers = {"authorization": f"Bearer {PREFIX}-ascii", "content-type": "application/json"}
    sends = [json.dumps(body).encode(), json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), json.dumps(body).replace("1.0", "1").encode()]
    texts = []
    with httpx.Client(event_hooks=seen.hooks()) as http:
        for run, content in enumerate(sends):
            texts.append(http.post(url, headers=headers, content=content).json()["choices"][0]["message"]["content"])
            if run == 0:
                seen.wait_recorded()
    return seen.outcomes, "shipped" in texts[0] and len(set(texts)) == 1


@check("raw JSON: a lone surrogate (\\ud800) is never answered as another (\\udbff)", ["bypass", "bypass"])
def lone_surrogate():
    seen = Seen()
    url = f"{CHAT_BASE}/v1/chat/completions"
    headers = {"authorization": f"Bearer {PREFIX}-surrogate", "content-type": "application/json"}
    with httpx.Client(event_hooks=seen.hooks()) as http:
        for ch in ["\ud800", "\udbff"]:
            history = shipped_history("V-1")
            history[0]["content"] = f"Please refund order #V-1 {ch}"
            http.post(url, headers=headers, content=json.dumps({"model": "gpt-py-surrogate", "messages": history}).encode())
    return seen.outcomes, seen.statuses == [200, 200]


@check("anthropic messages.stream miss then hit: events (deltas joined), final message equal", ["miss", "hit"])
def anthropic_stream():
    seen = Seen()
    client = anthropic.Anthropic(api_key=f"{PREFIX}-ant-sse", base_url=CHAT_BASE, max_retries=0, http_client=anthropic.DefaultHttpxClient(event_hooks=seen.hooks()))
    params = dict(model="claude-py-sse", max_tokens=256, tools=[{"name": "get_order", "input_schema": ORDER}], tool_choice={"type": "auto"}, messages=[{"role": "user", "content": "Please refund order #K-2."}])
    got = []
    for run in range(2):
        with client.messages.stream(**params) as stream:
            events = merged([(e.type, getattr(getattr(e, "delta", None), "text", None) or getattr(getattr(e, "delta", None), "partial_json", None), getattr(e, "index", None)) for e in stream if e.type not in ("text", "input_json")])
            message = stream.get_final_message()
        got.append((events, [b.model_dump(exclude={"id"}) for b in message.content], message.stop_reason))
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, len(got[0][1]) == 2 and differ(got[0], got[1])


@check("anthropic anthropic-beta header and cache_control blocks: keyed by beta", ["miss", "hit", "miss"])
def anthropic_beta_cache_control():
    seen = Seen()
    client = anthropic.Anthropic(api_key=f"{PREFIX}-ant-beta", base_url=CHAT_BASE, max_retries=0, http_client=anthropic.DefaultHttpxClient(event_hooks=seen.hooks()))
    system = [{"type": "text", "text": "You are a refund desk. " * 40, "cache_control": {"type": "ephemeral"}}]
    messages = [{"role": "user", "content": [{"type": "text", "text": "Please refund order #M-3.", "cache_control": {"type": "ephemeral", "ttl": "5m"}}]}]
    contents = []
    for run, beta in enumerate(["prompt-caching-2024-07-31", "prompt-caching-2024-07-31", "token-efficient-tools-2025-02-19"]):
        message = client.messages.create(model="claude-py-beta", max_tokens=128, system=system, messages=messages, tools=[{"name": "get_order", "input_schema": ORDER}], extra_headers={"anthropic-beta": beta})
        contents.append([b.model_dump(exclude={"id"}) for b in message.content])
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, len(contents[0]) == 2 and contents[0] == contents[1] == contents[2]


@check("anthropic messages.count_tokens: passed through (the scripted upstream's own 404 comes back)", ["bypass"])
def anthropic_count_tokens():
    seen = Seen()
    client = anthropic.Anthropic(api_key=f"{PREFIX}-ant-count", base_url=CHAT_BASE, max_retries=0, http_client=anthropic.DefaultHttpxClient(event_hooks=seen.hooks()))
    try:
        client.messages.count_tokens(model="claude-py-count", messages=[{"role": "user", "content": "How many tokens?"}])
        return [str(o) for o in seen.outcomes], False
    except anthropic.NotFoundError as error:
        return [str(o) for o in seen.outcomes], "no route POST /v1/messages/count_tokens" in str(error)


@check("anthropic AsyncAnthropic, 3 identical requests at once, then a 4th", ["miss", "hit", "hit", "hit"])
async def anthropic_gather():
    seen = Seen()
    client = anthropic.AsyncAnthropic(api_key=f"{PREFIX}-ant-gather", base_url=CHAT_BASE, max_retries=0, http_client=anthropic.DefaultAsyncHttpxClient(event_hooks=seen.async_hooks()))
    params = dict(model="claude-py-gather", max_tokens=128, messages=[{"role": "user", "content": "Please refund order #W-5."}])
    answers = await asyncio.gather(*[client.messages.create(**params) for _ in range(3)])
    await asyncio.to_thread(seen.wait_recorded)
    answers.append(await client.messages.create(**params))
    seen.outcomes.sort(key=lambda o: o != "miss")
    texts = {json.dumps([b.model_dump(exclude={"id"}) for b in a.content]) for a in answers}
    return seen.outcomes, len(texts) == 1


def gclient(seen, key):
    return genai.Client(api_key=f"{PREFIX}-{key}", http_options=types.HttpOptions(base_url=CHAT_BASE, client_args={"event_hooks": seen.hooks()}))


@check("google-genai generate_content_stream: chunks and parts equal", ["miss", "hit"])
def gemini_stream():
    seen = Seen()
    client = gclient(seen, "gm-sse")
    config = types.GenerateContentConfig(
        system_instruction="You are a refund desk.", tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name="get_order", parameters_json_schema=ORDER)])], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
    )
    got = []
    for run in range(2):
        chunks = list(client.models.generate_content_stream(model="gemini-py-sse", contents="Please refund order #G-6.", config=config))
        parts = [p.model_dump(exclude_none=True) for c in chunks for p in (c.candidates[0].content.parts or [])]
        got.append((parts, chunks[-1].candidates[0].finish_reason))
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, any("function_call" in p for p in got[0][0]) and differ(got[0], got[1])


@check("google-genai response_schema=Pydantic: parsed equal", ["miss", "hit"])
def gemini_schema():
    seen = Seen()
    client = gclient(seen, "gm-schema")
    config = types.GenerateContentConfig(system_instruction="Answer in JSON.", response_mime_type="application/json", response_schema=Order)
    got = []
    for run in range(2):
        answer = client.models.generate_content(model="gemini-py-schema", contents="Look up order #P-4 as JSON.", config=config)
        got.append((answer.text, answer.parsed.model_dump()))
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, got[0][1]["note"] == "café ✓" and differ(got[0], got[1])


@check("google-genai count_tokens: passed through (the scripted upstream's own 404 comes back)", ["bypass"])
def gemini_count_tokens():
    seen = Seen()
    client = gclient(seen, "gm-count")
    try:
        client.models.count_tokens(model="gemini-py-count", contents="How many tokens?")
        return [str(o) for o in seen.outcomes], False
    except errors.ClientError as error:
        return [str(o) for o in seen.outcomes], error.code == 404 and "no route" in str(error)


@check("google-genai chats.send_message, a tool round trip, twice", ["miss", "miss", "hit", "hit"])
def gemini_chat():
    seen = Seen()
    client = gclient(seen, "gm-chat")
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name="get_order", parameters_json_schema=ORDER)])], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    finals = []
    for run in range(2):
        chat = client.chats.create(model="gemini-py-chat", config=config)
        first = chat.send_message("Please refund order #H-7.")
        call = first.function_calls[0]
        result = types.Part.from_function_response(name=call.name, response={"order_id": call.args["order_id"], "status": "shipped", "amount": 12.5})
        finals.append(chat.send_message(result).text)
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, "shipped" in finals[0] and finals[0] == finals[1]


def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped", "amount": 1.0}


@check("google-genai automatic function calling (a Python function), twice", ["miss", "miss", "hit", "hit"])
def gemini_afc():
    seen = Seen()
    client = gclient(seen, "gm-afc")
    config = types.GenerateContentConfig(tools=[get_order])
    finals = []
    for run in range(2):
        finals.append(client.models.generate_content(model="gemini-py-afc", contents="Please refund order #J-8.", config=config).text)
        if run == 0:
            seen.wait_recorded()
    # The SDK sends the function's value as {"result": ...}, which the scripted desk does not read: "missing".
    return seen.outcomes, "cannot be refunded" in finals[0] and differ(finals[0], finals[1])



@check("openai AsyncOpenAI, a JSON and a streamed request at once, then each again: each answered in its own form", ["miss", "hit", "hit", "hit"])
async def chat_gather_mixed():
    seen = Seen()
    client = openai.AsyncOpenAI(api_key=f"{PREFIX}-mixed", base_url=f"{CHAT_BASE}/v1", max_retries=0, http_client=openai.DefaultAsyncHttpxClient(event_hooks=seen.async_hooks()))
    body = dict(model="gpt-py-mixed", messages=shipped_history("X-1"))

    async def streamed():
        stream = await client.chat.completions.create(**body, stream=True)
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    async def plain():
        return (await client.chat.completions.create(**body)).choices[0].message.content

    texts = list(await asyncio.gather(plain(), streamed()))
    await asyncio.to_thread(seen.wait_recorded)
    texts += [await plain(), await streamed()]
    seen.outcomes.sort(key=lambda o: o != "miss")
    return seen.outcomes, "shipped" in texts[0] and len(set(texts)) == 1


@check("anthropic AsyncAnthropic, a JSON and a streamed request at once: each in its own form", ["miss", "hit"])
async def anthropic_gather_mixed():
    seen = Seen()
    client = anthropic.AsyncAnthropic(api_key=f"{PREFIX}-ant-mixed", base_url=CHAT_BASE, max_retries=0, http_client=anthropic.DefaultAsyncHttpxClient(event_hooks=seen.async_hooks()))
    params = dict(model="claude-py-mixed", max_tokens=128, tools=[{"name": "get_order", "input_schema": ORDER}], messages=[{"role": "user", "content": "Please refund order #X-2."}])

    async def streamed():
        async with client.messages.stream(**params) as stream:
            return [b.model_dump(exclude={"id"}) for b in (await stream.get_final_message()).content]

    async def plain():
        return [b.model_dump(exclude={"id"}) for b in (await client.messages.create(**params)).content]

    got = await asyncio.gather(streamed(), plain())
    seen.outcomes.sort(key=lambda o: o != "miss")
    return seen.outcomes, len(got[0]) == 2 and differ(got[0], got[1])


@check("google-genai client.aio, generate_content and generate_content_stream at once: each in its own form", ["miss", "hit"])
async def gemini_gather_mixed():
    seen = Seen()
    client = genai.Client(api_key=f"{PREFIX}-gm-mixed", http_options=types.HttpOptions(base_url=CHAT_BASE, async_client_args={"event_hooks": seen.async_hooks()}))
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name="get_order", parameters_json_schema=ORDER)])], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))

    async def streamed():
        chunks = [c async for c in await client.aio.models.generate_content_stream(model="gemini-py-mixed", contents="Please refund order #X-3.", config=config)]
        return [p.model_dump(exclude_none=True) for c in chunks for p in (c.candidates[0].content.parts or [])]

    async def plain():
        answer = await client.aio.models.generate_content(model="gemini-py-mixed", contents="Please refund order #X-3.", config=config)
        return [p.model_dump(exclude_none=True) for p in answer.candidates[0].content.parts]

    got = await asyncio.gather(plain(), streamed())
    seen.outcomes.sort(key=lambda o: o != "miss")
    text = lambda parts: ("".join(p.get("text", "") for p in parts), [p["function_call"] for p in parts if "function_call" in p])
    return seen.outcomes, len(got[0]) == 2 and differ(text(got[0]), text(got[1]))


class GetOrder(pydantic.BaseModel):
    order_id: str


@check("openai parse(tools=[pydantic_function_tool]) (strict): parsed_arguments equal, _request_id on both", ["miss", "hit"])
def chat_parse_tool():
    seen = Seen()
    client = oai(seen, "parse-tool")
    got, ids = [], []
    for run in range(2):
        answer = client.chat.completions.parse(model="gpt-py-parse-tool", messages=[{"role": "user", "content": "Please refund order #T-9."}], tools=[openai.pydantic_function_tool(GetOrder, name="get_order")])
        call = answer.choices[0].message.tool_calls[0]
        got.append((call.function.name, call.function.arguments, call.function.parsed_arguments.model_dump()))
        ids.append(answer._request_id)
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, got[0][2] == {"order_id": "T-9"} and differ(got[0], got[1]) and all(ids) and ids[0] != ids[1]


@check("openai default_headers muscle-mem-namespace: a, b, a", ["miss", "miss", "hit"])
def chat_namespaces():
    seen = Seen()
    contents = []
    for run, ns in enumerate(["py-a", "py-b", "py-a"]):
        client = oai(seen, "ns", default_headers={"muscle-mem-namespace": ns})
        contents.append(client.chat.completions.create(model="gpt-py-ns", messages=shipped_history("Z-1")).choices[0].message.content)
        if run < 2:
            seen.wait_recorded()
    return seen.outcomes, len(set(contents)) == 1


@check("google-genai a Pydantic-typed function declaration and tool_config ANY, twice", ["miss", "hit"])
def gemini_tool_config():
    seen = Seen()
    client = gclient(seen, "gm-any")
    decl = types.FunctionDeclaration(name="get_order", description="Look up an order by id.", parameters=types.Schema(type="OBJECT", properties={"order_id": types.Schema(type="STRING")}, required=["order_id"]))
    config = types.GenerateContentConfig(
        temperature=0.0,
        tools=[types.Tool(function_declarations=[decl])],
        tool_config=types.ToolConfig(function_calling_config=types.FunctionCallingConfig(mode="ANY", allowed_function_names=["get_order"])),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    got = []
    for run in range(2):
        answer = client.models.generate_content(model="gemini-py-any", contents=[types.Content(role="user", parts=[types.Part(text="Please refund order #Y-4, café.")])], config=config)
        got.append(([(c.name, c.args) for c in answer.function_calls], answer.usage_metadata.model_dump(exclude_none=True)))
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, got[0][0] == [("get_order", {"order_id": "Y-4"})] and differ(got[0], got[1])



DESK = {"get_order": lambda a: {"order_id": a["order_id"], "status": "delivered", "amount": 42.5}, "refund": lambda a: {"order_id": a["order_id"], "refunded": True}}
REFUND = {"type": "object", "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}}, "required": ["order_id", "amount"]}
NATURAL = ["miss"] * 3 + ["hit"] * 6 + ["miss"] * 3 + ["hit"] * 6


def natural_runs(one_run):
    """Runs an agent loop three times (JSON, JSON, streamed), then on another key (STREAM_FIRST: the tenant's
    suffix) streamed, JSON, streamed: whether every run's final text is the first's."""
    finals = [one_run(False, ""), one_run(False, ""), one_run(True, "")]
    finals += [one_run(True, "-s"), one_run(False, "-s"), one_run(True, "-s")]
    return "refunded" in finals[0] and len(set(finals)) == 1


@check("openai chat agent appending the SDK's message objects as they come (JSON, JSON, stream helper; stream, JSON, stream)", NATURAL)
def natural_chat():
    seen = Seen()
    client = oai(seen, "nat-chat")
    tools = TOOLS + [{"type": "function", "function": {"name": "refund", "parameters": REFUND}}]

    def one_run(stream, suffix):
        messages = [{"role": "user", "content": "Please refund order #NA-1."}]
        while True:
            if stream:
                with client.chat.completions.stream(model="gpt-py-nat" + suffix, messages=messages, tools=tools) as s:
                    message = s.get_final_completion().choices[0].message
            else:
                message = client.chat.completions.create(model="gpt-py-nat" + suffix, messages=messages, tools=tools).choices[0].message
            messages.append(message)
            if not message.tool_calls:
                return message.content
            for call in message.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(DESK[call.function.name](json.loads(call.function.arguments)))})

    return seen.outcomes, natural_runs(one_run)


@check("anthropic agent appending message.content (the SDK's blocks) as they come (JSON, JSON, stream helper; stream, JSON, stream)", NATURAL)
def natural_anthropic():
    seen = Seen()
    client = anthropic.Anthropic(api_key=f"{PREFIX}-nat-ant", base_url=CHAT_BASE, max_retries=0, http_client=anthropic.DefaultHttpxClient(event_hooks=seen.hooks()))
    tools = [{"name": "get_order", "input_schema": ORDER}, {"name": "refund", "input_schema": REFUND}]

    def one_run(stream, suffix):
        messages = [{"role": "user", "content": "Please refund order #NA-2."}]
        while True:
            params = dict(model="claude-py-nat" + suffix, max_tokens=512, tools=tools, messages=messages)
            if stream:
                with client.messages.stream(**params) as s:
                    message = s.get_final_message()
            else:
                message = client.messages.create(**params)
            messages.append({"role": "assistant", "content": message.content})
            calls = [b for b in message.content if b.type == "tool_use"]
            if not calls:
                return "".join(b.text for b in message.content if b.type == "text")
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": c.id, "content": json.dumps(DESK[c.name](c.input))} for c in calls]})

    return seen.outcomes, natural_runs(one_run)


@check("google-genai agent appending candidates[0].content as it comes, and every streamed chunk's content (JSON, JSON, stream; stream, JSON, stream)", NATURAL)
def natural_gemini():
    seen = Seen()
    client = gclient(seen, "nat-gm")
    decl = [types.FunctionDeclaration(name="get_order", parameters_json_schema=ORDER), types.FunctionDeclaration(name="refund", parameters_json_schema=REFUND)]
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=decl)], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))

    def one_run(stream, suffix):
        contents = [types.Content(role="user", parts=[types.Part(text="Please refund order #NA-3.")])]
        while True:
            if stream:
                chunks = list(client.models.generate_content_stream(model="gemini-py-nat" + suffix, contents=contents, config=config))
                parts = [p for c in chunks for p in (c.candidates[0].content.parts or [])]
                contents.append(types.Content(role="model", parts=parts))
            else:
                answer = client.models.generate_content(model="gemini-py-nat" + suffix, contents=contents, config=config)
                contents.append(answer.candidates[0].content)
                parts = answer.candidates[0].content.parts
            calls = [p.function_call for p in parts if p.function_call]
            if not calls:
                return "".join(p.text or "" for p in parts)
            contents.append(types.Content(role="user", parts=[types.Part.from_function_response(name=c.name, response=DESK[c.name](c.args)) for c in calls]))

    return seen.outcomes, natural_runs(one_run)


@check("openai responses agent: input += response.output (the SDK's items) as they come (JSON, JSON, responses.stream; stream, JSON, stream)", NATURAL)
def natural_responses():
    seen = Seen()
    client = oai(seen, "nat-resp", base=RESPONSES_BASE)
    tools = [{"type": "function", "name": "get_order", "parameters": ORDER}, {"type": "function", "name": "refund", "parameters": REFUND}]

    def one_run(stream, suffix):
        items = [{"role": "user", "content": "Please refund order #NA-4."}]
        while True:
            if stream:
                with client.responses.stream(model="gpt-py-nat-resp" + suffix, input=items, tools=tools) as s:
                    response = s.get_final_response()
            else:
                response = client.responses.create(model="gpt-py-nat-resp" + suffix, input=items, tools=tools)
            items += response.output
            calls = [i for i in response.output if i.type == "function_call"]
            if not calls:
                return response.output_text
            items += [{"type": "function_call_output", "call_id": c.call_id, "output": json.dumps(DESK[c.name](json.loads(c.arguments)))} for c in calls]

    return seen.outcomes, natural_runs(one_run)



@check("google-genai chats: send_message_stream, send_message, send_message_stream; then the other way round", ["miss", "miss"] + ["hit"] * 4 + ["miss", "miss"] + ["hit"] * 4)
def gemini_chat_stream_and_json():
    seen = Seen()
    client = gclient(seen, "gm-chat-mixed")
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name="get_order", parameters_json_schema=ORDER)])], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    finals = []
    for model, modes in [("gemini-py-chat-s", "sjs"), ("gemini-py-chat-j", "jsj")]:
        for mode in modes:
            chat = client.chats.create(model=model, config=config)
            send = (lambda m: list(chat.send_message_stream(m))) if mode == "s" else (lambda m: [chat.send_message(m)])
            calls = [c for answer in send("Please refund order #H-8.") for c in answer.function_calls or []]
            result = types.Part.from_function_response(name=calls[0].name, response={"order_id": calls[0].args["order_id"], "status": "shipped"})
            finals.append("".join(a.text or "" for a in send(result)))
            if len(finals) in (1, 4):
                seen.wait_recorded()
    return seen.outcomes, "shipped" in finals[0] and len(set(finals)) == 1



def ant(seen, key):
    return anthropic.Anthropic(api_key=f"{PREFIX}-{key}", base_url=CHAT_BASE, max_retries=0, http_client=anthropic.DefaultHttpxClient(event_hooks=seen.hooks()))


@check("anthropic messages.parse(output_format=Pydantic): parsed_output equal", ["miss", "hit"])
def anthropic_parse():
    seen = Seen()
    client = ant(seen, "ant-parse")
    got = []
    for run in range(2):
        message = client.messages.parse(model="claude-py-parse", max_tokens=256, messages=[{"role": "user", "content": "Look up order #P-5 as JSON."}], output_format=Order)
        got.append(([b.model_dump(exclude={"parsed_output"}) for b in message.content], message.parsed_output.model_dump()))
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, got[0][1]["note"] == "café ✓" and differ(got[0], got[1])


@check("anthropic client.beta.messages.create(betas=[...]) (?beta=true), then beta.messages.stream", ["miss", "hit", "hit"])
def anthropic_beta_client():
    seen = Seen()
    client = ant(seen, "ant-beta-client")
    params = dict(model="claude-py-beta-client", max_tokens=256, tools=[{"name": "get_order", "input_schema": ORDER}], messages=[{"role": "user", "content": "Please refund order #B-6."}], betas=["token-efficient-tools-2025-02-19"])
    got = []
    for run in range(2):
        got.append([b.model_dump(exclude={"id"}) for b in client.beta.messages.create(**params).content])
        if run == 0:
            seen.wait_recorded()
    with client.beta.messages.stream(**params) as stream:
        got.append([b.model_dump(exclude={"id"}) for b in stream.get_final_message().content])
    return seen.outcomes, "beta=true" in seen.last[0] and len(got[0]) == 2 and differ(got[0], got[1]) and differ(got[0], got[2])


@check("anthropic beta.messages.tool_runner with @beta_tool functions, twice", ["miss", "miss", "miss", "hit", "hit", "hit"])
def anthropic_tool_runner():
    seen = Seen()
    client = ant(seen, "ant-runner")

    @anthropic.beta_tool
    def get_order(order_id: str) -> str:
        """Look up an order by id."""
        return json.dumps(DESK["get_order"]({"order_id": order_id}))

    @anthropic.beta_tool
    def refund(order_id: str, amount: float) -> str:
        """Refund an order in full."""
        return json.dumps(DESK["refund"]({"order_id": order_id}))

    finals = []
    for _ in range(2):
        runner = client.beta.messages.tool_runner(model="claude-py-runner", max_tokens=256, tools=[get_order, refund], messages=[{"role": "user", "content": "Please refund order #R-7."}])
        final = runner.until_done()
        finals.append("".join(b.text for b in final.content if b.type == "text"))
        seen.wait_recorded()
    return seen.outcomes, "refunded" in finals[0] and differ(finals[0], finals[1])


@check("google-genai http_options api_version='v1' (the stable path)", ["miss", "hit"])
def gemini_v1():
    seen = Seen()
    client = genai.Client(api_key=f"{PREFIX}-gm-v1", http_options=types.HttpOptions(base_url=CHAT_BASE, api_version="v1", client_args={"event_hooks": seen.hooks()}))
    got = []
    for run in range(2):
        answer = client.models.generate_content(model="gemini-py-v1", contents="Please refund order #V-2.")
        got.append([p.model_dump(exclude_none=True) for p in answer.candidates[0].content.parts])
        if run == 0:
            seen.wait_recorded()
    return seen.outcomes, "/v1/models/" in seen.last[0] and len(got[0]) == 2 and differ(got[0], got[1])


@check("google-genai chats with automatic function calling (a Python function), two messages, twice", ["miss"] * 4 + ["hit"] * 4)
def gemini_chat_afc():
    seen = Seen()
    client = gclient(seen, "gm-chat-afc")
    finals = []
    for _ in range(2):
        chat = client.chats.create(model="gemini-py-chat-afc", config=types.GenerateContentConfig(tools=[get_order]))
        finals.append(chat.send_message("Please refund order #F-9.").text)
        finals.append(chat.send_message("Thanks. And order #F-10?").text)
        seen.wait_recorded()
    return seen.outcomes, "cannot be refunded" in finals[0] and differ(finals[:2], finals[2:])



@check("google-genai chats with automatic function calling: send_message_stream, send_message, send_message_stream", ["miss", "miss"] + ["hit"] * 4)
def gemini_chat_afc_stream():
    seen = Seen()
    client = gclient(seen, "gm-chat-afc-sse")
    finals = []
    for mode in "sjs":
        chat = client.chats.create(model="gemini-py-chat-afc-sse", config=types.GenerateContentConfig(tools=[get_order]))
        if mode == "s":
            finals.append("".join(c.text or "" for c in chat.send_message_stream("Please refund order #F-11.")))
        else:
            finals.append(chat.send_message("Please refund order #F-11.").text)
        if len(finals) == 1:
            seen.wait_recorded()
    # The stream's text is every chunk's, the call's turn too; send_message's, the last answer's.
    return seen.outcomes, finals[1].startswith("Order") and finals[0] == finals[2] == "Let me look that order up." + finals[1]


@check("anthropic beta.messages.tool_runner(stream=True), then without stream", ["miss", "miss", "miss", "hit", "hit", "hit"])
def anthropic_tool_runner_stream():
    seen = Seen()
    client = ant(seen, "ant-runner-sse")

    @anthropic.beta_tool
    def get_order(order_id: str) -> str:
        """Look up an order by id."""
        return json.dumps(DESK["get_order"]({"order_id": order_id}))

    @anthropic.beta_tool
    def refund(order_id: str, amount: float) -> str:
        """Refund an order in full."""
        return json.dumps(DESK["refund"]({"order_id": order_id}))

    finals = []
    for stream in (True, False):
        params = dict(model="claude-py-runner-sse", max_tokens=256, tools=[get_order, refund], messages=[{"role": "user", "content": "Please refund order #R-8."}])
        runner = client.beta.messages.tool_runner(**params, stream=True) if stream else client.beta.messages.tool_runner(**params)
        final = runner.until_done()
        finals.append("".join(b.text for b in final.content if b.type == "text"))
        seen.wait_recorded()
    return seen.outcomes, "refunded" in finals[0] and differ(finals[0], finals[1])



RENEWED = {"id", "created", "created_at", "response_id", "call_id", "sdk_http_response"}
# What a hit writes as the real API does where the scripted upstreams write nothing: a Responses hit echoes the
# request's settings with the API's defaults (`temperature: 1.0`, `tool_choice: "auto"`, `store: true`, …), a
# Messages hit's usage says 0 prompt-cache tokens.
ECHOED = {"background", "metadata", "reasoning", "store", "temperature", "text", "tool_choice", "top_p", "truncation", "cache_creation_input_tokens", "cache_read_input_tokens"}


def scrub(value):
    """A model_dump without the fields a hit renews (ids, timestamps) and the SDK's own (http response)."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if k not in RENEWED | ECHOED}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


@check("whole objects (model_dump), JSON and streamed, miss then hit, but ids, timestamps, echoed defaults: chat, Messages, Gemini, Responses", ["miss", "hit"] * 8)
def whole_objects():
    seen = Seen()
    chat, messages, gm, resp = oai(seen, "whole"), ant(seen, "whole"), gclient(seen, "whole"), oai(seen, "whole", base=RESPONSES_BASE)
    decl = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name="get_order", parameters_json_schema=ORDER)])], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))

    def chat_stream():
        with chat.chat.completions.stream(model="gpt-py-whole-s", messages=shipped_history("W-1"), tools=TOOLS, stream_options={"include_usage": True}) as s:
            return s.get_final_completion()

    def messages_stream():
        with messages.messages.stream(model="claude-py-whole-s", max_tokens=99, tools=[{"name": "get_order", "input_schema": ORDER}], messages=[{"role": "user", "content": "Please refund order #W-2."}]) as s:
            return s.get_final_message()

    def responses_stream():
        with resp.responses.stream(model="gpt-py-whole-s", input="Please refund order #W-4.", tools=[{"type": "function", "name": "get_order", "parameters": ORDER}]) as s:
            return s.get_final_response()

    calls = [
        lambda: chat.chat.completions.create(model="gpt-py-whole", messages=[{"role": "user", "content": "Please refund order #W-1."}], tools=TOOLS),
        chat_stream,
        lambda: messages.messages.create(model="claude-py-whole", max_tokens=99, tools=[{"name": "get_order", "input_schema": ORDER}], messages=[{"role": "user", "content": "Please refund order #W-2."}]),
        messages_stream,
        lambda: gm.models.generate_content(model="gemini-py-whole", contents="Please refund order #W-3.", config=decl),
        lambda: list(gm.models.generate_content_stream(model="gemini-py-whole-s", contents="Please refund order #W-3.", config=decl)),
        lambda: resp.responses.create(model="gpt-py-whole", input="Please refund order #W-4.", tools=[{"type": "function", "name": "get_order", "parameters": ORDER}]),
        responses_stream,
    ]
    same = True
    for call in calls:
        got = []
        for run in range(2):
            answer = call()
            got.append(scrub([a.model_dump() for a in answer] if isinstance(answer, list) else answer.model_dump()))
            if run == 0:
                seen.wait_recorded()
        same = differ(got[0], got[1]) and same
    return seen.outcomes, same



@check("openai client on Gemini's OpenAI-compatible path (/v1beta/openai/): passed through, not cached", ["bypass"])
def gemini_openai_compat():
    seen = Seen()
    client = openai.OpenAI(api_key=f"{PREFIX}-gm-oai", base_url=f"{CHAT_BASE}/v1beta/openai/", max_retries=0, http_client=openai.DefaultHttpxClient(event_hooks=seen.hooks()))
    try:
        client.chat.completions.create(model="gemini-py-oai", messages=[{"role": "user", "content": "Please refund order #O-1."}])
        return seen.outcomes, False
    except openai.NotFoundError as error:
        # The scripted Gemini upstream has no such route: its own 404 comes back, so the request reached it.
        return seen.outcomes, "no route POST /v1beta/openai/chat/completions" in str(error)



@check("google-genai http_options api_version='v1alpha' (Google's preview version): relayed, not cached", ["bypass", "bypass"])
def gemini_v1alpha():
    seen = Seen()
    client = genai.Client(api_key=f"{PREFIX}-gm-alpha", http_options=types.HttpOptions(base_url=CHAT_BASE, api_version="v1alpha", client_args={"event_hooks": seen.hooks()}))
    got = [client.models.generate_content(model="gemini-py-alpha", contents="Please refund order #V-3.").text for _ in range(2)]
    return seen.outcomes, "/v1alpha/models/" in seen.last[0] and got[0] == got[1] == "Let me look that order up."



@check("google-genai files.upload (POST /upload/v1beta/files): relayed to the upstream", ["bypass"])
def gemini_upload():
    seen = Seen()
    client = gclient(seen, "gm-upload")
    try:
        client.files.upload(file=io.BytesIO(b"order C-3 receipt"), config=types.UploadFileConfig(mime_type="text/plain", display_name="receipt"))
        return seen.outcomes, False
    except errors.ClientError as error:
        # The scripted upstream has no upload route: its own 404 comes back (before: the Worker's "No such route.").
        return seen.outcomes, error.code == 404 and "no route POST /upload/v1beta/files" in str(error)


if __name__ == "__main__":
    only = os.environ.get("CLIENTS2_ONLY", "")  # a substring of the check functions' names to run
    for name, expect, fn in CHECKS:
        if any(part in fn.__name__ for part in only.split(",")):
            run(name, expect, fn)
