"""The console scripts (``karta.cli.entry``): the same output and exit codes as ``main()``, every byte
flushed, a closed pipe said nothing about, and the interpreter's teardown skipped only when nothing
asked for work at exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
WORKLOAD = REPO / "examples" / "workloads" / "pytorchjob-train-7.yaml"

_ENTRY = "from karta.cli.entry import main; main()"
_MAIN = "import sys; from karta.cli.main import main; sys.exit(main())"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "KUBECONFIG": str(tmp_path / "none"), "HOME": str(tmp_path)}
    env["KARTA_DEFINITIONS"] = str(tmp_path / "definitions")
    return env


def _run(code: str, *args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", code, *args]
    return subprocess.run(command, capture_output=True, text=True, env=_env(tmp_path), timeout=120)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["definitions"], 0),
        (["inspect", "-f", str(WORKLOAD), "-o", "json"], 0),
        (["gang", "--backend", "kueue", "-f", str(WORKLOAD), "-o", "yaml"], 0),
        (["validate", "/nonexistent.yaml"], 2),
        (["definitions", "no-such-definition"], 4),
        (["--no-such-flag"], 2),
        (["--version"], 0),
    ],
)
def test_the_console_script_prints_and_exits_as_main_does(args: list[str], code: int, tmp_path: Path) -> None:
    entry, main = _run(_ENTRY, *args, tmp_path=tmp_path), _run(_MAIN, *args, tmp_path=tmp_path)
    assert (entry.returncode, entry.stdout, entry.stderr) == (main.returncode, main.stdout, main.stderr)
    assert entry.returncode == code


def test_output_to_a_file_is_complete(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    command = [sys.executable, "-c", _ENTRY, "definitions", "-o", "json"]
    with out.open("w") as stream:
        done = subprocess.run(command, stdout=stream, env=_env(tmp_path), timeout=120, check=False)
    assert done.returncode == 0
    expected = _run(_MAIN, "definitions", "-o", "json", tmp_path=tmp_path).stdout
    assert out.read_text() == expected and len(expected) > 10_000


def test_a_reader_that_goes_away_gets_no_traceback(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _ENTRY, "definitions", "-o", "yaml"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(tmp_path),
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(16)
    proc.stdout.close()  # as `kli definitions -o yaml | head -c 16` does
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr


def test_the_collector_threshold_is_raised_for_the_process_only() -> None:
    probe = (
        "import gc; old = gc.get_threshold()[0]; import karta.cli.entry; print(old, gc.get_threshold()[0])"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["700", "50000"]
    probe = "import gc; import karta.cli.main; print(gc.get_threshold()[0])"  # main() in-process: untouched
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["700"]


@pytest.mark.parametrize(
    ("setup", "printed"),
    [
        ("import atexit; atexit.register(lambda: print('at exit', flush=True))", "at exit"),
        (
            "import threading, time\n"
            "threading.Thread(target=lambda: (time.sleep(0.2), print('thread done', flush=True))).start()",
            "thread done",
        ),
        ("print('buffered', end='')", "buffered"),
    ],
    ids=["atexit", "thread", "buffer"],
)
def test_work_left_for_the_exit_is_done(setup: str, printed: str) -> None:
    code = f"{setup}\nfrom karta.cli.entry import leave\nleave(3)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (3, printed)


@pytest.mark.parametrize(("code", "status", "stderr"), [(None, 0, ""), (True, 1, ""), ("bye", 1, "bye\n")])
def test_exit_codes_are_read_as_sys_exit_reads_them(code: object, status: int, stderr: str) -> None:
    script = f"from karta.cli.entry import leave\nleave({code!r})"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (status, stderr)


def test_output_that_cannot_be_written_is_an_error() -> None:
    """A full disk at the last flush: exit 1 with one line, never success with half an output."""
    code = "print('x' * 100, end='')\nfrom karta.cli.entry import leave\nleave(0)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # the output waits in the buffer
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-c", code], stdout=full, stderr=subprocess.PIPE, text=True, env=env, timeout=60
        )
    assert done.returncode == 1
    assert done.stderr == "error: cannot write the output: [Errno 28] No space left on device\n"


@pytest.mark.parametrize("code", [_ENTRY, _MAIN], ids=["console-script", "main"])
def test_a_large_output_that_cannot_be_written_is_an_error_not_a_bug(code: str, tmp_path: Path) -> None:
    """A full disk while the command still writes (more than a buffer of output): one line saying
    the output could not be written, exit 1; not "internal error ... a bug in kli", not success."""
    command = [sys.executable, "-c", code, "definitions", "-o", "json"]
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            command, stdout=full, stderr=subprocess.PIPE, text=True, env=_env(tmp_path), timeout=120
        )
    assert done.returncode == 1
    assert done.stderr == "error: cannot write the output: [Errno 28] No space left on device\n"


def test_main_in_process_reports_an_unwritable_output_and_leaves_the_streams_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    from karta.cli.main import main

    class Full:
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

        def flush(self) -> None:
            pass

    full = Full()
    monkeypatch.setattr(sys, "stdout", full)
    assert main(["definitions"]) == 1
    assert sys.stdout is full
    assert capsys.readouterr().err == "error: cannot write the output: [Errno 28] No space left on device\n"


def test_only_a_failed_write_of_a_stream_is_the_outputs_fault() -> None:
    """An OSError naming a file, another errno or a broken pipe keeps its own handling (a bug
    report line, or quiet for a reader that went away)."""
    import errno

    from karta.cli import streams

    assert streams.unwritable_output(OSError(errno.ENOSPC, "No space left on device"))
    assert not streams.unwritable_output(OSError(errno.ENOSPC, "No space left on device", "/tmp/x"))
    assert not streams.unwritable_output(OSError(errno.ENOENT, "No such file or directory"))
    assert not streams.unwritable_output(BrokenPipeError(errno.EPIPE, "Broken pipe"))
    assert not streams.unwritable_output(ValueError("I/O operation on closed file"))
