"""The OCI renderer: `compile --target oci` (a runtime bundle), `oci-seccomp` (the
`linux.seccomp` object for docker/podman) and `kubernetes` (a Job, its NetworkPolicy and
the node's seccomp file). It renders only: runc, crun or the cluster does the running."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from swifty_sandbox.messages import t
from swifty_sandbox.policy import UsageError
from swifty_sandbox.policy.paths import is_within

from ..backend import Host, Rendered
from ..spec.compiler import SandboxSpec
from .bundle import write_bundle
from .kubernetes import kubernetes_objects, seccomp_profile_path
from .seccomp import oci_seccomp

DEFAULT_IMAGE = "docker.io/library/debian:bookworm-slim"
# What a bundle directory may already hold: a bundle written before.
_BUNDLE_ENTRIES = frozenset(("config.json", "rootfs"))


def checked_bundle(bundle: Path | None, spec: SandboxSpec, *, required: bool) -> Path | None:
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


class OciRenderer:
    name = "oci"
    targets = ("oci", "oci-seccomp", "kubernetes")

    def render(self, target: str, spec: SandboxSpec, command: Sequence[str],
               options: Mapping[str, object] | None = None, host: Host | None = None
               ) -> Rendered:
        """`options`: `bundle` (a directory: the bundle for `oci`, the node's seccomp
        file for `kubernetes`), `image` (kubernetes)."""
        options = options or {}
        bundle = options.get("bundle")
        bundle_dir = Path(str(bundle)) if bundle is not None else None
        seccomp = oci_seccomp(spec.seccomp)
        if target == "oci-seccomp":
            return Rendered(json.dumps(seccomp, indent=2),
                            {"target": target, "seccomp": seccomp})
        if not command:
            raise UsageError(t("oci.need_command"))
        if target == "oci":
            directory = checked_bundle(bundle_dir, spec, required=True)
            assert directory is not None
            config = write_bundle(directory, spec, command)
            return Rendered(t("oci.bundle_written", path=directory),
                            {"target": target, "bundle": str(directory), "config": config})
        import yaml


        profile = seccomp_profile_path(seccomp)
        objects = kubernetes_objects(spec, command,
                                     image=str(options.get("image") or DEFAULT_IMAGE),
                                     uid=os.getuid(), gid=os.getgid(), seccomp_path=profile)
        directory = checked_bundle(bundle_dir, spec, required=False)
        if directory is not None:
            path = directory / profile
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(seccomp, indent=2) + "\n", encoding="utf-8")
        note = (t("oci.kubernetes_profile", path=profile, written=directory) if directory
                else t("oci.kubernetes_profile_unwritten", path=profile))
        return Rendered(yaml.safe_dump_all(objects, sort_keys=False).rstrip("\n"),
                        {"target": target, "objects": objects,
                         "seccomp_profile": {"path": profile, "profile": seccomp}},
                        stderr=note + "\n")


BACKEND = OciRenderer()
