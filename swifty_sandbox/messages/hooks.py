"""Agent hooks (`hook AGENT`) and `init AGENT`."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
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
    "hook.search_hidden": (
        "Denied: searching {path} would read what `{pattern}` makes unreadable, and this "
        "search tool runs outside the sandbox. Search with `rg` or `grep -r` through the "
        "Bash tool (it runs confined, where those files are hidden), or search a narrower "
        "path.",
        "已拒绝：搜索 {path} 会读取被 `{pattern}` 设为不可读的内容，而此搜索工具在沙箱外运行。"
        "请通过 Bash 工具使用 `rg` 或 `grep -r` 搜索（它在沙箱中受限运行，这些文件被隐藏），"
        "或搜索更小的路径。",
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
    "init.launcher_missing": (
        "{path} is not a program that runs",
        "{path} 不是可运行的程序",
    ),
    "init.launcher_writable": (
        "{path} lies in {root}, where a confined command may write: the agent's next "
        "hook call would run whatever a command put there, outside the sandbox",
        "{path} 位于 {root} 中，受限命令可以写入那里：代理下一次调用钩子时会在沙箱外运行"
        "命令放在那里的任何内容",
    ),
    "init.launcher_warning": (
        "warning: the hook calls {problem}. Install swifty-sandbox outside the project "
        "(`pipx install` or `uv tool install`, see the README), then run this again.",
        "警告：钩子调用的是 {problem}。请在项目之外安装 swifty-sandbox（`pipx install` 或 "
        "`uv tool install`，见 README.md），然后再次运行本命令。",
    ),
    "init.trust_codex": (
        "Codex runs this hook only after you trust it, and reads {file} only in a "
        "project you trust. Once: start `codex` in {project}, trust the project if it "
        "asks, and at \"Hooks need review\" choose \"Trust all and continue\" (or run "
        "/hooks). Until then Codex runs commands without swifty-sandbox.",
        "Codex 只有在你信任此钩子之后才会运行它，并且只在你信任的项目中读取 {file}。"
        "只需一次：在 {project} 中启动 `codex`，如有提示请信任该项目，并在“Hooks need "
        "review”处选择“Trust all and continue”（或运行 /hooks）。在此之前 Codex 运行命令时"
        "不经过 swifty-sandbox。",
    ),
    "init.trust_codex_user": (
        "Codex runs this hook only after you trust it. Once: start `codex`, and at "
        "\"Hooks need review\" choose \"Trust all and continue\" (or run /hooks). Until "
        "then Codex runs commands without swifty-sandbox.",
        "Codex 只有在你信任此钩子之后才会运行它。只需一次：启动 `codex`，并在“Hooks need "
        "review”处选择“Trust all and continue”（或运行 /hooks）。在此之前 Codex 运行命令时"
        "不经过 swifty-sandbox。",
    ),
    "init.trust_gemini": (
        "Gemini CLI reads a project's settings only in a folder you trust (when folder "
        "trust is on): trust {project} when Gemini asks, or install with --user.",
        "启用文件夹信任时，Gemini CLI 只在你信任的文件夹中读取项目设置：在 Gemini 询问时"
        "信任 {project}，或使用 --user 安装。",
    ),
    "init.check": (
        "Check it with `swifty-sandbox doctor`.",
        "用 `swifty-sandbox doctor` 检查。",
    ),
    "init.already": (
        "The swifty-sandbox hook for {agent} is already in {file}; nothing to change.",
        "{file} 中已有 {agent} 的 swifty-sandbox 钩子；无需修改。",
    ),
    "hook.unconfinable": (
        "Denied: {agent}'s {tool} tool runs code that swifty-sandbox can neither read nor "
        "run confined. Use the Bash tool instead (it runs confined).",
        "已拒绝：{agent} 的 {tool} 工具运行的代码 swifty-sandbox 既无法分析也无法受限运行。"
        "请改用 Bash 工具（它在沙箱中受限运行）。",
    ),
}
