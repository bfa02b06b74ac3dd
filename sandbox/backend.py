"""The backend seam: one `Backend` per way of confining a command, one dispatch.

A backend turns the platform-neutral `SandboxSpec` into its own mechanics: `linux/`
(bwrap + seccomp), `macos/` (seatbelt). `launch`, `compile` and `doctor` call a backend
and never look at the platform themselves: `backend_for()` is the one place that does.
A backend whose `compile` targets need no particular OS (`seatbelt` text, a bwrap argv)
renders them on any machine; only `run` and `probe` need their own platform.

`oci/` only renders (`compile --target oci|oci-seccomp|kubernetes`): a `Renderer`, the
part of a backend that `compile` uses; a container runtime does the running.

To add one: a module with a `BACKEND` object, one row in `_MODULES` and its target
names in `TARGETS`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Protocol

from swifty_sandbox.messages import t

from .spec import SandboxSpec, SetupError

if TYPE_CHECKING:
    from swifty_sandbox.policy.network import NetworkPolicy

    from .doctor import Check
    from .executor import Completed
    from .netproxy import HostAsk

# Backend name → the module holding its `BACKEND` (imported only when used: `run` on
# Linux never imports the macOS code, nor `compile --target seatbelt` the Linux code).
_MODULES: dict[str, str] = {
    "linux": "swifty_sandbox.sandbox.linux.backend",
    "macos": "swifty_sandbox.sandbox.macos.backend",
    "oci": "swifty_sandbox.sandbox.oci.backend",
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
}
# `sys.platform` prefix → the backend that confines commands there.
_PLATFORMS: dict[str, str] = {"linux": "linux", "darwin": "macos"}


class Launch:
    """One confined command, ready for `executor.execute`: the launcher's argv, the
    environment, and the descriptors it inherits (their numbers appear in `argv`).
    A plain class, not a dataclass: this module is on `run`'s start-up path."""

    __slots__ = ("argv", "cwd", "env", "fds")

    def __init__(self, argv: list[str], env: dict[str, str] | None = None,
                 fds: tuple[int, ...] = (), cwd: str | None = None) -> None:
        self.argv = argv
        self.env = env if env is not None else {}
        self.fds = fds
        self.cwd = cwd  # None: the launcher changes directory itself (bwrap --chdir)


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
               options: Mapping[str, object] | None = None) -> Rendered:
        """`compile --target target -- command` (pure but for what `options` ask to be
        written, e.g. an OCI bundle; any OS)."""
        ...


class Backend(Renderer, Protocol):

    def compile(self, spec: SandboxSpec, command: Sequence[str]) -> Launch:
        """The launch of `command` confined by `spec` (pure; placeholder descriptors)."""
        ...

    def run(self, spec: SandboxSpec, command: Sequence[str], *, capture: bool,
            stdin: int | IO[bytes] | None, environ: dict[str, str] | None,
            network: NetworkPolicy | None = None, ask_host: HostAsk | None = None
            ) -> Completed:
        """Run `command` confined, on this backend's own platform; `SetupError` when
        the confinement cannot be set up (the command did not run). `network`: the
        allowlist of a proxied run; None or empty: no network."""
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

