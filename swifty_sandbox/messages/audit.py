"""`audit` findings and hints; `policy show` and the effective settings."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
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
    "policy.header": (
        "(a deny in any layer wins; otherwise the highest layer with a match; in a file "
        "the last match)",
        "（任一层的拒绝优先；否则由有匹配的最高层决定；同一文件内最后匹配的规则生效）",
    ),
    "policy.shadowed_by": ("shadowed by {rule}", "被 {rule} 覆盖"),
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
        "示例或模板文件：在同一文件中该 `deny` 规则之后为它添加 `ReadFile(...)` `allow` 规则"
        "（文件中最后匹配的规则生效）。真正的机密：停止跟踪它（`git rm --cached FILE`）。",
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
    "policy.effective.tmp": ("  tmp: {mode}, {path} at {at}",
                             "  `tmp`：{mode}，{path} 挂载于 {at}"),
    "policy.effective.toolchains": (
        "  toolchain caches: {mode}, {path} ({env})", "  工具链缓存：{mode}，{path}（{env}）"),
    "policy.effective.read_only": ("  read-only in writable roots ({count}):",
                                   "  可写根目录中的只读路径（{count}）："),
    "policy.effective.hidden": ("  hidden ({count}):", "  隐藏（{count}）："),
    "policy.effective.hidden_tracked": (
        "  hidden and tracked by git ({count}; git inside cannot diff or commit them):",
        "  隐藏且被 git 跟踪（{count}；沙箱内 git 无法比较或提交它们）："),
    "audit.risky-network": (
        "network.allow `{entry}`: {why}",
        "network.allow `{entry}`：{why}",
    ),
    "audit.risky-network.hint": (
        "name the hosts the tools need, or a preset such as @pypi or @npm",
        "请列出工具实际需要的主机，或使用 @pypi、@npm 等预设",
    ),
}
