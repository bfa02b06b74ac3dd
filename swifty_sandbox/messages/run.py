"""One confined run: notes on stderr, toolchain caches, commands that could not start
(127/126), the terminal prompt."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    "run.temp_fallback": (
        "swifty-sandbox: cannot create the project's temp directory {path} ({error}); "
        "this command got an empty private /tmp instead.",
        "swifty-sandbox：无法创建项目临时目录 {path}（{error}）；本命令改用一个空的私有 /tmp。",
    ),
    "run.reason_created": ("it did not exist before the command", "命令运行前它并不存在"),
    "run.reason_link": ("a link into the command's own /tmp", "指向该命令自身 /tmp 的链接"),
    "run.tree_removed": (
        "the command removed everything in {path} but its git file, which is read-only "
        "inside the sandbox; it and the directory were removed after the command, so the "
        "tree is gone as the command meant (`git worktree prune` forgets a worktree).",
        "该命令删除了 {path} 中除 git 文件外的所有内容（该文件在沙箱内只读）；"
        "命令结束后已删除它和该目录，使该目录如命令所愿被移除"
        "（`git worktree prune` 可清除工作树记录）。"),
    "run.worktree_locked": (
        "swifty-sandbox: inside the sandbox this worktree's git files are read-only, so "
        "removing or moving it would stop half-way and leave a half-deleted tree. Do not "
        "force it: ask the user to run `git worktree remove` outside the sandbox.",
        "swifty-sandbox：在沙箱内，此工作树的 git 文件是只读的，"
        "删除或移动它会中途失败并留下删了一半的目录。"
        "不要强制执行：请让用户在沙箱外运行 `git worktree remove`。"),
    "run.reason_agent_link": (
        "a link on the way to a program an agent's settings run, changed by the command",
        "通往代理设置所运行程序的路径上的链接，被该命令更改了"),
    "run.reason_link_on_the_way": (
        "a symbolic link the command made on the way to it",
        "命令在通往它的路径上创建了一个符号链接"),
    "run.aftercare_failed": (
        "swifty-sandbox: WARNING: what the command left in the project could not be "
        "checked ({error}); look for new .git, .swifty and hooks before you run git.",
        "swifty-sandbox：警告：无法检查该命令在项目中留下的内容（{error}）；"
        "运行 git 之前请检查新的 .git、.swifty 和钩子。",
    ),
    "run.changed": (
        "{path} was replaced during the command although it is protected (only a process "
        "outside the sandbox can, and that lets the command write what took its place); "
        "the new one was moved to {moved} — if the change was yours, look at it and put it "
        "back — and the one from before restored, with its mode, where it could be",
        "{path} 虽受保护却在命令运行期间被替换（只有沙箱外的进程能这样做，"
        "而这会让命令改写替换后的文件）；新的版本已移至 {moved}——如果这是你自己的修改，"
        "请检查后放回——并尽可能按原权限恢复了原先的版本",
    ),
    "run.not_moved": (
        "(could not be moved: a directory on the way is not ours to change; every "
        "later run refuses until it is removed)",
        "（无法移走：路径上的某个目录不归我们修改；在删除它之前，之后的每次运行都会被拒绝）",
    ),
    "run.unsearchable": (
        "{path} cannot be searched after the command (its permissions were changed); it "
        "may hide a repository that git would trust. `chmod u+rwx` it and look.",
        "命令结束后无法搜索 {path}（其权限已被修改）；其中可能藏有 git 会信任的仓库。"
        "请对其执行 `chmod u+rwx` 后检查。",
    ),
    "run.toolchain_config": (
        "the command left {path}, configuration its toolchain would read at the next "
        "build of this project (it can name programs to run); it was moved to {moved}.",
        "该命令留下了 {path}，这是工具链在本项目下次构建时会读取的配置（可指定要运行的程序）；"
        "已将其移至 {moved}。",
    ),
    "run.watched": (
        "the command left {path}, which git or swifty-sandbox would trust "
        "outside the sandbox ({reason}); it was moved to {moved}.",
        "该命令留下了 {path}，git 或 swifty-sandbox 会在沙箱外信任它"
        "（{reason}）；已将其移至 {moved}。",
    ),
    "run.memory_cap": (
        "The command was killed: it reached the memory cap of {size} (all its processes "
        "together). Raise it with `--max-memory SIZE` or `sandbox.limits.memory`.",
        "命令已被终止：它（所有进程合计）达到了 {size} 的内存上限。可用 `--max-memory SIZE` "
        "或 `sandbox.limits.memory` 提高上限。",
    ),
    "run.process_cap": (
        "The command could not start more processes: it reached the cap of {processes} "
        "processes (all its processes and threads together). Raise it with "
        "`--max-processes N` or `sandbox.limits.processes` (`unlimited` lifts it).",
        "命令无法再启动进程：它达到了 {processes} 个进程的上限（所有进程和线程合计）。可用 "
        "`--max-processes N` 或 `sandbox.limits.processes` 提高上限（`unlimited` 取消上限）。",
    ),
    "run.process_cap_likely": (
        "The command could not start more processes: it has most likely reached the cap of "
        "{processes} processes (all its processes and threads together). Raise it with "
        "`--max-processes N` or `sandbox.limits.processes` (`unlimited` lifts it).",
        "命令无法再启动进程：它很可能达到了 {processes} 个进程的上限（所有进程和线程合计）。可用 "
        "`--max-processes N` 或 `sandbox.limits.processes` 提高上限（`unlimited` 取消上限）。",
    ),
    "run.unconfined": (
        "WARNING: running UNCONFINED (sandbox off): no file-system, network or process "
        "confinement.",
        "警告：正在不受限运行（沙箱已关闭）：没有文件系统、网络或进程限制。",
    ),
    "run.timeout": (
        "Timed out after {seconds} s; the whole process tree was killed. Poll long jobs "
        "in short steps under an overall timeout.",
        "{seconds} 秒后超时；整个进程树已被终止。长任务请在总超时内分小步轮询。",
    ),
    "prompt.question": (
        "swifty-sandbox asks: {reason}\n  {request}\nAllow it? [y]es, [N]o, [a]lways "
        "(adds the rule to your local rules file): ",
        "swifty-sandbox 询问：{reason}\n  {request}\n是否允许？[y] 是，[N] 否，[a] 总是"
        "（在你的本地规则文件中添加规则）：",
    ),
    "prompt.question_once": (
        "swifty-sandbox asks: {reason}\n  {request}\nAllow it? [y]es, [N]o (no rule can "
        "allow this one for good): ",
        "swifty-sandbox 询问：{reason}\n  {request}\n是否允许？[y] 是，[N] 否"
        "（没有规则能永久允许此项）：",
    ),
    "prompt.again": ("Please answer y, n or a.", "请回答 “y”、“n” 或 “a”。"),
    "prompt.again_once": ("Please answer y or n.", "请回答 “y” 或 “n”。"),
    "prompt.not_run": ("swifty-sandbox: not run (you answered no).",
                       "swifty-sandbox：未运行（你选择了否）。"),
    "run.toolchain_fallback": (
        "swifty-sandbox: cannot create the project's toolchain cache {path} ({error}); "
        "this command ran without it (pip, npm, cargo, go caches are not writable).",
        "swifty-sandbox：无法创建项目的工具链缓存 {path}（{error}）；本命令在没有它的情况下运行"
        "（pip、npm、cargo、go 的缓存不可写）。",
    ),
    "run.root_created": (
        "swifty-sandbox: created the writable root {path} (sandbox.writable); it did not "
        "exist.",
        "swifty-sandbox：已创建可写根目录 {path}（sandbox.writable），它原本不存在。",
    ),
    "run.root_refused": (
        "swifty-sandbox: the writable root {path} (sandbox.writable) is not writable in "
        "this run: {reason}. Create it yourself, or change the setting.",
        "swifty-sandbox：可写根目录 {path}（sandbox.writable）在本次运行中不可写：{reason}。"
        "请自行创建，或修改该设置。",
    ),
    "run.hidden_tracked": (
        "swifty-sandbox: {count} path(s) git tracks are hidden in this run ({paths}): "
        "git sees them changed but cannot read them, so `git diff`, `git add -A` and "
        "`git commit -a` stop with an error (nothing is recorded). Commit the other files "
        "by name, or let the file be read: a `ReadFile(...)` allow rule below the deny in "
        "the same file (see `swifty-sandbox audit`).",
        "swifty-sandbox：本次运行隐藏了 {count} 个被 git 跟踪的路径（{paths}）：git 认为它们"
        "已改变却无法读取，因此 `git diff`、`git add -A` 和 `git commit -a` 会报错停止（不会记录"
        "任何内容）。请按文件名提交其他文件，或允许读取该文件：在同一文件中 `deny` 规则之后添加"
        "一条 `ReadFile(...)` `allow` 规则（见 `swifty-sandbox audit`）。",
    ),
    "run.hidden_unwatched": (
        "swifty-sandbox: reads of hidden files are not reported in this run (inotify: "
        "{error}); they were still hidden.",
        "swifty-sandbox：本次运行不报告对隐藏文件的读取（`inotify`：{error}）；这些文件仍被隐藏。",
    ),
    "run.hidden_tracked_more": (", and {count} more", "，另有 {count} 个"),
    "run.not_found": (
        "swifty-sandbox: {program}: command not found",
        "swifty-sandbox：{program}：找不到命令",
    ),
    "run.not_executable": (
        "swifty-sandbox: {program}: cannot execute: {error}",
        "swifty-sandbox：{program}：无法执行：{error}",
    ),
    "prompt.host_typed": (
        "swifty-sandbox asks: {reason}\nTo allow it for this run, type its host name "
        "({host}); type `always {host}` to also add it to network.allow in "
        "~/.swifty/config.yaml; anything else is no: ",
        "swifty-sandbox 询问：{reason}\n要在本次运行中允许它，请输入其主机名（{host}）；"
        "输入 `always {host}` 则同时把它添加到 ~/.swifty/config.yaml 的 network.allow；"
        "其他任何输入都表示否：",
    ),
    "prompt.host_other": (
        "swifty-sandbox: `{answer}` is not the host asked about ({host}), so it stays "
        "blocked (the command's own output can draw another question on this terminal)",
        "swifty-sandbox：`{answer}` 不是所询问的主机（{host}），因此它仍被阻止"
        "（命令自己的输出可以在此终端上伪造另一个问题）",
    ),
    # -- the Landlock backend and the choice of backend (issue 18) --
    "run.landlock_fallback": (
        "swifty-sandbox: bwrap cannot make namespaces here ({why}): confined by Landlock "
        "ABI {abi} instead (what differs: the README's backend table; `swifty-sandbox "
        "doctor` shows the fix)",
        "swifty-sandbox：bwrap 无法在此创建命名空间（{why}）：改用 Landlock ABI {abi} 限制"
        "（差异见 README.md 的后端对照表；`swifty-sandbox doctor` 给出修复方法）",
    ),
    "run.repaired": (
        "{path} is protected and the command changed it (Landlock cannot keep it "
        "read-only): what it left was moved to {moved} and the one from before put back",
        "{path} 受保护而命令修改了它（Landlock 无法使其只读）：其留下的内容已移至 {moved}，"
        "并已还原为运行前的内容",
    ),
    "run.not_repaired": (
        "{path} is protected and the command changed it, and it could not be put back "
        "({error}): later runs here refuse until it is",
        "{path} 受保护而命令修改了它，且无法还原（{error}）：在修复之前，此处之后的运行都会被拒绝",
    ),
    "run.hidden_back": (
        "{path} is hidden and the command moved it to {where} (Landlock cannot keep it "
        "in place): put back where it is hidden; what took its name was moved to {moved}",
        "{path} 被隐藏而命令将其移到了 {where}（Landlock 无法将其固定）：已放回其被隐藏的位置；"
        "占用其名称的内容已移至 {moved}",
    ),
    "run.hidden_linked": (
        "{path} is hidden and the command removed its name, keeping another (a hard "
        "link; Landlock cannot keep it in place): the name is back, and runs here refuse "
        "until the other name is removed",
        "{path} 被隐藏而命令删除了其名称并保留了另一个名称（硬链接；Landlock 无法将其固定）："
        "名称已恢复，在删除另一个名称之前，此处的运行都会被拒绝",
    ),
    "violation.line": (
        "swifty-sandbox: refused {what}: {rule}; to allow it: {fix}",
        "swifty-sandbox：已拒绝{what}：{rule}；如需允许：{fix}",
    ),
    "violation.line_printed": (
        "swifty-sandbox: the command's output says it was refused {what}, which is hidden "
        "({rule}); printed by the command, not seen by the sandbox",
        "swifty-sandbox：该命令的输出称其被拒绝{what}，该路径已隐藏（{rule}）；"
        "这是命令自己输出的，并非沙箱观察到的",
    ),
    "violation.more": (
        "swifty-sandbox: and {count} more refused paths or hosts (all of them in --json's "
        "\"violations\")",
        "swifty-sandbox：另有 {count} 个被拒绝的路径或主机（全部见 --json 的 \"violations\"）",
    ),
    "violation.op.read": ("the read of", "读取"),
    "violation.op.write": ("the write to", "写入"),
    "violation.op.create": ("creating", "创建"),
    "violation.op.remove": ("removing", "删除"),
    "violation.op.connect": ("the connection to", "连接"),
    "violation.op.resolve": ("a name lookup (DNS)", "域名解析"),
    "violation.op.memory": ("more memory", "更多内存"),
    "violation.op.syscall": ("the system call {name}", "系统调用 {name}"),
    "violation.op.processes": ("more processes", "更多进程"),
    "violation.rule.outside": (
        "not in a writable root (the sandbox's default: the project, its temp dir and "
        "sandbox.writable)",
        "不在可写根目录中（沙箱默认只有项目、其临时目录和 sandbox.writable）",
    ),
    "violation.rule.mount": (
        "kept read-only by the sandbox", "沙箱使其保持只读",
    ),
    "violation.rule.network": (
        "no network for this command (the sandbox's default; only --allow-net or "
        "network.allow hosts are reachable)",
        "该命令无网络（沙箱默认；只能访问 --allow-net 或 network.allow 中的主机）",
    ),
    "violation.rule.memory": (
        "the memory cap (sandbox.limits.memory, or the default)",
        "内存上限（sandbox.limits.memory 或默认值）",
    ),
    "violation.rule.processes": (
        "the cap on processes (sandbox.limits.processes, or the default)",
        "进程数上限（sandbox.limits.processes 或默认值）",
    ),
    "violation.rule.syscall": (
        "the sandbox profile's seccomp filter ({key}: {value})",
        "沙箱配置的 seccomp 过滤器（{key}：{value}）",
    ),
    "violation.rule.syscall_always": (
        "the sandbox's seccomp filter, in every profile",
        "沙箱的 seccomp 过滤器（所有配置皆然）",
    ),
    "violation.fix.syscall_deny": (
        "a sandbox profile (sandbox.profile in ~/.swifty/config.yaml) whose seccomp.deny "
        "leaves out {value}",
        "使用 seccomp.deny 中不含 {value} 的沙箱配置（~/.swifty/config.yaml 的 sandbox.profile）",
    ),
    "violation.fix.syscall_permissive": (
        "sandbox.profile: permissive in ~/.swifty/config.yaml (it allows {name}), or a "
        "profile of your own whose seccomp.deny leaves out {value}",
        "在 ~/.swifty/config.yaml 中设置 `sandbox.profile: permissive`（它允许 {name}），"
        "或使用 seccomp.deny 中不含 {value} 的自定义配置",
    ),
    "violation.fix.syscall_list": (
        "a sandbox profile (sandbox.profile in ~/.swifty/config.yaml) whose {key} lists "
        "{value}",
        "使用 {key} 中列有 {value} 的沙箱配置（~/.swifty/config.yaml 的 sandbox.profile）",
    ),
    "violation.fix.syscall_ioctls": (
        "a sandbox profile (sandbox.profile in ~/.swifty/config.yaml) whose seccomp.ioctls "
        "leaves out {value}",
        "使用 seccomp.ioctls 中不含 {value} 的沙箱配置（~/.swifty/config.yaml 的 sandbox.profile）",
    ),
    "violation.fix.syscall_none": (
        "none: no sandbox profile allows it",
        "无法允许：任何沙箱配置都不允许它",
    ),
    "violation.fix.outside": (
        "add {directory} to sandbox.writable in ~/.swifty/config.yaml",
        "将 {directory} 加入 ~/.swifty/config.yaml 的 sandbox.writable",
    ),
    "violation.fix.hidden_rule": (
        "add the rule ReadFile({path}) with effect allow below it in {file}",
        "在 {file} 中该规则之下添加规则 `ReadFile({path})`，`effect` 为 `allow`",
    ),
    "violation.fix.write_rule": (
        "remove or narrow the deny rule at {file}:{line}",
        "删除或收窄 {file}:{line} 处的 `deny` 规则",
    ),
    "violation.fix.secret": (
        "none by a rule: the sandbox profile hides it (denyRead); the person can read it "
        "outside the sandbox",
        "无法通过规则允许：沙箱配置（denyRead）隐藏了它；可由用户在沙箱外读取",
    ),
    "violation.fix.launcher": (
        "take {directory} off the PATH the agent runs with (a program a command makes "
        "there would run outside the sandbox, by its name), or change it outside the "
        "sandbox",
        "从代理运行时的环境变量 `PATH` 中移除 {directory}（命令在那里创建的程序会以其名称在沙箱外"
        "运行），或在沙箱外修改",
    ),
    "violation.fix.protected": (
        "none inside the sandbox: protected paths stay read-only; the person can change it "
        "outside",
        "沙箱内无法允许：受保护路径保持只读；可由用户在沙箱外修改",
    ),
    "violation.fix.network": (
        "--allow-net {host} (or network.allow in ~/.swifty/config.yaml)",
        "--allow-net {host}（或 ~/.swifty/config.yaml 中的 network.allow）",
    ),
    "violation.fix.memory": (
        "--max-memory SIZE or sandbox.limits.memory",
        "`--max-memory 大小` 或 sandbox.limits.memory",
    ),
    "violation.fix.processes": (
        "--max-processes N or sandbox.limits.processes (`unlimited` lifts it)",
        "`--max-processes 数量` 或 sandbox.limits.processes（`unlimited` 取消上限）",
    ),
}
