"""A scripted model on loopback for the real agent CLIs: Anthropic Messages (Claude
Code), OpenAI Responses (Codex), Gemini API (Gemini CLI), streaming where the client
asks for it.

The script is a list of tool calls. Each request's place in it is the number of our
calls the conversation already answered (tool results whose id is ours), so the agent's
retries and side requests (titles, summaries, token counts) cannot skip a step; after
the last call it answers with text and the agent stops. Every request body is recorded
as received: the tests' outside view of what reached the model.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ID = "swifty"  # our tool-call ids start with it


@dataclass(frozen=True, slots=True)
class Call:
    tool: str
    arguments: dict[str, Any]


@dataclass
class Model:
    script: list[Call] = field(default_factory=list)
    final: str = "done"
    requests: list[tuple[str, bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    # -- what reached the model ----------------------------------------------------------

    def text(self) -> str:
        with self.lock:
            return "\n".join(body.decode("utf-8", "replace") for _, body in self.requests)

    def results(self) -> list[str]:
        """Every tool result the agent sent back for one of our calls, in order, as text
        (the last request holds them all)."""
        with self.lock:
            bodies = [json.loads(body) for path, body in self.requests if body[:1] == b"{"]
        found: dict[str, str] = {}
        for body in bodies:
            for key, value in _our_results(body):
                found.setdefault(key, value)
        return [found[k] for k in sorted(found, key=lambda k: int(k.rsplit("_", 1)[1]))]

    def tools(self) -> list[str]:
        """The tool names the agent offered in its richest request."""
        with self.lock:
            bodies = [json.loads(body) for _, body in self.requests if body[:1] == b"{"]
        best: list[str] = []
        for body in bodies:
            names = _tool_names(body)
            if len(names) > len(best):
                best = names
        return best

    # -- answering -----------------------------------------------------------------------

    def step(self, body: dict[str, Any]) -> Call | None:
        done = len(dict(_our_results(body)))
        offered = set(_tool_names(body))
        if done < len(self.script) and self.script[done].tool in offered:
            return self.script[done]
        return None


def _our_results(body: dict[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for message in body.get("messages") or []:  # Anthropic
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result" and \
                    str(block.get("tool_use_id", "")).startswith(ID):
                out.append((block["tool_use_id"], json.dumps(block.get("content"))))
    for item in body.get("input") or [] if isinstance(body.get("input"), list) else []:
        if item.get("type") in ("function_call_output", "custom_tool_call_output") and \
                str(item.get("call_id", "")).startswith(ID):  # OpenAI Responses
            out.append((item["call_id"], json.dumps(item.get("output"))))
    n = 0
    for content in body.get("contents") or []:  # Gemini
        for part in content.get("parts") or []:
            response = part.get("functionResponse")
            if isinstance(response, dict):
                key = str(response.get("id") or "")
                if not key.startswith(ID):
                    key = f"{ID}_{n}"
                n += 1
                out.append((key, json.dumps(response.get("response"))))
    return out


def _tool_names(body: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if "name" in tool:  # Anthropic, OpenAI Responses
            names.append(str(tool["name"]))
        for decl in tool.get("functionDeclarations") or tool.get("function_declarations") \
                or []:  # Gemini
            names.append(str(decl.get("name")))
    return names


def _sse(events: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


def anthropic(model: Model, body: dict[str, Any]) -> tuple[str, bytes]:
    call = model.step(body)
    n = len(dict(_our_results(body)))
    if call is not None:
        block: dict[str, Any] = {"type": "tool_use", "id": f"{ID}_{n}", "name": call.tool,
                                 "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call.arguments)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": model.final}
        stop = "end_turn"
    message = {"id": f"msg_{n}", "type": "message", "role": "assistant",
               "model": body.get("model", "m"), "content": [], "stop_reason": None,
               "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    if not body.get("stream"):
        full = dict(block)
        if call is not None:
            full["input"] = call.arguments
        else:
            full["text"] = model.final
        return "application/json", json.dumps(
            {**message, "content": [full], "stop_reason": stop}).encode()
    return "text/event-stream", _sse([
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def responses(model: Model, body: dict[str, Any]) -> tuple[str, bytes]:
    call = model.step(body)
    n = len(dict(_our_results(body)))
    if call is not None:
        item: dict[str, Any] = {"type": "function_call", "id": f"fc_{n}",
                                "call_id": f"{ID}_{n}", "name": call.tool,
                                "arguments": json.dumps(call.arguments),
                                "status": "completed"}
    else:
        item = {"type": "message", "id": f"m_{n}", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": model.final, "annotations": []}]}
    response = {"id": f"resp_{n}", "object": "response", "status": "completed",
                "model": body.get("model", "m"), "output": [item],
                "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                          "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 0}}}
    return "text/event-stream", _sse([
        ("response.created", {"type": "response.created",
                              "response": {**response, "status": "in_progress",
                                           "output": []}}),
        ("response.output_item.added", {"type": "response.output_item.added",
                                        "output_index": 0, "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done",
                                       "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": response}),
    ])


def gemini(model: Model, body: dict[str, Any], stream: bool) -> tuple[str, bytes]:
    call = model.step(body)
    n = len(_our_results(body))
    part: dict[str, Any]
    if call is not None:
        part = {"functionCall": {"name": call.tool, "args": call.arguments, "id": f"{ID}_{n}"}}
    else:
        part = {"text": model.final}
    chunk = {"candidates": [{"content": {"role": "model", "parts": [part]},
                             "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1,
                               "totalTokenCount": 2},
             "modelVersion": "gemini-2.5-pro"}
    if stream:
        return "text/event-stream", _sse([(None, chunk)])
    return "application/json", json.dumps(chunk).encode()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _reply(self, status: int, kind: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.server.model.requests.append((self.path, b""))
        if "/models" in self.path:
            self._reply(200, "application/json", b'{"data": [], "models": []}')
        else:
            self._reply(404, "application/json", b"{}")

    def do_HEAD(self) -> None:
        self._reply(200, "application/json", b"")

    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(size)
        model = self.server.model
        with model.lock:
            model.requests.append((self.path, raw))
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        path = self.path.split("?", 1)[0]
        if path.endswith("/messages/count_tokens"):
            self._reply(200, "application/json", b'{"input_tokens": 1}')
        elif path.endswith("/messages"):
            self._reply(200, *anthropic(model, body))
        elif path.endswith("/responses"):
            self._reply(200, *responses(model, body))
        elif re.search(r":streamGenerateContent$", path):
            self._reply(200, *gemini(model, body, stream=True))
        elif re.search(r":generateContent$", path):
            self._reply(200, *gemini(model, body, stream=False))
        elif re.search(r":countTokens$", path):
            self._reply(200, "application/json", b'{"totalTokens": 1}')
        else:
            self._reply(200, "application/json", b"{}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, model: Model) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.model = model


class ModelServer:
    """`with ModelServer(model) as url:` — the model served on 127.0.0.1 until the end."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._server = _Server(model)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> str:
        self._thread.start()
        return self.url

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
