"""The session log and its readers: `log` and `report` (the page's labels too)."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    "log.unwritable": (
        "swifty-sandbox: cannot write the session log {path} ({error}); this command's "
        "result stands, unrecorded.",
        "swifty-sandbox：无法写入会话日志 {path}（{error}）；本命令的结果不受影响，但未被记录。"),
    "log.not_ours": ("not a regular file or directory owned by this user",
                     "不是属于当前用户的普通文件或目录"),
    "log.busy": ("rotated by other writers while appending", "追加时被其他写入者反复轮转"),
    "log.bad_since": (
        "--since takes a duration (90s, 10m, 2h, 3d) or a time (2026-12-02, "
        "2026-12-02T01:30, ISO 8601), not {value!r}.",
        "--since 需要时长（90s、10m、2h、3d）或时间（2026-12-02、2026-12-02T01:30，"
        "ISO 8601），而不是 {value!r}。"),
    "log.empty": ("No records for {project} in {path}.", "{path} 中没有 {project} 的记录。"),
    "log.line_decision": ("{time}  {surface:<12} {effect:<5} {what}  (decided, not run)",
                          "{time}  {surface:<12} {effect:<5} {what}  （仅决定，未运行）"),
    "log.line_run": ("{time}  {surface:<12} {effect:<5} {what}  → exit {exit_code}, {ms} ms",
                     "{time}  {surface:<12} {effect:<5} {what}  → 退出码 {exit_code}，{ms} 毫秒"),
    "report.written": ("Report written to {path} ({count} records).",
                       "报告已写入 {path}（{count} 条记录）。"),
    "report.title": ("swifty-sandbox session report", "swifty-sandbox 会话报告"),
    "report.project": ("Project", "项目"),
    "report.generated": ("Generated", "生成于"),
    "report.records": ("records", "条记录"),
    "report.commands": ("commands run", "已运行命令"),
    "report.denied": ("denied", "已拒绝"),
    "report.violations": ("violations", "违规"),
    "report.hosts": ("network destinations", "网络目标"),
    "report.all": ("All", "全部"),
    "report.allow": ("allow", "允许"),
    "report.deny": ("deny", "拒绝"),
    "report.ask": ("ask", "询问"),
    "report.only_violations": ("Violations only", "仅显示违规"),
    "report.search": ("Filter by text…", "按文本筛选…"),
    "report.none": ("Nothing matches.", "没有匹配的记录。"),
    "report.run": ("run", "运行"),
    "report.decision": ("decision", "决定"),
    "report.exit": ("exit", "退出码"),
    "report.rule": ("rule", "规则"),
    "report.network": ("network", "网络"),
    "report.blocked": ("blocked", "已阻止"),
    "report.allowed": ("allowed", "已允许"),
    "report.fix": ("fix", "修复"),
    "report.backend": ("backend", "后端"),
    "report.timed_out": ("timed out", "超时"),
    "report.not_run": ("did not run", "未运行"),
    "report.language": ("中文", "English"),
    "report.shown": ("shown", "已显示"),
}
