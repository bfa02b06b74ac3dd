"""The syscall policy as data: `SeccompProfile → rows`, one row per seccomp rule.

Every backend that enforces a syscall filter renders these rows and nothing else:
`linux/seccomp.py` hands them to libseccomp (BPF for bwrap), `oci/seccomp.py` writes
them as the OCI `linux.seccomp` object (runc, crun, Docker, Podman, Kubernetes), so
both enforce the same thing. The filter allows by default; a row fails its call.

Values are Linux's (errno numbers, socket families, ioctl requests), not the host's:
the rows describe a Linux filter whatever OS compiles them. Several rows on one
syscall are alternatives (any match fails the call); the conditions of one row must
all hold. Each row here has at most one condition, which every runtime reads alike.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from swifty_sandbox.policy.profile import SeccompProfile

EPERM, ENOSYS = 1, 38  # Linux errno values
OPS = ("NE", "LT", "LE", "EQ", "GE", "GT", "MASKED_EQ")

# clone() flags that create namespaces (CLONE_NEWTIME overlaps CSIGNAL, so it is left
# to unshare(), which is denied whole).
CLONE_NEW = {
    "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
# Linux's address families (include/linux/socket.h), with the aliases Python knows.
FAMILIES = {
    "AF_UNSPEC": 0, "AF_UNIX": 1, "AF_LOCAL": 1, "AF_FILE": 1, "AF_INET": 2, "AF_AX25": 3,
    "AF_IPX": 4, "AF_APPLETALK": 5, "AF_NETROM": 6, "AF_BRIDGE": 7, "AF_ATMPVC": 8,
    "AF_X25": 9, "AF_INET6": 10, "AF_ROSE": 11, "AF_DECnet": 12, "AF_NETBEUI": 13,
    "AF_SECURITY": 14, "AF_KEY": 15, "AF_NETLINK": 16, "AF_ROUTE": 16, "AF_PACKET": 17,
    "AF_ASH": 18, "AF_ECONET": 19, "AF_ATMSVC": 20, "AF_RDS": 21, "AF_SNA": 22,
    "AF_IRDA": 23, "AF_PPPOX": 24, "AF_WANPIPE": 25, "AF_LLC": 26, "AF_IB": 27,
    "AF_MPLS": 28, "AF_CAN": 29, "AF_TIPC": 30, "AF_BLUETOOTH": 31, "AF_IUCV": 32,
    "AF_RXRPC": 33, "AF_ISDN": 34, "AF_PHONET": 35, "AF_IEEE802154": 36, "AF_CAIF": 37,
    "AF_ALG": 38, "AF_NFC": 39, "AF_VSOCK": 40, "AF_KCM": 41, "AF_QIPCRTR": 42,
    "AF_SMC": 43, "AF_XDP": 44, "AF_MCTP": 45,
}
AF_MAX = 64  # above every family the kernel knows (46 in Linux 6.x)
SOCK_TYPES = {"SOCK_STREAM": 1, "SOCK_DGRAM": 2, "SOCK_RAW": 3, "SOCK_RDM": 4,
              "SOCK_SEQPACKET": 5}
SOCK_TYPE_MASK = 0xF  # the type without SOCK_NONBLOCK / SOCK_CLOEXEC
IOCTLS = {"TIOCSTI": 0x5412, "TIOCLINUX": 0x541C}


@dataclass(frozen=True, slots=True)
class Arg:
    """One condition on argument `index`: `arg OP value`, or for MASKED_EQ
    `(arg & mask) == value`. Compared as 64-bit values, as libseccomp does."""

    index: int
    op: str  # one of OPS
    value: int
    mask: int = 0


@dataclass(frozen=True, slots=True)
class SyscallRule:
    syscall: str
    action: str  # "errno": fail with `errno`; "kill": kill the process
    errno: int = EPERM
    args: tuple[Arg, ...] = ()


@functools.lru_cache(maxsize=8)
def syscall_rules(profile: SeccompProfile) -> tuple[SyscallRule, ...]:
    """The profile's filter as rows, in the order libseccomp is given them (the BPF
    depends on it, so it stays fixed). Unknown family, type or ioctl names raise
    ValueError; syscall names unknown to an architecture are each renderer's to skip."""
    rows = [SyscallRule(call, "errno", EPERM) for call in profile.deny]
    rows += [SyscallRule(call, "errno", ENOSYS) for call in profile.enosys]
    if profile.deny_namespaces:
        rows += [SyscallRule("clone", "errno", EPERM, (Arg(0, "MASKED_EQ", flag, flag),))
                 for flag in CLONE_NEW.values()]
    for name in profile.ioctls:
        rows.append(SyscallRule("ioctl", "errno", EPERM,
                                (Arg(1, "MASKED_EQ", _known(IOCTLS, name), 0xFFFFFFFF),)))
    allowed = {_known(FAMILIES, name) for name in profile.sockets}
    rows += [SyscallRule("socket", "errno", EPERM, (Arg(0, "EQ", family),))
             for family in range(AF_MAX) if family not in allowed]
    rows.append(SyscallRule("socket", "errno", EPERM, (Arg(0, "GE", AF_MAX),)))
    # socketpair() makes AF_UNIX sockets without socket(): only the listed types (a
    # datagram pair can sendto() host sockets by path), and no other family.
    rows.append(SyscallRule("socketpair", "errno", EPERM,
                            (Arg(0, "NE", FAMILIES["AF_UNIX"]),)))
    kinds = {_known(SOCK_TYPES, name) for name in profile.socketpairs}
    rows += [SyscallRule("socketpair", "errno", EPERM,
                         (Arg(1, "MASKED_EQ", kind, SOCK_TYPE_MASK),))
             for kind in range(SOCK_TYPE_MASK + 1) if kind not in kinds]
    return tuple(rows)


def _known(table: dict[str, int], name: str) -> int:
    if name not in table:
        raise ValueError(f"unknown name {name} (known: {', '.join(table)})")
    return table[name]
