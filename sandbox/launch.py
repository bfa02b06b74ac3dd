"""Run one command confined (by this platform's backend) or, when the user chose it,
unconfined.

Fail closed: when confinement cannot be set up the command does not run and
`SetupError` (exit 125) names the cause and the fix.
"""

from __future__ import annotations

import dataclasses
import os
import resource
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING

from swifty_sandbox.messages import t

from .executor import DEVNULL, Completed, execute
from .spec import EXIT_SETUP, Limits, SandboxSpec, SetupError, ensure_temp_dir

if TYPE_CHECKING:
    from swifty_sandbox.policy.network import NetworkPolicy

    from .netproxy import HostAsk

__all__ = ["EXIT_SETUP", "SetupError", "run_confined", "run_unconfined", "shell_argv"]


def shell_argv(command: str) -> list[str]:
    shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
    return [shell, "-c", command]


def _rlimits(limits: Limits) -> Callable[[], None] | None:
    pairs = []
    if limits.memory_bytes is not None:
        pairs.append((resource.RLIMIT_DATA, limits.memory_bytes))
    if limits.processes is not None:
        pairs.append((resource.RLIMIT_NPROC, limits.processes))
    if not pairs:
        return None

    def apply() -> None:
        for which, value in pairs:
            resource.setrlimit(which, (value, value))

    return apply


def run_confined(spec: SandboxSpec, command: Sequence[str], *,
                 capture: bool = True, stdin: int | IO[bytes] | None = DEVNULL,
                 environ: dict[str, str] | None = None,
                 network: NetworkPolicy | None = None, ask_host: HostAsk | None = None
                 ) -> Completed:
    """Run `command` confined by this platform's backend (`backend.backend_for`).
    `network`: the allowlist of a proxied run (`netproxy`); None or empty: none."""
    from .backend import backend_for

    result = backend_for().run(spec, command, capture=capture, stdin=stdin,
                               environ=environ, network=network, ask_host=ask_host)
    if result.exit_code != 0 and not (network is not None and network.enabled):
        hint = offline_hint(result.stderr)
        if hint:
            result = dataclasses.replace(result, stderr=result.stderr + hint.encode())
    return result


# What resolvers and clients print when a name cannot be looked up or no route exists:
# in a sandbox without network, that is our policy, not an outage (glibc, curl/git, node,
# Go, Rust, Java, Python).
_OFFLINE_SIGNS = (b"Temporary failure in name resolution", b"Could not resolve host",
                  b"Name or service not known", b"No address associated with hostname",
                  b"getaddrinfo EAI_AGAIN", b"getaddrinfo ENOTFOUND",
                  b"Network is unreachable", b"dial tcp: lookup ",
                  b"failed to lookup address information", b"UnknownHostException",
                  b"NameResolutionError", b"Couldn't resolve host",
                  b"No matching distribution found")  # pip with --retries 0 says only this


def offline_hint(stderr: bytes) -> str:
    """One line for a failed command that met the missing network ("" otherwise), so
    an agent knows it is policy and how to open a host."""
    if not any(sign in stderr for sign in _OFFLINE_SIGNS):
        return ""
    return t("net.offline") + "\n"


def prepare(spec: SandboxSpec, notes: str) -> tuple[SandboxSpec, str]:
    """What every backend does before a command: the toolchain cache and missing
    writable roots made, hidden files git tracks named."""
    spec, notes = _toolchain_dir(spec, notes)
    spec, notes = _missing_roots(spec, notes)
    _guard_parents(spec)
    spec = _lock_reason(spec)
    made = tuple(g for g in spec.guard_dirs if os.path.isdir(g) and not os.path.islink(g))
    if made:
        # A guarded directory made since the compile (ours: `~/.cache/swifty-sandbox`
        # for the temp dir and caches) is kept read-only as it is; a tmpfs over it
        # would hide the caches mounted from inside it.
        spec = dataclasses.replace(
            spec, guard_dirs=tuple(g for g in spec.guard_dirs if g not in made),
            read_only=(*spec.read_only, *made))
    if spec.hidden_tracked:
        notes += hidden_tracked_note(spec.project, spec.hidden_tracked) + "\n"
    return spec, notes


