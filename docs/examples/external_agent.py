"""A minimal external agent speaking workbench-agent/1 over stdin/stdout (stdlib only).

    workbench sim run stack-two --agent external --agent-cmd \
        "python external_agent.py 'pick up the red brick' 'put the red brick on the blue brick'"

Each time it is asked it sends the next command; it skips a "pick up X" while X is held.
"""

import json
import sys

PROTOCOL = "workbench-agent/1"


def send(message):  # stdout carries the protocol only: one JSON object per line
    print(json.dumps(message), flush=True)


def holding(command, graph):  # "pick up the red brick" while brick_red is in the gripper
    words = set(command.lower().split())
    held = [a for kind, a, _ in graph["relations"] if kind == "held"]
    return command.lower().startswith("pick") and any(set(h.split("_")) <= words for h in held)


commands = sys.argv[1:]
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        send({"type": "ready", "protocol": PROTOCOL, "agent": {"name": "example", "version": "1"}})
    elif message["type"] == "observation":
        while commands and holding(commands[0], message["graph"]):
            commands.pop(0)
        if commands:
            send({"type": "act", "actions": [commands.pop(0)]})
        else:
            send({"type": "done", "claim": "every command was sent"})
    elif message["type"] == "end":
        break
