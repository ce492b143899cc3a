"""clients2.py's agent loops (what each SDK hands back, appended as it is) and whole-object comparisons."""
import json

import anthropic
from google.genai import types

from clients import ORDER, TOOLS, Seen, shipped_history
from harness2 import CHAT_BASE, DESK, PREFIX, REFUND, RESPONSES_BASE, ant, check, differ, gclient, oai


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
