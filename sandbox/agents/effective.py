"""What a command would get now, for `policy show` and `audit`: the effective settings
(from the compiled spec, so they are what `run` mounts), and the hidden paths git tracks
with the rule that hides each."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from swifty_sandbox.policy import Effect, SandboxMode, SwiftyError, Tool
from swifty_sandbox.policy.limits import default_max_memory, default_max_processes

from ..spec import toolchains

if TYPE_CHECKING:
    from swifty_sandbox.policy.rules import Rule

    from .api import Sandbox


def _plain(value: object) -> object:
    """A settings value as JSON data (the network settings may be a dataclass)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def settings(box: Sandbox) -> dict[str, object]:
    """The effective settings: roots, temp, caches, read-only and hidden paths, network,
    limits. A sandbox that cannot be built says why under `error`."""
    policy = box.policy
    chosen, profile = policy.settings, policy.profile
    confined = box.effective_sandbox_mode is not SandboxMode.OFF
    memory = chosen.max_memory if chosen.max_memory is not None else (
        default_max_memory() if confined else 0)
    processes = chosen.max_processes if chosen.max_processes is not None else (
        default_max_processes() if confined else 0)
    out: dict[str, object] = {
        "profile": profile.name,
        "tmp": profile.tmp,
        "toolchain_caches": chosen.toolchain_caches or profile.toolchain_caches,
        # The network settings belong to the network allowlist; None: no network.
        "network": _plain(getattr(chosen, "network", None)),
        "limits": {"processes": processes or None, "memory_bytes": memory or None},
    }
    try:
        spec = box.spec()
    except SwiftyError as e:
        out["error"] = str(e)
        return out
    out.update({
        "writable": list(spec.writable),
        "created_roots": list(spec.create_roots),
        "refused_roots": [{"path": p, "reason": why} for p, why in spec.refused_roots],
        "temp_dir": spec.temp_dir,
        "temp_mounts": list(spec.temp_mounts or spec.private_dirs),
        "toolchain_dir": spec.toolchain_dir,
        "toolchain_env": sorted(toolchains.environment(spec.toolchain_dir, spec.home, {}))
        if spec.toolchain_dir else [],
        "read_only": [*spec.read_only, *spec.guard_dirs, *spec.guard_files],
        "hidden": [*spec.unreadable_dirs, *spec.unreadable_files],
        "hidden_tracked": list(spec.hidden_tracked),
    })
    return out


def hidden_tracked_rules(box: Sandbox) -> list[tuple[str, Rule]]:
    """Each hidden path git tracks, with the `ReadFile` deny rule that hides it (paths
    hidden by the profile or `denyRead` only are left to the run-time note)."""
    try:
        spec = box.spec()
    except SwiftyError:
        return []
    out = []
    for path in spec.hidden_tracked:
        for layer in box.policy.layers:
            rule = next((r for r in reversed(layer.rules)
                         if r.effect is Effect.DENY and r.path is not None
                         and r.applies_to(Tool.READ_FILE) and r.path.matches(path)), None)
            if rule is not None:
                out.append((path, rule))
                break
    return out


__all__ = ["hidden_tracked_rules", "settings"]
