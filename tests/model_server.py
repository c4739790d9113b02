"""A scripted model on 127.0.0.1 for the real Claude Code and Codex CLIs.

One HTTP server speaks both wire formats, streaming: Anthropic's Messages API (``POST
/v1/messages``, server-sent events; Claude Code reaches it through ``ANTHROPIC_BASE_URL``) and
OpenAI's Responses API (``POST /v1/responses``; Codex reaches it through a
``[model_providers.X]`` entry with ``wire_api = "responses"``). Each *main* request (one that
offers the harness's tools) is answered by the next step of a per-test script: text, tool
calls, or both, with the usage of that response. Side requests (Claude Code's title and
summary calls to a small model, ``count_tokens``) get a short text or a count and do not
advance the script. Every request is kept in ``log`` with the step that answered it, so a test
reads what the model was shown (the brief, a hook's message) and what usage it was sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Call:
    """One tool call: the tool's name and its input (for Codex's function tools, the JSON
    arguments; a freeform tool's ``input`` is a string)."""

    name: str
    input: dict[str, Any] | str


@dataclass
class Step:
    """One model response."""

    text: str = ""
    calls: list[Call] = field(default_factory=list)
    input_tokens: int = 1000
    output_tokens: int = 50
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0  # Codex: part of output_tokens, as OpenAI counts it


@dataclass
class Request:
    path: str
    body: dict[str, Any]
    main: bool
    step: Step | None  # what answered it (None: a side request)


Script = Callable[["ModelServer", dict[str, Any]], Step]


def steps(*items: Step) -> Script:
    """A script answering the main requests in order; after the last step, plain text."""
    queue = list(items)

    def next_step(_server: ModelServer, _body: dict[str, Any]) -> Step:
        return queue.pop(0) if queue else Step(text="Done.")

    return next_step


def tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            name = tool.get("name") or (tool.get("function") or {}).get("name")
            if isinstance(name, str):
                names.append(name)
    return names


def texts(value: Any) -> list[str]:
    """Every string inside a request body's messages or input (the text the model reads)."""
    found: list[str] = []
    if isinstance(value, str):
        found.append(value)
    elif isinstance(value, list):
        for item in value:
            found.extend(texts(item))
    elif isinstance(value, dict):
        for key, item in value.items():
            if key in ("text", "content", "output", "input", "arguments") or isinstance(
                item, (list, dict)
            ):
                found.extend(texts(item))
    return found


class ModelServer:
    def __init__(self, script: Script, model: str = "claude-sonnet-4-5") -> None:
        self.script = script
        self.model = model
        self.log: list[Request] = []
        self.lock = threading.Lock()
        self.counter = 0
        handler = type("Handler", (_Handler,), {"model_server": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = int(self.httpd.server_address[1])
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ModelServer:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def next_id(self, prefix: str) -> str:
        with self.lock:
            self.counter += 1
            return f"{prefix}_{self.counter:04d}"

    def main_requests(self) -> list[Request]:
        return [request for request in self.log if request.main]

    def answered(self) -> list[Step]:
        return [r.step for r in self.log if r.step is not None]

    def model_text(self) -> list[str]:
        """The text of the last main request's messages or input: what the model was last
        shown of the whole conversation."""
        last = self.main_requests()[-1].body
        return texts(last.get("messages") or last.get("input"))


class _Handler(BaseHTTPRequestHandler):
    model_server: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding") == "zstd":  # not offered to the harnesses
            raise ValueError("compressed request")
        try:
            value = json.loads(raw or b"{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        server = self.model_server
        with server.lock:
            server.log.append(Request(path, {}, False, None))
        if path.endswith("/models"):
            self._json(200, {"data": [{"id": server.model, "type": "model"}], "models": []})
        else:
            self._json(404, {"error": {"type": "not_found", "message": path}})

    def do_POST(self) -> None:
        path = self.path.split("?")[0]
        body = self._body()
        server = self.model_server
        if path.endswith("/count_tokens"):
            with server.lock:
                server.log.append(Request(path, body, False, None))
            self._json(200, {"input_tokens": 100})
            return
        if path.endswith("/messages"):
            main = "Bash" in tool_names(body)
        elif path.endswith("/responses"):
            main = bool(tool_names(body))
        else:
            with server.lock:
                server.log.append(Request(path, body, False, None))
            self._json(404, {"error": {"type": "not_found", "message": path}})
            return
        step = server.script(server, body) if main else Step(text="Shift", input_tokens=10)
        with server.lock:
            server.log.append(Request(path, body, main, step))
        if path.endswith("/messages"):
            self._anthropic(body, step)
        else:
            self._responses(body, step)

    # -- Anthropic Messages -------------------------------------------------------------------

    def _anthropic(self, body: dict[str, Any], step: Step) -> None:
        server = self.model_server
        model = body.get("model") or server.model
        blocks: list[dict[str, Any]] = []
        if step.text:
            blocks.append({"type": "text", "text": step.text})
        for call in step.calls:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": server.next_id("toolu"),
                    "name": call.name,
                    "input": call.input,
                }
            )
        stop = "tool_use" if step.calls else "end_turn"
        usage = {
            "input_tokens": step.input_tokens,
            "cache_creation_input_tokens": step.cache_write,
            "cache_read_input_tokens": step.cache_read,
            "output_tokens": step.output_tokens,
        }
        ident = server.next_id("msg")
        if not body.get("stream"):
            self._json(
                200,
                {
                    "id": ident,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        events: list[tuple[str, dict[str, Any]]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": ident,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {**usage, "output_tokens": 1},
                    },
                },
            )
        ]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                ),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": usage,
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        self._sse(events)

    def _sse(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        data = b"".join(
            f"event: {name}\ndata: {json.dumps(value)}\n\n".encode() for name, value in events
        )
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    # -- OpenAI Responses ---------------------------------------------------------------------

    def _responses(self, body: dict[str, Any], step: Step) -> None:
        server = self.model_server
        ident = server.next_id("resp")
        items: list[dict[str, Any]] = []
        if step.text:
            items.append(
                {
                    "type": "message",
                    "id": server.next_id("msg"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": step.text, "annotations": []}],
                }
            )
        for call in step.calls:
            call_id = server.next_id("call")
            if isinstance(call.input, str):
                items.append(
                    {
                        "type": "custom_tool_call",
                        "id": server.next_id("ctc"),
                        "status": "completed",
                        "call_id": call_id,
                        "name": call.name,
                        "input": call.input,
                    }
                )
            else:
                items.append(
                    {
                        "type": "function_call",
                        "id": server.next_id("fc"),
                        "status": "completed",
                        "call_id": call_id,
                        "name": call.name,
                        "arguments": json.dumps(call.input),
                    }
                )
        usage = {
            "input_tokens": step.input_tokens + step.cache_read,
            "input_tokens_details": {"cached_tokens": step.cache_read},
            "output_tokens": step.output_tokens,
            "output_tokens_details": {"reasoning_tokens": step.reasoning},
            "total_tokens": step.input_tokens + step.cache_read + step.output_tokens,
        }
        model = body.get("model") or server.model
        head = {"id": ident, "object": "response", "model": model, "status": "in_progress"}
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"type": "response.created", "response": head})
        ]
        for index, item in enumerate(items):
            events.append(
                (
                    "response.output_item.added",
                    {"type": "response.output_item.added", "output_index": index, "item": item},
                )
            )
            if item["type"] == "message":
                events.append(
                    (
                        "response.output_text.delta",
                        {
                            "type": "response.output_text.delta",
                            "output_index": index,
                            "item_id": item["id"],
                            "content_index": 0,
                            "delta": step.text,
                        },
                    )
                )
            events.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": index, "item": item},
                )
            )
        done = {**head, "status": "completed", "output": items, "usage": usage}
        events.append(("response.completed", {"type": "response.completed", "response": done}))
        self._sse(events)


