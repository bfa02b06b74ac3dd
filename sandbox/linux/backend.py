"""The Linux backend: bwrap + seccomp. The mechanics the neutral spec leaves to it live
here: bind mounts from descriptors, the seccomp filter in a memfd, bwrap's status pipe,
the caps (cgroup or rlimits)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING

from swifty_sandbox.messages import t
from swifty_sandbox.policy.errors import ExitCode

from ..aftercare import after_run, open_dir
from ..backend import Launch, Rendered
from ..executor import Completed, execute
from ..launch import prepare as prepare_run
from ..spec import TEMP_MOUNTS, SandboxSpec, SetupError, ensure_temp_dir, scrub_env
from ..toolchains import environment as toolchain_environment

if TYPE_CHECKING:
    from swifty_sandbox.policy.network import NetworkPolicy

    from ..doctor import Check
    from ..netproxy import HostAsk


class LinuxBackend:
    name = "linux"
    targets = ("bwrap", "seccomp-bpf", "seccomp-pfc")

    def compile(self, spec: SandboxSpec, command: Sequence[str]) -> Launch:
        from .bwrap import bwrap_argv

        return Launch(bwrap_argv(spec, command, seccomp_fd=3), fds=(3,))

    def render(self, target: str, spec: SandboxSpec, command: Sequence[str],
               options: Mapping[str, object] | None = None) -> Rendered:
        if target == "bwrap":
            import shlex

            argv = self.compile(spec, command).argv
            return Rendered(shlex.join(argv), {"target": target, "argv": argv})
        from .seccomp import SeccompUnavailable, export

        try:  # libseccomp builds the filter: where it is missing (a Mac), say so
            data = export(spec.seccomp, pfc=target == "seccomp-pfc")
        except SeccompUnavailable as e:
            raise SetupError(t("compile.no_seccomp", error=e)) from e
        if target == "seccomp-pfc":
            return Rendered(data.decode(), {"target": target, "pfc": data.decode()})
        import base64

        return Rendered(data, {"target": target,
                               "bpf_base64": base64.b64encode(data).decode()})

    def run(self, spec: SandboxSpec, command: Sequence[str], *, capture: bool,
            stdin: int | IO[bytes] | None, environ: dict[str, str] | None,
            network: NetworkPolicy | None = None, ask_host: HostAsk | None = None
            ) -> Completed:
        from ..probe import find_bwrap
        from .bwrap import bwrap_argv
        from .caps import CapError, prepare
        from .seccomp import SeccompUnavailable, export

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
                fallback = t("run.temp_fallback", path=spec.temp_dir,
                             error=e.strerror) + "\n"
                spec = dataclasses.replace(spec, temp_dir=None, temp_mounts=(),
                                           private_dirs=(*spec.private_dirs, *TEMP_MOUNTS))
        spec, fallback = prepare_run(spec, fallback)
        dir_fds = open_dirs({**{p: p for p in (*spec.writable, *spec.pinned)},
                             **{m: spec.temp_dir for m in spec.temp_mounts
                                if spec.temp_dir},
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
                from ..netproxy import Egress, forwarder_argv, interpreter_roots

                egress = Egress(network, ask=ask_host)
                command = forwarder_argv(egress.fd, list(command))
                if spec.read_roots is not None:  # the forwarder's interpreter, read-only
                    spec = dataclasses.replace(spec, read_roots=tuple(dict.fromkeys(
                        (*spec.read_roots, *interpreter_roots()))))
            os.write(seccomp_fd, bpf)
            os.lseek(seccomp_fd, 0, os.SEEK_SET)
            argv = [*caps.outer, *bwrap_argv(spec, [*caps.prefix, *command],
                                             bwrap=bwrap.path, seccomp_fd=seccomp_fd,
                                             status_fd=status_write, dir_fds=dir_fds)]
            env = scrub_env(dict(os.environ if environ is None else environ), spec)
            if spec.toolchain_dir is not None:
                env.update(toolchain_environment(spec.toolchain_dir, spec.home, env))
            handed, status_write = status_write, -1  # execute() closes it, even interrupted
            channel: tuple[int, ...] = ()
            if egress is not None:
                from ..netproxy import proxy_env

                env = proxy_env(env)
                channel, egress.fd = (egress.fd,), -1
                egress.start()
            result = execute(
                argv, env=env, timeout=spec.limits.timeout, capture=capture,
                output_bytes=spec.limits.output_bytes,
                stdin=stdin, pass_fds=(seccomp_fd, handed, *channel, *dir_fds.values()),
                status_fd=status_read,
                preexec=caps.preexec(), close_after_spawn=(handed, *channel),
                own_tree=True)
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

            notes += t("run.memory_cap",
                       size=describe_memory(spec.limits.memory_bytes)) + "\n"
        if events is not None:
            blocked = egress.proxy.blocked_lines() if egress is not None else []
            notes += "".join(line + "\n" for line in blocked)
            result = dataclasses.replace(result, network=tuple(e.as_json() for e in events))
        if notes:
            result = dataclasses.replace(
                result, stderr=result.stderr + notes.encode(errors="surrogateescape"))
        if not result.timed_out and not any("child-pid" in doc for doc in result.status):
            # bwrap never started the command: it could not build the sandbox.
            error = result.stderr.decode(errors="replace").strip() or \
                f"exit {result.exit_code}"
            if "Unknown option --bind-fd" in error:
                raise SetupError(t("setup.bwrap_too_old", bwrap=bwrap.path))
            raise SetupError(t("setup.bwrap_failed", error=error))
        if result.exit_code in (1, ExitCode.NOT_EXECUTABLE, ExitCode.NOT_FOUND):
            from ..execfail import confined_failure  # maybe an exec that failed: see there

            result = confined_failure(result, command, caps.prefix, cwd=spec.cwd,
                                      path=env.get("PATH"))
        return result

    def probe(self, configured_bwrap: str | None) -> list[Check]:
        from pathlib import Path

        from ..doctor import Check, self_protection, userns_fix
        from ..probe import bwrap_version, find_bwrap, read_sysctl, try_namespaces
        from .seccomp import SeccompUnavailable, export

        root = os.getuid() == 0
        checks = [Check("user", True, t("doctor.user_root" if root else "doctor.user",
                                        uid=os.getuid()))]
        bwrap = find_bwrap(configured_bwrap)
        if bwrap is None:
            checks.append(Check("bubblewrap", False, t("doctor.not_found"),
                                t("doctor.fix.bwrap")))
        else:
            checks.append(Check("bubblewrap", True,
                                f"{bwrap.path} ({bwrap.origin}, {bwrap_version(bwrap)})"))
            works, error = try_namespaces(bwrap)
            checks.append(Check(
                "namespaces", works, t("doctor.namespaces_ok") if works else error,
                "" if works else userns_fix(
                    read_sysctl("kernel.apparmor_restrict_unprivileged_userns"),
                    read_sysctl("user.max_user_namespaces"),
                    read_sysctl("kernel.unprivileged_userns_clone"))))
        checks.append(self_protection(configured_bwrap))
        try:
            from swifty_sandbox.policy.profile import load_profile

            size = len(export(load_profile("default", Path.cwd()).seccomp))
            checks.append(Check("seccomp", True, t("doctor.seccomp_ok", size=size)))
        except (SeccompUnavailable, OSError) as e:
            checks.append(Check("seccomp", False, str(e), t("doctor.fix.seccomp")))
        checks.append(_caps(root))
        return checks


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


def _caps(root: bool) -> Check:
    """How the default caps on processes and memory are enforced here (a missing
    process cap does not stop `run`: it is reported, not failed)."""
    from swifty_sandbox.policy.limits import (
        default_max_memory,
        default_max_processes,
        describe_memory,
    )

    from ..doctor import Check
    from . import cgroups
    from .caps import prlimit_path

    memory = describe_memory(default_max_memory())
    held = [c for c in ("pids", "memory") if c in cgroups.places()]
    if "pids" in held:
        how = t("word.by_cgroup", where=cgroups.describe(held))
    elif not root and prlimit_path() is not None:
        how = t("word.by_rlimit")
    else:
        why = t("limits.root_nproc") if root else t("limits.no_prlimit")
        return Check("caps", True, t("doctor.caps_none", memory=memory, why=why),
                     t("doctor.fix.caps"))
    return Check("caps", True, t("doctor.caps", processes=default_max_processes(),
                                 memory=memory, how=how))


BACKEND = LinuxBackend()
