"""Run one command confined (bwrap + seccomp) or, when the user chose it, unconfined.

Fail closed: when confinement cannot be set up the command does not run and
`SetupError` (exit 125) names the cause and the fix.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING

from swifty_sandbox.policy.messages import t

from .aftercare import after_run, open_dir
from .executor import DEVNULL, Completed, execute
from .spec import (
    EXIT_SETUP,
    TEMP_MOUNTS,
    Limits,
    SandboxSpec,
    SetupError,
    ensure_temp_dir,
    scrub_env,
)
from .toolchains import environment as toolchain_environment

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
    """`network`: the allowlist of a proxied run (`netproxy`); None or empty: none."""
    if not sys.platform.startswith("linux"):
        raise SetupError(t("setup.unsupported", platform=sys.platform))
    from .linux.bwrap import bwrap_argv
    from .linux.caps import CapError, prepare
    from .linux.seccomp import SeccompUnavailable, export
    from .probe import find_bwrap

    bwrap = find_bwrap(spec.bwrap)
    if bwrap is None:
        raise SetupError(t("setup.no_bwrap"))
    try:
        bpf = export(spec.seccomp)
    except (SeccompUnavailable, OSError) as e:
        raise SetupError(t("setup.no_seccomp", error=e)) from e

    fallback = ""
    if spec.temp_dir is not None:
        try:
            ensure_temp_dir(spec.temp_dir)
        except OSError as e:
            # As confined, only not kept between commands: an empty /tmp per command.
            fallback = t("run.temp_fallback", path=spec.temp_dir, error=e.strerror) + "\n"
            spec = dataclasses.replace(spec, temp_dir=None, temp_mounts=(),
                                       private_dirs=(*spec.private_dirs, *TEMP_MOUNTS))
    spec, fallback = _toolchain_dir(spec, fallback)
    spec, fallback = _missing_roots(spec, fallback)
    if spec.hidden_tracked:
        fallback += hidden_tracked_note(spec.project, spec.hidden_tracked) + "\n"
    dir_fds = open_dirs({**{p: p for p in (*spec.writable, *spec.pinned)},
                         **{m: spec.temp_dir for m in spec.temp_mounts if spec.temp_dir},
                         **({spec.toolchain_dir: spec.toolchain_dir}
                            if spec.toolchain_dir else {})})
    try:
        caps = prepare(spec.limits)
    except CapError as e:
        for fd in dir_fds.values():
            os.close(fd)
        raise SetupError(str(e)) from e
    seccomp_fd = os.memfd_create("swifty-seccomp", 0)
    status_read, status_write = os.pipe()
    egress = None
    try:
        if network is not None and network.enabled:
            from .netproxy import Egress, forwarder_argv, interpreter_roots

            egress = Egress(network, ask=ask_host)
            command = forwarder_argv(egress.fd, list(command))
            if spec.read_roots is not None:  # the forwarder's interpreter, read-only
                spec = dataclasses.replace(spec, read_roots=tuple(dict.fromkeys(
                    (*spec.read_roots, *interpreter_roots()))))
        os.write(seccomp_fd, bpf)
        os.lseek(seccomp_fd, 0, os.SEEK_SET)
        argv = [*caps.outer, *bwrap_argv(spec, [*caps.prefix, *command], bwrap=bwrap.path,
                                         seccomp_fd=seccomp_fd, status_fd=status_write,
                                         dir_fds=dir_fds)]
        env = scrub_env(dict(os.environ if environ is None else environ), spec)
        if spec.toolchain_dir is not None:
            env.update(toolchain_environment(spec.toolchain_dir, spec.home, env))
        handed, status_write = status_write, -1  # execute() closes it, even interrupted
        channel: tuple[int, ...] = ()
        if egress is not None:
            from .netproxy import proxy_env

            env = proxy_env(env)
            channel, egress.fd = (egress.fd,), -1
            egress.start()
        result = execute(
            argv, env=env, timeout=spec.limits.timeout, capture=capture,
            output_bytes=spec.limits.output_bytes,
            stdin=stdin, pass_fds=(seccomp_fd, handed, *channel, *dir_fds.values()),
            status_fd=status_read,
            preexec=caps.preexec(), close_after_spawn=(handed, *channel), own_tree=True)
    finally:
        events = egress.close() if egress is not None else None
        for fd in (seccomp_fd, status_read, status_write, *dir_fds.values()):
            if fd >= 0:
                os.close(fd)
        memory_cap_hit = caps.close()
        try:
            notes = fallback + after_run(spec)
        except Exception as e:  # the command ran: say what was not checked, never crash
            notes = fallback + t("run.aftercare_failed", error=e) + "\n"
    if memory_cap_hit and spec.limits.memory_bytes:
        from swifty_sandbox.policy.limits import describe_memory

        notes += t("run.memory_cap", size=describe_memory(spec.limits.memory_bytes)) + "\n"
    if events is not None:
        notes += "".join(e.line() + "\n" for e in events if not e.allowed)
        result = dataclasses.replace(result, network=tuple(e.as_json() for e in events))
    if notes:
        result = dataclasses.replace(
            result, stderr=result.stderr + notes.encode(errors="surrogateescape"))
    if not result.timed_out and not any("child-pid" in doc for doc in result.status):
        # bwrap never started the command: it could not build the sandbox.
        error = result.stderr.decode(errors="replace").strip() or f"exit {result.exit_code}"
        if "Unknown option --bind-fd" in error:
            raise SetupError(t("setup.bwrap_too_old", bwrap=bwrap.path))
        raise SetupError(t("setup.bwrap_failed", error=error))
    return result


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


def open_dirs(sources: Mapping[str, str]) -> dict[str, int]:
    """For each mount destination, its source directory opened without following any
    symlink (`aftercare.open_dir`): the descriptor names the directory that was
    checked, so a bind made from it cannot land where a link swapped in since points."""
    fds: dict[str, int] = {}
    try:
        for dest, path in sources.items():
            try:
                fds[dest] = open_dir(path)
            except OSError as e:
                raise SetupError(t("setup.symlink", path=path, link=f"{path} ({e})")) from e
    except BaseException:
        for fd in fds.values():
            os.close(fd)
        raise
    return fds


def run_unconfined(command: Sequence[str], *, cwd: str, limits: Limits,
                   capture: bool = True, stdin: int | IO[bytes] | None = DEVNULL
                   ) -> Completed:
    """The user's explicit `--sandbox off`: the command runs as it is."""
    return execute(command, cwd=cwd, timeout=limits.timeout, capture=capture,
                   output_bytes=limits.output_bytes, stdin=stdin, preexec=_rlimits(limits))
