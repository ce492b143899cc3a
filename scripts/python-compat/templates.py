"""Learned templates through muscle-mem with the official Python clients.

The agents are agent.py's (chat, Anthropic Messages, native Gemini) with this file's orders, desk and model names, and a
Responses agent that sends the whole conversation with store=False. Per API: three orders with their own ids and
amounts go to the model (each run is waited on until the tree serves it whole), then a fourth order it never saw is
waited on until a template serves every call, and is run through the plain client and through the streaming helpers:
every call must be a hit that names its template (`muscle-mem-template`), and the agent must refund the new order
with its own amount. Prints one JSON line per run: {"name", "outcomes", "final"}; an outcome is `template` for a hit
that names a template, else the muscle-mem-cache header.
Usage: templates.py CHAT_BASE RESPONSES_BASE KEY_PREFIX APIS (comma-separated: chat,anthropic,gemini,responses,responses-stored;
the last is the Responses agent with `store` left unset, its template answers kept for previous_response_id)
"""
import json
import sys
import time

import openai

import agent

RESPONSES_BASE, PREFIX = sys.argv[2], sys.argv[3]
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


def prompt(order_id):
    return f"Please refund order #{order_id}."


def responses_run(order, mode, headers, store=False):
    outcomes, (order_id, amount) = [], order
    client = openai.OpenAI(api_key=f"{PREFIX}-resp", base_url=f"{RESPONSES_BASE}/v1", max_retries=0, default_headers=headers, http_client=openai.DefaultHttpxClient(event_hooks=agent.recorder(outcomes)))
    tools = [{"type": "function", "name": "get_order", "parameters": agent.ORDER}, {"type": "function", "name": "refund", "parameters": agent.REFUND}]
    items = [{"role": "user", "content": prompt(order_id)}]
    for _ in range(6):
        params = dict(model="gpt-py-resp-tpl" if store is False else "gpt-py-resp-tpl-stored", input=items, tools=tools)
        if store is False:
            params["store"] = False
        if mode == "stream":
            with client.responses.stream(**params) as stream:
                response = stream.get_final_response()
        else:
            response = client.responses.create(**params)
        # The whole conversation goes back in `input` (with `store` unset the answers are kept for chaining all the same).
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


RUNS = {
    "chat": lambda order, mode, headers: agent.chat_run(mode, prompt(order[0]), desk(order[1]), headers, "gpt-py-tpl"),
    "anthropic": lambda order, mode, headers: agent.anthropic_run(mode, prompt(order[0]), desk(order[1]), headers, "claude-py-tpl"),
    "gemini": lambda order, mode, headers: agent.gemini_run(mode, prompt(order[0]), desk(order[1]), headers, "gemini-py-tpl"),
    "responses": responses_run,
    "responses-stored": lambda order, mode, headers: responses_run(order, mode, headers, store=None),
}
for api in sys.argv[4].split(","):
    run = RUNS[api]
    for order in TAUGHT:
        run(order, "plain", {})
        served_whole(run, order, f"{api}: {order[0]}'s calls were not all recorded")
    try:
        served_whole(run, NEW, f"{api}: no template served every call of a new order")
    except RuntimeError as error:
        agent.report(f"{api} template", [str(error)], "")
        continue
    for mode in ("plain", "stream"):
        outcomes, final = run(NEW, mode, {})
        agent.report(f"{api} template {mode}", outcomes, final if NEW[0] in final else f"{final} (not {NEW[0]})")
