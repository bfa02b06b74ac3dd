"""Toolchain caches: where pip, uv, npm, pnpm, yarn, cargo, go, maven and gradle write
inside the sandbox, as data.

Home is read-only inside, so these tools fail (npm) or lose their caches (pip). Each
project gets one cache directory outside it, `~/.cache/swifty-sandbox/toolchains/
<project>-<hash>`, bound read-write (the other projects' caches are hidden), and the
tools' own variables point into it. Per project, not shared: a cache is content a tool
trusts (cargo's unpacked registry sources are compiled without a new check, pip's wheel
cache and cached index pages, npm's index entries name their own hashes), so a shared
one would let one project's command plant code in the next project's build.

Never credentials: `CARGO_HOME` moves cargo's registry and git caches only; the user's
`~/.cargo/credentials*`, `~/.npmrc`, `~/.m2/settings.xml`, `~/.gradle/gradle.properties`
are neither copied nor made readable (they stay hidden, `profiles/default.yaml`).
"""

from __future__ import annotations

import os

from swifty_sandbox.policy import Policy
from swifty_sandbox.policy.paths import project_digest
from swifty_sandbox.policy.profile import TOOLCHAIN_CHOICES

TOOLCHAIN_HOME = ".cache/swifty-sandbox/toolchains"
CHOICES = TOOLCHAIN_CHOICES  # profile key `toolchainCaches`, setting `sandbox.toolchainCaches`

# tool → (variable, value) set inside; `{cache}` is the project's cache directory. A
# value starting with `+` is appended to the variable's value (MAVEN_OPTS holds flags).
TOOLCHAINS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("pip", (("PIP_CACHE_DIR", "{cache}/pip"),)),
    ("uv", (("UV_CACHE_DIR", "{cache}/uv"),)),
    ("npm", (("npm_config_cache", "{cache}/npm"),)),
    # pnpm 9+ reads `pnpm_config_*` (npm warns about `npm_config_` names it lacks).
    ("pnpm", (("pnpm_config_store_dir", "{cache}/pnpm/store"),
              ("pnpm_config_cache_dir", "{cache}/pnpm/cache"),
              ("pnpm_config_state_dir", "{cache}/pnpm/state"))),
    # Yarn 1's cache; Yarn 2+ keeps its global cache in the global folder.
    ("yarn", (("YARN_CACHE_FOLDER", "{cache}/yarn/cache"),
              ("YARN_GLOBAL_FOLDER", "{cache}/yarn/berry"))),
    # Registry index, unpacked sources and git checkouts. cargo finds itself on PATH
    # (~/.cargo/bin stays readable) and its toolchains through RUSTUP_HOME (below).
    ("cargo", (("CARGO_HOME", "{cache}/cargo"),)),
    ("go", (("GOPATH", "{cache}/go"), ("GOMODCACHE", "{cache}/go/pkg/mod"),
            ("GOCACHE", "{cache}/go/build"))),
    ("maven", (("MAVEN_OPTS", "+-Dmaven.repo.local={cache}/maven/repository"),)),
    ("gradle", (("GRADLE_USER_HOME", "{cache}/gradle"),)),
)


# Files a tool reads from its moved home as configuration that can run programs at the
# next build (cargo's `build.rustc-wrapper` and target runners, gradle's init scripts
# and JVM arguments). No one but a confined command writes in the cache directory, and
# there they would outlive `git clean` unseen: moved aside after every run.
CONFIG_IN_CACHE = ("cargo/config.toml", "cargo/config", "gradle/init.d",
                   "gradle/init.gradle", "gradle/init.gradle.kts",
                   "gradle/gradle.properties")


def cache_dir_for(project: str, home: str) -> str:
    """The host directory of a project's toolchain caches (keyed like its /tmp)."""
    return os.path.join(home, TOOLCHAIN_HOME,
                        f"{os.path.basename(project)[:32]}-{project_digest(project)}")


def cache_dir(policy: Policy) -> str | None:
    """The project's cache directory, its parent resolved (a user may keep ~/.cache
    elsewhere through a link), or None when the setting (else the profile) turns caches off."""
    chosen = policy.settings.toolchain_caches or policy.profile.toolchain_caches
    if chosen == "off":
        return None
    path = cache_dir_for(str(policy.project), str(policy.home))
    # Only the parent is resolved: it is hidden as a whole, so a link at the cache's
    # own name must not choose which directory that is (`ensure_temp_dir` refuses it).
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def environment(cache: str, home: str, environ: dict[str, str]) -> dict[str, str]:
    """The variables to set inside for a project whose cache is `cache`."""
    out: dict[str, str] = {}
    for _tool, variables in TOOLCHAINS:
        for name, template in variables:
            value = template.format(cache=cache)
            if value.startswith("+"):
                value = " ".join(v for v in (environ.get(name, ""), value[1:]) if v)
            out[name] = value
    # rustup's proxies would look for toolchains in ~/.rustup anyway; named so that a
    # moved CARGO_HOME never makes them look beside it.
    rustup = os.path.join(home, ".rustup")
    if "RUSTUP_HOME" not in environ and os.path.isdir(rustup):
        out["RUSTUP_HOME"] = rustup
    return out


__all__ = ["CHOICES", "TOOLCHAINS", "TOOLCHAIN_HOME", "cache_dir", "cache_dir_for",
           "environment"]
