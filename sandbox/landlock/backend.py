"""The Landlock backend: where bwrap cannot make its namespaces (Ubuntu 24.04's
AppArmor restriction, containers' default seccomp profiles, `max_user_namespaces=0`),
the command is confined by Landlock + the same seccomp filter, from a small launcher
(`launcher.py`) that stays outside as the child subreaper of everything it starts.

What it translates: the ruleset (`ruleset.py`), the profile's seccomp BPF plus the
network rows no network namespace makes moot (`netfilter.py`), the caps (a cgroup, or
rlimits), the environment (TMPDIR at the project's temp dir: nothing can be mounted at
/tmp). What it cannot hold the way bwrap does is refused or said: a network allowlist
(Landlock's TCP rules are per port, not per address: egress cannot be limited to the
proxy), this package's own code inside a writable root (no read-only bind: the next
run would execute what a command wrote).
"""

from __future__ import annotations

import contextlib
import dataclasses
import marshal
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

from swifty_sandbox.messages import t
from swifty_sandbox.policy.paths import is_within

from ..backend import Host, Launch, Rendered
from ..spec.compiler import TEMP_HOME, SandboxSpec, SetupError
from . import abi as ll
from .ruleset import compile_ruleset

if TYPE_CHECKING:
    from ..backend import Check
    from ..linux.caps import Caps
    from ..run.executor import Completed
    from .ruleset import Ruleset


def kernel_abi() -> tuple[int, str]:
    """The Landlock ABI this kernel runs (0 when none) and why not."""
    if not sys.platform.startswith("linux"):
        return 0, sys.platform
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if version < 0:
        err = ctypes.get_errno()
        # ENOSYS: not built in; EOPNOTSUPP: built but not enabled at boot (lsm=).
        return 0, f"landlock_create_ruleset: {os.strerror(err)}"
    return int(version), ""


def launcher_source() -> str:
    with open(os.path.join(os.path.dirname(__file__), "launcher.py"), encoding="utf-8") as f:
        return f.read()


def launcher_argv(config_fd: int, status_fd: int, command: Sequence[str]) -> list[str]:
    """The isolated interpreter itself (no venv, no site), as the forwarder's."""
    python = os.path.realpath(sys.executable)
    return [python, "-I", "-S", "-c", launcher_source(), str(config_fd), str(status_fd),
            "--", *command]


def config(ruleset: Ruleset, cwd: str, seccomp_fds: Sequence[int],
           rlimits: Sequence[tuple[int, int]] = ()) -> dict[str, object]:
    """The launcher's CONFIG_FD document (marshal: a built-in module to read it)."""
    return {"abi": ruleset.abi, "handled_fs": ruleset.handled_fs,
            "handled_net": ruleset.handled_net, "scoped": ruleset.scoped,
            "rules": [[r.path, r.access] for r in ruleset.rules], "cwd": cwd,
            "seccomp": list(seccomp_fds), "rlimits": [list(r) for r in rlimits]}


def _trusted_inside(spec: SandboxSpec) -> list[str]:
    """What the next `run` executes (this interpreter, its environment, this package)
    that a command here could write: bwrap binds it read-only, Landlock cannot."""
    # loaded only when this backend runs or renders (run's start-up path)
    from ..spec.pathguard import trusted_paths

    roots = [*spec.writable, *(d for d in (spec.temp_dir, spec.toolchain_dir) if d)]
    return [p for p in trusted_paths(spec.bwrap) if p != spec.bwrap and
            any(is_within(p, r) for r in roots) and not p.endswith("/bwrap")]


def _hidden_in_roots(spec: SandboxSpec) -> list[str]:
    """The hidden paths a command here could rename or link away (`repair.hold`)."""
    roots = [*spec.writable, *(d for d in (spec.temp_dir, spec.toolchain_dir) if d)]
    return [p for p in dict.fromkeys((*spec.unreadable_files, *spec.unreadable_dirs))
            if any(is_within(p, r) and p != r for r in roots)]


def _protected_in_roots(spec: SandboxSpec) -> list[str]:
    """The protected paths a command here could change, outermost only (a tree
    recorded whole holds what lies inside it)."""
    roots = [*spec.writable, *(d for d in (spec.temp_dir, spec.toolchain_dir) if d)]
    paths = [p for p in dict.fromkeys((*spec.read_only, *spec.guard_dirs, *spec.guard_files))
             if any(is_within(p, r) for r in roots)]
    return [p for p in paths if not any(q != p and is_within(p, q) for q in paths)]


