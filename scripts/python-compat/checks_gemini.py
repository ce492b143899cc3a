"""clients2.py's checks of the google-genai client (and of the openai client on Gemini's OpenAI-compatible path)."""
import asyncio
import io

import openai
from google import genai
from google.genai import errors, types

from clients import ORDER, Seen
from harness2 import CHAT_BASE, PREFIX, Order, check, differ, gclient, get_order


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


@check("openai client on Gemini's OpenAI-compatible path (/v1beta/openai/): cached as chat, JSON then JSON and streamed", ["miss", "hit", "hit"])
def gemini_openai_compat():
    seen = Seen()
    client = openai.OpenAI(api_key=f"{PREFIX}-gm-oai", base_url=f"{CHAT_BASE}/v1beta/openai/", max_retries=0, http_client=openai.DefaultHttpxClient(event_hooks=seen.hooks()))
    messages = [{"role": "user", "content": "Please refund order #O-1."}]
    first = client.chat.completions.create(model="gemini-py-oai", messages=messages)
    seen.wait_recorded()
    again = client.chat.completions.create(model="gemini-py-oai", messages=messages)
    with client.chat.completions.stream(model="gemini-py-oai", messages=messages) as stream:
        streamed = stream.get_final_completion()
    calls = [[(c.function.name, c.function.arguments) for c in r.choices[0].message.tool_calls or []] for r in (first, again, streamed)]
    # The scripted compat layer (the refund desk): the call came from GEMINI_BASE_URL, and each hit serves it.
    return seen.outcomes, calls[0] == calls[1] == calls[2] == [("get_order", '{"order_id":"O-1"}')]


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
