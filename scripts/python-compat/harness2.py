"""The harness of clients2.py's checks: registration, running, comparing, and the clients they share.

Usage of the checks: clients2.py CHAT_BASE RESPONSES_BASE KEY_PREFIX (clients.py's arguments, read here).
"""
import asyncio
import sys
import traceback

import anthropic
import openai
import pydantic
from google import genai
from google.genai import types

from clients import report

CHAT_BASE, RESPONSES_BASE, PREFIX = sys.argv[1], sys.argv[2], sys.argv[3]


class Order(pydantic.BaseModel):
    order_id: str
    status: str
    amount: float
    note: str


class GetOrder(pydantic.BaseModel):
    order_id: str


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


def ant(seen, key):
    return anthropic.Anthropic(api_key=f"{PREFIX}-{key}", base_url=CHAT_BASE, max_retries=0, http_client=anthropic.DefaultHttpxClient(event_hooks=seen.hooks()))


def gclient(seen, key):
    return genai.Client(api_key=f"{PREFIX}-{key}", http_options=types.HttpOptions(base_url=CHAT_BASE, client_args={"event_hooks": seen.hooks()}))


DESK = {"get_order": lambda a: {"order_id": a["order_id"], "status": "delivered", "amount": 42.5}, "refund": lambda a: {"order_id": a["order_id"], "refunded": True}}


REFUND = {"type": "object", "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}}, "required": ["order_id", "amount"]}


def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped", "amount": 1.0}
