"""Run one command confined (by this platform's backend) or, when the user chose it,
unconfined.

Fail closed: when confinement cannot be set up the command does not run and
`SetupError` (exit 125) names the cause and the fix.
"""

from __future__ import annotations

import dataclasses
import os
import resource
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING

from swifty_sandbox.messages import t

from ..fsafe import open_dir, open_dir_at
from ..spec.compiler import (
    EXIT_SETUP,
    TEMP_MOUNTS,
    Identity,
    Limits,
    SandboxSpec,
    SetupError,
    ensure_temp_dir,
    scrub_env,
)
from ..spec.roots import create
from ..spec.toolchains import environment as toolchain_environment
from .executor import DEVNULL, Completed, OnOutput, execute
from .violations import Areas, from_output, from_proxy, merged

if TYPE_CHECKING:
    from swifty_sandbox.policy.network import NetworkPolicy

    from ..backend import Backend, Host, Launch
    from ..net.netproxy import Egress, HostAsk
    from .terminal import Terminal

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
                 network: NetworkPolicy | None = None, ask_host: HostAsk | None = None,
                 backend: Backend | None = None, on_output: OnOutput | None = None
                 ) -> Completed:
    """Run `command` confined: the one lifecycle of every backend (None: this
    platform's, `backend.backend_for`), which only translates (`Backend.compile`).
    Prepare (toolchain cache, missing roots), compile, scrub the environment, execute,
    close what the launch holds, the after-run step (always, once the launch exists),
    notes on stderr, then the backend's judgement (did its launcher start the
    command?). `network`: the allowlist of a proxied run (`netproxy`); None or empty:
    none. `on_output`: the output as it arrives (captured runs). At the user's
    terminal the command gets a pty of its own (`terminal.py`). `SetupError` when the
    confinement cannot be set up: the command did not run."""
    # The seam and the after-run step load here, not at the top: `check` and `hook`
    # import this module through the facade and never run a command (start-up time).
    from ..backend import Host, backend_for

    pty = own_terminal(stdin, capture)
    if pty is not None and ask_host is not None:
        ask_host = pty.lending(ask_host)  # the question has the terminal, not the command
    try:
        host = Host(dict(os.environ if environ is None else environ), network=network,
                    ask_host=ask_host, terminal=pty is not None,
                    terminals=(pty.name,) if pty is not None else
                    inherited_terminals(stdin, capture))
        spec, prepared = prepare(spec, "")
        launch = (backend or backend_for()).compile(spec, command, host)
    except BaseException:
        if pty is not None:
            pty.close()
        raise
    env: dict[str, str] = {}
    try:
        with launch:
            env = launch.environment(environment(launch.spec, host.environ))
            result = _execute(launch, env, capture=capture, stdin=stdin,
                              on_output=on_output, terminal=pty)
    finally:
        after = _after_run(launch.spec)
    notes = launch.notes + prepared + after + launch.closing_notes
    if launch.network is not None:
        result = dataclasses.replace(result, network=launch.network)
    refused = merged(launch.violations, from_output(
        Areas(launch.spec), result.stderr, launch.spec.home, launch.spec.cwd),
        from_proxy(launch.network))
    if refused:
        result = dataclasses.replace(result, violations=refused)
    if notes:
        result = dataclasses.replace(
            result, stderr=result.stderr + notes.encode(errors="surrogateescape"))
    result = launch.judge(result, env)
    if result.exit_code != 0 and host.network is None:
        # Also at a terminal, where the command's stderr went to the screen uncaptured:
        # the observer saw it try the network.
        hint = offline_hint(result.stderr, tried=any(
            v["kind"] == "network" for v in result.violations))
        if hint:
            result = dataclasses.replace(result, stderr=result.stderr + hint.encode())
    return result


def own_terminal(stdin: int | IO[bytes] | None, capture: bool) -> Terminal | None:
    """A pty of our own for a run at the user's terminal (`terminal.wanted`)."""
    if capture or stdin is not None or not os.isatty(0):
        return None  # agents' runs (captured, no terminal): nothing more loaded
    from .terminal import Terminal, wanted  # runs at a terminal only (start-up time)

    return Terminal() if wanted(stdin, capture) else None


