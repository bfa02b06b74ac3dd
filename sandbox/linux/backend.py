"""The Linux backend: bwrap + seccomp, as a translator (`compile`; the lifecycle is
`launch.run_confined`'s). The mechanics the neutral spec leaves to it live here: bind
mounts from descriptors, the seccomp filter in a memfd, bwrap's status pipe, the caps
(cgroup or rlimits), how to tell that bwrap failed before it started the command."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from swifty_sandbox.messages import t
from swifty_sandbox.policy.errors import ExitCode
from swifty_sandbox.policy.limits import default_max_memory, default_max_processes, describe_memory
from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.policy.profile import load_profile

from ..backend import Check, Host, Launch, Rendered
from ..fsafe import open_dir
from ..run import violations
from ..run.doctor import self_protection, userns_fix
from ..run.execfail import SHELL, checked_argv
from ..run.launch import controlled, proxied
from ..run.probe import bwrap_version, find_bwrap, read_sysctl, try_namespaces
from ..spec.compiler import Limits, SandboxSpec, SetupError
from ..spec.syscalls import syscall_rules
from . import cgroups, observe, placeholders
from .bwrap import bwrap_argv
from .caps import CapError, Caps, prepare, prlimit_path
from .seccomp import SeccompUnavailable, export

if TYPE_CHECKING:
    from swifty_sandbox.policy.profile import SeccompProfile

    from ..run.executor import Completed


class LinuxBackend:
    name = "linux"
    targets = ("bwrap", "seccomp-bpf", "seccomp-pfc")

    def compile(self, spec: SandboxSpec, command: Sequence[str], host: Host) -> Launch:
        """bwrap's argv: the caps' cgroup join before it and prlimit inside, the
        seccomp filter in a memfd, the read-write binds from directory descriptors,
        bwrap's status pipe, the forwarder for a proxied run."""
        bwrap = find_bwrap(spec.bwrap)
        if bwrap is None and not host.dry:
            raise SetupError(t("setup.no_bwrap"))
        bwrap_path = bwrap.path if bwrap is not None else "bwrap"
        launch = Launch(spec, dry=host.dry)
        try:
            dir_fds = {dest: launch.inherit(partial(_open_dir, path))
                       for dest, path in _bind_sources(spec).items()}
            file_fds, listings_watched = placeholders.bind_fds(launch, spec)
            caps = launch_caps(launch, spec.limits)
            seccomp_fd = launch.data("swifty-seccomp", partial(seccomp_bpf, spec.seccomp))
            status_fd = launch.status_pipe()
            # A program the exec would not find is looked up again inside, by a shell
            # that says so as shells do: prlimit, bwrap or the forwarder would each
            # report it their own way, straight to a terminal we do not capture. (Not
            # for `render`: its command may be a placeholder, `CMD ARG...`.)
            if not host.dry:
                command = checked_argv(command, cwd=spec.cwd, path=host.environ.get("PATH"),
                                       shell=_shell(spec))
            if host.terminal:  # bwrap's --new-session left it none: our pty, inside
                spec, command = controlled(spec, command)
            if host.network is not None:
                spec, command = proxied(launch, host, spec, command)
            launch.argv = [*caps.outer, *bwrap_argv(
                spec, [*caps.prefix, *command], bwrap=bwrap_path, seccomp_fd=seccomp_fd,
                status_fd=status_fd, dir_fds=dir_fds, file_fds=file_fds)]
        except BaseException:
            launch.close()
            raise
        launch.spec, launch.preexec, launch.own_tree = spec, caps.preexec(), True
        # bwrap's own calls while it builds the sandbox are not the command's; listings
        # of hidden directories are their placeholders' (unless some are not watched)
        observe.attach(launch, ignore=(bwrap_path,), proxied=host.network is not None,
                       profile=(seccomp_fd, syscall_rules(spec.seccomp)),
                       listings=not listings_watched)
        launch.judge_with(partial(_judged, bwrap_path, list(command), caps, spec.cwd,
                                  spec.limits))
        return launch

    def render(self, target: str, spec: SandboxSpec, command: Sequence[str],
               options: Mapping[str, object] | None = None, host: Host | None = None
               ) -> Rendered:
        if target == "bwrap":
            import shlex  # `compile --target bwrap` only

            with self.compile(spec, command, host or Host(dry=True)) as launch:
                argv = launch.argv
            return Rendered(shlex.join(argv), {"target": target, "argv": argv})

        try:  # libseccomp builds the filter: where it is missing (a Mac), say so
            data = export(spec.seccomp, pfc=target == "seccomp-pfc")
        except SeccompUnavailable as e:
            raise SetupError(t("compile.no_seccomp", error=e)) from e
        if target == "seccomp-pfc":
            return Rendered(data.decode(), {"target": target, "pfc": data.decode()})
        import base64  # `compile --target seccomp-bpf` only

        return Rendered(data, {"target": target,
                               "bpf_base64": base64.b64encode(data).decode()})

    def probe(self, configured_bwrap: str | None) -> list[Check]:

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
            size = len(export(load_profile("default", Path.cwd()).seccomp))
            checks.append(Check("seccomp", True, t("doctor.seccomp_ok", size=size)))
        except (SeccompUnavailable, OSError) as e:
            checks.append(Check("seccomp", False, str(e), t("doctor.fix.seccomp")))
        checks.append(_caps(root))
        return checks


