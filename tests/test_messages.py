"""The message table: English and Chinese agree; language selection follows SPEC §7."""

from __future__ import annotations

import pytest

from swifty_sandbox.policy.messages import MESSAGES, parameters, t


@pytest.mark.parametrize("key", sorted(MESSAGES))
def test_both_languages_have_the_same_parameters(key: str) -> None:
    english, chinese = MESSAGES[key]
    assert english.strip() and chinese.strip()
    assert parameters(english) == parameters(chinese), key
    assert english != chinese


@pytest.mark.parametrize(("env", "chinese"), [
    ({}, False),
    ({"LANG": "zh_CN.UTF-8"}, True),
    ({"LANG": "en_US.UTF-8", "LC_ALL": "zh_TW.UTF-8"}, True),
    ({"LC_MESSAGES": "zh_CN", "LANG": "en_US"}, True),
    ({"LC_ALL": "C", "LANG": "zh_CN"}, False),
    ({"SWIFTY_LANG": "en", "LANG": "zh_CN.UTF-8"}, False),
    ({"SWIFTY_LANG": "zh"}, True),
])
def test_language_selection(monkeypatch: pytest.MonkeyPatch, env: dict[str, str],
                            chinese: bool) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert (t("word.denied") == "已拒绝") is chinese
