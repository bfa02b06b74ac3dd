"""What confinement this machine supports, and why not: facts from `probe` (and a
seccomp filter built here), verdicts from them, printed by `swifty-sandbox doctor`."""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path

from swifty_sandbox.policy.messages import t


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
        return t("doctor.fix.apparmor")
    if max_userns == "0":
        return t("doctor.fix.max_userns")
    if unprivileged_clone == "0":
        return t("doctor.fix.userns_clone")
    return t("doctor.fix.container")


def diagnose(configured_bwrap: str | None = None) -> Report:
    linux = sys.platform.startswith("linux")
    checks = [Check("platform", linux,
                    f"{platform.system()} {platform.release()} ({platform.machine()})",
                    "" if linux else t("doctor.fix.platform"))]
    if not linux:
        return Report(tuple(checks))
    from .linux.seccomp import SeccompUnavailable, export
    from .probe import bwrap_version, find_bwrap, read_sysctl, try_namespaces

    root = os.getuid() == 0
    checks.append(Check("user", True, t("doctor.user_root" if root else "doctor.user",
                                        uid=os.getuid())))
    bwrap = find_bwrap(configured_bwrap)
    if bwrap is None:
        checks.append(Check("bubblewrap", False, t("doctor.not_found"), t("doctor.fix.bwrap")))
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
    checks.append(_self_protection(configured_bwrap))
    try:
        from swifty_sandbox.policy.profile import load_profile

        size = len(export(load_profile("default", Path.cwd()).seccomp))
        checks.append(Check("seccomp", True, t("doctor.seccomp_ok", size=size)))
    except (SeccompUnavailable, OSError) as e:
        checks.append(Check("seccomp", False, str(e), t("doctor.fix.seccomp")))
    checks.append(_caps(root))
    return Report(tuple(checks))


def _self_protection(configured_bwrap: str | None) -> Check:
    """Whether what `run` executes (its Python, its code, bwrap) lies in the project of
    the current directory, where commands may write: then it is mounted read-only."""
    from swifty_sandbox.policy import find_project
    from swifty_sandbox.policy.paths import is_within

    from .spec import trusted_paths

    project = str(find_project(Path.cwd()))
    inside = [p for p in trusted_paths(configured_bwrap) if is_within(p, project)]
    if not inside:
        return Check("self-protection", True, t("doctor.trusted_outside"))
    return Check("self-protection", True, t("doctor.trusted_inside", paths=", ".join(inside)),
                 t("doctor.fix.trusted_inside"))


def _caps(root: bool) -> Check:
    """How the default caps on processes and memory are enforced here (a missing
    process cap does not stop `run`: it is reported, not failed)."""
    from swifty_sandbox.policy.limits import (
        default_max_memory,
        default_max_processes,
        describe_memory,
    )

    from .linux import cgroups
    from .linux.caps import prlimit_path

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
