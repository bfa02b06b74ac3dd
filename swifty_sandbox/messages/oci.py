"""The OCI and Kubernetes targets of `compile`."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    "oci.need_bundle": (
        "give the bundle directory to write: `--bundle DIR`",
        "请给出要写入的运行时包目录：`--bundle 目录`",
    ),
    "oci.need_command": (
        "give the command the container runs after `--`: `-- CMD ARG...`",
        "请在 `--` 之后给出容器要运行的命令：`-- CMD ARG...`",
    ),
    "oci.bundle_writable": (
        "the bundle directory {path} is where a confined command may write, so a "
        "command could rewrite its own next sandbox: choose a directory outside the "
        "project, the temp dirs and the writable roots",
        "运行时包目录 {path} 位于受限命令可写的位置，命令因而可以改写自己的下一个沙箱："
        "请选择项目、临时目录和可写根目录之外的目录",
    ),
    "oci.bundle_not_empty": (
        "{path} holds files other than a bundle (config.json, rootfs/): choose a new "
        "or empty directory",
        "{path} 中有运行时包（config.json、rootfs/）以外的文件：请选择新的或空的目录",
    ),
    "oci.bundle_written": (
        "OCI bundle written to {path}; run it with `runc run --bundle {path} NAME` "
        "(rootless: `runc --root DIR run --bundle {path} NAME`)",
        "OCI 运行时包已写入 {path}；用 `runc run --bundle {path} NAME` 运行"
        "（非 root 用户：`runc --root DIR run --bundle {path} NAME`）",
    ),
    "oci.kubernetes_profile": (
        "the seccomp profile is {written}/{path}: install it on every node as "
        "/var/lib/kubelet/seccomp/{path}",
        "seccomp 配置文件为 {written}/{path}：请在每个节点上安装为 "
        "/var/lib/kubelet/seccomp/{path}",
    ),
    "oci.kubernetes_profile_unwritten": (
        "install the seccomp profile on every node as /var/lib/kubelet/seccomp/{path} "
        "(`--bundle DIR` writes it, as does `compile --target oci-seccomp`)",
        "请在每个节点上将 seccomp 配置文件安装为 /var/lib/kubelet/seccomp/{path}"
        "（`--bundle DIR` 会写出它，`compile --target oci-seccomp` 也会输出它）",
    ),
}
