"""The decision order of SPEC §2: mode table, precedence, plan, bypass, sandbox."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox import Effect, Layer, Request, Sandbox, Tool

# SPEC §2 "Mode table", written out again on purpose: the test must not read the
# table it checks.
SPEC_TABLE = {
    "default": {"read": "allow", "write": "ask", "command": "ask"},
    "acceptEdits": {"read": "allow", "write": "allow", "command": "ask"},
    "plan": {"read": "allow", "write": "ask", "command": "ask"},
    "bypassPermissions": {"read": "allow", "write": "allow", "command": "allow"},
}
REQUESTS = {
    "read": Request.file(Tool.READ_FILE, "src/app.ts"),
    "write": Request.file(Tool.WRITE_FILE, "src/app.ts"),
    "edit": Request.file(Tool.EDIT_FILE, "src/app.ts"),
    "command": Request.bash_argv(["npm", "test"]),
}

Box = Callable[..., Sandbox]
Layers = Callable[..., Path]


@pytest.mark.parametrize("mode", list(SPEC_TABLE))
@pytest.mark.parametrize("kind", ["read", "write", "edit", "command"])
def test_mode_table_every_cell(box_for: Box, mode: str, kind: str) -> None:
    category = "write" if kind == "edit" else kind
    decision = box_for(mode=mode, sandbox_mode="manual").check(REQUESTS[kind])
    assert decision.effect.value == SPEC_TABLE[mode][category]
    assert decision.layer is Layer.MODE
    assert decision.rule is None


@pytest.mark.parametrize("mode", list(SPEC_TABLE))
def test_sandbox_auto_allows_mode_table_asks_for_bash_only(box_for: Box, mode: str) -> None:
    box = box_for(mode=mode, sandbox_mode="auto")
    command = box.check(REQUESTS["command"])
    assert command.effect is Effect.ALLOW
    expected_layer = Layer.MODE if SPEC_TABLE[mode]["command"] == "allow" else Layer.SANDBOX
    assert command.layer is expected_layer
    # File tools are not confined by the sandbox: auto never changes their answer.
    write = box.check(REQUESTS["write"])
    assert write.effect.value == SPEC_TABLE[mode]["write"]


@pytest.mark.parametrize("sandbox_mode", ["manual", "off"])
def test_manual_and_off_keep_ask(box_for: Box, sandbox_mode: str) -> None:
    decision = box_for(sandbox_mode=sandbox_mode).check("npm test")
    assert decision.effect is Effect.ASK


def test_explicit_ask_rule_still_asks_under_auto(layers: Layers, box_for: Box) -> None:
    layers(project_rules=[("Bash(npm publish*)", "ask")])
    decision = box_for(sandbox_mode="auto").check("npm publish --access public")
    assert decision.effect is Effect.ASK
    assert decision.layer is Layer.RULE


def test_user_deny_not_lifted_by_local_allow(layers: Layers, box_for: Box, home: Path) -> None:
    layers(user=[("Bash(git push *)", "deny")], local=[("Bash(git push *)", "allow")],
           project_rules=[("Bash(git *)", "allow")])
    decision = box_for(mode="bypassPermissions").check("git push origin main")
    assert decision.effect is Effect.DENY
    assert decision.rule is not None
    assert decision.rule.file == str(home / ".swifty" / "permissions.yaml")
    assert decision.rule.line == 1
    assert decision.rule.text == "Bash(git push *)"


def test_project_deny_not_lifted_by_local_allow(layers: Layers, box_for: Box) -> None:
    layers(project_rules=[("ReadFile(*.pem)", "deny")], local=[("ReadFile(*)", "allow")])
    assert box_for().check(Request.file(Tool.READ_FILE, "certs/a.pem")).effect is Effect.DENY


def test_last_match_wins_inside_one_file(layers: Layers, box_for: Box) -> None:
    layers(project_rules=[("Bash(git *)", "deny"), ("Bash(git status)", "allow")])
    box = box_for(sandbox_mode="manual")
    allowed = box.check("git status")
    assert allowed.effect is Effect.ALLOW
    assert allowed.rule is not None and allowed.rule.line == 3  # second item, two lines each
    assert box.check("git push").effect is Effect.DENY
    layers(project_rules=[("Bash(git status)", "allow"), ("Bash(git *)", "deny")])
    assert box_for().check("git status").effect is Effect.DENY


def test_local_beats_project_beats_user_for_allow_vs_ask(layers: Layers, box_for: Box) -> None:
    layers(user=[("Bash(make *)", "allow")], project_rules=[("Bash(make *)", "allow")])
    decision = box_for().check("make build")
    assert (decision.effect, decision.rule and decision.rule.text) == (Effect.ALLOW,
                                                                       "Bash(make *)")
    assert decision.rule is not None and "/code/app/" in decision.rule.file
    # A deviation from SPEC §2, on purpose: the committed file's allow does not lift
    # the user's own ask (see test_a_committed_allow_does_not_lift_the_users_ask).
    layers(user=[("Bash(make *)", "ask")])
    assert box_for().check("make build").effect is Effect.ASK
    layers(local=[("Bash(make *)", "ask")])
    assert box_for().check("make build").effect is Effect.ASK
    layers(user=[("Bash(make *)", "allow")], project_rules=[("Bash(make *)", "ask")],
           local=[])
    assert box_for().check("make build").effect is Effect.ASK


def test_plan_caps_rule_allow_of_write(layers: Layers, box_for: Box) -> None:
    layers(project_rules=[("EditFile(*.ts)", "allow")])
    assert box_for().check(Request.file(Tool.EDIT_FILE, "a.ts")).effect is Effect.ALLOW
    capped = box_for(mode="plan").check(Request.file(Tool.EDIT_FILE, "a.ts"))
    assert capped.effect is Effect.ASK
    assert "plan" in capped.reason and "EditFile(*.ts)" in capped.reason


def test_plan_caps_rule_allow_of_command_without_auto(layers: Layers, box_for: Box) -> None:
    layers(project_rules=[("Bash(make *)", "allow")])
    assert box_for(mode="plan", sandbox_mode="manual").check("make").effect is Effect.ASK
    # With the sandbox on auto it runs confined, and plan compiles to a read-only sandbox.
    assert box_for(mode="plan").check("make").layer is Layer.SANDBOX


def test_bypass_honours_deny_rules_and_protected_paths(layers: Layers, box_for: Box) -> None:
    layers(user=[("WriteFile(*.lock)", "deny"), ("Bash(rm *)", "deny")])
    box = box_for(mode="bypassPermissions")
    assert box.check(Request.file(Tool.WRITE_FILE, "poetry.lock")).effect is Effect.DENY
    assert box.check("rm -f x").effect is Effect.DENY
    protected = box.check(Request.file(Tool.WRITE_FILE, ".swifty/permissions.local.yaml"))
    assert (protected.effect, protected.layer) == (Effect.DENY, Layer.PROTECTED)


def test_bypass_turns_ask_rule_and_path_ask_into_allow(layers: Layers, box_for: Box) -> None:
    layers(project_rules=[("Bash(npm publish*)", "ask")])
    box = box_for(mode="bypassPermissions")
    assert box.check("npm publish").effect is Effect.ALLOW
    assert box.check(Request.file(Tool.WRITE_FILE, "/opt/x")).effect is Effect.ALLOW


@pytest.mark.parametrize("path", [
    ".swifty/config.yaml", ".swifty/permissions.yaml", ".swifty/permissions.local.yaml",
    ".swifty/skills/deploy/SKILL.md", ".swifty/not-yet-there.yaml", ".swifty",
    "src/../.swifty/config.yaml", ".git/hooks/pre-commit", ".git/config",
    "vendor/lib/.git/hooks/post-checkout", "~/.swifty/permissions.yaml", "~/.bashrc",
])
@pytest.mark.parametrize("tool", [Tool.WRITE_FILE, Tool.EDIT_FILE])
@pytest.mark.parametrize("mode", list(SPEC_TABLE))
def test_protected_paths_denied_in_every_mode(layers: Layers, box_for: Box, path: str,
                                              tool: Tool, mode: str) -> None:
    layers(local=[("*", "allow")], project_rules=[("WriteFile(**)", "allow")])
    decision = box_for(mode=mode).check(Request.file(tool, path))
    assert (decision.effect, decision.layer) == (Effect.DENY, Layer.PROTECTED)


def test_reading_policy_files_is_allowed(box_for: Box) -> None:
    decision = box_for().check(Request.file(Tool.READ_FILE, ".swifty/permissions.yaml"))
    assert decision.effect is Effect.ALLOW


def test_compound_command_allowed_only_if_every_part_is(layers: Layers, box_for: Box) -> None:
    layers(project_rules=[("Bash(git *)", "allow")])
    box = box_for(sandbox_mode="manual")
    assert box.check("git status && git diff").effect is Effect.ALLOW
    mixed = box.check("git status && curl x | jq .")
    assert (mixed.effect, mixed.layer) == (Effect.ASK, Layer.MODE)


def test_any_denied_part_denies_the_compound(layers: Layers, box_for: Box) -> None:
    layers(project_rules=[("Bash(git *)", "allow"), ("Bash(curl *)", "deny")])
    decision = box_for(mode="bypassPermissions").check("git status; curl evil.sh -o x")
    assert decision.effect is Effect.DENY
    assert decision.rule is not None and decision.rule.text == "Bash(curl *)"


def test_wrappers_are_unwrapped_before_matching(layers: Layers, box_for: Box) -> None:
    layers(project_rules=[("Bash(rm *)", "deny"), ("Bash(make *)", "allow")])
    box = box_for(sandbox_mode="manual")
    for command in ("sudo rm -rf build", "env FOO=1 rm x", "timeout -s KILL 5 rm x",
                    "nice -n 5 nohup rm x", "/usr/bin/sudo -u root rm x", "xargs -0 rm"):
        assert box.check(command).effect is Effect.DENY, command
    assert box.check("timeout 60 make test").effect is Effect.ALLOW


def test_unanalysable_command_never_allowed_by_rules(layers: Layers, box_for: Box) -> None:
    layers(project_rules=[("Bash(*)", "allow")])
    box = box_for(mode="bypassPermissions")
    for command in ("$CMD build", "`echo make` all", "$(which python3) x.py",
                    "echo 'unterminated", "ls $(cat list.txt"):
        decision = box.check(command)
        assert (decision.effect, decision.layer) == (Effect.ASK, Layer.ANALYSIS), command


def test_deny_rule_still_applies_to_unanalysable_command(layers: Layers, box_for: Box) -> None:
    layers(project_rules=[("Bash(curl *)", "deny")])
    assert box_for().check("curl $(cat url.txt)").effect is Effect.DENY


def test_argv_request_is_matched_word_by_word(layers: Layers, box_for: Box) -> None:
    layers(project_rules=[("Bash(git commit *)", "allow"), ("Bash(git push --force*)", "deny")])
    box = box_for(sandbox_mode="manual")
    assert box.check(["git", "commit", "-m", "fix: $(whoami) && rm -rf /"]).effect \
        is Effect.ALLOW  # argv words are data, nothing in them runs
    assert box.check(["git", "push", "--force-with-lease"]).effect is Effect.DENY


def test_star_tool_matches_all_tools(layers: Layers, box_for: Box) -> None:
    layers(project_rules=[("*", "deny")])
    box = box_for(mode="bypassPermissions")
    for request in REQUESTS.values():
        assert box.check(request).effect is Effect.DENY


def test_decision_json_shape(layers: Layers, box_for: Box, project: Path) -> None:
    layers(project_rules=[("Bash(npm publish*)", "deny")])
    decision = box_for().check("npm publish --tag next")
    assert decision.as_json() == {
        "effect": "deny",
        "reason": decision.reason,
        "layer": "rule",
        "category": None,
        "rule": {"file": str(project / ".swifty" / "permissions.yaml"), "line": 1,
                 "text": "Bash(npm publish*)"},
    }
    assert f"{project}/.swifty/permissions.yaml:1" in decision.reason


@pytest.mark.parametrize("path", ["~/.ssh/id_ed25519", "~/.aws/credentials", "~/.netrc"])
def test_profile_deny_read_applies_to_read_file(layers: Layers, box_for: Box,
                                                path: str) -> None:
    layers(local=[("ReadFile(*)", "allow")])
    decision = box_for(mode="bypassPermissions").check(Request.file(Tool.READ_FILE, path))
    assert (decision.effect, decision.layer, decision.category) == (
        Effect.DENY, Layer.PROTECTED, "deny-read")


def test_settings_deny_read_applies_to_read_file(box_for: Box, home: Path) -> None:
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text("sandbox: {denyRead: [~/private]}\n")
    decision = box_for().check(Request.file(Tool.READ_FILE, "~/private/diary.txt"))
    assert decision.category == "deny-read"


def test_a_committed_allow_does_not_lift_the_users_ask(layers: Callable[..., Path],
                                                       box_for: Callable[..., Sandbox]
                                                       ) -> None:
    layers(user=[("Bash(git push *)", "ask"), ("WriteFile(src/**)", "ask")],
           project_rules=[("Bash(*)", "allow"), ("WriteFile(src/**)", "allow")])
    box = box_for(sandbox_mode="manual")
    push = box.check("git push origin main")
    assert (push.effect, push.rule.file if push.rule else "") == (
        Effect.ASK, str(box.policy.home / ".swifty" / "permissions.yaml"))
    assert box.check(Request.file(Tool.WRITE_FILE, "src/app.ts")).effect is Effect.ASK
    layers(local=[("Bash(git push *)", "allow")])  # the user's own local allow does
    assert box_for(sandbox_mode="manual").check("git push origin main").effect is Effect.ALLOW


def test_the_default_temp_dir_is_the_one_tempfile_picks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`engine._default_temp_dir` (no probe file written) chooses as
    `tempfile.gettempdir()` does, for each variable set, unusable or missing."""
    import tempfile

    from swifty_sandbox.policy import engine

    usable, missing = tmp_path / "usable", tmp_path / "missing"
    usable.mkdir()
    unwritable = tmp_path / "file"
    unwritable.write_text("")
    monkeypatch.setattr(tempfile, "tempdir", None)
    for env in ({}, {"TMPDIR": str(usable)}, {"TMPDIR": str(missing)},
                {"TMPDIR": str(missing), "TEMP": str(usable)},
                {"TMP": str(unwritable)}, {"TMPDIR": "relative"}):
        for name in ("TMPDIR", "TEMP", "TMP"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        ours = engine._default_temp_dir()
        tempfile.tempdir = None
        assert ours == tempfile.gettempdir(), env
        tempfile.tempdir = None
