"""The backend seam: one `Backend` per way of confining a command, one dispatch.

A backend only translates: `compile(spec, command, host) → Launch` turns the
platform-neutral `SandboxSpec` into its own mechanics — `linux/` (bwrap + seccomp),
`macos/` (seatbelt) — and is the only way to an argv: `launch.run_confined` runs the
launch (the one lifecycle: prepare, environment, execute, after-run, notes), `render`
prints it (`compile --target`, on a dry `Host`). `launch`, `compile` and `doctor` call a
backend and never look at the platform themselves: `backend_for()` is the one place that
does. A backend whose `compile` targets need no particular OS (`seatbelt` text, a bwrap
argv) renders them on any machine; only running and `probe` need their own platform.

`oci/` only renders (`compile --target oci|oci-seccomp|kubernetes`): a `Renderer`, the
part of a backend that `compile` uses; a container runtime does the running.

To add one: a module with a `BACKEND` object, one row in `_MODULES` and its target
names in `TARGETS`.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from swifty_sandbox.messages import t

from .spec.compiler import TEMP_HOME, SandboxSpec, SetupError, ensure_temp_dir

if TYPE_CHECKING:
    from swifty_sandbox.policy.network import NetworkPolicy

    from .net.netproxy import HostAsk
    from .run.executor import Completed, Spawner

@dataclass(frozen=True, slots=True)
class Check:
    """One line of `doctor`: what was checked, whether it holds, what was found, and
    the fix when it does not. A backend's `probe` returns them; `run.doctor` prints."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


# Backend name → the module holding its `BACKEND` (imported only when used: `run` on
# Linux never imports the macOS code, nor `compile --target seatbelt` the Linux code).
_MODULES: dict[str, str] = {
    "linux": "swifty_sandbox.sandbox.linux.backend",
    "macos": "swifty_sandbox.sandbox.macos.backend",
    "oci": "swifty_sandbox.sandbox.oci.backend",
    "landlock": "swifty_sandbox.sandbox.landlock.backend",
}
# `compile --target` names → the backend that renders them (known without importing it).
TARGETS: dict[str, str] = {
    "bwrap": "linux",
    "seccomp-bpf": "linux",
    "seccomp-pfc": "linux",
    "seatbelt": "macos",
    "oci": "oci",
    "oci-seccomp": "oci",
    "kubernetes": "oci",
    "landlock": "landlock",
}
# `sys.platform` prefix → the backend that confines commands there.
_PLATFORMS: dict[str, str] = {"linux": "linux", "darwin": "macos"}


class Host:
    """The call a launch is compiled for: the caller's environment (before scrubbing),
    the network allowlist (None: no network, also for an empty one), who answers for a
    host outside it, the terminals the command inherits; `terminal`: its stdin is a pty
    of ours, to become its controlling terminal (`run/terminal.py`). `dry`: the launch is only
    described (`render`): placeholder descriptors, nothing made, and what this machine
    lacks (bwrap, libseccomp, sandbox-exec) is no error."""

    __slots__ = ("ask_host", "dry", "environ", "network", "terminal", "terminals")

    def __init__(self, environ: Mapping[str, str] | None = None, *,
                 network: NetworkPolicy | None = None, ask_host: HostAsk | None = None,
                 terminals: tuple[str, ...] = (), terminal: bool = False,
                 dry: bool = False) -> None:
        self.environ: Mapping[str, str] = environ if environ is not None else {}
        self.network = network if network is not None and network.enabled else None
        self.ask_host, self.terminals, self.dry = ask_host, terminals, dry
        self.terminal = terminal


class Companion(Protocol):
    """A host-side process or thread one launch needs while it runs (the egress proxy)."""

    def start(self) -> None: ...

    def stop(self) -> tuple[str, tuple[dict[str, object], ...] | None]:
        """Stopped: notes for stderr and the run's network events (None: not proxied)."""
        ...


EnvEdit = Callable[[dict[str, str]], dict[str, str]]
Judge = Callable[["Completed", Mapping[str, str]], "Completed"]


