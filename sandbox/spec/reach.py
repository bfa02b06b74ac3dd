"""What a confined command can reach of the host's directories: it runs with this
process's uid and groups (bwrap maps no other user; the Landlock launcher keeps them) and
no capability (both backends drop them all). So behind another user's directory it cannot
search (and, not its owner, cannot make searchable) there is nothing for it to read or
plant, and nothing to hide or protect: bwrap, whose set-up has no capability over another
user's files either, could not even mount it. Root's own answers count the capabilities
the command lacks, so as root these judge by the mode bits."""

from __future__ import annotations

import errno
import os
import stat

# A lookup's errors that say there is nothing: the path, or a folder above it, is gone.
MISSING = (errno.ENOENT, errno.ENOTDIR)
# Those that say it cannot be searched: out of reach only where `behind_out_of_reach`.
DENIED = (errno.EACCES, errno.EPERM)


def ancestors(path: str) -> list[str]:
    parts = path.rstrip("/").split("/")
    return ["/".join(parts[:i]) or "/" for i in range(1, len(parts))]


ROOT = os.geteuid() == 0


def out_of_reach(directory: str) -> bool:
    """A directory a confined command cannot search and cannot make searchable: another
    user's (only its owner or root changes its mode). A confined command runs with this
    process's uid and groups (bwrap maps no other user; the Landlock launcher keeps them)
    and no capability (both drop them all), so it cannot enter it; it may rename it
    where it may write the parent, and then what it makes in its place is a new
    directory, walked as any other."""
    try:
        info = os.lstat(directory)
    except OSError:
        return False
    uid = os.geteuid()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid == uid:
        return False
    if uid != 0:  # the kernel's answer, ACLs included: this process has no capability
        return not os.access(directory, os.X_OK, effective_ids=True)
    # Root's own answer counts CAP_DAC_OVERRIDE, which the command has not: the mode
    # bits that apply to uid 0 without it. An ACL could grant more: then in reach.
    gids = {os.getegid(), *os.getgroups()}
    bit = stat.S_IXGRP if info.st_gid in gids else stat.S_IXOTH
    if info.st_mode & bit:
        return False
    try:
        os.getxattr(directory, "system.posix_acl_access", follow_symlinks=False)
    except OSError:
        return True
    return False


def behind_out_of_reach(path: str) -> bool:
    """`path` lies behind a directory out of the command's reach."""
    return any(out_of_reach(a) for a in ancestors(path))


def beyond_reach(path: str) -> bool:
    """As root: `path` is, or lies behind, a directory out of the command's reach (for
    any other user the host's own lookups already fail there)."""
    return ROOT and any(out_of_reach(a) for a in (*ancestors(path), path))
