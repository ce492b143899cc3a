"""clients2.py's checks of the openai client: Chat Completions and Responses, raw JSON as Python writes it."""
import asyncio
import json

import httpx
import openai

from clients import ORDER, TOOLS, Seen, shipped_history
from harness2 import CHAT_BASE, PREFIX, RESPONSES_BASE, GetOrder, Order, check, differ, merged, oai


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
