"""The Landlock backend against bwrap, measured in the same run.

    python -m benchmarks.landlock [--runs N]

1. `swifty-sandbox run -- true` (the warm server off and on), `--backend landlock`
   and `--backend bwrap` interleaved, median wall time and the ratio.
2. The ruleset on a realistic home and project (a home of ~150 dotfiles and config
   directories with every default-hidden credential present, a project with a
   `.git`, agent settings, `.env` files): how many rules, how long the compile takes,
   and how long the launcher takes to open and add them (the kernel's part).
"""

from __future__ import annotations

import argparse
import marshal
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox.landlock.backend import kernel_abi
from swifty_sandbox.sandbox.landlock.ruleset import compile_ruleset

from .timing import median_ms

SWIFTY = str(Path(sys.executable).with_name("swifty-sandbox"))
HIDDEN = [".ssh/id_ed25519", ".aws/credentials", ".gnupg/pubring.kbx", ".kube/config",
          ".config/gcloud/credentials.db", ".netrc", ".git-credentials", ".npmrc",
          ".pypirc", ".docker/config.json", ".bash_history", ".python_history",
          ".cargo/credentials.toml", ".m2/settings.xml", ".claude/.credentials.json",
          ".codex/auth.json", ".config/gh/hosts.yml", ".local/share/keyrings/login.keyring"]


def realistic_home(home: Path) -> Path:
    for rel in HIDDEN:
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text("secret\n")
    for i in range(60):
        (home / f".dotfile{i}").write_text("x\n")
    for i in range(40):
        (home / ".config" / f"app{i}").mkdir(parents=True, exist_ok=True)
        (home / ".config" / f"app{i}" / "settings.json").write_text("{}\n")
    for name in ("Documents", "Downloads", "code", ".cache", ".local/bin", ".npm", ".rustup",
                 ".cargo/registry", ".m2/repository", ".docker/cli-plugins", ".claude/projects"):
        (home / name).mkdir(parents=True, exist_ok=True)
    for i in range(20):
        (home / ".local" / "share" / f"tool{i}").mkdir(parents=True, exist_ok=True)
    project = home / "code" / "app"
    for rel in ("src", "tests", "docs", ".git/hooks", ".git/objects", ".claude", "node_modules"):
        (project / rel).mkdir(parents=True, exist_ok=True)
    (project / ".git" / "config").write_text("[core]\n")
    (project / ".claude" / "settings.json").write_text("{}\n")
    (project / ".env").write_text("TOKEN=1\n")
    (project / "src" / ".env.local").write_text("TOKEN=2\n")
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(**/.env*)\n  effect: deny\n")
    return project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    abi = kernel_abi()[0]
    if not abi:
        sys.exit("no Landlock on this kernel")
    with tempfile.TemporaryDirectory(dir=os.path.expanduser("~/.cache")) as tmp:
        home = Path(tmp) / "home"
        project = realistic_home(home)
        env = {**os.environ, "HOME": str(home)}
        spec = Sandbox(project, home=home).spec()
        start = time.perf_counter()
        for _ in range(20):
            ruleset = compile_ruleset(spec, abi)
        compile_ms = (time.perf_counter() - start) * 1000 / 20
        adding = ("import marshal, sys, time\n"
                  "sys.path.insert(0, sys.argv[1])\n"
                  "import launcher\n"
                  "config = marshal.loads(open(sys.argv[2], 'rb').read())\n"
                  "t = time.perf_counter(); fd = launcher._ruleset(config)\n"
                  "print((time.perf_counter() - t) * 1000)\n")
        rules = Path(tmp) / "rules.marshal"
        rules.write_bytes(marshal.dumps({"abi": ruleset.abi, "handled_fs": ruleset.handled_fs,
                                     "handled_net": ruleset.handled_net,
                                     "scoped": ruleset.scoped,
                                     "rules": [[r.path, r.access] for r in ruleset.rules]}))
        folder = str(Path(__file__).resolve().parent.parent / "sandbox" / "landlock")
        kernel_ms = statistics.median(
            float(subprocess.run([sys.executable, "-I", "-S", "-c", adding, folder,
                                  str(rules)], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(10))
        print(f"ruleset: {len(ruleset.rules)} rules ({len(ruleset.hidden)} hidden paths "
              f"built around), compile {compile_ms:.1f} ms, open+add {kernel_ms:.1f} ms")

        results: dict[str, list[float]] = {}
        for daemon in ("off", "on"):
            for backend in ("bwrap", "landlock"):
                results[f"{backend} (warm server {daemon})"] = []
        for _ in range(max(1, args.runs // 10)):  # interleaved: the machine is noisy
            for daemon in ("off", "on"):
                for backend in ("bwrap", "landlock"):
                    results[f"{backend} (warm server {daemon})"].append(median_ms(
                        [SWIFTY, "run", "--backend", backend, "--", "true"], 10, cwd=project,
                        env={**env, "SWIFTY_DAEMON": daemon}, check=True))
        for name, values in results.items():
            print(f"run -- true, {name}: {statistics.median(values):.1f} ms")
        for daemon in ("off", "on"):
            ratio = statistics.median(results[f"landlock (warm server {daemon})"]) / \
                statistics.median(results[f"bwrap (warm server {daemon})"])
            print(f"landlock / bwrap (warm server {daemon}): {ratio:.2f}")


if __name__ == "__main__":
    main()