def _execute(launch: Launch, env: dict[str, str], *, capture: bool,
             stdin: int | IO[bytes] | None, on_output: OnOutput | None,
             terminal: Terminal | None) -> Completed:
    limits = launch.spec.limits
    try:
        launch.start()
    except BaseException:
        if terminal is not None:
            terminal.close()
        raise
    try:
        return execute(launch.argv, env=env, cwd=launch.cwd, timeout=limits.timeout,
                       capture=capture, output_bytes=limits.output_bytes, stdin=stdin,
                       pass_fds=launch.pass_fds, status_fd=launch.status_fd,
                       preexec=launch.preexec, close_after_spawn=launch.release(),
                       own_tree=launch.own_tree, on_output=on_output, terminal=terminal,
                       spawn=launch.spawn)
    except FileNotFoundError as e:
        if launch.missing_launcher is None or e.filename != launch.argv[0]:
            raise
        raise SetupError(launch.missing_launcher) from e


def environment(spec: SandboxSpec, environ: Mapping[str, str]) -> dict[str, str]:
    """The command's environment before the backend's edits: secrets scrubbed, the
    project's toolchain caches."""
    env = scrub_env(dict(environ), spec)
    if spec.toolchain_dir is not None:
        env.update(toolchain_environment(spec.toolchain_dir, spec.home, env))
    return env


def _after_run(spec: SandboxSpec) -> str:
    """The after-run step's notes; it never fails the run (the command ran: say what
    was not checked)."""
    from .aftercare import after_run  # see run_confined

    try:
        return after_run(spec)
    except Exception as e:
        return t("run.aftercare_failed", error=e) + "\n"


def inherited_terminals(stdin: int | IO[bytes] | None, capture: bool) -> tuple[str, ...]:
    """The terminals among the descriptors the command inherits (stdin; stdout and
    stderr when not captured)."""
    inherited = [*((0,) if stdin is None else (stdin,) if isinstance(stdin, int) and
                   stdin >= 0 else ()), *(() if capture else (1, 2))]
    return tuple(dict.fromkeys(os.ttyname(fd) for fd in inherited if os.isatty(fd)))


def proxied(launch: Launch, host: Host, spec: SandboxSpec, command: Sequence[str]
            ) -> tuple[SandboxSpec, list[str]]:
    """A proxied run (`host.network`): the command behind the forwarder, the egress
    proxy its companion (its socket handed to the forwarder), the proxy variables set,
    and the forwarder's interpreter readable under read roots."""
    # Only a run with a network allowlist has a proxy: the others never load it
    # (sockets, threads, the network policy's tables cost start-up time).
    from ..net.netproxy import Egress, forwarder_argv, interpreter_roots, proxy_env

    assert host.network is not None
    egress: list[Egress] = []

    def channel() -> int:
        egress.append(Egress(host.network, ask=host.ask_host))  # type: ignore[arg-type]
        launch.companion(_Proxy(egress[0]))
        fd, egress[0].fd = egress[0].fd, -1  # ours to close until handed over
        return fd

    wrapped = forwarder_argv(launch.hand(channel), list(command))
    launch.edit_env(proxy_env)
    if spec.read_roots is not None:
        spec = dataclasses.replace(spec, read_roots=tuple(dict.fromkeys(
            (*spec.read_roots, *interpreter_roots()))))
    return spec, wrapped


def controlled(spec: SandboxSpec, command: Sequence[str]) -> tuple[SandboxSpec, list[str]]:
    """A run on a pty of ours (`host.terminal`): the command behind the helper that
    makes the pty its controlling terminal (`terminal.helper_argv`), run inside the
    sandbox, and its interpreter readable under read roots."""
    from .terminal import helper_argv  # a run at a terminal only (start-up time)

    if spec.read_roots is not None:
        from ..net.netproxy import interpreter_roots  # a profile that limits reads only

        spec = dataclasses.replace(spec, read_roots=tuple(dict.fromkeys(
            (*spec.read_roots, *interpreter_roots()))))
    return spec, helper_argv(command)


class _Proxy:
    """The egress proxy as a launch's companion."""

    def __init__(self, egress: Egress) -> None:
        self.egress = egress

    def start(self) -> None:
        self.egress.start()

    def stop(self) -> tuple[str, tuple[dict[str, object], ...] | None]:
        events = self.egress.close()
        blocked = self.egress.proxy.blocked_lines()
        return "".join(line + "\n" for line in blocked), tuple(e.as_json() for e in events)


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


