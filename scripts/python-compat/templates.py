"""Learned templates through muscle-mem with the official Python clients.

Per API (chat, Anthropic Messages, native Gemini, Responses with store=False): three orders with their own ids and
amounts go to the model (each run is waited on until the tree serves it whole), then a fourth order it never saw is
waited on until a template serves every call, and is run through the plain client and through the streaming helpers:
every call must be a hit that names its template (`muscle-mem-template`), and the agent must refund the new order
with its own amount. Prints one JSON line per run: {"name", "outcomes", "final"}; an outcome is `template` for a hit
that names a template, else the muscle-mem-cache header.
Usage: templates.py CHAT_BASE RESPONSES_BASE KEY_PREFIX APIS (comma-separated: chat,anthropic,gemini,responses)
"""
import json
import sys
import time

import anthropic
import openai
from google import genai
from google.genai import types

from gemini_parts import streamed_parts

CHAT_BASE, RESPONSES_BASE, PREFIX = sys.argv[1], sys.argv[2], sys.argv[3]
OBJ = lambda props: {"type": "object", "properties": props, "required": list(props)}
ORDER = OBJ({"order_id": {"type": "string"}})
REFUND = OBJ({"order_id": {"type": "string"}, "amount": {"type": "number"}})
TAUGHT = [("B-2", 18), ("C-3", 99.9), ("D-4", 7.25)]
NEW = ("E-5", 61)
ONLY_CACHED = {"cache-control": "only-if-cached"}


def refund(args, amount):
    """The refund tool: it refuses any amount but the order's own (a template that served another order's amount fails the run)."""
    if args.get("amount") != amount:
        raise RuntimeError(f"refund of {args.get('order_id')} for {args.get('amount')}, not {amount}")
    return {"order_id": args["order_id"], "refunded": True}


def desk(amount):
    """The desk's tools for one order: every order is delivered, with this amount."""
    return {"get_order": lambda a: {"order_id": a["order_id"], "status": "delivered", "amount": amount}, "refund": lambda a: refund(a, amount)}


def recorder(outcomes):
    """An httpx response hook: each model call's outcome, `template` when a template served it."""

    def hook(response):
        if response.request.method == "POST":
            hit = response.headers.get("muscle-mem-cache")
            outcomes.append("template" if hit == "hit" and response.headers.get("muscle-mem-template") else hit)

    return {"response": [hook]}


def chat_run(order, mode, headers):
    outcomes, (order_id, amount) = [], order
    client = openai.OpenAI(api_key=f"{PREFIX}-chat", base_url=f"{CHAT_BASE}/v1", max_retries=0, default_headers=headers, http_client=openai.DefaultHttpxClient(event_hooks=recorder(outcomes)))
    tools = [{"type": "function", "function": {"name": "get_order", "parameters": ORDER}}, {"type": "function", "function": {"name": "refund", "parameters": REFUND}}]
    messages = [{"role": "user", "content": f"Please refund order #{order_id}."}]
    for _ in range(6):
        if mode == "stream":
            with client.chat.completions.stream(model="gpt-py-tpl", messages=messages, tools=tools) as stream:
                message = stream.get_final_completion().choices[0].message
        else:
            message = client.chat.completions.create(model="gpt-py-tpl", messages=messages, tools=tools).choices[0].message
        # The assistant message as the client built it, without what a streaming helper adds (`parsed`, a call's `index`).
        echoed = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            echoed["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}} for c in message.tool_calls]
        messages.append(echoed)
        if not message.tool_calls:
            return outcomes, message.content
        for call in message.tool_calls:
            out = desk(amount)[call.function.name](json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(out)})
    raise RuntimeError("chat agent did not finish")


def anthropic_run(order, mode, headers):
    outcomes, (order_id, amount) = [], order
    client = anthropic.Anthropic(api_key=f"{PREFIX}-ant", base_url=CHAT_BASE, max_retries=0, default_headers=headers, http_client=anthropic.DefaultHttpxClient(event_hooks=recorder(outcomes)))
    tools = [{"name": "get_order", "input_schema": ORDER}, {"name": "refund", "input_schema": REFUND}]
    messages = [{"role": "user", "content": f"Please refund order #{order_id}."}]
    for _ in range(6):
        params = dict(model="claude-py-tpl", max_tokens=512, tools=tools, messages=messages)
        if mode == "stream":
            with client.messages.stream(**params) as stream:
                message = stream.get_final_message()
        else:
            message = client.messages.create(**params)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]})
        calls = [b for b in message.content if b.type == "tool_use"]
        if not calls:
            return outcomes, "".join(b.text for b in message.content if b.type == "text")
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": c.id, "content": json.dumps(desk(amount)[c.name](c.input))} for c in calls]})
    raise RuntimeError("anthropic agent did not finish")


