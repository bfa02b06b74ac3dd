"""A variable's value that bash evaluates as code (arithmetic, `${!x}`, `@P`) is never
allowed unseen: each case with bash as the control."""

from __future__ import annotations

from pathlib import Path

import pytest

_EVALUATED = [
    "x='a[$(touch {f})]'; echo $((x))",        # arithmetic evaluates the value, subscript too
    "x='a[$(touch {f})]'; echo ${{!x}}",         # indirect expansion evaluates the subscript
    "x='$(touch {f})'; echo ${{x@P}}",           # prompt expansion runs substitutions
    "read x <<< 'a[$(touch {f})]'; echo $((x+1))",
    "set -- 'a[$(touch {f})]'; echo $(($1))",
    "bash -c 'echo $(($1))' _ 'a[$(touch {f})]'",  # asked (the payload is an argument)
]


@pytest.mark.parametrize("template", _EVALUATED)
def test_a_value_evaluated_as_code_is_not_allowed(project: Path, home: Path,
                                                  template: str) -> None:
    import subprocess

    from swifty_sandbox import Sandbox
    from tests.conftest import write_rules

    write_rules(home / ".swifty" / "permissions.yaml", [("Bash(echo *)", "allow"),
                                                        ("Bash(read *)", "allow")])
    target = project / "pwned"
    command = template.format(f=target)
    subprocess.run(["bash", "-c", command], cwd=project, check=False)
    assert target.exists(), "control: bash does not run it"
    box = Sandbox(project, home=home, sandbox_mode="manual")
    assert box.check(command).effect.value != "allow", command
    deadly = template.replace("touch {f}", "rm -rf ~").replace("{{", "{").replace("}}", "}")
    verdict = Sandbox(project, home=home, mode="bypassPermissions").check(deadly).effect.value
    assert verdict == ("ask" if template.startswith("bash -c") else "deny"), deadly


