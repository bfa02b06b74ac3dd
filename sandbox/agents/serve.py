"""The agent protocol (SPEC §5): JSON lines on stdin/stdout, one process for many
commands, so each command costs little more than bubblewrap itself.

Requests:  {"id", "tool": "Bash", "command": "…" | "argv": […], "timeout": s,
            "stream": true|false}
           {"id", "tool": "ReadFile" | "WriteFile" | "EditFile", "path": "…"}
Responses: {"id", "type": "output", "stream", "data"}  with `"stream": true`, a Bash
                                                   command's output while it runs
                                                   (then its result, as always)
           {"id", "type": "result", …}            `run --json`'s object for Bash,
                                                   {"decision", "path", "is_error"} for files
           {"id", "type": "permission_request", "request", "decision"}
             answered by {"id", "type": "permission_response", "allow", "always"}
           {"id", "type": "error", "message"}     a line that is not a request, or a
                                                  request that failed (nothing ran)

Requests may be pipelined: a reader thread routes each line — a permission response to
the request waiting for its id, anything else to a few workers — so answers come in
the order requests finish, matched by id. Requests with the same id run one after
another (a response must not be able to reach the wrong one). The policy files are
checked before every request and read again when one changed (or changed just
before the last load), so an "always" answer or a user's edit applies to the next
request. When stdin closes, every command still running is killed (its whole tree),
what is still owed is answered, and `serve` returns.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections import Counter, deque
from dataclasses import replace
from typing import IO

from swifty_sandbox.messages import t
from swifty_sandbox.policy import (
    Decision,
    Effect,
    Layer,
    Request,
    SandboxMode,
    SwiftyError,
    Tool,
)
from swifty_sandbox.policy.profile import is_builtin

from ..run.executor import kill_tree
from .api import Answer, Sandbox, request_from_json
from .jsonlines import JsonLine, read_json_lines
from .outputs import TextEvents
from .protocol import ProtocolError, permission_answer, stream_of, timeout_of

_FRESH = 2.0  # seconds: coarser than any file system's timestamp tick


def _watched(box: Sandbox) -> list[str] | None:
    """What a policy load reads by name: the rule and config files, the program table
    and the stray local file (`PolicyFiles`); None when the profile is a file of the
    user's (its `extends` may name others: read every time)."""
    if not is_builtin(box.policy.settings.profile):
        return None
    files = box.policy.files
    return [str(p) for p in (*files.layered(), files.stray_local, files.programs)]


def _identities(box: Sandbox) -> tuple[object, ...] | None:
    """Each watched file as it is now (None: none to trust, read the files)."""
    watched = _watched(box)
    if watched is None:
        return None
    now = time.time_ns()
    out: list[object] = []
    for path in watched:
        try:
            st = os.stat(path)
        except OSError as e:
            out.append((path, e.errno))
            continue
        if now - max(st.st_mtime_ns, st.st_ctime_ns) < _FRESH * 1e9:
            return None  # changed just now: a later edit could keep every field
        out.append((path, os.path.realpath(path), st.st_dev, st.st_ino, st.st_size,
                    st.st_mtime_ns, st.st_ctime_ns, st.st_mode))
    return tuple(out)


WORKERS = 4  # concurrent requests; more would only fight over 2-4 cores
BACKLOG = 256  # requests read ahead of the workers (the reader then waits)
_END_GRACE = 10.0  # seconds for killed commands' requests to finish at the end
_KILLED = 128 + 9