def gemini_run(order, mode, headers):
    outcomes, (order_id, amount) = [], order
    client = genai.Client(api_key=f"{PREFIX}-gm", http_options=types.HttpOptions(base_url=CHAT_BASE, headers=headers, client_args={"event_hooks": recorder(outcomes)}))
    decl = [types.FunctionDeclaration(name="get_order", parameters_json_schema=ORDER), types.FunctionDeclaration(name="refund", parameters_json_schema=REFUND)]
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=decl)], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    contents = [types.Content(role="user", parts=[types.Part(text=f"Please refund order #{order_id}.")])]
    for _ in range(6):
        if mode == "stream":
            parts = streamed_parts(client.models.generate_content_stream(model="gemini-py-tpl", contents=contents, config=config))
        else:
            parts = client.models.generate_content(model="gemini-py-tpl", contents=contents, config=config).candidates[0].content.parts
        contents.append(types.Content(role="model", parts=parts))
        calls = [p.function_call for p in parts if p.function_call]
        if not calls:
            return outcomes, "".join(p.text or "" for p in parts)
        contents.append(types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(name=c.name, response=desk(amount)[c.name](dict(c.args)))) for c in calls]))
    raise RuntimeError("gemini agent did not finish")


def responses_run(order, mode, headers):
    outcomes, (order_id, amount) = [], order
    client = openai.OpenAI(api_key=f"{PREFIX}-resp", base_url=f"{RESPONSES_BASE}/v1", max_retries=0, default_headers=headers, http_client=openai.DefaultHttpxClient(event_hooks=recorder(outcomes)))
    tools = [{"type": "function", "name": "get_order", "parameters": ORDER}, {"type": "function", "name": "refund", "parameters": REFUND}]
    items = [{"role": "user", "content": f"Please refund order #{order_id}."}]
    for _ in range(6):
        params = dict(model="gpt-py-resp-tpl", input=items, tools=tools, store=False)
        if mode == "stream":
            with client.responses.stream(**params) as stream:
                response = stream.get_final_response()
        else:
            response = client.responses.create(**params)
        # The whole conversation goes back in `input` (store=False: nothing to chain from).
        items = items + [item.model_dump(exclude_none=True) for item in response.output]
        calls = [i for i in response.output if i.type == "function_call"]
        if not calls:
            return outcomes, response.output_text
        items += [{"type": "function_call_output", "call_id": c.call_id, "output": json.dumps(desk(amount)[c.name](json.loads(c.arguments)))} for c in calls]
    raise RuntimeError("responses agent did not finish")


def served_whole(run, order, what):
    """Waits until every call of a run for `order` is served without the model (only-if-cached: anything else is a 504)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            outcomes, _ = run(order, "plain", ONLY_CACHED)
            if all(o in ("hit", "template") for o in outcomes):
                return
        except Exception:  # a 504 for a call not served yet
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} within 60 s")
        time.sleep(0.05)


def report(name, outcomes, final):
    print(json.dumps({"name": name, "outcomes": outcomes, "final": final}), flush=True)


RUNS = {"chat": chat_run, "anthropic": anthropic_run, "gemini": gemini_run, "responses": responses_run}
for api in sys.argv[4].split(","):
    run = RUNS[api]
    for order in TAUGHT:
        run(order, "plain", {})
        served_whole(run, order, f"{api}: {order[0]}'s calls were not all recorded")
    try:
        served_whole(run, NEW, f"{api}: no template served every call of a new order")
    except RuntimeError as error:
        report(f"{api} template", [str(error)], "")
        continue
    for mode in ("plain", "stream"):
        outcomes, final = run(NEW, mode, {})
        report(f"{api} template {mode}", outcomes, final if NEW[0] in final else f"{final} (not {NEW[0]})")
