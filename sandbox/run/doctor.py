"""What confinement this machine supports, and why not: facts from `probe` (and a
seccomp filter built here), verdicts from them, printed by `swifty-sandbox doctor`."""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from swifty_sandbox.messages import t
from swifty_sandbox.policy import find_project
from swifty_sandbox.policy.paths import is_within

from ..backend import Check, backend_for
from ..spec.compiler import SetupError
from ..spec.pathguard import trusted_paths


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


def diagnose(configured_bwrap: str | None = None,
             confined: Callable[[], Check] | None = None) -> Report:
    """The platform line, then this platform's backend's own checks; on Linux the
    Landlock backend's and AppArmor's too, and last `confined()`: a real confined `true`
    through the backend a run would choose (the same set-up as `run`: doctor cannot say
    "ok" where a run cannot confine; the CLI gives it, `agents.doctor.confined_run`)."""
    # doctor's only: kept off run's start-up path
    from ..backend import backend_named

    try:
        backend = backend_for()
    except SetupError:
        backend = None
    checks = [Check("platform", backend is not None,
                    f"{platform.system()} {platform.release()} ({platform.machine()})",
                    "" if backend is not None else t("doctor.fix.platform"))]
    if backend is None:
        return Report(tuple(checks))
    checks += backend.probe(configured_bwrap)
    if platform.system() == "Linux":
        checks += backend_named("landlock").probe(configured_bwrap)
        checks += apparmor_checks(configured_bwrap)
    if confined is None:
        return Report(tuple(checks))
    run = confined()
    if run.ok and "landlock" in run.detail:
        # bwrap's failures are then what Landlock stands in for: said, not failed.
        checks = [dataclasses.replace(c, ok=True) if c.name == "namespaces" else c
                  for c in checks]
    return Report((*checks, run))


def apparmor_checks(configured_bwrap: str | None) -> list[Check]:
    """Ubuntu 24.04+: the restriction, and the profile that lifts it for this bwrap."""
    # doctor's only: kept off run's start-up path
    from . import apparmor
    from .probe import find_bwrap, read_sysctl

    found = find_bwrap(configured_bwrap)
    path = found.path if found is not None else None
    return apparmor_verdict(read_sysctl(apparmor.SYSCTL), path,
                            path is not None and apparmor.profile_loaded(path))


def apparmor_verdict(restricted: str | None, bwrap: str | None, loaded: bool
                     ) -> list[Check]:
    """The AppArmor line (pure): none where nothing restricts user namespaces."""
    # doctor's only: kept off run's start-up path
    from . import apparmor

    if restricted != "1":
        return []
    if bwrap is None or loaded:
        return [Check("apparmor", True, t("doctor.apparmor_profiled"))]
    return [Check("apparmor", True, t("doctor.apparmor_restricted"),
                  t("doctor.fix.apparmor_profile", path=apparmor.profile_path(),
                    profile=apparmor.profile_text(bwrap),
                    command=" ".join(apparmor.load_command())))]


def self_protection(configured_bwrap: str | None) -> Check:
    """Whether what `run` executes (its Python, its code, bwrap) lies in the project of
    the current directory, where commands may write: then it is mounted read-only."""

    project = str(find_project(Path.cwd()))
    inside = [p for p in trusted_paths(configured_bwrap) if is_within(p, project)]
    if not inside:
        return Check("self-protection", True, t("doctor.trusted_outside"))
    return Check("self-protection", True, t("doctor.trusted_inside", paths=", ".join(inside)),
                 t("doctor.fix.trusted_inside"))
