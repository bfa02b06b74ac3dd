"""Which Linux backend confines a command: `bwrap` (namespaces) or `landlock`.

The choice, most explicit first: `--backend` (run, serve, compile, doctor), then
`SWIFTY_BACKEND`, then `sandbox.backend` of the config files (a committed project file
may only choose `bwrap`, the stronger one: `policy/settings.py`), else `auto`.

`auto` runs bwrap where it can make its namespaces and Landlock where it cannot, saying
so once on stderr; neither → `SetupError` (125) naming both causes and both fixes.
bwrap is not probed before each run (a probe is a process, ~10 ms): a run tries
bwrap, and only when bwrap fails before the command started is the machine asked
(`probe.try_namespaces`) whether namespaces are what is missing. Where that is known
without a process (AppArmor's restriction without a profile for this bwrap,
`user.max_user_namespaces=0`), Landlock runs at once.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from swifty_sandbox.messages import t

if TYPE_CHECKING:
    from ..spec.compiler import SandboxSpec
    from .executor import Completed

CHOICES = ("auto", "bwrap", "landlock")
ENV = "SWIFTY_BACKEND"
_NAMES = {"bwrap": "linux", "landlock": "landlock"}  # choice → `backend._MODULES` key


def chosen(flag: str | None, setting: str | None) -> str:
    """The backend asked for: the flag, else the environment, else the settings."""
    value = flag or os.environ.get(ENV) or setting or "auto"
    if value not in CHOICES:
        # what this choice needs only, loaded for it (run's start-up path)
        from ..spec.compiler import SetupError

        raise SetupError(t("setup.backend_unknown", value=value, choices=", ".join(CHOICES)))
    return value


def module_name(choice: str) -> str:
    """The `backend._MODULES` key of a concrete choice."""
    return _NAMES[choice]


def namespaces_refused_without_probe(bwrap: str | None) -> str | None:
    """Why bwrap cannot make namespaces, when a sysctl already says so (no process)."""
    # what this choice needs only, loaded for it (run's start-up path)
    from .probe import read_sysctl

    if read_sysctl("user.max_user_namespaces") == "0":
        return "user.max_user_namespaces=0"
    if read_sysctl("kernel.unprivileged_userns_clone") == "0" and os.geteuid() != 0:
        return "kernel.unprivileged_userns_clone=0"
    if read_sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1" and \
            os.geteuid() != 0:
        # what this choice needs only, loaded for it (run's start-up path)
        from .apparmor import profile_loaded

        if not profile_loaded(bwrap):
            return "kernel.apparmor_restrict_unprivileged_userns=1"
    return None


def bwrap_refused(bwrap: str | None) -> str | None:
    """Why bwrap cannot make its namespaces here (a probe), None when it can."""
    # what this choice needs only, loaded for it (run's start-up path)
    from .probe import find_bwrap, try_namespaces

    found = find_bwrap(bwrap)
    if found is None:
        return t("setup.no_bwrap_short")
    works, error = try_namespaces(found)
    return None if works else (error or "bwrap failed")


def landlock_refused() -> str | None:
    # what this choice needs only, loaded for it (run's start-up path)
    from ..landlock.backend import kernel_abi

    abi, why = kernel_abi()
    return None if abi else why


def neither(bwrap_error: str, landlock_error: str) -> Exception:
    # what this choice needs only, loaded for it (run's start-up path)
    from ..spec.compiler import SetupError
    from .doctor import userns_fix
    from .probe import read_sysctl

    fix = userns_fix(read_sysctl("kernel.apparmor_restrict_unprivileged_userns"),
                     read_sysctl("user.max_user_namespaces"),
                     read_sysctl("kernel.unprivileged_userns_clone"))
    return SetupError(t("setup.no_backend", bwrap=bwrap_error, bwrap_fix=fix,
                        landlock=landlock_error, landlock_fix=t("doctor.fix.landlock")))


def fallback_note(why: str) -> str:
    # what this choice needs only, loaded for it (run's start-up path)
    from ..landlock.backend import kernel_abi

    return t("run.landlock_fallback", why=why, abi=kernel_abi()[0]) + "\n"


def on_linux() -> bool:
    return sys.platform.startswith("linux")


def run_selected(spec: SandboxSpec, command: Sequence[str], **options: Any) -> Completed:
    """`launch.run_confined` with the backend `spec.backend` names (`auto`: bwrap, and
    Landlock where bwrap failed before the command and namespaces are why); off Linux,
    the platform's. The result's `backend` says which one confined it."""
    import dataclasses

    # what this choice needs only, loaded for it (run's start-up path)
    from ..backend import backend_named
    from ..spec.compiler import SetupError
    from .launch import run_confined

    if not on_linux():
        return run_confined(spec, command, **options)
    choice = spec.backend
    if choice != "auto":
        done = run_confined(spec, command, backend=backend_named(module_name(choice)),
                            **options)
        return dataclasses.replace(done, backend=choice)
    why = namespaces_refused_without_probe(spec.bwrap)
    if why is None:
        try:
            done = run_confined(spec, command, backend=backend_named("linux"), **options)
            return dataclasses.replace(done, backend="bwrap")
        except SetupError:
            why = bwrap_refused(spec.bwrap)
            if why is None:
                raise  # bwrap can make namespaces: its failure is not ours to route
    refused = landlock_refused()
    if refused is not None:
        raise neither(why, refused)
    done = run_confined(spec, command, backend=backend_named("landlock"), **options)
    return dataclasses.replace(done, backend="landlock",
                               stderr=fallback_note(why).encode() + done.stderr)
