"""click's own words (usage lines, usage errors, the help layout), in our table so that a
Chinese user reads no English fragment. Each English text is exactly click's message id
(`CLICK` maps it to its key); click's own placeholders (`{message}`, `%(prog)s`) are
kept, and filled by click."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    "usage.usage": ("Usage:", "用法:"),
    "usage.options": ("Options", "选项"),
    "usage.commands": ("Commands", "命令"),
    "usage.arguments": ("Positional arguments", "位置参数"),
    "usage.options_metavar": ("[OPTIONS]", "[选项]"),
    "usage.error": ("Error: {message}", "错误：{message}"),
    "usage.try": ("Try '{command} {option}' for help.", "运行 '{command} {option}' 查看帮助。"),
    "usage.help_option": ("Show this message and exit.", "显示此帮助并退出。"),
    "usage.version_option": ("Show the version and exit.", "显示版本并退出。"),
    "usage.version": ("%(prog)s, version %(version)s", "%(prog)s，版本 %(version)s"),
    "usage.no_such_option": ("No such option: {name}", "没有此选项：{name}"),
    "usage.no_such_option_quoted": ("No such option {name!r}.", "没有此选项 {name!r}。"),
    "usage.did_you_mean": ("Did you mean {possibility}?", "你是否想用 {possibility}？"),
    "usage.did_you_mean_one_of": ("(Did you mean one of: {possibilities}?)",
                                  "（你是否想用以下之一：{possibilities}？）"),
    "usage.no_such_command": ("No such command {name!r}.", "没有此命令 {name!r}。"),
    "usage.missing_command": ("Missing command.", "缺少命令。"),
    "usage.missing_argument": ("Missing argument", "缺少参数"),
    "usage.missing_option": ("Missing option", "缺少选项"),
    "usage.missing_parameter": ("Missing parameter", "缺少参数"),
    "usage.missing_kind": ("Missing {param_type}", "缺少{param_type}"),
    "usage.missing_named": ("Missing parameter: {param_name}", "缺少参数：{param_name}"),
    "usage.invalid_value_for": ("Invalid value for {param_hint}: {message}",
                                "{param_hint} 的值无效：{message}"),
    "usage.invalid_value": ("Invalid value: {message}", "值无效：{message}"),
    "usage.extra_argument": ("Got unexpected extra argument ({args})",
                             "收到多余的参数（{args}）"),
    "usage.extra_arguments": ("Got unexpected extra arguments ({args})",
                              "收到多余的参数（{args}）"),
    "usage.requires_argument": ("Option {name!r} requires an argument.",
                                "选项 {name!r} 需要一个值。"),
    "usage.requires_arguments": ("Option {name!r} requires {nargs} arguments.",
                                 "选项 {name!r} 需要 {nargs} 个值。"),
    "usage.takes_no_value": ("Option {name!r} does not take a value.",
                             "选项 {name!r} 不接受值。"),
    "usage.choose_from": ("Choose from:\n\t{choices}", "可选：\n\t{choices}"),
    "usage.number": ("number", "数字"),
    "usage.not_choice": ("{value!r} is not {choice}.", "{value!r} 不是 {choice}。"),
    "usage.not_one_of": ("{value!r} is not one of {choices}.", "{value!r} 不是 {choices} 之一。"),
    "usage.not_in_range": ("{value} is not in the range {range}.",
                           "{value} 不在范围 {range} 内。"),
    "usage.not_a_number": ("{value!r} is not a valid {number_type}.",
                           "{value!r} 不是有效的{number_type}。"),
    "usage.not_a_boolean": ("{value!r} is not a valid boolean. Recognized values: {states}",
                            "{value!r} 不是有效的布尔值。可用的值：{states}"),
    "usage.cannot_open": ("Could not open file {filename!r}: {message}",
                          "无法打开文件 {filename!r}：{message}"),
    "usage.path_missing": ("{name} {filename!r} does not exist.", "{name} {filename!r} 不存在。"),
    "usage.path_is_file": ("{name} {filename!r} is a file.", "{name} {filename!r} 是文件。"),
    "usage.path_is_directory": ("{name} {filename!r} is a directory.",
                                "{name} {filename!r} 是目录。"),
    "usage.path_unreadable": ("{name} {filename!r} is not readable.",
                              "{name} {filename!r} 不可读。"),
    "usage.file": ("file", "文件"),
    "usage.directory": ("directory", "目录"),
    "usage.path": ("path", "路径"),
    "usage.default": ("default: {default}", "默认：{default}"),
    "usage.env_var": ("env var: {var}", "环境变量：{var}"),
    "usage.required": ("required", "必需"),
    "usage.aborted": ("Aborted!", "已中止！"),
}

# click's message id → our key. ngettext's singular and plural ids are both here.
CLICK: dict[str, str] = {
    english: key for key, (english, _) in MESSAGES.items()
    if key not in ("usage.options_metavar",)}
