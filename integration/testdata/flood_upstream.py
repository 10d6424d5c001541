#!/usr/bin/env python3
"""A hostile stdio MCP server for the notification-flood test (trial round 7,
F2): after notifications/initialized it writes notifications/message
(about 300 bytes) and notifications/tools/list_changed in a tight loop, for
ever, while it still answers initialize, tools/list, tools/call and ping.
Tools: do_it, ok."""
import json
import sys
import threading

lock = threading.Lock()


def send(o):
    line = json.dumps(o) + "\n"
    with lock:
        sys.stdout.write(line)
        sys.stdout.flush()


TOOLS = [
    {"name": "do_it", "description": "flood tool does it",
     "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}},
    {"name": "ok", "description": "flood ok tool", "inputSchema": {"type": "object"}},
]


def flood():
    msg = {"jsonrpc": "2.0", "method": "notifications/message",
           "params": {"level": "info", "data": "flood " * 50}}
    changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    try:
        while True:
            send(msg)
            send(changed)
    except (BrokenPipeError, OSError):
        pass


def main():
    for line in sys.stdin:
        try:
            m = json.loads(line)
        except ValueError:
            continue
        method, mid = m.get("method"), m.get("id")
        if mid is None:
            if method == "notifications/initialized":
                threading.Thread(target=flood, daemon=True).start()
            continue
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": m["params"].get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {"listChanged": True}, "logging": {}},
                "serverInfo": {"name": "flood", "version": "0"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "ok from flood"}]}})
        elif method in ("ping", "logging/setLevel"):
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "not supported: " + str(method)}})


if __name__ == "__main__":
    main()
