"""The seccomp rows only the Landlock backend adds: without a network namespace the
command shares the host's network, so what Landlock's TCP rights do not cover is
refused here, before any socket exists.

Landlock (ABI 4+) refuses TCP `bind` and `connect`. Around it:
- sockets of AF_INET/AF_INET6 other than TCP (UDP, raw, SCTP and MPTCP streams,
  ICMP): refused at `socket()`; so is every netlink protocol but NETLINK_ROUTE (sock
  diag would list the host's connections);
- `listen()`: an unbound TCP socket binds itself to a free port when it listens, and
  Landlock checks only `bind`; no AF_UNIX socket can listen here either (seccomp
  refuses AF_UNIX `socket()`, socketpairs do not listen), so it is refused whole;
- TCP Fast Open (`MSG_FASTOPEN` on sendto/sendmsg/sendmmsg) connects without the
  `connect` hook Landlock checks;
- below ABI 4 (no TCP rights) AF_INET and AF_INET6 sockets are refused whole.
Rendered by libseccomp like the profile's own rows (`linux/seccomp.py`).
"""

from __future__ import annotations

from ..spec.syscalls import EPERM, FAMILIES, SOCK_TYPE_MASK, SOCK_TYPES, Arg, SyscallRule

MSG_FASTOPEN = 0x20000000
IPPROTO_TCP = 6
NETLINK_ROUTE = 0


def network_rules(abi: int) -> tuple[SyscallRule, ...]:
    inet = (FAMILIES["AF_INET"], FAMILIES["AF_INET6"])
    if abi < 4:
        return tuple(SyscallRule("socket", "errno", EPERM, (Arg(0, "EQ", f),))
                     for f in inet)
    rows = []
    for family in inet:
        rows += [SyscallRule("socket", "errno", EPERM,
                             (Arg(0, "EQ", family), Arg(1, "MASKED_EQ", kind, SOCK_TYPE_MASK)))
                 for kind in range(SOCK_TYPE_MASK + 1) if kind != SOCK_TYPES["SOCK_STREAM"]]
        # protocol 0 (the default, TCP) or IPPROTO_TCP only
        rows.append(SyscallRule("socket", "errno", EPERM,
                                (Arg(0, "EQ", family), Arg(2, "GT", IPPROTO_TCP))))
        rows += [SyscallRule("socket", "errno", EPERM, (Arg(0, "EQ", family), Arg(2, "EQ", p)))
                 for p in range(1, IPPROTO_TCP)]
    rows.append(SyscallRule("socket", "errno", EPERM,
                            (Arg(0, "EQ", FAMILIES["AF_NETLINK"]), Arg(2, "NE", NETLINK_ROUTE))))
    rows.append(SyscallRule("listen", "errno", EPERM))
    for call, index in (("sendto", 3), ("sendmsg", 2), ("sendmmsg", 3)):
        rows.append(SyscallRule(call, "errno", EPERM,
                                (Arg(index, "MASKED_EQ", MSG_FASTOPEN, MSG_FASTOPEN),)))
    return tuple(rows)