def offline_hint(stderr: bytes, *, tried: bool = False) -> str:
    """One line for a failed command that met the missing network ("" otherwise), so
    an agent knows it is policy and how to open a host. `tried`: the observer saw it
    resolve or connect (its stderr may not be here: a terminal's)."""
    if not tried and not any(sign in stderr for sign in _OFFLINE_SIGNS):
        return ""
    return t("net.offline") + "\n"


def prepare(spec: SandboxSpec, notes: str) -> tuple[SandboxSpec, str]:
    """Before every backend's launch: the project's temp directory, the toolchain
    cache and missing writable roots made, hidden files git tracks named."""
    spec, notes = _temp_dir(spec, notes)
    spec, notes = _toolchain_dir(spec, notes)
    spec, notes = _missing_roots(spec, notes)
    _guard_parents(spec)
    spec = _lock_reason(spec)
    made = tuple(g for g in spec.guard_dirs if os.path.isdir(g) and not os.path.islink(g))
    if made:
        # A guarded directory made since the compile (ours: `~/.cache/swifty-sandbox`
        # for the temp dir and caches) is kept read-only as it is; a tmpfs over it
        # would hide the caches mounted from inside it.
        # It is also in the picture from before the command as it is now: it was
        # missing at the compile (`snapshot`), and left so, the after-run step would
        # take our own directory for one the command made and move it aside, every run.
        # Read-only inside, nothing of the command's can be in it but what is bound
        # there (its temp dir and caches).
        spec = dataclasses.replace(
            spec, guard_dirs=tuple(g for g in spec.guard_dirs if g not in made),
            read_only=(*spec.read_only, *made),
            snapshot={**spec.snapshot, **{g: (_identity(g), None) for g in made
                                          if g in spec.snapshot}})
    if spec.hidden_tracked:
        notes += hidden_tracked_note(spec.project, spec.hidden_tracked) + "\n"
    return spec, notes


def _identity(path: str) -> Identity:
    """`path` as the snapshot records it (`compiler._snapshot`)."""
    info = os.lstat(path)
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode, info.st_uid,
            info.st_gid)


def _temp_dir(spec: SandboxSpec, notes: str) -> tuple[SandboxSpec, str]:
    """Create the project's temp directory; where it cannot be made, the command gets
    an empty private /tmp (as confined, only not kept between commands) and says so."""
    if spec.temp_dir is None:
        return spec, notes
    try:
        ensure_temp_dir(spec.temp_dir)
    except OSError as e:
        notes += t("run.temp_fallback", path=spec.temp_dir, error=e.strerror) + "\n"
        return dataclasses.replace(spec, temp_dir=None, temp_mounts=(), private_dirs=(
            *spec.private_dirs, *TEMP_MOUNTS)), notes
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
        made, failed = create(spec.create_roots)
        lines += made
        spec = dataclasses.replace(spec, writable=tuple(
            w for w in spec.writable if w not in failed))
    return spec, notes + "".join(f"{line}\n" for line in lines)


def run_unconfined(command: Sequence[str], *, cwd: str, limits: Limits,
                   capture: bool = True, stdin: int | IO[bytes] | None = DEVNULL,
                   on_output: OnOutput | None = None) -> Completed:
    """The user's explicit `--sandbox off`: the command runs as it is (at the user's
    terminal on a pty of ours too, for the same job control)."""
    pty = own_terminal(stdin, capture)
    argv = list(command)
    if pty is not None:
        from .terminal import helper_argv  # a run at a terminal only (start-up time)

        argv = helper_argv(command)
    try:
        return execute(argv, cwd=cwd, timeout=limits.timeout, capture=capture,
                       output_bytes=limits.output_bytes, stdin=stdin,
                       preexec=_rlimits(limits), on_output=on_output, terminal=pty)
    except OSError as e:  # not found, not executable: 127 / 126, as shells say
        from .execfail import unconfined_failure  # only a command that did not start

        failed = unconfined_failure(e, command, cwd=cwd, path=os.environ.get("PATH"))
        if failed is None:
            raise
        return failed
