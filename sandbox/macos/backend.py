"""The macOS backend: the seatbelt profile run by `/usr/bin/sandbox-exec`.

What differs from Linux (no namespaces here): the command sees the real `/tmp` path
names (its temp directory is `$TMPDIR`, not a private `/tmp`), the host's processes, and
no caps but the timeout; `tmp: private` is a fresh `$TMPDIR` per command.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING

from swifty_sandbox.messages import t

from ..aftercare import after_run
from ..backend import Launch, Rendered
from ..executor import Completed, execute
from ..launch import prepare as prepare_run
from ..spec import TEMP_HOME, SandboxSpec, SetupError, ensure_temp_dir, scrub_env
from ..toolchains import environment as toolchain_environment
from .seatbelt import SANDBOX_EXEC, sandbox_exec_argv, seatbelt_profile

if TYPE_CHECKING:
    from swifty_sandbox.policy.network import NetworkPolicy

    from ..doctor import Check
    from ..netproxy import HostAsk

# sandbox-exec's own failures (sysexits): the profile did not compile (EX_DATAERR) or
# the sandbox could not be applied (EX_OSERR); it says so on stderr first.
_SANDBOX_EXEC_ERRORS = (65, 71)
# What exec() takes for argv and environment together on macOS (kern.argmax, 1 MiB),
# less a margin; each string also costs a pointer (counted as 9 bytes with its NUL).
_ARG_MAX = (1 << 20) - 4096


class MacosBackend:
    name = "macos"
    targets = ("seatbelt",)

    def compile(self, spec: SandboxSpec, command: Sequence[str]) -> Launch:
        return Launch(sandbox_exec_argv(seatbelt_profile(spec), command), cwd=spec.cwd)

    def render(self, target: str, spec: SandboxSpec, command: Sequence[str],
               options: Mapping[str, object] | None = None) -> Rendered:
        profile = seatbelt_profile(spec)
        argv = sandbox_exec_argv(profile, command)
        return Rendered(
            profile.text,
            {"target": target, "profile": profile.text, "params": dict(profile.params),
             "argv": argv},
            "".join(f"-D {shlex.quote(f'{name}={value}')}\n"
                    for name, value in profile.params))

    def environment(self, spec: SandboxSpec, environ: dict[str, str]) -> dict[str, str]:
        """The scrubbed environment; TMPDIR is the project's temp directory (macOS
        cannot show it at /tmp), or unset when there is none."""
        env = scrub_env(environ, spec)
        env.pop("TMPDIR", None)
        if spec.temp_dir is not None:
            env["TMPDIR"] = spec.temp_dir
        return env

    def run(self, spec: SandboxSpec, command: Sequence[str], *, capture: bool,
            stdin: int | IO[bytes] | None, environ: dict[str, str] | None,
            network: NetworkPolicy | None = None, ask_host: HostAsk | None = None
            ) -> Completed:
        if network is not None and network.enabled:
            # The proxy's way in is the Linux forwarder; no network rather than all.
            raise SetupError(t("setup.macos_network"))
        if spec.limits.processes_required:
            raise SetupError(t("setup.macos_caps"))
        private = None
        try:
            if spec.temp_dir is not None:
                ensure_temp_dir(spec.temp_dir)
            elif spec.private_dirs and spec.home:
                # `tmp: private`: no mount can give it an empty /tmp, so a directory
                # of its own for this command ($TMPDIR), removed after it.
                parent = os.path.join(spec.home, TEMP_HOME)
                ensure_temp_dir(parent)
                private = tempfile.mkdtemp(prefix="private-", dir=parent)
                spec = dataclasses.replace(spec, temp_dir=private)
        except OSError as e:
            raise SetupError(t("setup.macos_temp", path=spec.temp_dir or spec.home,
                               error=e.strerror)) from e
        spec, notes = prepare_run(spec, "")
        try:
            result = self._run(spec, command, capture=capture, stdin=stdin,
                               environ=environ)
            if notes:
                result = dataclasses.replace(
                    result, stderr=notes.encode(errors="surrogateescape") + result.stderr)
            return result
        finally:
            if private is not None:
                shutil.rmtree(private, ignore_errors=True)

    def _run(self, spec: SandboxSpec, command: Sequence[str], *, capture: bool,
             stdin: int | IO[bytes] | None, environ: dict[str, str] | None) -> Completed:
        inherited = [*((0,) if stdin is None else (stdin,) if isinstance(stdin, int) and
                       stdin >= 0 else ()), *(() if capture else (1, 2))]
        terminals = tuple(dict.fromkeys(os.ttyname(fd) for fd in inherited if os.isatty(fd)))
        launch = Launch(sandbox_exec_argv(seatbelt_profile(spec, terminals=terminals),
                                          command), cwd=spec.cwd)
        env = self.environment(spec, dict(os.environ if environ is None else environ))
        if spec.toolchain_dir is not None:
            env.update(toolchain_environment(spec.toolchain_dir, spec.home, env))
        size = sum(len(a.encode(errors="surrogateescape")) + 9 for a in launch.argv) + \
            sum(len(f"{k}={v}".encode(errors="surrogateescape")) + 9 for k, v in env.items())
        if size > _ARG_MAX:  # every path is a parameter: a huge tree can exceed exec's limit
            raise SetupError(t("setup.macos_too_large", size=size, limit=_ARG_MAX))
        try:
            result = execute(launch.argv, env=env, cwd=launch.cwd,
                             timeout=spec.limits.timeout, capture=capture,
                             output_bytes=spec.limits.output_bytes, stdin=stdin)
        except FileNotFoundError as e:
            if e.filename != SANDBOX_EXEC:
                raise
            raise SetupError(t("setup.no_sandbox_exec", path=SANDBOX_EXEC)) from e
        finally:
            try:
                notes = after_run(spec)
            except Exception as e:  # the command ran: say what was not checked, never crash
                notes = t("run.aftercare_failed", error=e) + "\n"
        error = sandbox_exec_error(result)
        if error is not None:
            raise SetupError(t("setup.sandbox_exec_failed", error=error))
        if notes:
            result = dataclasses.replace(
                result, stderr=result.stderr + notes.encode(errors="surrogateescape"))
        return result

    def probe(self, configured_bwrap: str | None) -> list[Check]:
        from ..doctor import Check, self_protection

        checks = [Check("user", True, t("doctor.user", uid=os.getuid()))]
        found = os.access(SANDBOX_EXEC, os.X_OK)
        checks.append(Check("sandbox-exec", found, SANDBOX_EXEC if found
                            else t("doctor.not_found"), "" if found
                            else t("doctor.fix.sandbox_exec")))
        if found:
            try:
                out = execute([SANDBOX_EXEC, "-p", "(version 1)(allow default)", "--",
                               "/usr/bin/true"], timeout=10)
                works, error = out.exit_code == 0, out.stderr.decode(errors="replace")
            except OSError as e:
                works, error = False, str(e)
            checks.append(Check("seatbelt", works, t("doctor.seatbelt_ok") if works
                                else error.strip(), "" if works
                                else t("doctor.fix.sandbox_exec")))
        checks.append(self_protection(configured_bwrap))
        checks.append(Check("caps", True, t("doctor.caps_macos"), t("doctor.fix.caps_macos")))
        return checks


def sandbox_exec_error(result: Completed) -> str | None:
    """sandbox-exec's own complaint when it never started the command (only seen when
    the output is captured: an interactive run shows it on the terminal)."""
    if result.exit_code in _SANDBOX_EXEC_ERRORS and not result.timed_out and \
            result.stderr.startswith(b"sandbox-exec:"):
        return result.stderr.decode(errors="replace").strip()
    return None


BACKEND = MacosBackend()
