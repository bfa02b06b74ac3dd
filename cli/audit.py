"""`swifty-sandbox audit` (CI), `policy show`, `schema`."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import click

from swifty_sandbox.messages import t
from swifty_sandbox.policy import SwiftyError, find_project
from swifty_sandbox.policy.audit import (
    ERROR,
    WARNING,
    Finding,
    audit,
    default_paths,
    finding,
    shadowing,
)
from swifty_sandbox.policy.errors import ExitCode
from swifty_sandbox.policy.limits import describe_memory
from swifty_sandbox.sandbox.agents import Sandbox
from swifty_sandbox.sandbox.agents.effective import hidden_tracked_rules, settings

from .common import echo_json, json_option, project_option, reports_errors
from .sarif import to_sarif


@click.command(name="audit")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text",
              show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--strict", is_flag=True, help="Warnings fail too (exit 1).")
@project_option
@click.argument("paths", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@reports_errors
def audit_command(fmt: str, as_json: bool, strict: bool, project: Path | None,
                  paths: tuple[Path, ...]) -> None:
    """Lint rule and config files: exit 0 clean, 1 findings, 2 error.

    Without PATHs: the project's and your own .swifty files.
    """
    root = find_project(project or Path.cwd())
    home = Path.home()
    files = list(paths) or default_paths(root, home)
    findings = audit(files, root, home) + hidden_tracked_findings(root, files)
    if fmt == "json" or as_json:
        echo_json({"findings": [f.as_json() for f in findings]})
    elif fmt == "sarif":
        from importlib.metadata import version

        click.echo(json.dumps(to_sarif(findings, version("swifty-sandbox"), Path.cwd()),
                              indent=2))
    else:
        for f in findings:
            click.echo(f"{f.file}:{f.line}:{f.column}: {f.level}[{f.id}]: {f.message}")
            click.echo(f"    {f.hint}")
        counts = {level: sum(f.level == level for f in findings)
                  for level in (ERROR, WARNING, "note")}
        click.echo(t("audit.summary", errors=counts[ERROR], warnings=counts[WARNING],
                     notes=counts["note"], count=len(files)) if findings
                   else t("audit.clean", count=len(files)), err=True)
    failing = {ERROR, WARNING} if strict else {ERROR}
    raise SystemExit(ExitCode.DENY if any(f.level in failing for f in findings) else ExitCode.OK)


def hidden_tracked_findings(root: Path, files: list[Path]) -> list[Finding]:
    """`hidden-tracked`: a ReadFile deny rule of an audited file hides a file git
    tracks (git inside then shows a change it cannot diff or commit)."""
    audited = {os.path.realpath(f) for f in files}
    try:
        hits = hidden_tracked_rules(Sandbox(root))
    except SwiftyError:
        return []  # broken files: their own findings say so
    return [finding("hidden-tracked", rule.file, rule.line, 1, rule=rule.text,
                    path=os.path.relpath(path, root))
            for path, rule in hits if os.path.realpath(rule.file) in audited]


@click.group(name="policy")
def policy_group() -> None:
    """Inspect the effective policy."""


@policy_group.command(name="show")
@project_option
@json_option
@reports_errors
def policy_show(project: Path | None, as_json: bool) -> None:
    """Every rule of the three layers, highest priority first, and which later rule of
    the same file shadows it — for "why was this allowed?"."""
    box = Sandbox(project)
    rows = []
    for layer in box.policy.layers:
        shadowed = shadowing(layer.rules)
        for i, rule in reversed(list(enumerate(layer.rules))):
            by = shadowed.get(i)
            rows.append({"layer": layer.scope.value, "file": rule.file, "line": rule.line,
                         "rule": rule.text, "effect": rule.effect.value,
                         "shadowed_by": f"{by.text} (line {by.line})" if by else None})

    effective = settings(box)
    if as_json:
        echo_json({"mode": box.effective_mode.value,
                   "sandbox": box.effective_sandbox_mode.value, "rules": rows,
                   "effective": effective})
        return
    click.echo(f"mode: {box.effective_mode.value}   sandbox: "
               f"{box.effective_sandbox_mode.value}   profile: {box.policy.profile.name}")
    _show_effective(effective)
    click.echo(t("policy.header"))
    for row in rows:
        note = f"   {t('policy.shadowed_by', rule=row['shadowed_by'])}" \
            if row["shadowed_by"] else ""
        click.echo(f"{row['layer']:8} {row['file']}:{row['line']}  {row['effect']:5}  "
                   f"{row['rule']}{note}")


def _show_effective(found: dict[str, Any]) -> None:
    """The effective settings as text: one heading per setting, paths one per line."""
    def paths(key: str, values: list[str]) -> None:
        click.echo(t(f"policy.effective.{key}", count=len(values)))
        for value in values:
            click.echo(f"    {value}")

    limits = found["limits"]
    memory = describe_memory(limits["memory_bytes"]) if limits["memory_bytes"] \
        else "unlimited"
    click.echo(t("policy.effective.header"))
    click.echo(t("policy.effective.limits", processes=limits["processes"] or "unlimited",
                 memory=memory))
    network = found["network"]
    click.echo(t("policy.effective.network", value=json.dumps(network)) if network
               else t("policy.effective.no_network"))
    if "error" in found:
        click.echo(t("policy.effective.error", error=found["error"]))
        return
    paths("writable", found["writable"])
    for root in found["created_roots"]:
        click.echo(t("policy.effective.created", path=root))
    for refused in found["refused_roots"]:
        click.echo(t("run.root_refused", path=refused["path"], reason=refused["reason"]))
    click.echo(t("policy.effective.tmp", mode=found["tmp"], path=found["temp_dir"] or "-",
                 at=", ".join(found["temp_mounts"]) or "-"))
    click.echo(t("policy.effective.toolchains", mode=found["toolchain_caches"],
                 path=found["toolchain_dir"] or "-",
                 env=", ".join(found["toolchain_env"]) or "-"))
    paths("read_only", found["read_only"])
    paths("hidden", found["hidden"])
    if found["hidden_tracked"]:
        paths("hidden_tracked", found["hidden_tracked"])


@click.command(name="schema")
@click.argument("which", type=click.Choice(["permissions", "config", "profile"]),
                default="permissions")
def schema_command(which: str) -> None:
    """Print the JSON Schema of permissions*.yaml, config.yaml or a profile (for editors:
    `# yaml-language-server: $schema=…`)."""
    text = (resources.files("swifty_sandbox.profiles") / f"{which}.schema.json").read_text()
    click.echo(text, nl=False)
