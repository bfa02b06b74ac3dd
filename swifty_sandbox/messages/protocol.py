"""The JSON-lines protocol (`serve`, `check --batch`): bad lines and fields."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    "serve.not_bool": (
        "`{key}` must be true or false (a JSON boolean), found {found}; the request is "
        "denied",
        "`{key}` 必须是 `true` 或 `false`（JSON 布尔值），实际为 {found}；该请求被拒绝",
    ),
    "serve.bad_timeout": (
        "`timeout` must be a positive number of seconds, found {found}; nothing ran",
        "`timeout` 必须是正数（秒），实际为 {found}；未运行任何命令",
    ),
    "serve.unknown_id": (
        "no permission request with id {id} is waiting (waiting: {waiting})",
        "没有 `id` 为 {id} 的权限请求在等待（正在等待的是 {waiting}）",
    ),
    "serve.no_waiter": (
        "no permission request with id {id} is waiting",
        "没有 `id` 为 {id} 的权限请求在等待",
    ),
    "serve.not_started": (
        "stdin closed before this command started; nothing ran",
        "命令开始之前 stdin 已关闭；未运行任何命令",
    ),
    "serve.ended_at_eof": (
        "the command was ended: stdin closed while it ran",
        "命令已被终止：运行期间 stdin 已关闭",
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
    "jsonl.not_finite": (
        "not JSON: `{token}` is no finite number",
        "不是 JSON：`{token}` 不是有限数",
    ),
}
