"""The path sandbox and path rules on real files: symlinks, `..`, prefixes, `~`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox import Effect, Layer, Request, Sandbox, Tool

Box = Callable[..., Sandbox]
Layers = Callable[..., Path]


def write(path: str) -> Request:
    return Request.file(Tool.WRITE_FILE, path)


def read(path: str) -> Request:
    return Request.file(Tool.READ_FILE, path)


def test_inside_project_is_mode_table(box_for: Box, project: Path) -> None:
    box = box_for(mode="acceptEdits")
    for path in ("src/a.py", str(project / "src" / "a.py"), "./x", "a/../b"):
        decision = box.check(write(path))
        assert (decision.effect, decision.layer) == (Effect.ALLOW, Layer.MODE), path


def test_symlink_inside_project_pointing_outside(box_for: Box, project: Path,
                                                 home: Path) -> None:
    (home / "outside").mkdir()
    (project / "link").symlink_to(home / "outside")
    decision = box_for(mode="acceptEdits").check(write("link/file.txt"))
    assert (decision.effect, decision.layer) == (Effect.ASK, Layer.PATH)
    assert str(home / "outside" / "file.txt") in decision.reason


def test_dangling_symlink_pointing_outside_is_outside(box_for: Box, project: Path,
                                                      home: Path) -> None:
    target = home / "not-yet" / "created.txt"
    (project / "innocent.txt").symlink_to(target)
    assert not target.exists()
    decision = box_for(mode="acceptEdits").check(write("innocent.txt"))
    assert (decision.effect, decision.layer) == (Effect.ASK, Layer.PATH)


def test_dot_dot_segments_leaving_the_project(box_for: Box, project: Path) -> None:
    box = box_for(mode="acceptEdits")
    for path in ("../other/x", "src/../../x", f"{project}/../x"):
        assert box.check(write(path)).layer is Layer.PATH, path


def test_sibling_sharing_the_name_prefix_is_outside(box_for: Box, project: Path) -> None:
    evil = project.parent / (project.name + "-evil")
    evil.mkdir()
    decision = box_for(mode="acceptEdits").check(write(str(evil / "x")))
    assert (decision.effect, decision.layer) == (Effect.ASK, Layer.PATH)


def test_tilde_expansion(box_for: Box, home: Path, layers: Layers) -> None:
    box = box_for(mode="acceptEdits")
    decision = box.check(write("~/notes.txt"))
    assert decision.layer is Layer.PATH
    assert str(home / "notes.txt") in decision.reason
    layers(user=[("ReadFile(~/vault/**)", "deny")])
    denied = box_for().check(read("~/vault/id_ed25519"))
    assert (denied.effect, denied.layer) == (Effect.DENY, Layer.RULE)


def test_temp_dir_is_an_allowed_root(box_for: Box) -> None:
    decision = box_for(mode="acceptEdits").check(write("/tmp/scratch.txt"))
    assert (decision.effect, decision.layer) == (Effect.ALLOW, Layer.MODE)


def test_configured_writable_root(box_for: Box, project: Path, home: Path) -> None:
    cache = home / ".cache" / "tool"
    cache.mkdir(parents=True)
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text("sandbox:\n  writable: [~/.cache/tool]\n")
    decision = box_for(mode="acceptEdits").check(write(str(cache / "x")))
    assert decision.layer is Layer.MODE


def test_explicit_allow_rule_lifts_the_path_sandbox(layers: Layers, box_for: Box) -> None:
    layers(user=[("WriteFile(/opt/data/**)", "allow")])
    decision = box_for().check(write("/opt/data/x.csv"))
    assert (decision.effect, decision.layer) == (Effect.ALLOW, Layer.RULE)


def test_reads_outside_roots_ask(box_for: Box) -> None:
    assert box_for().check(read("/etc/hostname")).layer is Layer.PATH


def test_deny_catches_symlink_to_secret_and_secretly_named_link(
        layers: Layers, box_for: Box, project: Path) -> None:
    layers(project_rules=[("ReadFile(*.env*)", "deny")])
    (project / ".env").write_text("TOKEN=x")
    (project / "config.txt").symlink_to(project / ".env")
    (project / "plain.txt").write_text("x")
    (project / "b.env.link").symlink_to(project / "plain.txt")
    box = box_for()
    assert box.check(read("config.txt")).effect is Effect.DENY
    assert box.check(read("b.env.link")).effect is Effect.DENY
    assert box.check(read("deep/er/.env.local")).effect is Effect.DENY
    assert box.check(read("plain.txt")).effect is Effect.ALLOW


def test_protected_path_through_symlink(box_for: Box, project: Path) -> None:
    (project / ".swifty").mkdir()
    (project / "cfg").symlink_to(project / ".swifty")
    decision = box_for(mode="bypassPermissions").check(write("cfg/permissions.yaml"))
    assert (decision.effect, decision.layer) == (Effect.DENY, Layer.PROTECTED)


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("*.env*", "a/b/.env.local", True),
    ("*.env*", "/etc/app.env", True),
    ("src/*.ts", "src/a.ts", True),
    ("src/*.ts", "src/x/a.ts", False),
    ("src/*.ts", "lib/src/a.ts", False),
    ("src/**/*.ts", "src/x/y/a.ts", True),
    ("/etc/**", "/etc/passwd", True),
    ("~/.aws", "~/.aws/credentials", True),
    ("secrets", "deep/secrets/key", True),
    ("docs/", "docs/x.md", True),
])
def test_path_pattern_anchoring(layers: Layers, box_for: Box, pattern: str, path: str,
                                matches: bool) -> None:
    layers(user=[(f"ReadFile({pattern})", "deny")])
    assert (box_for().check(read(path)).effect is Effect.DENY) is matches


def test_project_path_with_glob_characters(home: Path, layers: Layers) -> None:
    weird = home / "code" / "a[1]*"
    (weird / ".git").mkdir(parents=True)
    (weird / ".swifty").mkdir()
    (weird / ".swifty" / "permissions.yaml").write_text(
        "- rule: WriteFile(src/*.py)\n  effect: deny\n")
    box = Sandbox(weird, home=home)
    assert box.check(write("src/x.py")).effect is Effect.DENY
    assert os.path.isdir(weird)


def test_indexed_deny_read_agrees_with_each_pattern(box_for: Box, home: Path) -> None:
    """The lookup that indexes the (long) deny-read list finds a match exactly when
    one of its patterns matches."""
    policy = box_for().policy
    probes = [str(home / ".ssh"), str(home / ".ssh/id_rsa"), str(home / ".sshx"),
              str(home / ".cargo/credentials.toml"), str(home / ".cargo/bin/cargo"),
              str(home / ".docker/key.pem"), str(home / ".docker/sub/key.pem"),
              "/etc/shadow", "/etc/shadow-", "/etc/ssh/ssh_host_rsa_key",
              "/etc/ssh/ssh_host_rsa_key.pub", "/tmp/krb5cc_1000", "/tmp/x/krb5cc_1",
              "/", "/run/user/1000/containers/auth.json", str(home)]
    for path in probes:
        linear = any(p.matches(path) for p in policy.deny_read)
        assert (policy.unreadable.first(path) is not None) is linear, path


def test_simple_globs_match_as_pathspec_does() -> None:
    """The component-by-component matcher for plain `*`/`?` globs agrees with the
    pathspec regex it stands in for (matches and descendants alike)."""
    import random

    from swifty_sandbox.policy.rules import PathPattern

    rng = random.Random(7)
    alphabet = ["a", "b", ".", "-", "_", "x"]
    for _ in range(3000):
        depth = rng.randint(1, 4)
        glob = "/" + "/".join("".join(rng.choice([*alphabet, "*", "?"])
                                      for _ in range(rng.randint(1, 4))) for _ in range(depth))
        path = "/" + "/".join("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4)))
                              for _ in range(rng.randint(1, 5)))
        fast = PathPattern(glob, glob, validate=False)
        if fast.simple is None:
            continue
        slow = PathPattern(glob, glob, validate=True)  # compiled: the regex decides
        assert fast.matches(path) == slow.matches(path), (glob, path)


# -- where the kernel lands (policy.paths.resolve) -------------------------------------

def test_links_are_followed_before_dot_dot(project: Path, home: Path) -> None:
    from swifty_sandbox.policy.paths import resolve

    (project / "a").mkdir()
    (project / "a" / "b").symlink_to("../..")
    found = resolve(f"{project}/a/b/../x")
    assert found.path == str(home / "x")  # home/code/.. — not project/a/x
    assert f"{project}/a/x" in found.spellings  # the lexical reading, for deny rules
    assert os.path.realpath(f"{project}/a/b/../x") == found.path  # the kernel's answer


def test_resolution_variants(project: Path, home: Path) -> None:
    from swifty_sandbox.policy.paths import MAX_LINKS, resolve

    (project / "f").write_text("x")
    chain = project / "c0"
    for i in range(MAX_LINKS + 1):  # c0 -> c1 -> … -> c41: one link too many
        (project / f"c{i}").symlink_to(f"c{i + 1}")
    cases = {
        f"/{project}//./f/": (str(project / "f"), None),
        f"{project}/f/x": (str(project / "f" / "x"), "Not a directory"),
        f"{project}/missing/../f": (str(project / "f"), None),  # nothing there to follow
        "/..": ("/", None),
        str(chain): (str(project / f"c{MAX_LINKS}"), "Too many levels of symbolic links"),
        f"{project}/" + "x" * 300: (f"{project}/" + "x" * 300, "File name too long"),
        "/" + "d/" * 2100: ("/" + "/".join(["d"] * 2100), "File name too long"),
    }
    for path, (where, error) in cases.items():
        found = resolve(path)
        assert (found.path, found.error) == (where, error), path[:60]
    assert resolve("/proc/self/root" + str(project)).proc
    assert resolve("/dev/stdin").proc
    assert not resolve(str(project / "f")).proc
    assert resolve(f"{project}/\udcff").error is None  # an odd byte is a name like any
    assert resolve(f"{project}/\ud800").error == "name not encodable"


def test_allow_rules_judge_only_where_the_kernel_lands(box_for: Box, project: Path,
                                                       home: Path, layers: Layers) -> None:
    (home / "outside").mkdir()
    (project / "src").mkdir()
    (project / "src" / "out").symlink_to(home / "outside")
    (project / "docs").symlink_to(project / "src")
    layers(user=[("WriteFile(src/**)", "allow"), ("ReadFile(docs/**)", "deny")])
    box = box_for(mode="acceptEdits")
    through = box.check(write("src/out/x.txt"))  # the rule's name, home's file
    assert (through.effect, through.layer) == (Effect.ASK, Layer.PATH)
    assert through.target == str(home / "outside" / "x.txt")
    direct = box.check(write("src/y.txt"))
    assert (direct.effect, direct.layer) == (Effect.ALLOW, Layer.RULE)
    # A deny still matches every spelling: docs/y.txt is src/y.txt.
    assert box.check(read("docs/y.txt")).effect is Effect.DENY
    assert box.check(read("src/y.txt")).effect is Effect.ALLOW


def test_tilde_user_is_a_name_not_another_home(box_for: Box, project: Path) -> None:
    decision = box_for(mode="acceptEdits").check(write("~root/.bashrc"))
    assert decision.target == str(project / "~root" / ".bashrc")
    assert decision.effect is Effect.ALLOW


def test_hidden_files_other_hard_links(box_for: Box, project: Path, home: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("k")
    (project / "shared.txt").write_text("s")
    os.link(home / ".ssh" / "id_rsa", project / "alias")
    os.link(project / "shared.txt", project / "shared2.txt")  # linked, but hides nothing
    box = box_for()
    assert box.check(read("alias")).category == "deny-read"
    assert box.check(read("shared2.txt")).effect is Effect.ALLOW
    assert box_for(mode="acceptEdits").check(write("shared2.txt")).category == "hard-link"


def test_the_lexical_reading_of_dot_dot_counts_too(box_for: Box, project: Path,
                                                   layers: Layers) -> None:
    """An agent that normalises `..` before it opens (Node's path.resolve) opens the
    lexical reading: it must be allowed too, by the rules and the path sandbox."""
    (project / "d1" / "d2").mkdir(parents=True)
    (project / "in").symlink_to("d1/d2")
    (project / "src").mkdir()
    (project / "src" / "up").symlink_to("../d1/d2")
    layers(user=[("WriteFile(d1/**)", "allow")])
    box = box_for(mode="acceptEdits")
    outside = box.check(write("in/../../x.txt"))  # kernel: project/x.txt; lexical: ../x.txt
    assert (outside.effect, outside.layer) == (Effect.ASK, Layer.PATH)
    assert outside.target == str(project / "x.txt")
    # `src/up/../y`: the kernel's d1/y is allowed by the rule, the lexical src/y is not.
    assert box_for().check(write("src/up/../y")).layer is not Layer.RULE
    assert box_for().check(write("d1/y")).layer is Layer.RULE
    # Without a `..` the names agree: a link's target alone is judged.
    assert box_for().check(write("src/up/z")).layer is Layer.RULE


def test_agent_settings_whatever_their_case(box_for: Box) -> None:
    """On a case-insensitive file system `.Claude/Settings.json` is the agent's file."""
    box = box_for(mode="bypassPermissions")
    for path in ("sub/.Claude/Settings.json", "x/.MCP.json", ".Gemini/SETTINGS.json"):
        decision = box.check(write(path))
        assert (decision.effect, decision.layer) == (Effect.DENY, Layer.PROTECTED), path
    assert box.check(write("sub/.claude/notes.json")).effect is Effect.ALLOW