class Launch:
    """One confined command ready for `executor.execute` — the launcher's argv, the
    environment edits, the descriptors it inherits (their numbers are in `argv`), the
    companions — and the owner of all of them: a context manager that closes every
    descriptor, companion and cap it holds, also when `compile` fails half-way or the
    command never starts. A backend's `compile` fills it; `launch.run_confined` runs it.
    A plain class, not a dataclass: this module is on `run`'s start-up path."""

    __slots__ = ("_closers", "_companions", "_edits", "_handed", "_judges", "_next",
                 "_owned", "_passed", "argv", "closing_notes", "cwd", "dry",
                 "missing_launcher", "network", "notes", "own_tree", "preexec", "spawn",
                 "spec", "status_fd", "violations")

    def __init__(self, spec: SandboxSpec, *, dry: bool = False) -> None:
        self.spec = spec  # as it runs: the after-run step checks this one
        self.dry = dry  # described only: every descriptor a placeholder number
        self.argv: list[str] = []
        self.cwd: str | None = None  # None: the launcher changes directory itself
        self.notes = ""  # set-up fallbacks, said on stderr after the command
        self.status_fd: int | None = None  # read alongside the output → result.status
        self.preexec: Callable[[], None] | None = None  # between fork and exec
        self.own_tree = False  # the launcher reaps its own tree (a PID namespace)
        self.missing_launcher: str | None = None  # the SetupError when argv[0] is missing
        self.closing_notes = ""  # after `close`: what the closers and companions said
        self.network: tuple[dict[str, object], ...] | None = None  # after `close`
        # How the launcher's process is started (None: by the executor's own thread);
        # the observer's (`linux/observe.py`) starts it under its filter.
        self.spawn: Spawner | None = None
        self.violations: list[dict[str, object]] = []  # the closers add them (refusals)
        self._owned: list[int] = []
        self._handed: list[int] = []
        self._passed: list[int] = []
        self._companions: list[Companion] = []
        self._closers: list[Callable[[], str]] = []
        self._edits: list[EnvEdit] = []
        self._judges: list[Judge] = []
        self._next = 3

    # -- what compile gives it ------------------------------------------------------

    def _fd(self, make: Callable[[], int], *, handed: bool = False) -> int:
        if self.dry:
            fd, self._next = self._next, self._next + 1
            return fd
        fd = make()
        (self._handed if handed else self._owned).append(fd)
        return fd

    def inherit(self, make: Callable[[], int]) -> int:
        """A descriptor the command inherits, closed here when the launch ends."""
        fd = self._fd(make)
        self._passed.append(fd)
        return fd

    def hand(self, make: Callable[[], int]) -> int:
        """A descriptor only the command keeps: closed here right after the spawn (a
        pipe's write end: its read end then sees EOF when the command is gone)."""
        fd = self._fd(make, handed=True)
        self._passed.append(fd)
        return fd

    def data(self, name: str, produce: Callable[[], bytes]) -> int:
        """Inherited: a memfd holding `produce()` (not called when dry)."""
        def make() -> int:
            data = produce()
            fd = os.memfd_create(name, 0)
            try:
                os.write(fd, data)
                os.lseek(fd, 0, os.SEEK_SET)
            except BaseException:
                os.close(fd)
                raise
            return fd

        return self.inherit(make)

    def status_pipe(self) -> int:
        """A pipe the launcher reports on: its read end becomes `status_fd`, its write
        end (returned) is handed to the command."""
        ends: list[int] = []

        def read_end() -> int:
            ends.extend(os.pipe())
            return ends[0]

        self.status_fd = self._fd(read_end)
        return self.hand(lambda: ends[1])

    def companion(self, companion: Companion) -> None:
        self._companions.append(companion)

    def on_close(self, closer: Callable[[], str]) -> None:
        """Run when the launch ends, after its descriptors are closed; returns a note."""
        self._closers.append(closer)

    def private_temp(self, home: str) -> str:
        """An empty directory of this command's own under the user's protected temp home,
        for a backend that cannot mount an empty /tmp; removed when the launch ends.
        Raises OSError when it cannot be made (the caller says which backend failed)."""
        # loaded only by the backends that need one (run's start-up path)
        import shutil
        import tempfile

        parent = os.path.join(home, TEMP_HOME)
        ensure_temp_dir(parent)
        private = tempfile.mkdtemp(prefix="private-", dir=parent)

        def remove() -> str:
            shutil.rmtree(private, ignore_errors=True)
            return ""

        self.on_close(remove)
        return private

    def edit_env(self, edit: EnvEdit) -> None:
        """Applied to the scrubbed environment before the spawn (may raise SetupError)."""
        self._edits.append(edit)

    def judge_with(self, judge: Judge) -> None:
        """What the result means: `SetupError` when the launcher failed before it ran
        the command; the shell's 126/127 when the command could not be executed."""
        self._judges.append(judge)

    # -- what run_confined asks of it -----------------------------------------------

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return tuple(self._passed)

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        for edit in self._edits:
            env = edit(env)
        return env

    def start(self) -> None:
        for companion in self._companions:
            companion.start()

    def release(self) -> tuple[int, ...]:
        """The handed descriptors, from now on `execute`'s to close (right after the
        spawn, even when it fails)."""
        handed, self._handed = tuple(self._handed), []
        return handed

    def judge(self, result: Completed, env: Mapping[str, str]) -> Completed:
        for judge in self._judges:
            result = judge(result, env)
        return result

    def close(self) -> None:
        notes: list[str] = []
        try:
            for companion in self._companions:
                said, events = companion.stop()
                notes.append(said)
                if events is not None:
                    self.network = events
        finally:
            self._companions = []
            for fd in (*self._owned, *self._handed):
                os.close(fd)
            self._owned, self._handed = [], []
            closers, self._closers = self._closers, []
            # The spawner is an observer's, whose callbacks hold this launch: without
            # it the launch and its spec (the descriptors `Held` on the snapshot's
            # files) are freed when the caller lets go, not at a later GC pass.
            self.spawn = None
            self.closing_notes = "".join(closer() for closer in closers) + "".join(notes)

    def __enter__(self) -> Launch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Rendered:
    """What `compile --target` prints: `stdout` alone (text or bytes), `stderr` beside
    it (parameter values a reader needs), and everything as one JSON document."""

    __slots__ = ("json", "stderr", "stdout")

    def __init__(self, stdout: str | bytes, json: Mapping[str, object],
                 stderr: str = "") -> None:
        self.stdout, self.json, self.stderr = stdout, json, stderr


