"""A refund-desk agent through muscle-mem with the official Python clients.

Runs each API three times (a first run, a repeat, and the repeat through the streaming helpers) and a
chained Responses run twice, and prints one JSON line per run: {"name", "outcomes", "final"}. The outcomes are
the muscle-mem-cache header of every model call, read with an httpx response hook on each client.
Usage: agent.py CHAT_BASE RESPONSES_BASE KEY_PREFIX APIS (comma-separated: chat,anthropic,gemini,responses-chained).
templates.py runs the same agents (imported, with its own orders, desk and model names).
"""
import json
import sys

import anthropic
import openai
from google import genai
from google.genai import types

from gemini_parts import streamed_parts

CHAT_BASE, RESPONSES_BASE, PREFIX = sys.argv[1], sys.argv[2], sys.argv[3]
PROMPT = "Please refund order #A-1."
DESK = {"get_order": lambda a: {"order_id": a["order_id"], "status": "delivered", "amount": 42.5}, "refund": lambda a: {"order_id": a["order_id"], "refunded": True}}
OBJ = lambda props: {"type": "object", "properties": props, "required": list(props)}
ORDER = OBJ({"order_id": {"type": "string"}})
REFUND = OBJ({"order_id": {"type": "string"}, "amount": {"type": "number"}})


def recorder(outcomes):
    """An httpx response hook that keeps the cache outcome of every model call (`template` for a hit a template served)."""

    def hook(response):
        if response.request.method == "POST":
            hit = response.headers.get("muscle-mem-cache")
            outcomes.append("template" if hit == "hit" and response.headers.get("muscle-mem-template") else hit)

    return {"response": [hook]}


def report(name, outcomes, final):
    print(json.dumps({"name": name, "outcomes": outcomes, "final": final}), flush=True)


def chat_run(mode, prompt=PROMPT, desk=DESK, headers=None, model="gpt-py"):
    outcomes = []
    client = openai.OpenAI(api_key=f"{PREFIX}-chat", base_url=f"{CHAT_BASE}/v1", max_retries=0, default_headers=headers, http_client=openai.DefaultHttpxClient(event_hooks=recorder(outcomes)))
    tools = [{"type": "function", "function": {"name": "get_order", "parameters": ORDER}}, {"type": "function", "function": {"name": "refund", "parameters": REFUND}}]
    messages = [{"role": "user", "content": prompt}]
    for _ in range(6):
        if mode == "stream":
            with client.chat.completions.stream(model=model, messages=messages, tools=tools) as stream:
                message = stream.get_final_completion().choices[0].message
        else:
            message = client.chat.completions.create(model=model, messages=messages, tools=tools).choices[0].message
        # As agents do: the assistant message back as the client built it (the helper's carries `index` on each call).
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return outcomes, message.content
        for call in message.tool_calls:
            out = desk[call.function.name](json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(out)})
    raise RuntimeError("chat agent did not finish")


def anthropic_run(mode, prompt=PROMPT, desk=DESK, headers=None, model="claude-py"):
    outcomes = []
    client = anthropic.Anthropic(api_key=f"{PREFIX}-ant", base_url=CHAT_BASE, max_retries=0, default_headers=headers, http_client=anthropic.DefaultHttpxClient(event_hooks=recorder(outcomes)))
    tools = [{"name": "get_order", "input_schema": ORDER}, {"name": "refund", "input_schema": REFUND}]
    messages = [{"role": "user", "content": prompt}]
    for _ in range(6):
        params = dict(model=model, max_tokens=512, tools=tools, messages=messages)
        if mode == "stream":
            with client.messages.stream(**params) as stream:
                message = stream.get_final_message()
        else:
            message = client.messages.create(**params)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]})
        calls = [b for b in message.content if b.type == "tool_use"]
        if not calls:
            return outcomes, "".join(b.text for b in message.content if b.type == "text")
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": c.id, "content": json.dumps(desk[c.name](c.input))} for c in calls]})
    raise RuntimeError("anthropic agent did not finish")


def gemini_run(mode, prompt=PROMPT, desk=DESK, headers=None, model="gemini-py"):
    outcomes = []
    client = genai.Client(api_key=f"{PREFIX}-gm", http_options=types.HttpOptions(base_url=CHAT_BASE, headers=headers, client_args={"event_hooks": recorder(outcomes)}))
    decl = [types.FunctionDeclaration(name="get_order", parameters_json_schema=ORDER), types.FunctionDeclaration(name="refund", parameters_json_schema=REFUND)]
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=decl)], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    contents = [types.Content(role="user", parts=[types.Part(text=prompt)])]
    for _ in range(6):
        if mode == "stream":
            parts = streamed_parts(client.models.generate_content_stream(model=model, contents=contents, config=config))
        else:
            parts = client.models.generate_content(model=model, contents=contents, config=config).candidates[0].content.parts
        contents.append(types.Content(role="model", parts=parts))
        calls = [p.function_call for p in parts if p.function_call]
        if not calls:
            return outcomes, "".join(p.text or "" for p in parts)
        contents.append(types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(name=c.name, response=desk[c.name](dict(c.args)))) for c in calls]))
    raise RuntimeError("gemini agent did not finish")


def responses_chained_run():
    outcomes = []
    client = openai.OpenAI(api_key=f"{PREFIX}-resp", base_url=f"{RESPONSES_BASE}/v1", max_retries=0, http_client=openai.DefaultHttpxClient(event_hooks=recorder(outcomes)))
    tools = [{"type": "function", "name": "get_order", "parameters": ORDER}, {"type": "function", "name": "refund", "parameters": REFUND}]
    previous, next_input = None, PROMPT
    for _ in range(6):
        response = client.responses.create(model="gpt-py-resp", input=next_input, tools=tools, previous_response_id=previous)
        calls = [i for i in response.output if i.type == "function_call"]
        if not calls:
            return outcomes, response.output_text
        previous = response.id
        next_input = [{"type": "function_call_output", "call_id": c.call_id, "output": json.dumps(DESK[c.name](json.loads(c.arguments)))} for c in calls]
    raise RuntimeError("responses agent did not finish")


RUNS = {"chat": chat_run, "anthropic": anthropic_run, "gemini": gemini_run}


def main():
    for api in sys.argv[4].split(","):
        if api == "responses-chained":
            for run in ("first", "repeat"):
                report(f"responses-chained {run}", *responses_chained_run())
            continue
        for run, mode in (("first", "plain"), ("repeat", "plain"), ("streamed repeat", "stream")):
            report(f"{api} {run}", *RUNS[api](mode))


if __name__ == "__main__":
    main()