# -- a scripted shift: claim, implement, finish, in either wire format ---------------------------


def history(body: dict[str, Any]) -> tuple[list[tuple[str, Any]], list[str]]:
    """The tool calls made so far in this conversation, (name, input) each, and the outputs
    the harness sent back for them, in order (Anthropic's messages or OpenAI's input items)."""
    calls: list[tuple[str, Any]] = []
    outputs: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                calls.append((str(block.get("name")), block.get("input")))
            elif block.get("type") == "tool_result":
                outputs.append(" ".join(texts(block.get("content"))))
    for item in body.get("input") or [] if isinstance(body.get("input"), list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") in ("function_call", "custom_tool_call"):
            calls.append((str(item.get("name")), item.get("arguments") or item.get("input")))
        elif item.get("type") in ("function_call_output", "custom_tool_call_output"):
            outputs.append(" ".join(texts(item.get("output"))))
    return calls, outputs


def shell(format_: str, command: str) -> Call:
    """A shell tool call: Claude Code's `Bash`, Codex's `exec_command`."""
    if format_ == "anthropic":
        return Call("Bash", {"command": command, "description": "run a shell command"})
    # (Codex hands a command still running after its yield time back to the model, which would
    # then stop while `shiftkit finish` runs: a scripted model waits for it instead)
    return Call("exec_command", {"cmd": command, "yield_time_ms": 110_000})


def shift(work: dict[str, str]) -> Script:
    """A model that works one feature per session: `shiftkit claim`, then the shell command
    ``work`` names for the feature it was given, `shiftkit finish`, and says it is done.
    Stateless: where it is in the shift is read from the conversation the harness sends."""

    def next_step(_server: ModelServer, body: dict[str, Any]) -> Step:
        format_ = "anthropic" if "messages" in body else "responses"
        calls, outputs = history(body)
        done = len(calls)
        claimed = next((f for f in work if outputs and f"claimed {f}" in outputs[0]), None)
        if done == 0:
            return Step(calls=[shell(format_, "shiftkit claim")], input_tokens=3000)
        if done == 1:
            if claimed is None:
                return Step(text=f"Nothing to claim: {outputs[-1][:200]}")
            return Step(calls=[shell(format_, work[claimed])], input_tokens=3500, cache_read=2000)
        if done == 2:
            return Step(
                calls=[shell(format_, f"shiftkit finish -m 'Make {claimed} work'")],
                input_tokens=4000,
                cache_read=3000,
                output_tokens=80,
            )
        return Step(text="Done: the feature passes.", input_tokens=4500, output_tokens=20)

    return next_step


def calc_work(implementations: dict[str, str], names: dict[str, str]) -> dict[str, str]:
    """Each calc feature's work: append its implementation to calc/ops.py."""
    return {
        feature: f"cat >> calc/ops.py <<'PYEOF'\n{implementations[name]}PYEOF"
        for feature, name in names.items()
    }
