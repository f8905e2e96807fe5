"""config/env.py's promise: every helper honours ``NAME_FILE`` (a mounted secret), and what
cannot be read is ImproperlyConfigured, which ``python -m config.server`` prints as one line
instead of a traceback. No database."""

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list, env_str


def test_each_helper_reads_a_file_named_by_name_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, content in {"S": "secret\n", "I": " 7\n", "B": "on\n", "L": "a, b,\n"}.items():
        (tmp_path / name).write_text(content)
        monkeypatch.setenv(f"LC_TEST_{name}_FILE", str(tmp_path / name))
        monkeypatch.setenv(f"LC_TEST_{name}", "the file wins")
    assert env_str("LC_TEST_S") == "secret"
    assert env_int("LC_TEST_I", 0) == 7
    assert env_bool("LC_TEST_B", False) is True
    assert env_list("LC_TEST_L", []) == ["a", "b"]


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda path: None, id="missing"),
        pytest.param(lambda path: path.mkdir(), id="a folder"),
        pytest.param(lambda path: path.write_bytes(b"\x8f\xff key \xfe"), id="not text"),
    ],
)
def test_a_file_that_cannot_be_read_as_text_is_improperly_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make
) -> None:
    path = tmp_path / "secret"
    make(path)
    monkeypatch.setenv("LC_TEST_SECRET_FILE", str(path))
    with pytest.raises(ImproperlyConfigured, match=r"LC_TEST_SECRET_FILE=.* cannot be read"):
        env_str("LC_TEST_SECRET")
