"""Helpers for the tests that use the toolkit as a user outside the repository would: the
built distributions, fresh virtual environments installing them, commands run in those
environments (optionally with no network at all), and Space apps served from copies of the
module folders. The session fixtures built on them live in ``conftest.py``."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
#: The CPU build of torch the project is tested with (installed first, as setup.sh does).
TORCH = "torch==2.13.0"
PIP_TIMEOUT = 1800


@dataclass
class Dist:
    """The sdist and wheel `python -m build` made, in ``folder``."""

    folder: Path
    sdist: Path
    wheel: Path


def build_distributions(out: Path) -> Dist:
    """``python -m build`` of the checkout (sdist, then the wheel built from the sdist)."""
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=PIP_TIMEOUT,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [sdist], [wheel] = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    return Dist(out, sdist, wheel)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: no offline switches or endpoint of the test
    session, no virtual environment or checkout on the path, and ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HF_", "UNIMATCH_", "PYTEST", "VIRTUAL_ENV", "PYTHON"))
        and k != "OPENAI_API_KEY"
    }
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if ".venv" not in p
    )
    env.update(GRADIO_ANALYTICS_ENABLED="False", TOKENIZERS_PARALLELISM="false", **extra)
    return env


class Venv:
    """A fresh virtual environment (no system site-packages) at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=300)
        self.python = path / "bin" / "python"
        self.bin = path / "bin"

    def pip(self, *args: str, cwd: Path | None = None) -> str:
        """Run pip in the environment; returns its output (fails the test on an error)."""
        proc = subprocess.run(
            [str(self.python), "-m", "pip", "install", "--disable-pip-version-check", *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=clean_env(),
            timeout=PIP_TIMEOUT,
        )
        assert proc.returncode == 0, f"pip install {args}:\n{proc.stdout[-4000:]}{proc.stderr}"
        return proc.stdout

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        """A user's environment with this venv first on PATH and fresh caches under home."""
        env = clean_env(
            HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), HF_HOME=str(home / ".hf"), **extra
        )
        env["PATH"] = f"{self.bin}{os.pathsep}{env['PATH']}"
        return env

    def run(
        self,
        argv: list[str],
        cwd: Path,
        offline: bool = False,
        timeout: float = 900,
        **extra: str,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` (``python`` or a console script of the venv) in ``cwd``; with
        ``offline``, in a network namespace with no network at all."""
        exe = str(self.python) if argv[0] == "python" else str(self.bin / argv[0])
        prefix = no_network_prefix() if offline else []
        return subprocess.run(
            [*prefix, exe, *argv[1:]],
            cwd=cwd,
            env=self.env(cwd / ".home", **extra),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def remove(self) -> None:
        """Delete the environment in a detached ``rm`` (tens of thousands of files take a
        minute or more to unlink on a slow disk; the session need not wait for it)."""
        subprocess.Popen(
            ["rm", "-rf", str(self.path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )


def no_network_prefix() -> list[str]:
    """``unshare -rn``: a user and network namespace without any interface up (not even
    loopback); skips the test where the kernel does not allow it."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0:
        return [unshare, "-rn"]
    pytest.skip("cannot cut the network: `unshare -rn` is unavailable here")


def copy_alone(folder: Path, parent: Path) -> Path:
    """``folder`` copied alone into the empty folder ``parent`` (no caches)."""
    parent.mkdir(parents=True)
    assert not any(parent.iterdir())
    return Path(
        shutil.copytree(folder, parent / folder.name, ignore=shutil.ignore_patterns("__pycache__"))
    )


def card_front_matter(folder: Path) -> dict:
    return yaml.safe_load((folder / "README.md").read_text(encoding="utf-8").split("---\n")[1])


def install_requirements(venv: Venv, folder: Path, dist: Dist) -> str:
    """Install a module folder's requirements.txt plus its card's gradio, with the built
    wheel as the only source of the toolkit; returns pip's output."""
    gradio = f"gradio=={card_front_matter(folder)['sdk_version']}"
    out = venv.pip("-r", "requirements.txt", gradio, "--find-links", str(dist.folder), cwd=folder)
    processed = [line for line in out.splitlines() if line.startswith("Processing ")]
    assert any(dist.wheel.name in line for line in processed), out[-3000:]
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class App:
    """A Space's ``python app.py --port N`` running from its folder in a venv."""

    def __init__(self, venv: Venv, folder: Path, work: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log = work / f"{folder.name}-app.log"
        work.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [str(venv.python), "app.py", "--port", str(self.port)],
                cwd=folder,
                env=venv.env(work / ".home"),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"app.py exited ({self.proc.returncode}):\n{self.log.read_text()}")
            try:
                with urllib.request.urlopen(self.url, timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"app.py did not answer within 120 s:\n{self.log.read_text()}")
            time.sleep(0.3)

    def call(self, api_name: str, data: list, timeout: float = 120) -> list:
        """One call of a named Gradio endpoint over its HTTP API; returns the outputs."""
        request = urllib.request.Request(
            f"{self.url}gradio_api/call/{api_name}",
            data=json.dumps({"data": data}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            event = json.load(response)["event_id"]
        url = f"{self.url}gradio_api/call/{api_name}/{event}"
        with urllib.request.urlopen(url, timeout=timeout) as response:
            stream = response.read().decode()
        kind, payload = None, None
        for line in stream.splitlines():
            if line.startswith("event: "):
                kind = line[len("event: ") :]
            elif line.startswith("data: ") and kind == "complete":
                payload = json.loads(line[len("data: ") :])
        assert payload is not None, stream
        return payload

    def stop(self) -> str:
        """Stop the app; returns its log."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.log.read_text(errors="replace")