def _repaired(launch: Launch, spec: SandboxSpec) -> SandboxSpec:
    """What the launch puts back when it ends: the protected trees inside a writable
    root, recorded whole, and the hidden paths there, held; the spec without the
    snapshot entries a tree covers."""
    # loaded only when this backend runs (run's start-up path)
    from ..run.aftercare import _record
    from .repair import hold, hold_back, release, repair, snapshot

    # Held before the trees are recorded, put back before they are compared, and let
    # go after they are repaired: the list of identities lies in `~/.swifty`
    # (`held.py`), itself such a tree where the home is writable.
    hidden = _hidden_in_roots(spec)
    holding = hold(hidden, spec.home) if hidden else None
    try:
        trees = snapshot(_protected_in_roots(spec))
    except BaseException:
        if holding is not None:  # nothing ran: only let go
            release(holding)
        raise
    if holding is not None:  # put back under their names when the launch ends
        launch.on_close(partial(hold_back, holding, partial(_record, spec)))
    if trees:
        # Nothing is read-only here: each protected tree is put back whole when the
        # launch ends (before aftercare, which checks the rest).
        launch.on_close(partial(repair, trees, partial(_record, spec)))
        spec = dataclasses.replace(spec, snapshot={
            p: v for p, v in spec.snapshot.items()
            if not any(is_within(p, tree.path) for tree in trees)})
    if holding is not None:
        launch.on_close(partial(release, holding))
    return spec


class LandlockBackend:
    name = "landlock"
    targets = ("landlock",)

    def compile(self, spec: SandboxSpec, command: Sequence[str], host: Host) -> Launch:
        """The launcher's argv: the caps' cgroup join before it, the ruleset, the two
        seccomp filters and the rlimits in memfds, its status pipe; TMPDIR at the
        project's temp dir; the protected trees recorded, put back when it ends."""
        # loaded only when this backend runs or renders (run's start-up path)
        from ..linux import observe
        from ..linux.backend import launch_caps
        from ..spec.syscalls import syscall_rules

        abi, why = kernel_abi()
        if not host.dry:
            if not abi:
                raise SetupError(t("setup.no_landlock", error=why))
            if host.network is not None:
                raise SetupError(t("setup.landlock_network"))
            inside = _trusted_inside(spec)
            if inside:
                raise SetupError(t("setup.landlock_trusted", paths=", ".join(inside)))
        abi = abi or ll.HIGHEST  # described on a machine without Landlock: the newest
        launch = Launch(spec, dry=host.dry)
        try:
            if spec.temp_dir is None and spec.private_dirs and not host.dry:
                spec = _private_temp(launch, spec)
            if not host.dry:  # the filters made (a new BPF cache entry, linux/bpfcache)
                for net in (False, True):  # before the protected trees are recorded, or
                    _bpf(spec, abi, net)  # the repair would take it for the command's
                spec = _repaired(launch, spec)
            if host.terminal:  # our pty its controlling terminal, from inside
                from ..run.launch import controlled  # loaded with the backend already

                spec, command = controlled(spec, command)
            ruleset = compile_ruleset(spec, abi, ttys=host.terminals)
            caps = launch_caps(launch, spec.limits)
            seccomp = [launch.data("swifty-seccomp", partial(_bpf, spec, abi, net))
                       for net in (False, True)]
            rlimits = _rlimits(caps.rlimits, caps.prefix)
            config_fd = launch.data("swifty-landlock", lambda: marshal.dumps(
                config(ruleset, spec.cwd, seccomp, rlimits())))
            status_fd = launch.status_pipe()
            launch.argv = [*caps.outer, *launcher_argv(config_fd, status_fd, command)]
        except BaseException:
            launch.close()
            raise
        temp = spec.temp_dir
        if temp is not None:
            launch.edit_env(lambda env: {**env, "TMPDIR": temp, "TMP": temp, "TEMP": temp})
        launch.spec, launch.cwd, launch.own_tree = spec, "/", True  # it reaps its tree
        observe.attach(launch, profile=(seccomp[0], syscall_rules(spec.seccomp)))
        launch.missing_launcher = t("setup.landlock_failed", error=launch.argv[0])
        launch.judge_with(partial(_judged, list(command), spec.cwd))
        launch.judge_with(partial(_fork_hint, caps, spec.limits.processes))
        return launch

    def render(self, target: str, spec: SandboxSpec, command: Sequence[str],
               options: Mapping[str, object] | None = None, host: Host | None = None
               ) -> Rendered:
        # loaded only when this backend runs or renders (run's start-up path)
        from .netfilter import network_rules

        abi = kernel_abi()[0] or ll.HIGHEST  # a machine without Landlock: the newest
        with self.compile(spec, command, host or Host(dry=True)) as launch:
            argv = [*launch.argv]
        ruleset = compile_ruleset(spec, abi, ttys=(host.terminals if host else ()))
        source = launcher_source()
        argv = ["<launcher.py>" if a == source else a for a in argv]
        network = [{"syscall": r.syscall, "args": [[a.index, a.op, a.value, a.mask]
                                                   for a in r.args]}
                   for r in network_rules(abi)]
        return Rendered(ruleset.text(), {"target": target, **ruleset.as_json(),
                                         "seccomp_network": network, "argv": argv})

    def probe(self, configured_bwrap: str | None) -> list[Check]:
        # loaded only when this backend runs or renders (run's start-up path)
        from ..backend import Check

        abi, why = kernel_abi()
        if not abi:
            return [Check("landlock", False, why, t("doctor.fix.landlock"))]
        return [Check("landlock", True, t("doctor.landlock_ok", abi=abi,
                                          rights=_abi_features(abi)))]


