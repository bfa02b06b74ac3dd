"""Landlock's numbers (include/uapi/linux/landlock.h) and what each ABI version adds.

Values only, no system call: the compiler (`ruleset.py`) and `compile --target
landlock` use them on any OS; the launcher (`launcher.py`, which imports nothing of
this package) repeats the few it needs, and a test checks the two agree.
"""

from __future__ import annotations

# Filesystem access rights (LANDLOCK_ACCESS_FS_*), by the ABI that introduced them.
FS: dict[str, int] = {
    "execute": 1 << 0, "write_file": 1 << 1, "read_file": 1 << 2, "read_dir": 1 << 3,
    "remove_dir": 1 << 4, "remove_file": 1 << 5, "make_char": 1 << 6,
    "make_dir": 1 << 7, "make_reg": 1 << 8, "make_sock": 1 << 9, "make_fifo": 1 << 10,
    "make_block": 1 << 11, "make_sym": 1 << 12,
    "refer": 1 << 13,  # ABI 2: link or rename into another directory
    "truncate": 1 << 14,  # ABI 3
    "ioctl_dev": 1 << 15,  # ABI 5: ioctl on character and block devices
}
NET: dict[str, int] = {"bind_tcp": 1 << 0, "connect_tcp": 1 << 1}  # ABI 4
SCOPE: dict[str, int] = {"abstract_unix_socket": 1 << 0, "signal": 1 << 1}  # ABI 6

_FS_ABI1 = (1 << 13) - 1
# ABI version → (every fs right, net rights, scopes) that version can handle.
HANDLED: dict[int, tuple[int, int, int]] = {
    1: (_FS_ABI1, 0, 0),
    2: (_FS_ABI1 | FS["refer"], 0, 0),
    3: (_FS_ABI1 | FS["refer"] | FS["truncate"], 0, 0),
    4: (_FS_ABI1 | FS["refer"] | FS["truncate"], 3, 0),
    5: ((1 << 16) - 1, 3, 0),
    6: ((1 << 16) - 1, 3, 3),
    7: ((1 << 16) - 1, 3, 3),  # 7 adds audit-log flags only
}
HIGHEST = max(HANDLED)

# The rights a rule on a file (not a directory) may hold; the others are EINVAL there.
FILE_ONLY = FS["execute"] | FS["write_file"] | FS["read_file"] | FS["truncate"] | \
    FS["ioctl_dev"]

READ = FS["execute"] | FS["read_file"] | FS["read_dir"]
# What writing in a directory tree means. Never make_char / make_block: a device node
# is a way around every file right (and needs a capability the command has not).
WRITE = (FS["write_file"] | FS["truncate"] | FS["make_reg"] | FS["make_dir"]
         | FS["make_sym"] | FS["make_fifo"] | FS["make_sock"] | FS["remove_file"]
         | FS["remove_dir"] | FS["refer"])
# A hidden path withholds what reveals its content (read, execute, ioctl). Listing is
# not withheld: its ancestors' read_dir reaches below them, as Landlock's rights do.
HIDDEN = FS["read_file"] | FS["execute"] | FS["ioctl_dev"]


def names(mask: int, table: dict[str, int] = FS) -> list[str]:
    return [name for name, bit in table.items() if mask & bit]


def handled(abi: int) -> tuple[int, int, int]:
    """What ABI `abi` handles (a newer kernel than this table: its highest known)."""
    return HANDLED[min(abi, HIGHEST)]
