"""clients2.py's checks of the anthropic client."""
import asyncio
import json

import anthropic

from clients import ORDER, Seen
from harness2 import CHAT_BASE, DESK, PREFIX, Order, ant, check, differ, merged


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