def _abi_features(abi: int) -> str:
    fs, net, scoped = ll.handled(abi)
    extra = [name for name in ("refer", "truncate", "ioctl_dev") if fs & ll.FS[name]]
    extra += ["tcp"] if net else []
    extra += [f"scope:{n}" for n in ll.names(scoped, ll.SCOPE)]
    return ", ".join(extra) or "-"


def _bpf(spec: SandboxSpec, abi: int, network: bool) -> bytes:
    """The profile's filter (the same BPF bwrap loads), or the network rows."""
    # loaded only when this backend runs or renders (run's start-up path)
    from ..linux.seccomp import SeccompUnavailable, export, export_rows
    from .netfilter import network_rules

    try:
        return export_rows(network_rules(abi)) if network else export(spec.seccomp)
    except (SeccompUnavailable, OSError) as e:
        raise SetupError(t("setup.no_seccomp", error=e)) from e


def _rlimits(rlimits: Sequence[tuple[int, int]], prefix: Sequence[str]
             ) -> Callable[[], list[tuple[int, int]]]:
    """The caps' rlimits (prlimit's flags, where caps chose prlimit inside a user
    namespace), set by the launcher; RLIMIT_NPROC counts all of the user's tasks here
    (no user namespace), so it is the cap plus what runs already, counted at launch."""
    import resource

    flags = {"--data": resource.RLIMIT_DATA, "--nproc": resource.RLIMIT_NPROC}
    pairs = list(rlimits)
    for item in prefix[1:-1]:
        flag, _, value = item.partition("=")
        pairs.append((flags[flag], int(value.split(":")[0])))

    def values() -> list[tuple[int, int]]:
        return [(w, v + _user_tasks() if w == resource.RLIMIT_NPROC else v)
                for w, v in pairs]

    return values


def _private_temp(launch: Launch, spec: SandboxSpec) -> SandboxSpec:
    """`tmp: private`: an empty directory of this command's own (nothing can be
    mounted at /tmp), removed when the launch ends."""
    try:
        private = launch.private_temp(spec.home)
    except OSError as e:
        raise SetupError(t("setup.landlock_temp", path=os.path.join(spec.home, TEMP_HOME),
                           error=e.strerror)) from e
    return dataclasses.replace(spec, temp_dir=private, private_dirs=())


def _user_tasks() -> int:
    """The tasks this user runs now: without a user namespace RLIMIT_NPROC counts all
    of them, so the command's cap is added to what runs already."""
    uid, count = os.getuid(), 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry}/task"))
    return count


def _judged(command: list[str], cwd: str, result: Completed, env: Mapping[str, str]
            ) -> Completed:
    """The launcher's status: a set-up failure is 125 (SetupError), an exec that
    failed is the shell's 127/126, else the command's own result."""
    # loaded only when this backend runs or renders (run's start-up path)
    from ..run.execfail import _lookup

    failed = next((str(d["setup-error"]) for d in result.status if "setup-error" in d),
                  None)
    if failed is not None:
        raise SetupError(t("setup.landlock_failed", error=failed))
    if not result.timed_out and not any("child-pid" in d for d in result.status):
        error = result.stderr.decode(errors="replace").strip() or f"exit {result.exit_code}"
        raise SetupError(t("setup.landlock_failed", error=error))
    errno = next((d["exec-errno"] for d in result.status if "exec-errno" in d), None)
    if isinstance(errno, int):
        # loaded only when this backend runs or renders (run's start-up path)
        from swifty_sandbox.policy.errors import ExitCode

        # Looked up from outside as a shell would; where that finds it runnable, the
        # sandbox refused it (a hidden path): the exec's own error.
        code, message = _lookup(command[0], cwd, env.get("PATH")) or (
            ExitCode.NOT_EXECUTABLE, t("run.not_executable", program=command[0],
                                       error=os.strerror(errno)))
        return dataclasses.replace(result, exit_code=code,
                                   stderr=result.stderr + message.encode() + b"\n")
    return result


def _fork_hint(caps: Caps, processes: int | None, result: Completed,
               env: Mapping[str, str]) -> Completed:
    """A fork that failed under an rlimit cap on processes: which cap, how to raise it
    (with a cgroup, its own count says so when the launch ends)."""
    # loaded only when this backend runs or renders (run's start-up path)
    from ..linux.backend import _FORK_FAILED
    from ..run.violations import PRINTED_FORK_FAILURE

    if processes and caps.processes_capped() is None and _FORK_FAILED.search(result.stderr):
        return dataclasses.replace(result, stderr=result.stderr + (t(
            "run.process_cap_likely", processes=processes) + "\n").encode(),
            violations=(*result.violations, PRINTED_FORK_FAILURE))
    return result


BACKEND = LandlockBackend()
