"""`SeccompProfile → OCI linux.seccomp`: the rows of `syscalls.syscall_rules`, as JSON.

runc, crun, Docker and Podman hand these entries to libseccomp in order, one rule per
condition, just as `linux/seccomp.py` does: the same filter. Unconditional rows with one
action next to each other share an entry (`names`), which keeps the order.

Architectures: the 64-bit ABIs of both families we support (a profile made on one runs
on the other's nodes; the other's token never occurs on a kernel). i386, x32 and 32-bit
ARM are left out, so libseccomp's bad-architecture action kills a process that uses
them, as our own filter does (libseccomp also kills x32 numbers, 0x40000000 and up,
when x32 is not listed).
"""

from __future__ import annotations

from typing import Any

from swifty_sandbox.policy.profile import SeccompProfile

from ..spec.syscalls import Arg, SyscallRule, syscall_rules

ARCHITECTURES = ("SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64")


def _arg(arg: Arg) -> dict[str, Any]:
    if arg.op == "MASKED_EQ":  # runtimes pass value, valueTwo as libseccomp's mask, datum
        return {"index": arg.index, "value": arg.mask, "valueTwo": arg.value,
                "op": "SCMP_CMP_MASKED_EQ"}
    return {"index": arg.index, "value": arg.value, "op": f"SCMP_CMP_{arg.op}"}


def _action(row: SyscallRule) -> dict[str, Any]:
    if row.action == "kill":
        return {"action": "SCMP_ACT_KILL_PROCESS"}
    return {"action": "SCMP_ACT_ERRNO", "errnoRet": row.errno}


def oci_seccomp(profile: SeccompProfile) -> dict[str, Any]:
    """The `linux.seccomp` object of the OCI runtime spec (also Docker's and Podman's
    `--security-opt seccomp=FILE`, and Kubernetes' Localhost profile file)."""
    entries: list[dict[str, Any]] = []
    for row in syscall_rules(profile):
        action = _action(row)
        last = entries[-1] if entries else {}
        if not row.args and "args" not in last and \
                {k: v for k, v in last.items() if k != "names"} == action:
            last["names"].append(row.syscall)
            continue
        entry: dict[str, Any] = {"names": [row.syscall], **action}
        if row.args:
            entry["args"] = [_arg(a) for a in row.args]
        entries.append(entry)
    return {"defaultAction": "SCMP_ACT_ALLOW", "architectures": list(ARCHITECTURES),
            "syscalls": entries}

