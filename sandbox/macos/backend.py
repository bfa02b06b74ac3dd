"""The macOS backend: the seatbelt profile run by `/usr/bin/sandbox-exec`.

What differs from Linux (no namespaces here): the command sees the real `/tmp` path
names (its temp directory is `$TMPDIR`, not a private `/tmp`), the host's processes, and
no caps but the timeout; `tmp: private` is a fresh `$TMPDIR` per command.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Mapping, Sequence
from functools import partial

from swifty_sandbox.messages import t

from ..backend import Check, Host, Launch, Rendered
from ..run.doctor import self_protection
from ..run.executor import Completed, execute
from ..spec.compiler import TEMP_HOME, SandboxSpec, SetupError, scrub_env
from .seatbelt import SANDBOX_EXEC, sandbox_exec_argv, seatbelt_profile

# sandbox-exec's own failures (sysexits): the profile did not compile (EX_DATAERR) or
# the sandbox could not be applied (EX_OSERR); it says so on stderr first.
_SANDBOX_EXEC_ERRORS = (65, 71)
# What exec() takes for argv and environment together on macOS (kern.argmax, 1 MiB),
# less a margin; each string also costs a pointer (counted as 9 bytes with its NUL).
_ARG_MAX = (1 << 20) - 4096


class MacosBackend:
    name = "macos"
    targets = ("seatbelt",)

    def compile(self, spec: SandboxSpec, command: Sequence[str], host: Host) -> Launch:
        """`sandbox-exec -p PROFILE -D …`, run in the working directory; TMPDIR the
        command's temp directory."""
        if not host.dry:
            if host.network is not None:
                # The proxy's way in is the Linux forwarder; no network rather than all.
                raise SetupError(t("setup.macos_network"))
            if spec.limits.processes_required:
                raise SetupError(t("setup.macos_caps"))
        launch = Launch(spec, dry=host.dry)
        try:
            spec = _temp_dir(launch, spec)
            launch.argv = sandbox_exec_argv(
                seatbelt_profile(spec, terminals=host.terminals), command)
        except BaseException:
            launch.close()
            raise
        launch.spec, launch.cwd = spec, spec.cwd
        launch.missing_launcher = t("setup.no_sandbox_exec", path=SANDBOX_EXEC)
        launch.edit_env(partial(_checked_env, spec, launch.argv))
        launch.judge_with(_judged)
        return launch

    def render(self, target: str, spec: SandboxSpec, command: Sequence[str],
               options: Mapping[str, object] | None = None, host: Host | None = None
               ) -> Rendered:
        # No network here: the profile is what it is, with or without an allowlist.
        with self.compile(spec, command, Host(dry=True)) as launch:
            argv, spec = launch.argv, launch.spec
        profile = seatbelt_profile(spec)
        return Rendered(
            profile.text,
            {"target": target, "profile": profile.text, "params": dict(profile.params),
             "argv": argv},
            "".join(f"-D {shlex.quote(f'{name}={value}')}\n"
                    for name, value in profile.params))

    def environment(self, spec: SandboxSpec, environ: dict[str, str]) -> dict[str, str]:
        """The scrubbed environment; TMPDIR is the project's temp directory (macOS
        cannot show it at /tmp), or unset when there is none."""
        return _tmpdir(spec, scrub_env(environ, spec))

    def probe(self, configured_bwrap: str | None) -> list[Check]:
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


def _temp_dir(launch: Launch, spec: SandboxSpec) -> SandboxSpec:
    """`tmp: private` (or no project temp directory could be made): no mount can give
    the command an empty /tmp, so a directory of its own ($TMPDIR), removed when the
    launch ends."""
    if launch.dry or spec.temp_dir is not None or not (spec.private_dirs and spec.home):
        return spec
    try:
        private = launch.private_temp(spec.home)
    except OSError as e:
        raise SetupError(t("setup.macos_temp", path=os.path.join(spec.home, TEMP_HOME),
                           error=e.strerror)) from e
    return dataclasses.replace(spec, temp_dir=private)


def _tmpdir(spec: SandboxSpec, env: dict[str, str]) -> dict[str, str]:
    env.pop("TMPDIR", None)
    if spec.temp_dir is not None:
        env["TMPDIR"] = spec.temp_dir
    return env


def _checked_env(spec: SandboxSpec, argv: list[str], env: dict[str, str]
                 ) -> dict[str, str]:
    """TMPDIR set; refused (`SetupError`) when argv and environment together exceed
    what exec takes (every path is a parameter: a huge tree can)."""
    env = _tmpdir(spec, env)
    size = sum(len(a.encode(errors="surrogateescape")) + 9 for a in argv) + \
        sum(len(f"{k}={v}".encode(errors="surrogateescape")) + 9 for k, v in env.items())
    if size > _ARG_MAX:
        raise SetupError(t("setup.macos_too_large", size=size, limit=_ARG_MAX))
    return env


def _judged(result: Completed, env: Mapping[str, str]) -> Completed:
    error = sandbox_exec_error(result)
    if error is not None:
        raise SetupError(t("setup.sandbox_exec_failed", error=error))
    return result


def sandbox_exec_error(result: Completed) -> str | None:
    """sandbox-exec's own complaint when it never started the command (only seen when
    the output is captured: an interactive run shows it on the terminal)."""
    if result.exit_code in _SANDBOX_EXEC_ERRORS and not result.timed_out and \
            result.stderr.startswith(b"sandbox-exec:"):
        return result.stderr.decode(errors="replace").strip()
    return None


BACKEND = MacosBackend()
