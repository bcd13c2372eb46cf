"""Drive the project's Harbor agent (swe_taskflow_harbor.agent.MiniSweAgent) through a session in Harbor's
venv, without Docker: a stand-in environment runs no command (``echo`` output only), the model is LiteLLM on
a loopback endpoint (or a refused port). Prints one JSON line: what the endpoint received, what was raised
and when. Run as ``HARBOR_PY tests/support/harbor_agent_probe.py SPEC.json`` with the repository on PYTHONPATH.

SPEC: ``{"turns": [...], "mode": "ok" | "refused" | "cancel", "server": "busy" | "failing", "agent_kwargs": {...},
"model_kwargs": {...}, "base_from_env": bool}`` (the endpoint in OPENAI_BASE_URL, not ``api_base``):
``cancel`` cancels the first turn once the endpoint saw ``cancel_after`` requests, then watches for 6 s;
the ``busy`` endpoint never ends the turn (commands that finish nothing), the ``failing`` one answers 500
(mini-swe-agent retries it after 4 s, 8 s, ...).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

from harbor.environments.base import ExecResult
from harbor.models.agent.context import AgentContext
from harbor.models.task.config import TaskOS
from harbor.models.trial.result import ExceptionInfo

from swe_taskflow_harbor.agent import MiniSweAgent
from tests.support.loopback_chat import LoopbackChat

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


class StandInEnvironment:
    """What the agent uses of a Harbor environment: ``exec`` (answers ``echo X`` with X, else ok), ``os``, and
    the agent-log upload (nothing is uploaded: the folder counts as mounted)."""

    os = TaskOS.LINUX

    def __init__(self) -> None:
        self.commands: list[str] = []

    async def exec(self, command: str, cwd: str | None = None, timeout_sec: int | None = None, **_: object):
        self.commands.append(command)
        await asyncio.sleep(0.05)
        out = command[5:] + "\n" if command.startswith("echo ") else "ok\n"
        return ExecResult(stdout=out, stderr="", return_code=0)

    def is_path_mounted(self, *_: object) -> bool:
        return True


def _reply(command: str, n: int, model: str) -> dict:
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1700000000 + n, "model": model,
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Next step.", "tool_calls": [{
                    "id": f"call_{n}", "type": "function",
                    "function": {"name": "bash", "arguments": json.dumps({"command": command})}}]}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}


def _free_port() -> int:
    """A loopback port nothing listens on (bound, then closed: connections to it are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _main(spec: dict) -> dict:
    mode = spec.get("mode", "ok")
    chat = None
    if mode == "refused":
        base = f"http://127.0.0.1:{_free_port()}/v1"
    else:
        def respond(body: dict, n: int) -> dict:
            if mode == "cancel" and spec.get("server") == "failing":
                return {"_http_status": 500, "error": {"message": "overloaded", "type": "server_error"}}
            if mode == "cancel":
                time.sleep(0.1)
                return _reply("sleep 0", n, body["model"])      # never submits: the turn runs until cancelled
            return _reply(SUBMIT, n, body["model"])
        chat = LoopbackChat(respond)
        base = chat.url
    logs = Path(tempfile.mkdtemp(prefix="agent-probe-"))
    if spec.get("base_from_env"):       # as the README's blocks point LiteLLM at an endpoint
        os.environ["OPENAI_BASE_URL"] = base
        kwargs = dict(spec.get("model_kwargs", {}))
    else:
        kwargs = {"api_base": base, **spec.get("model_kwargs", {})}
    agent = MiniSweAgent(logs, model_name="openai/gpt-5-mini", model_kwargs=kwargs,
                         **spec.get("agent_kwargs", {}))
    env = StandInEnvironment()
    out: dict = {"base": base, "raised": None}
    t0 = time.monotonic()
    try:
        for k, text in enumerate(spec["turns"]):
            ctx = AgentContext()
            call = agent.run if k == 0 else agent.resume
            if mode == "cancel":
                task = asyncio.create_task(call(instruction=text, environment=env, context=ctx))
                while len(chat.requests) < spec.get("cancel_after", 3):
                    await asyncio.sleep(0.02)
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass
                out["requests_at_cancel"] = len(chat.requests)
                out["commands_at_cancel"] = len(env.commands)
                await asyncio.sleep(6.0)
                break
            await call(instruction=text, environment=env, context=ctx)
    except Exception as exc:  # noqa: BLE001 - the probe reports what Harbor would record
        info = ExceptionInfo.from_exception(exc)
        out["raised"] = {"exception_type": info.exception_type, "exception_message": info.exception_message}
    out["seconds"] = round(time.monotonic() - t0, 2)
    out["threads"] = [t.name for t in threading.enumerate() if t.name.startswith("asyncio_")]
    if chat is not None:
        out["requests"] = [r["body"]["messages"] for r in chat.requests]
        chat.close()
    out["commands"] = env.commands
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_main(json.loads(Path(sys.argv[1]).read_text())))))
