"""The core install: the CLI imports and monitors without the optional extras, and a command that needs one says
which extra to install."""

from __future__ import annotations

import subprocess
import sys
import textwrap

_BLOCK = textwrap.dedent('''
    import sys
    for name in ("pandas", "pyarrow", "matplotlib", "xgboost", "fastapi", "uvicorn", "starlette"):
        sys.modules[name] = None  # as if not installed
    from faithwatch.cli import run
    sys.argv = ["faithwatch", *sys.argv[1:]]
    run()
''')


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _BLOCK, *args], capture_output=True, text=True, timeout=600,
                          env={"OMP_NUM_THREADS": "1", "COLUMNS": "200", "PATH": ""})


def test_the_cli_loads_without_the_extras_and_names_the_missing_one(tmp_path) -> None:
    helped = _run("--help")
    assert helped.returncode == 0 and "monitor" in helped.stdout and "serve" in helped.stdout
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "a", "context": "c", "response": "r", "labels": []}\n')
    train = _run("train", "--data", str(data), "--out", str(tmp_path / "det"), "--text-only")
    assert train.returncode == 2, train.stderr
    assert "pip install 'faithwatch[train]'" in " ".join(train.stderr.split())
    serve = _run("serve", "--port", "0")
    assert serve.returncode == 2 and "faithwatch[server]" in " ".join(serve.stderr.split())
    proxy = _run("proxy", "--upstream", "http://127.0.0.1:9/v1")
    assert proxy.returncode == 2 and "faithwatch[server]" in " ".join(proxy.stderr.split())


def test_version_and_help_import_neither_torch_nor_transformers() -> None:
    probe = textwrap.dedent('''
        import sys
        from typer.testing import CliRunner
        from faithwatch.cli import app
        for args in (["--version"], ["--help"], ["monitor", "--help"], ["generate", "--help"], ["check", "--help"]):
            assert CliRunner().invoke(app, args).exit_code == 0, args
        print(sorted(m for m in ("torch", "transformers", "sentence_transformers", "peft") if m in sys.modules))
    ''')
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                          env={"OMP_NUM_THREADS": "1", "PATH": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