class Renderer(Protocol):
    name: str
    targets: tuple[str, ...]  # the `compile --target` names this backend renders

    def render(self, target: str, spec: SandboxSpec, command: Sequence[str],
               options: Mapping[str, object] | None = None, host: Host | None = None
               ) -> Rendered:
        """`compile --target target -- command` (pure but for what `options` ask to be
        written, e.g. an OCI bundle; any OS). `host`: the call to describe (dry)."""
        ...


class Backend(Renderer, Protocol):

    def compile(self, spec: SandboxSpec, command: Sequence[str], host: Host) -> Launch:
        """The launch of `command` confined by `spec` for `host`: the only way to an
        argv (`run_confined` runs it, `render` prints it). It only translates: the
        lifecycle around it (prepare, environment, execute, after-run, notes) is
        `launch.run_confined`'s. `SetupError` when this machine cannot confine."""
        ...

    def probe(self, configured_bwrap: str | None) -> list[Check]:
        """`doctor`'s checks after the platform line, in order."""
        ...


def backend_named(name: str) -> Backend:
    backend: Backend = importlib.import_module(_MODULES[name]).BACKEND
    return backend


def backend_for(platform: str = sys.platform) -> Backend:
    """The backend that confines commands on `platform` (this machine's by default);
    `SetupError` where there is none: never an unconfined fallback."""
    for prefix, name in _PLATFORMS.items():
        if platform.startswith(prefix):
            return backend_named(name)
    raise SetupError(t("setup.unsupported", platform=platform))


def backend_for_target(target: str) -> Renderer:
    renderer: Renderer = importlib.import_module(_MODULES[TARGETS[target]]).BACKEND
    return renderer

