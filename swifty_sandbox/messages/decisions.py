"""Decisions and their reasons: layers, features beyond ordinary behaviour, the dangerous-
command blacklist, the words reasons are made of."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    "blacklist.recursive-delete": (
        "Denied (recursive-delete): `{command}` recursively deletes `/`, the home "
        "directory, a system directory or everything here. Delete specific paths inside "
        "the project instead.",
        "已拒绝（`recursive-delete`）：`{command}` 会递归删除 `/`、主目录、系统目录"
        "或当前目录全部内容。"
        "请改为删除项目内的具体路径。",
    ),
    "blacklist.mkfs": (
        "Denied (mkfs): `{command}` creates a file system and destroys what the device "
        "holds.",
        "已拒绝（`mkfs`）：`{command}` 会创建文件系统并销毁设备上的数据。",
    ),
    "blacklist.block-device-write": (
        "Denied (block-device-write): `{command}` writes to a block device and can "
        "destroy a disk.",
        "已拒绝（`block-device-write`）：`{command}` 会写入块设备，可能毁掉整块磁盘。",
    ),
    "blacklist.recursive-chmod-chown": (
        "Denied (recursive-chmod-chown): `{command}` changes permissions or owners "
        "recursively on `/`, the home directory or a system directory. Target the "
        "project's own files.",
        "已拒绝（`recursive-chmod-chown`）：`{command}` 会递归修改 `/`、主目录或系统目录的"
        "权限或属主。"
        "请只针对项目自己的文件。",
    ),
    "blacklist.fork-bomb": (
        "Denied (fork-bomb): function `{command}` calls itself in a pipe or in the "
        "background: a fork bomb.",
        "已拒绝（`fork-bomb`）：函数 `{command}` 在管道或后台中调用自身：这是 `fork` 炸弹。",
    ),
    "blacklist.pipe-to-interpreter": (
        "Denied (pipe-to-interpreter): `{command}` runs downloaded or decoded content as "
        "code. Download to a file, read it, then run it as a separate step.",
        "已拒绝（`pipe-to-interpreter`）：`{command}` 会把下载或解码的内容当作代码运行。"
        "请先下载到文件、检查内容，再单独运行。",
    ),
    "blacklist.git-destructive": (
        "Denied (git-destructive): `git {sub}` as written (`{command}`) discards work "
        "or rewrites shared history. Use a non-destructive form, or ask the user to run it.",
        "已拒绝（`git-destructive`）：此处的 `git {sub}`（`{command}`）会丢弃工作或改写共享历史。"
        "请使用非破坏性的形式，或请用户自行运行。",
    ),
    "blacklist.long-sleep": (
        "Denied (long-sleep): `{command}` sleeps {seconds} s (limit {limit} s, `?` = not "
        "computable). Poll in short steps (e.g. `sleep 5` in a loop that checks the "
        "condition) under an overall timeout.",
        "已拒绝（`long-sleep`）：`{command}` 休眠 {seconds} 秒（上限 {limit} 秒，`?` 表示无法"
        "计算）。请在总超时内分小步轮询（例如在检查条件的循环中 `sleep 5`）。",
    ),
    "decision.rule": (
        "{effect_word} by rule `{rule}` ({file}:{line}).",
        "由规则 `{rule}`（{file}:{line}）{effect_word}。",
    ),
    "decision.protected": (
        "Denied: {path} is protected ({what}); the agent never edits its own policy or "
        "repository hooks. Ask the user to change it.",
        "已拒绝：{path} 受保护（{what}）；代理不能修改自己的策略或仓库钩子。请让用户修改。",
    ),
    "decision.unreadable": (
        "Denied: {path} holds secrets (`{pattern}` in the sandbox profile's denyRead); "
        "it is unreadable to the agent and its commands.",
        "已拒绝：{path} 含有机密（沙箱配置 denyRead 中的 `{pattern}`）；代理及其命令均不可读取。",
    ),
    "decision.hidden_write": (
        "Denied: {path} is hidden from the agent and its commands (`{pattern}` in the "
        "sandbox profile's denyRead), which cannot write it either; what such files hold "
        "runs or authenticates outside the sandbox. Ask the user to change it.",
        "已拒绝：{path} 对代理及其命令隐藏（沙箱配置 denyRead 中的 `{pattern}`），命令也无法写入；"
        "这类文件的内容会在沙箱外运行或用于认证。请让用户修改。",
    ),
    "decision.agent_settings": (
        "Denied: {path} holds an agent's hook settings; whoever edits them can turn "
        "swifty-sandbox off or run code outside the sandbox. Ask the user to change it.",
        "已拒绝：{path} 保存着代理的钩子设置；能修改它的人就能关闭 swifty-sandbox "
        "或在沙箱外运行代码。请让用户修改。",
    ),
    "decision.runs_outside": (
        "Denied: {path} is part of what swifty-sandbox or its hooks run, or the agent "
        "itself runs by name, outside the sandbox; whoever edits it runs code there. "
        "Ask the user to change it.",
        "已拒绝：{path} 属于 swifty-sandbox 或其钩子（或代理本身按名称）在沙箱外运行的内容；"
        "能修改它的人就能在沙箱外运行代码。请让用户修改。",
    ),
    "decision.hidden_moved": (
        "Denied: {path} is a file the sandbox hides, moved here by a command that is "
        "still running; it is put back where it was when that command ends.",
        "已拒绝：{path} 是沙箱隐藏的文件，被一个仍在运行的命令移到了这里；该命令结束时会放回原处。",
    ),
    "decision.git_trusts": (
        "Denied: {path} is what git executes or trusts (a git directory, a gitfile, a "
        "hooks directory or a config file the repository includes); whoever writes it "
        "runs code at the user's next git command, outside the sandbox. Ask the user to "
        "change it.",
        "已拒绝：{path} 属于 git 会执行或信任的内容（git 目录、`.git` 文件、钩子目录或仓库配置"
        "包含的配置文件）；能写它的人就能在用户下一次运行 git 命令时在沙箱外运行代码。"
        "请让用户修改。",
    ),
    "decision.path_unresolved": (
        "Denied: {path} cannot be looked up ({error}), so where it leads cannot be "
        "decided.",
        "已拒绝：无法查找 {path}（{error}），因此无法判断它指向哪里。",
    ),
    "decision.path_proc": (
        "Denied: {path} goes through /proc, whose links lead to other processes' files "
        "and descriptors and whose files show their environment and memory; the file "
        "tools run outside the sandbox. Read it with a confined command instead.",
        "已拒绝：{path} 经过 /proc，其中的链接指向其他进程的文件和描述符，其中的文件会显示"
        "它们的环境和内存；文件工具在沙箱外运行。请改用受限命令读取。",
    ),
    "decision.path_special": (
        "Denied: {path} is not a regular file ({kind}); the file tools read and write "
        "regular files only (a FIFO would hang them, a device reaches hardware).",
        "已拒绝：{path} 不是普通文件（{kind}）；文件工具只读写普通文件（FIFO 会使其挂起，"
        "设备会触及硬件）。",
    ),
    "decision.hard_link_write": (
        "Denied: {path} has {count} hard links; a write through this name changes the "
        "file under every other name too, which this decision cannot see. Ask the user, "
        "or write a copy.",
        "已拒绝：{path} 有 {count} 个硬链接；通过这个名称写入也会改变其他所有名称下的文件，"
        "而本决定看不到那些名称。请询问用户，或写入副本。",
    ),
    "decision.hard_link_hidden": (
        "Denied: {path} is another name (a hard link) of a file the sandbox hides; it is "
        "as unreadable as that file.",
        "已拒绝：{path} 是沙箱隐藏的某个文件的另一个名称（硬链接）；它与该文件一样不可读。",
    ),
    "decision.path_outside": (
        "Needs approval: {path} is outside the project, the temp dirs and the configured "
        "writable roots.",
        "需要批准：{path} 位于项目、临时目录和已配置的可写目录之外。",
    ),
    "decision.mode": (
        "{effect_word}: {category} requests in `{mode}` mode {verb}.",
        "{effect_word}：`{mode}` 模式下的{category}请求{verb}。",
    ),
    "decision.plan_cap": (
        "Needs approval: `plan` mode does not {category} without approval, even where "
        "rule `{rule}` ({file}:{line}) allows it.",
        "需要批准：`plan` 模式下未经批准不能{category}，即使规则 `{rule}`（{file}:{line}）允许。",
    ),
    "decision.sandbox_auto": (
        "Allowed: runs confined in the sandbox (no network, writes only in the project "
        "and temp dirs).",
        "已允许：在沙箱中受限运行（无网络，仅可写入项目和临时目录）。",
    ),
    "decision.bypass": (
        "Allowed: `bypassPermissions` mode turns approval requests into allows ({why}).",
        "已允许：`bypassPermissions` 模式将审批请求转为允许（{why}）。",
    ),
    "decision.unanalysable": (
        "Needs approval: the command could not be analysed (it contains `{why}`), so "
        "rules cannot allow it; simplify it or split it into plain commands.",
        "需要批准：无法分析该命令（包含 `{why}`），规则不能放行；请简化或拆分为普通命令。",
    ),
    "decision.not_covered": (
        "Needs approval: `{program} … {feature}` {does}; the allow rule `{rule}` "
        "({file}:{line}) grants only {program}'s ordinary behaviour (a rule that names "
        "`{feature}` allows it).",
        "需要批准：`{program} … {feature}` {does}；允许规则 `{rule}`（{file}:{line}）只放行 "
        "{program} 的常规行为（写明 `{feature}` 的规则才会放行它）。",
    ),
    "does.exec": ("runs other code", "会运行其他代码"),
    "does.write": ("writes files", "会写入文件"),
    "does.network": ("reaches the network", "会访问网络"),
    "does.env": ("sets a variable that changes what runs", "设置了会改变所运行程序的变量"),
    "does.computed": ("has an argument known only at run time (it may be any option)",
                      "含有运行时才确定的参数（可能是任何选项）"),
    "decision.noninteractive": (
        "Denied: this needs a person's approval and none is available "
        "(non-interactive). {reason} To allow it: {how}.",
        "已拒绝：需要人工批准但当前为非交互环境。{reason} 如需允许：{how}。",
    ),
    "how.rule": (
        "add {rules} with `effect: allow` to {file}",
        "将 {rules}（`effect: allow`）加入 {file}",
    ),
    "how.auto": (
        "run with `--sandbox auto` (the command then runs confined without asking)",
        "使用 `--sandbox auto` 运行（命令将受限运行且不再询问）",
    ),
    "how.terminal": ("run it on a terminal to be asked", "在终端中运行以便被询问"),
    "how.or": (" or ", "，或"),
    "decision.user_denied": (
        "Denied by the user. {reason} Do not retry it; choose another way or ask.",
        "用户已拒绝。{reason} 请勿重试；换一种做法或先询问。",
    ),
    "decision.user_allowed": ("Allowed by the user. {reason}", "用户已允许。{reason}"),
    "word.allowed": ("Allowed", "已允许"),
    "word.denied": ("Denied", "已拒绝"),
    "word.ask": ("Needs approval", "需要批准"),
    "word.verb_allow": ("are allowed", "被允许"),
    "word.verb_ask": ("need approval", "需要批准"),
    "word.read": ("read", "读取"),
    "word.write": ("write files", "写文件"),
    "word.command": ("run commands", "运行命令"),
    "word.policy_file": ("swifty policy file", "swifty-sandbox 策略文件"),
    "word.profile_protected": ("protected by the sandbox profile", "受沙箱配置保护"),
    "word.by_cgroup": ("a cgroup of its own ({where})", "独立的 cgroup（{where}）"),
    "word.by_rlimit": (
        "RLIMIT_NPROC inside its user namespace (counts its own processes only) and "
        "RLIMIT_DATA per process",
        "其用户命名空间内的 RLIMIT_NPROC（只计算其自身进程）和每进程 RLIMIT_DATA",
    ),
}
