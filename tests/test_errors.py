"""Bad input (issue item 7): file:line:col, exit 2, never a traceback; a model is never executed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from movers.cli import main


def cli(tmp_path, src: str, *args: str) -> tuple[int, str, str]:
    f = tmp_path / "model.py"
    f.write_text(src)
    p = subprocess.run([sys.executable, "-m", "movers.cli", "check", str(f), *args],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize(
    ("src", "where", "needle"),
    [
        ("x = 1 +\n", "1:8", "syntax error"),
        ("import os\n", "1:1", "import is not allowed"),
        ("from threading import Lock\n", "1:1", "only 'from movers.lang import *'"),
        ("x = 0\ndef f():\n    eval('x')\nThread(target=f).start()\n", "3:5", "never executed"),
        ("x = 0\ndef f():\n    exec('x = 1')\nThread(target=f).start()\n", "3:5", "never executed"),
        ("x = open('/etc/passwd')\n", "1:5", "never executed"),
        ("x = __import__('os')\n", "1:5", "never executed"),
        ("def f():\n    try:\n        pass\n    except E:\n        pass\n", "2:5", "unsupported construct: try"),
        ("x = [i for i in range(3)]\n", "1:5", "unsupported construct: listcomp"),
        ("x = 1.5\n", "1:5", "unsupported value"),
        ("x = 3 / 2\n", "1:5", "use //"),
        ("def f():\n    y = zz\n", "2:9", "name 'zz' is not defined"),
        ("def f():\n    lambda: 0\n", "2:5", "nested functions"),
        ("def f(a=1):\n    pass\n", "1:1", "plain positional parameters"),
        ("x = 0\nexclusive(y, lambda t: True)\n", "2:11", "not a global variable"),
        ("def f():\n    return g()\n", "2:12", "unknown function 'g'"),
        ("def f():\n    break\n", "2:5", "outside a loop"),
    ],
)
def test_rejected_with_position(tmp_path, src: str, where: str, needle: str) -> None:
    code, out, err = cli(tmp_path, src)
    assert code == 2
    assert "Traceback" not in out + err
    assert f"model.py:{where}: " in err, err
    assert needle in err


def test_model_is_never_executed(tmp_path) -> None:
    marker = tmp_path / "ran"
    src = f"x = 0\nif x == 0:\n    open({str(marker)!r}, 'w')\n"
    code, out, err = cli(tmp_path, src)
    assert code == 2
    assert not marker.exists()


def test_missing_file_and_bad_options(tmp_path, capsys) -> None:
    assert main(["check", str(tmp_path / "nope.py")]) == 2
    assert "cannot read the model" in capsys.readouterr().err
    f = tmp_path / "m.py"
    f.write_text("x = 0\n")
    assert main(["check", str(f), "--reduction", "bogus"]) == 2
    assert "unknown reduction" in capsys.readouterr().err
    assert main(["check", str(f), "--max-states", "0"]) == 2
    assert main(["check", str(f), "--atomicity", "commit"]) == 2
    with pytest.raises(SystemExit) as e:
        main(["check", str(f), "--search", "sideways"])
    assert e.value.code == 2


def test_python_api_returns_error_verdict() -> None:
    import movers

    r = movers.check("x = (\n")
    assert r.verdict == "error" and r.error.startswith("<model>:")
    assert r.exit_code == 2