def _shell(spec: SandboxSpec) -> str | None:
    """The shell `checked_argv` starts, where the sandbox lets it be read (a profile's
    `read:` list may leave it out)."""
    real = os.path.realpath(SHELL)
    if spec.read_roots is not None and not any(is_within(real, r) for r in spec.read_roots):
        return None
    return SHELL


def _bind_sources(spec: SandboxSpec) -> dict[str, str]:
    """Each read-write mount's destination → its source directory."""
    return {**{p: p for p in (*spec.writable, *spec.pinned)},
            **{m: spec.temp_dir for m in spec.temp_mounts if spec.temp_dir},
            **({spec.toolchain_dir: spec.toolchain_dir} if spec.toolchain_dir else {})}


def _open_dir(path: str) -> int:
    """A mount source opened without following any symlink (`fsafe.open_dir`): the
    descriptor names the directory that was checked, so a bind made from it cannot
    land where a link swapped in since points."""
    try:
        return open_dir(path)
    except OSError as e:
        raise SetupError(t("setup.symlink", path=path, link=f"{path} ({e})")) from e


def seccomp_bpf(profile: SeccompProfile) -> bytes:
    """The filter as BPF (for `Launch.data`); `SetupError` without libseccomp. Every
    Linux launcher loads this one (bwrap's `--seccomp`, a Landlock launcher's too)."""
    try:
        return export(profile)
    except (SeccompUnavailable, OSError) as e:
        raise SetupError(t("setup.no_seccomp", error=e)) from e


def launch_caps(launch: Launch, limits: Limits) -> Caps:
    """The command's caps (`caps.outer` before the launcher, `caps.prefix` inside it),
    their cgroup removed when the launch ends, with a note when its memory cap killed a
    process."""
    try:
        caps = prepare(limits, dry=launch.dry)
    except CapError as e:
        if not launch.dry:
            raise SetupError(str(e)) from e

        caps = Caps()  # described: what this machine cannot enforce is run's to refuse

    def close() -> str:
        capped = caps.processes_capped()  # the cgroup's count, before it is removed
        notes = ""
        memory = bool(caps.close() and limits.memory_bytes)
        if memory and limits.memory_bytes:
            notes += t("run.memory_cap", size=describe_memory(limits.memory_bytes)) + "\n"
        if capped and limits.processes:
            notes += t("run.process_cap", processes=limits.processes) + "\n"
        launch.violations.extend(violations.limits(memory, bool(capped and limits.processes)))
        return notes

    launch.on_close(close)
    return caps