def _toolchain_dir(spec: SandboxSpec, notes: str) -> tuple[SandboxSpec, str]:
    """Create the project's toolchain cache directory; without one (a read-only
    home), the command runs without caches and says so."""
    if spec.toolchain_dir is None:
        return spec, notes
    try:
        ensure_temp_dir(spec.toolchain_dir)
    except OSError as e:
        notes += t("run.toolchain_fallback", path=spec.toolchain_dir, error=e.strerror) + "\n"
        return dataclasses.replace(spec, toolchain_dir=None), notes
    return spec, notes


def _lock_reason(spec: SandboxSpec) -> SandboxSpec:
    """Write the reason git prints for a worktree locked inside (`spec.worktree_locks`)
    to our protected cache; without it the lock is empty (/dev/null), which holds
    the same."""
    if spec.lock_reason is None:
        return spec
    try:
        ensure_temp_dir(os.path.dirname(spec.lock_reason))
        temporary = f"{spec.lock_reason}.{os.getpid()}"
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(t("run.worktree_locked") + "\n")
        os.replace(temporary, spec.lock_reason)
    except OSError:
        return dataclasses.replace(spec, lock_reason=None)
    return spec


def _guard_parents(spec: SandboxSpec) -> None:
    """Make the missing parents of guarded home entries (`spec.guard_parents`), each
    from a descriptor that follows no link; the command does not run without them."""
    from .aftercare import open_dir
    from .roots import open_dir_at

    for path in spec.guard_parents:
        if os.path.isdir(path) and not os.path.islink(path):
            continue
        try:
            fd = open_dir(os.path.dirname(path))
            try:
                os.mkdir(os.path.basename(path), 0o700, dir_fd=fd)
                os.close(open_dir_at(fd, os.path.basename(path)))
            finally:
                os.close(fd)
        except OSError as e:
            raise SetupError(t("setup.guard_parent", path=path,
                               error=e.strerror or str(e))) from e


def hidden_tracked_note(project: str, paths: Sequence[str], shown: int = 5) -> str:
    names = ", ".join(os.path.relpath(p, project) for p in paths[:shown])
    more = t("run.hidden_tracked_more", count=len(paths) - shown) if len(paths) > shown \
        else ""
    return t("run.hidden_tracked", count=len(paths), paths=names + more)


def _missing_roots(spec: SandboxSpec, notes: str) -> tuple[SandboxSpec, str]:
    """Configured writable roots that do not exist: made now, or said why not."""
    lines = [t("run.root_refused", path=p, reason=why) for p, why in spec.refused_roots]
    if spec.create_roots:
        from .roots import create

        made, failed = create(spec.create_roots)
        lines += made
        spec = dataclasses.replace(spec, writable=tuple(
            w for w in spec.writable if w not in failed))
    return spec, notes + "".join(f"{line}\n" for line in lines)


def run_unconfined(command: Sequence[str], *, cwd: str, limits: Limits,
                   capture: bool = True, stdin: int | IO[bytes] | None = DEVNULL
                   ) -> Completed:
    """The user's explicit `--sandbox off`: the command runs as it is."""
    try:
        return execute(command, cwd=cwd, timeout=limits.timeout, capture=capture,
                       output_bytes=limits.output_bytes, stdin=stdin,
                       preexec=_rlimits(limits))
    except OSError as e:  # not found, not executable: 127 / 126, as shells say
        from .execfail import unconfined_failure

        failed = unconfined_failure(e, command, cwd=cwd, path=os.environ.get("PATH"))
        if failed is None:
            raise
        return failed
