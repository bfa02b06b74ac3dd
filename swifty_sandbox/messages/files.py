"""Rule files, config files, profiles, the program table and the rule writer: reading,
shapes, what a committed file may not do."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
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
    "file.control_char": (
        "cannot read the file: it holds the control character {code}, which YAML does not "
        "allow",
        "无法读取文件：其中含有 YAML 不允许的控制字符 {code}",
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
    "rule.retired_tool": (
        "{agent} no longer has a `{tool}` tool, so a rule for it would never apply: its "
        "searches run through Bash (confined, hidden paths hidden); to keep files from "
        "being read, write a `ReadFile(...)` deny rule",
        "{agent} 已不再有 `{tool}` 工具，针对它的规则永远不会生效：它的搜索通过 Bash 运行"
        "（受限运行，隐藏路径不可见）；如需阻止读取文件，请写 `ReadFile(...)` 拒绝规则",
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
    "programs.bad_regex": ("invalid regular expression: {error}", "无效的正则表达式：{error}"),
    "programs.not_bool": ("`{key}` must be true or false", "`{key}` 必须为 `true` 或 `false`"),
    "programs.not_count": ("`{key}` must be a whole number", "`{key}` 必须为非负整数"),
}
