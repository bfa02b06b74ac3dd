"""The agent protocol (SPEC §5): JSON lines on stdin/stdout, one process for many
commands, so each command costs little more than bubblewrap itself.

Requests:  {"id", "tool": "Bash", "command": "…" | "argv": […], "timeout": s}
           {"id", "tool": "ReadFile" | "WriteFile" | "EditFile", "path": "…"}
Responses: {"id", "type": "result", …}            `run --json`'s object for Bash,
                                                   {"decision", "is_error"} for files
           {"id", "type": "permission_request", "request", "decision"}
             answered by {"id", "type": "permission_response", "allow", "always"}
           {"id", "type": "error", "message"}     a line that is not a request, or a
                                                  request that failed (nothing ran)

Requests are handled one at a time, in order; while a permission request waits for its
answer, other lines are kept and handled afterwards. The policy files are re-read when
they change, so an "always" answer or a user's edit applies to the next request.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Iterator
from typing import IO

from swifty_sandbox.policy import Decision, Effect, Request, SwiftyError, Tool
from swifty_sandbox.policy.loader import CONFIG_FILE, SWIFTY_DIR, rule_file_path
from swifty_sandbox.policy.messages import t
from swifty_sandbox.policy.types import Scope

from .api import Answer, Sandbox, request_from_json
from .jsonlines import JsonLine, read_json_lines
from .protocol import ProtocolError, permission_answer, timeout_of


def _policy_files(box: Sandbox) -> list[str]:
    project, home = box.policy.project, box.policy.home
    names = ("permissions.yaml", CONFIG_FILE)
    return [str(rule_file_path(Scope.LOCAL, project, home))] + [
        str(base / SWIFTY_DIR / n) for base in (project, home) for n in names]


def _signature(paths: list[str]) -> tuple[tuple[int, int] | None, ...]:
    out: list[tuple[int, int] | None] = []
    for path in paths:
        try:
            st = os.stat(path)
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


def _permission_response(line: JsonLine) -> dict[str, object] | None:
    """The message in `line` if it is a permission response."""
    message = line.value
    if line.error is None and isinstance(message, dict) \
            and message.get("type") == "permission_response":
        return message
    return None


class Server:
    def __init__(self, box: Sandbox, reader: IO[bytes], writer: IO[str]) -> None:
        self.box = box
        self.lines = read_json_lines(reader)
        self.writer = writer
        self.pending: deque[JsonLine] = deque()
        self.files = _policy_files(box)
        self.seen = _signature(self.files)

    def send(self, message: dict[str, object]) -> None:
        self.writer.write(json.dumps(message, ensure_ascii=False) + "\n")
        self.writer.flush()

    def requests(self) -> Iterator[JsonLine]:
        while True:
            if self.pending:
                yield self.pending.popleft()
                continue
            line = next(self.lines, None)
            if line is None:
                return
            yield line

    def refresh(self) -> None:
        current = _signature(self.files)
        if current != self.seen:
            self.box.reload()
            self.seen = current

    def answer(self, id_: object, response: dict[str, object]) -> Answer | None:
        """The answer for `id_` in `response`; a response for another id gets its error
        at once (None: keep waiting); one with fields of the wrong type is a deny."""
        if response.get("id") != id_:
            self.send({"id": response.get("id"), "type": "error",
                       "message": t("serve.unknown_id", id=json.dumps(response.get("id")),
                                    waiting=json.dumps(id_))})
            return None
        try:
            return permission_answer(response)
        except ProtocolError as e:
            self.send({"id": id_, "type": "error", "message": str(e)})
            return Answer.NO

    def ask(self, id_: object, request: Request, decision: Decision) -> Answer:
        self.send({"id": id_, "type": "permission_request", "request": request.describe(),
                   "decision": decision.as_json()})
        for index, line in enumerate(self.pending):  # an answer may already be queued
            queued = _permission_response(line)
            if queued is not None and queued.get("id") == id_:
                del self.pending[index]
                answer = self.answer(id_, queued)
                assert answer is not None
                return answer
        for line in self.lines:
            response = _permission_response(line)
            if response is None:
                self.pending.append(line)  # another request: handled after this one
                continue
            answer = self.answer(id_, response)
            if answer is not None:
                return answer
        return Answer.NO  # the agent went away: nobody said yes

    def handle(self, line: JsonLine) -> None:
        """Answer one line; whatever goes wrong is an error object for it, and the
        server reads on (one bad request must not take the others down)."""
        try:
            self._handle(line)
        except SwiftyError as e:  # a rule file broke, an "always" could not be written
            self.send({"id": line.id, "type": "error", "message": e.diagnostics()})
        except Exception as e:  # a defect: reported for this request (nothing allowed)
            error = f"{type(e).__name__}: {e}"
            self.send({"id": line.id, "type": "error",
                       "message": t("serve.failed", error=error[:300])})

    def _handle(self, line: JsonLine) -> None:
        message = line.value
        if line.error is not None:
            self.send({"id": None, "type": "error", "message": line.error})
            return
        try:
            if not isinstance(message, dict):
                raise ValueError("a request is a JSON object")
            request = None if message.get("type") == "permission_response" \
                else request_from_json(message)
        except ValueError as e:
            self.send({"id": line.id, "type": "error", "message": str(e)})
            return
        id_ = message.get("id")
        if request is None:
            self.send({"id": id_, "type": "error",
                       "message": "no permission request with this id is waiting"})
            return
        self.refresh()  # a rule file that broke between requests: an error, fail closed
        self.box.ask = lambda req, dec: self.ask(id_, req, dec)
        if request.tool is Tool.BASH:
            try:
                timeout = timeout_of(message)
            except ProtocolError as e:
                self.send({"id": id_, "type": "error", "message": str(e)})
                return
            result = self.box.run(request, timeout=timeout)
            self.send({"id": id_, "type": "result", **result.as_json()})
        else:
            decision = self.box.resolve(request)
            self.send({"id": id_, "type": "result", "decision": decision.as_json(),
                       "is_error": decision.effect is not Effect.ALLOW})

    def serve(self) -> None:
        for line in self.requests():
            self.handle(line)
