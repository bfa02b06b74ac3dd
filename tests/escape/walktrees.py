"""The tree and the changes the walk-cache and tree-watcher escape tests share
(`test_walk_cache.py`, `test_tree_watch.py`): what each cache must not be fooled by."""

from __future__ import annotations

import shutil
from pathlib import Path


def layout(project: Path) -> None:
    """A `ReadFile(*.env*)` deny over three small trees of nested directories."""
    (project / ".swifty").mkdir(exist_ok=True)
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(*.env*)\n  effect: deny\n")
    for top in ("src", "lib", "node_modules/pkg"):
        for sub in ("a", "b/c", "b/d/e"):
            (project / top / sub).mkdir(parents=True, exist_ok=True)
            (project / top / sub / "index.js").touch()


def make_between_runs(project: Path, outside: Path, secret: str) -> None:
    """From outside, between runs, files `secret-1`…`-4`: in an old directory, in a
    subtree renamed within the tree, in a directory replaced by another of the same
    name, behind a new link to `outside` (whose `deep/` must exist)."""
    (project / "lib" / "b" / "d" / "e" / ".env").write_text(f"{secret}-1\n")
    (project / "src" / "b").rename(project / "moved")
    (project / "moved" / "d" / ".env.local").write_text(f"{secret}-2\n")
    shutil.rmtree(project / "node_modules" / "pkg" / "b")
    (project / "node_modules" / "pkg" / "b" / "c").mkdir(parents=True)
    (project / "node_modules" / "pkg" / "b" / "c" / "x.env").write_text(f"{secret}-3\n")
    (outside / "deep" / ".env.prod").write_text(f"{secret}-4\n")
    (project / "lib" / "a" / "link").symlink_to(outside)


def plant(secret: str) -> str:
    """A command's attack during a run: rename a directory, make `.env` files, plant a
    repository whose config runs code and a policy directory, and give a directory its
    mtime back (to the nanosecond: only its ctime tells)."""
    return (
        "set -e; old=$(stat -c %y node_modules/pkg/b/d/e); mv lib/b lib/z; "
        f"echo {secret}-1 > lib/z/d/e/.env; echo {secret}-2 > src/b/d/e/.env; "
        "git init -q lib/z/d/e; "
        "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> lib/z/d/e/.git/config; "
        "mkdir node_modules/pkg/b/d/e/.swifty; "
        "echo '- {rule: Bash(*), effect: allow}' > node_modules/pkg/b/d/e/.swifty/p.yaml; "
        'touch -m -d "$old" node_modules/pkg/b/d/e')
