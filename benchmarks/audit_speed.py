"""How long `audit` takes on many rule files.

    python -m benchmarks.audit_speed [--files 1000] [--rules 100]

Writes N rule files of M rules each (drawn from a realistic vocabulary: Bash prefixes,
path globs, some risky grants, some shadowed rules), then times `audit()` over all of
them in one process — what `swifty-sandbox audit` does in CI. Target: 1,000 x 100 in 3 s or less.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import yaml

from swifty_sandbox.policy.audit import audit

PROGRAMS = ["git", "npm", "make", "cargo", "pytest", "go", "docker", "kubectl", "ls", "cat",
            "python3", "node", "yarn", "pnpm", "rg", "jq", "terraform", "gradle", "mvn", "curl"]
SUBS = ["status", "test", "build", "run", "log", "diff", "push", "install", "lint", "fmt"]
GLOBS = ["*.env*", "src/**/*.ts", "secrets/**", "~/.config/**", "docs/*.md", "*.pem",
         "build/**", "/etc/**", "migrations/*.sql", "*.lock"]


def rules(rng: random.Random, count: int) -> list[dict[str, str]]:
    out = []
    for _ in range(count):
        effect = rng.choice(["allow", "allow", "ask", "deny"])
        kind = rng.random()
        if kind < 0.6:
            tail = rng.choice(["*", f"{rng.choice(SUBS)} *", f"{rng.choice(SUBS)}", "--help"])
            rule = f"Bash({rng.choice(PROGRAMS)} {tail})"
        else:
            rule = f"{rng.choice(['ReadFile', 'WriteFile', 'EditFile'])}({rng.choice(GLOBS)})"
        out.append({"rule": rule, "effect": effect})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rules", type=int, default=100)
    args = parser.parse_args()
    rng = random.Random(42)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = []
        for i in range(args.files):
            path = root / f"team{i}" / ".swifty" / "permissions.yaml"
            path.parent.mkdir(parents=True)
            path.write_text(yaml.safe_dump(rules(rng, args.rules), sort_keys=False))
            paths.append(path)
        start = time.perf_counter()
        findings = audit(paths, root, Path.home())
        elapsed = time.perf_counter() - start
    print(f"audit of {args.files} files x {args.rules} rules: {elapsed:.2f} s, "
          f"{len(findings)} findings ({elapsed / 3:.2f}x the 3 s target)")


if __name__ == "__main__":
    main()
