"""The MCP stdio server: its tools and their answers."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    "fileio.link": (
        "{path}: a symbolic link (or a mount) is on the path now, where the decision saw "
        "none; nothing was opened. Ask again with the path it leads to.",
        "{path}：路径上现在有一个符号链接（或挂载点），而做出决定时没有；未打开任何文件。"
        "请用它所指向的路径重新请求。",
    ),
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
    "mcp.form.allow": ("Allow this once", "仅允许这一次"),
    "mcp.form.always": ("Always allow it (adds a local rule)", "总是允许（添加一条本地规则）"),
    "mcp.elicit": (
        "swifty-sandbox: {reason}\n  {request}\nAllow it?",
        "swifty-sandbox：{reason}\n  {request}\n是否允许？",
    ),
    "mcp.question_changed": (
        "Not run: decided again, this is not what you were asked (a path now leads "
        "elsewhere). {reason}",
        "未运行：重新裁决后，这已不是询问你的内容（某个路径现在指向别处）。{reason}",
    ),
    "mcp.ask_denied": (
        "{reason} Not done: this MCP client cannot ask a person (no elicitation). To "
        "allow it, add {rules} with `effect: allow` to {file}.",
        "{reason} 未执行：此 MCP 客户端无法询问用户（不支持 MCP 征询）。如需允许，"
        "请将 {rules}（`effect: allow`）加入 {file}。",
    ),
    "mcp.ask_denied_norule": (
        "{reason} Not done: this MCP client cannot ask a person (no elicitation), and no "
        "exact rule can allow this command. Split it into plain commands.",
        "{reason} 未执行：此 MCP 客户端无法询问用户（不支持 MCP 征询），且没有精确的规则"
        "能允许该命令。请拆分为普通命令。",
    ),
    "mcp.exit": ("\n[exit code {code}]", "\n[退出码 {code}]"),
    "mcp.not_run": ("\n[not run: exit code {code}]", "\n[未运行：退出码 {code}]"),
    "mcp.truncated": (
        "\n[truncated: only the first {limit} bytes]",
        "\n[已截断：仅前 {limit} 字节]",
    ),
    "mcp.written": ("Wrote {path} ({size} bytes).", "已写入 {path}（{size} 字节）。"),
    "mcp.edited": ("Edited {path} ({count} replacement(s)).",
                   "已编辑 {path}（替换 {count} 处）。"),
    "mcp.edit_too_large": (
        "{path} is larger than {limit} bytes; edit_file rewrites smaller files only.",
        "{path} 大于 {limit} 字节；edit_file 只改写更小的文件。",
    ),
    "mcp.edit_mismatch": (
        "{path}: `old_string` occurs {count} times; it must occur exactly once (or set "
        "`replace_all` when it occurs more often).",
        "{path}：`old_string` 出现了 {count} 次；它必须恰好出现一次（出现多次时请设置 "
        "`replace_all`）。",
    ),
    "mcp.missing": (
        "the MCP server needs the `mcp` package: pip install 'swifty-sandbox[mcp]'",
        "MCP 服务器需要 `mcp` 包：`pip install 'swifty-sandbox[mcp]'`",
    ),
}
