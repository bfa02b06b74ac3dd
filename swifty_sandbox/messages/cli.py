"""The command line: usage errors, the project, the warm server."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
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
    "cli.no_processes": (
        "the system could not start another process ({error}): a cap on processes was "
        "reached — inside a sandbox its own (`--max-processes N`, "
        "`sandbox.limits.processes`; `unlimited` lifts it), else the user's (`ulimit -u`)",
        "系统无法再启动进程（{error}）：已达到进程数上限——在沙箱内是沙箱的上限"
        "（`--max-processes N`、`sandbox.limits.processes`；`unlimited` 取消上限），"
        "否则是用户的上限（`ulimit -u`）",
    ),
    "cli.error": ("error: {message}", "错误：{message}"),
    "cli.warning": ("warning: {message}", "警告：{message}"),
    "warm.lost": (
        "the swifty-sandbox server ended before the command finished; its outcome is "
        "unknown (set SWIFTY_DAEMON=off to run without the server)",
        "swifty-sandbox 服务在命令结束前退出；结果未知（设置 SWIFTY_DAEMON=off 可不经服务运行）",
    ),
    # -- the Landlock backend and the choice of backend (issue 18) --
    "cli.compile_target": (
        "--target is needed (or --backend bwrap|landlock)",
        "需要 --target（或 --backend bwrap|landlock）",
    ),
}
