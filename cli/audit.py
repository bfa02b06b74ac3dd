"""`swifty-sandbox audit` (CI), `policy show`, `schema`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from swifty_sandbox import profiles
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
from .texts import TableGroup, argument, command, option


@command("audit", help="help.audit")
@option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text",
        show_default=True, help="help.audit.format")
@option("--json", "as_json", is_flag=True, help="help.audit.json")
@option("--strict", is_flag=True, help="help.audit.strict")
@project_option
@argument("paths", nargs=-1, type=click.Path(dir_okay=False, path_type=Path),
          metavar="help.meta.paths")
@reports_errors
def audit_command(fmt: str, as_json: bool, strict: bool, project: Path | None,
                  paths: tuple[Path, ...]) -> None:
    """`audit` (its help: `help.audit`)."""
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


@click.group(name="policy", cls=TableGroup, help_key="help.policy")
def policy_group() -> None:
    """`policy` (its help: `help.policy`)."""


@policy_group.command(name="show", help_key="help.policy.show")
@project_option
@json_option
@reports_errors
def policy_show(project: Path | None, as_json: bool) -> None:
    """`policy show` (its help: `help.policy.show`)."""
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


@command("schema", help="help.schema")
@argument("which", type=click.Choice(["permissions", "config", "profile"]),
          default="permissions", metavar="help.meta.which")
def schema_command(which: str) -> None:
    """`schema` (its help: `help.schema`)."""
    text = profiles.read(f"{which}.schema.json")
    click.echo(text, nl=False)