def _key(id_: object) -> str:
    """The id as a dict key: canonical JSON (ids may be lists or objects)."""
    return json.dumps(id_, sort_keys=True, ensure_ascii=False)


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
        self.lines = read_json_lines(_own_reader(reader))
        self.writer = writer
        self.seen: tuple[object, ...] | None = None  # see `refresh`: read at the first
        self.write_lock = threading.Lock()  # one JSON line at a time on stdout
        self.policy_lock = threading.Lock()  # one reload at a time
        self.run_lock = threading.Lock()  # one confined command at a time (see _handle)
        self.output_error: OSError | None = None  # stdout failed: nobody hears us
        # Everything below is guarded by `state`.
        self.state = threading.Condition()
        self.backlog: deque[tuple[JsonLine, str | None]] = deque()
        self.owed: Counter[str] = Counter()  # ids of requests read and not answered
        self.running: set[str] = set()  # ids being handled by a worker
        self.asking: dict[str, list[dict[str, object]]] = {}  # id → its answer, when in
        self.held: dict[str, deque[dict[str, object]]] = {}  # answers sent before the ask
        self.closed = False  # stdin ended (or the server is ending)

    # -- output ---------------------------------------------------------------------

    def send(self, message: dict[str, object]) -> None:
        line = json.dumps(message, ensure_ascii=False) + "\n"
        with self.write_lock:
            if self.output_error is not None:
                return
            try:
                self.writer.write(line)
                self.writer.flush()
            except OSError as e:  # nobody reads the answers: end as at EOF
                self.output_error = e
        if self.output_error is not None:
            self.close()

    # -- the reader -------------------------------------------------------------------

    def read(self) -> None:
        """Route every line until EOF (runs in its own thread)."""
        try:
            for line in self.lines:
                response = _permission_response(line)
                if response is not None:
                    self.route(response)
                    continue
                key = _key(line.id) if line.error is None else None
                with self.state:
                    while len(self.backlog) >= BACKLOG and not self.asking \
                            and not self.closed:
                        self.state.wait()  # back-pressure, unless an answer is awaited
                    if self.closed:
                        return
                    self.backlog.append((line, key))
                    if key is not None:
                        self.owed[key] += 1
                    self.state.notify_all()
        except (OSError, ValueError):  # stdin itself failed: as EOF
            pass
        finally:
            self.close()

    def route(self, response: dict[str, object]) -> None:
        """A permission response: to the request waiting for its id; held for a request
        of that id not asking yet; otherwise an error at once."""
        id_ = response.get("id")
        key = _key(id_)
        with self.state:
            if key in self.asking and not self.asking[key]:
                self.asking[key].append(response)
                self.state.notify_all()
                return
            if self.owed[key] > 0:
                self.held.setdefault(key, deque()).append(response)
                return
            waiting = ", ".join(sorted(self.asking))
        self.send({"id": id_, "type": "error", "message": self._no_waiter(id_, waiting)})

    @staticmethod
    def _no_waiter(id_: object, waiting: str) -> str:
        if waiting:
            return t("serve.unknown_id", id=json.dumps(id_, ensure_ascii=False),
                     waiting=waiting)
        return t("serve.no_waiter", id=json.dumps(id_, ensure_ascii=False))

    def close(self) -> None:
        with self.state:
            self.closed = True
            self.state.notify_all()

    # -- the workers --------------------------------------------------------------------

    def work(self) -> None:
        while True:
            with self.state:
                while True:
                    job = self._next_job()
                    if job is not None:
                        break
                    if self.closed and not self.backlog:
                        return
                    self.state.wait()
            line, key = job
            try:
                self.handle(line)
            finally:
                self._done(key)

    def _next_job(self) -> tuple[JsonLine, str | None] | None:
        """The first request whose id is not being handled (called under `state`)."""
        for index, (line, key) in enumerate(self.backlog):
            if key is None or key not in self.running:
                del self.backlog[index]
                if key is not None:
                    self.running.add(key)
                self.state.notify_all()  # the reader may wait for room
                return line, key
        return None

    def _done(self, key: str | None) -> None:
        if key is None:
            return
        unheard: list[dict[str, object]] = []
        with self.state:
            self.running.discard(key)
            self.owed[key] -= 1
            if self.owed[key] <= 0:
                del self.owed[key]
                unheard = list(self.held.pop(key, ()))
            self.state.notify_all()
        for response in unheard:  # answers for an ask that never came
            id_ = response.get("id")
            self.send({"id": id_, "type": "error", "message": self._no_waiter(id_, "")})

    def refresh(self) -> None:
        """The policy as the files are now, before every request: read again unless
        every file the load reads by name (`_watched`) has the identity it had after the
        last load — the same file (device, inode, where its links lead), size, mtime and
        ctime, none of them changed within `_FRESH` of that load (a second edit in the
        same timestamp tick would keep them all). Any doubt reads the files; text
        already parsed is not parsed again (`rulefiles.parsed_rules`)."""
        with self.policy_lock:
            if self.seen is None or _identities(self.box) != self.seen:  # None: doubt
                before = _identities(self.box)
                self.box.reload()
                after = _identities(self.box)
                self.seen = after if before == after else None  # edited while read

    def ask(self, id_: object, request: Request, decision: Decision,
            **extra: object) -> Answer:
        key = _key(id_)
        slot: list[dict[str, object]] = []
        with self.state:
            held = self.held.get(key)
            early = held.popleft() if held else None
            if early is None:
                # Waiting before the question leaves: an answer for another id that
                # crosses it must already name this one as waiting.
                self.asking[key] = slot
        try:
            self.send({"id": id_, "type": "permission_request",
                       "request": request.describe(), "decision": decision.as_json(),
                       **extra})
            if early is not None:
                response = early
            else:
                with self.state:
                    while not slot and not self.closed:
                        self.state.wait()
                if not slot:
                    return Answer.NO  # the agent went away: nobody said yes
                response = slot[0]
        finally:
            if early is None:
                with self.state:
                    del self.asking[key]
        try:
            return permission_answer(response)
        except ProtocolError as e:
            self.send({"id": id_, "type": "error", "message": str(e)})
            return Answer.NO

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
        if line.error is not None:  # its id when it could be read: the agent waits on it
            self.send({"id": line.id, "type": "error", "message": line.error})
            return
        try:
            if not isinstance(message, dict):
                raise ValueError("a request is a JSON object")
            request = request_from_json(message)
        except ValueError as e:
            self.send({"id": line.id, "type": "error", "message": str(e)})
            return
        id_ = message.get("id")
        self.refresh()  # a rule file that broke between requests: an error, fail closed

        answers: list[Answer] = []

        def ask(req: Request, dec: Decision) -> Answer:
            if answers:  # deciding again before the run: the person has answered
                return Answer.NO if answers[0] is Answer.NO else Answer.YES
            answers.append(self.ask(id_, req, dec, always=self.box.can_always(req)))
            return answers[0]

        if request.tool is Tool.BASH:
            try:
                timeout, streaming = timeout_of(message), stream_of(message)
            except ProtocolError as e:
                self.send({"id": id_, "type": "error", "message": str(e)})
                return
            # Decided (and asked) first: the requests read before EOF are still decided,
            # but once stdin has closed no command starts.
            if self.box.resolve(request, ask=ask).effect is Effect.ALLOW and self.closed:
                self.send({"id": id_, "type": "error", "message": t("serve.not_started")})
                return
            # Confined commands start and end one at a time: the guards one sandbox
            # mounts and its aftercare removes race another's set-up (bwrap: "Can't
            # find source path"); decisions, asks and `--sandbox off` stay concurrent.
            confined = self.box.effective_sandbox_mode is not SandboxMode.OFF
            def ask_host(host: str, port: int) -> Answer:  # the proxy asks one at a time
                return self.ask(id_, request, Decision(
                    Effect.ASK, t("net.ask", host=host, port=port), Layer.SANDBOX,
                    "network"), host=host, port=port, always=True)

            # The output as it arrives, under the request's id; the send blocks while the
            # client does not read, which holds the command back (its pipe fills).
            events = TextEvents(lambda stream, data: self.send(
                {"id": id_, "type": "output", "stream": stream, "data": data})) \
                if streaming else None
            with self.run_lock if confined else contextlib.nullcontext():
                result = self.box.run(request, timeout=timeout, ask=ask, ask_host=ask_host,
                                      on_output=events)
            if events is not None:
                events.flush()
            if self.closed and result.exit_code == _KILLED:
                result = replace(result, is_error=True,
                                 stderr=result.stderr + t("serve.ended_at_eof") + "\n")
            self.send({"id": id_, "type": "result", **result.as_json()})
        else:
            decision = self.box.resolve(request, ask=ask)
            # `path`: where the kernel lands, as decided; a client that opens it following
            # no link cannot be led elsewhere by a link swapped in since.
            self.send({"id": id_, "type": "result", "decision": decision.as_json(),
                       "path": decision.target,
                       "is_error": decision.effect is not Effect.ALLOW})

    # -- the whole ----------------------------------------------------------------------

    def serve(self) -> None:
        """Serve until stdin closes. The main thread only waits, so that a signal's
        handler runs here at once (and its exception ends everything on the way out)."""
        reader = threading.Thread(target=self.read, name="serve-reader", daemon=True)
        workers = [threading.Thread(target=self.work, name=f"serve-worker-{n}", daemon=True)
                   for n in range(WORKERS)]
        for thread in (reader, *workers):
            thread.start()
        try:
            while reader.is_alive():
                reader.join(0.1)  # a timeout, so that signals are handled promptly
        finally:
            self.close()
            self._end(workers)
        if self.output_error is not None:
            raise self.output_error

    def _end(self, workers: list[threading.Thread]) -> None:
        """Kill every command still running (each child's whole tree) until every
        request has been answered; requests not started get an error."""
        deadline = time.monotonic() + _END_GRACE
        while any(w.is_alive() for w in workers) and time.monotonic() < deadline:
            _kill_children()
            for worker in workers:
                worker.join(0.05)


def _own_reader(stream: IO[bytes]) -> IO[bytes]:
    """A reader of the stream's descriptor of our own: the reader thread may still block
    in it when the interpreter exits (a signal), and the interpreter's own stdin object
    must not be locked by it then (a fatal error at shutdown)."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # not a file (an in-memory stream)
        return stream
    return open(os.dup(fd), "rb")  # lives as long as the process


def _kill_children() -> None:
    import psutil

    try:
        children = psutil.Process().children()
    except psutil.Error:
        return
    for child in children:
        kill_tree(child.pid)
