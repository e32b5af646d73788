"""The README's Python examples run as written (in a scratch directory)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "the README shows no Python example"
    monkeypatch.chdir(tmp_path)
    exec(compile("\n".join(blocks), str(README), "exec"), {})
    assert "raw" in capsys.readouterr().out  # root.tree() printed the hierarchy
