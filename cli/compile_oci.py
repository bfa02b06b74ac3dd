"""`compile --target oci|oci-seccomp|kubernetes`: the OCI renderings of the sandbox."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import click

from swifty_sandbox.policy import UsageError
from swifty_sandbox.policy.messages import t
from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.sandbox.spec import SandboxSpec

from .common import echo_json

# What a bundle directory may already hold: a bundle written before.
_BUNDLE_ENTRIES = frozenset(("config.json", "rootfs"))


def _checked_bundle(bundle: Path | None, spec: SandboxSpec, *, required: bool) -> Path | None:
    """The bundle directory: never one a confined command could write (it would rewrite
    its own next sandbox), never a directory holding anything but a bundle."""
    if bundle is None:
        if required:
            raise UsageError(t("oci.need_bundle"))
        return None
    real = os.path.realpath(bundle)
    roots = (*spec.writable, *((spec.temp_dir,) if spec.temp_dir else ()))
    if any(is_within(real, root) for root in roots):
        raise UsageError(t("oci.bundle_writable", path=real))
    if required and bundle.is_dir() and set(os.listdir(bundle)) - _BUNDLE_ENTRIES:
        raise UsageError(t("oci.bundle_not_empty", path=real))
    return Path(real)


def compile_oci(target: str, spec: SandboxSpec, command: Sequence[str], *,
                bundle: Path | None, image: str, as_json: bool) -> None:
    from swifty_sandbox.sandbox.oci.seccomp import oci_seccomp

    seccomp = oci_seccomp(spec.seccomp)
    if target == "oci-seccomp":
        if as_json:
            echo_json({"target": target, "seccomp": seccomp})
        else:
            click.echo(json.dumps(seccomp, indent=2))
        return
    if not command:
        raise UsageError(t("oci.need_command"))
    if target == "oci":
        from swifty_sandbox.sandbox.oci.bundle import write_bundle

        directory = _checked_bundle(bundle, spec, required=True)
        assert directory is not None
        config = write_bundle(directory, spec, command)
        if as_json:
            echo_json({"target": target, "bundle": str(directory), "config": config})
        else:
            click.echo(t("oci.bundle_written", path=directory))
        return
    import yaml

    from swifty_sandbox.sandbox.oci.kubernetes import kubernetes_objects, seccomp_profile_path

    profile = seccomp_profile_path(seccomp)
    objects = kubernetes_objects(spec, command, image=image, uid=os.getuid(),
                                 gid=os.getgid(), seccomp_path=profile)
    directory = _checked_bundle(bundle, spec, required=False)
    if directory is not None:
        path = directory / profile
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(seccomp, indent=2) + "\n", encoding="utf-8")
    if as_json:
        echo_json({"target": target, "objects": objects,
                   "seccomp_profile": {"path": profile, "profile": seccomp}})
        return
    click.echo(yaml.safe_dump_all(objects, sort_keys=False), nl=False)
    click.echo(t("oci.kubernetes_profile", path=profile, written=directory) if directory
               else t("oci.kubernetes_profile_unwritten", path=profile), err=True)
