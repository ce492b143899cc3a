"""More client behaviours of the official Python clients through muscle-mem (clients.py's sequel).

Same protocol as clients.py: each check prints one JSON line {"name", "outcomes", "expect", "same"}; a check
that raises prints its error in "outcomes" and "same": false (the others still run). The checks are in
checks_openai.py, checks_anthropic.py, checks_gemini.py and checks_agents.py, on harness2.py.
Usage: clients2.py CHAT_BASE RESPONSES_BASE KEY_PREFIX; CLIENTS2_ONLY=a,b runs the checks whose function
names contain a or b.
"""
import os

# Each module registers its checks, run in this order.
import checks_openai  # noqa: F401
import checks_anthropic  # noqa: F401
import checks_gemini  # noqa: F401
import checks_agents  # noqa: F401
from harness2 import CHECKS, run

if __name__ == "__main__":
    only = os.environ.get("CLIENTS2_ONLY", "")  # a substring of the check functions' names to run
    for name, expect, fn in CHECKS:
        if any(part in fn.__name__ for part in only.split(",")):
            run(name, expect, fn)
