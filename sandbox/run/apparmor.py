"""Ubuntu 24.04+'s AppArmor restriction on unprivileged user namespaces, and its fix:
a profile for the very bwrap swifty-sandbox runs, in the style of Ubuntu's own
`bwrap-userns-restrict` (bwrap may make its namespaces; what it starts runs in a child
profile without capabilities), loaded with `apparmor_parser -r`.

`profile_text` is pure; `install` (doctor --fix, as root) writes it atomically and
loads it.
"""

from __future__ import annotations

import os
import re

PROFILE_DIR = "/etc/apparmor.d"
PROFILE_NAME = "swifty-sandbox-bwrap"
SYSCTL = "kernel.apparmor_restrict_unprivileged_userns"
_LOADED = "/sys/kernel/security/apparmor/profiles"
_SAFE_PATH = re.compile(r"/[A-Za-z0-9._+/-]+")
# What bwrap and what it starts are both allowed. The profiles differ only in
# capabilities (all for bwrap, none for its child) and exec (bwrap's lands in the child).
_BOTH = "".join(f"  allow {what},\n" for what in (
    "network", "unix", "ptrace", "signal", "mqueue", "io_uring", "userns", "mount",
    "umount", "pivot_root", "dbus"))


def profile_path(directory: str = PROFILE_DIR) -> str:
    return os.path.join(directory, PROFILE_NAME)


def profile_text(bwrap: str) -> str:
    """The profile for `bwrap` (an absolute path without spaces, quotes or globs:
    anything else could widen what the profile attaches to)."""
    if not _SAFE_PATH.fullmatch(bwrap) or "/../" in bwrap + "/":
        raise ValueError(f"not a plain absolute path: {bwrap!r}")
    child = f"{PROFILE_NAME}-unpriv"
    return f"""# Written by `swifty-sandbox doctor --fix`: lets {bwrap} make the user
# namespaces of its sandbox under kernel.apparmor_restrict_unprivileged_userns=1;
# what it starts runs in {child}, without capabilities (as Ubuntu's
# bwrap-userns-restrict does for /usr/bin/bwrap).
abi <abi/4.0>,
include <tunables/global>

profile {PROFILE_NAME} {bwrap} flags=(attach_disconnected,mediate_deleted) {{
  allow capability,
  allow file rwlkm /{{**,}},
{_BOTH}  allow px /** -> {child},
  include if exists <local/{PROFILE_NAME}>
}}

profile {child} flags=(attach_disconnected,mediate_deleted) {{
  allow file rwlkmix /{{**,}},
{_BOTH}  audit deny capability,
  include if exists <local/{child}>
}}
"""


def load_command() -> list[str]:
    return ["apparmor_parser", "-r", profile_path()]


def profile_loaded(bwrap: str | None) -> bool:
    """Whether a profile for bwrap is loaded (ours, or Ubuntu's `bwrap`), or ours is
    installed (the listing of loaded profiles is root's to read on some systems)."""
    try:
        with open(_LOADED, encoding="utf-8") as f:
            names = {line.split(" (")[0] for line in f}
    except OSError:
        names = set()
    if names & {PROFILE_NAME, "bwrap", "unpriv_bwrap"}:
        return True
    try:
        with open(profile_path(), encoding="utf-8") as f:
            return bwrap is None or f" {bwrap} " in f.read()
    except OSError:
        return False


def install(bwrap: str, directory: str = PROFILE_DIR) -> str:
    """Write the profile (atomically: a temporary file in the same directory, then a
    rename) and return its path; OSError when it cannot."""
    text = profile_text(bwrap)
    target = profile_path(directory)
    temporary = f"{target}.swifty-{os.getpid()}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.rename(temporary, target)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise
    return target