# What shells and runtimes print when a fork or clone fails with EAGAIN: with only an
# rlimit holding the cap on processes, the kernel counts nothing, so this is the sign.
_FORK_FAILED = re.compile(rb"(?i)can(?:no|')t fork|fork(?:: retry)?: resource temporarily"
                          rb"|fork failed|pthread_create|can't start new thread"
                          rb"|Resource temporarily unavailable")


# bwrap's words when a path of the layout could not be made or found: not a refusal of
# namespaces (their failures say EPERM: "Operation not permitted", "Permission denied";
# but a source path denied is one the sandbox's user may not reach: another user's
# folder that root's walk could list, say).
_LAYOUT = re.compile(r"bwrap: Can't (?:mkdir|create file at|find source path|chdir|open)"
                     r"[^\n]*: (?:Read-only file system|No such file or directory|"
                     r"Not a directory|Is a directory|File exists)"
                     r"|bwrap: Can't find source path[^\n]*: Permission denied")


def _failure(error: str) -> str:
    """bwrap's failure explained: by the layout (a path that changed between the check
    and the start, or a layout we should not have made) or by the namespaces."""
    if _LAYOUT.search(error):
        return t("setup.bwrap_layout", error=error)
    return t("setup.bwrap_failed", error=error)


def _judged(bwrap: str, command: list[str], caps: Caps, cwd: str, limits: Limits,
            result: Completed, env: Mapping[str, str]) -> Completed:
    """No `child-pid` from bwrap: it never started the command, it could not build the
    sandbox (`SetupError`: a cap on processes too low for bwrap itself says so); an
    exec that failed inside: the shell's 126/127; a fork that failed under an rlimit
    cap on processes: which cap, and how to raise it."""
    prefix = caps.prefix
    if not result.timed_out and not any("child-pid" in doc for doc in result.status):
        error = result.stderr.decode(errors="replace").strip() or \
            f"exit {result.exit_code}"
        if "Unknown option --bind-fd" in error or "Unknown option --ro-bind-fd" in error:
            raise SetupError(t("setup.bwrap_too_old", bwrap=bwrap))
        if limits.processes and "Resource temporarily unavailable" in error:
            own = [line for line in error.splitlines() if line.startswith("bwrap:")]
            raise SetupError(t("setup.process_cap_too_low", processes=limits.processes,
                               error="; ".join(own) or error))
        raise SetupError(_failure(error))
    if _died_before_exec(result, (prefix or command)[0], cwd, env.get("PATH")):
        error = result.stderr.decode(errors="replace").strip() or \
            t("setup.bwrap_before_exec")
        raise SetupError(_failure(error))
    if limits.processes and caps.processes_capped() is None \
            and _FORK_FAILED.search(result.stderr):
        result = dataclasses.replace(result, stderr=result.stderr + (t(
            "run.process_cap_likely", processes=limits.processes) + "\n").encode(),
            violations=(*result.violations, violations.PRINTED_FORK_FAILURE))
    if result.exit_code in (1, ExitCode.NOT_EXECUTABLE, ExitCode.NOT_FOUND):
        from ..run.execfail import confined_failure  # maybe an exec that failed: see there

        result = confined_failure(result, command, prefix, cwd=cwd, path=env.get("PATH"))
    return result


def _died_before_exec(result: Completed, program: str, cwd: str, path: str | None
                      ) -> bool:
    """bwrap reports `child-pid` before its child sets the sandbox up; a child that dies
    in the set-up (`Can't mount proc on /newroot/proc` under a container's masked
    /proc) exits 1 and no `exit-code` is written, as when the exec fails. Not the exec:
    its own message is not there and the program would run (looked up from outside)."""
    # only when bwrap may have died before the exec
    from ..run.execfail import _lookup

    return (not result.timed_out and result.exit_code == 1
            and not any("exit-code" in doc for doc in result.status)
            and b"bwrap: execvp " not in result.stderr
            and _lookup(program, cwd, path) is None)


def _caps(root: bool) -> Check:
    """How the default caps on processes and memory are enforced here (a missing
    process cap does not stop `run`: it is reported, not failed)."""

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
