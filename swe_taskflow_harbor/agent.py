"""A host-side Harbor agent that drives mini-swe-agent through a whole multi-step task in one conversation.

Harbor's mini-swe-agent installs into the container (network needed) and cannot resume between steps.
This agent runs mini-swe-agent's loop on the host instead: the model is called from the host (LiteLLM,
any OpenAI-compatible endpoint, or mini-swe-agent's deterministic test model), every command runs in
the task environment through Harbor's environment API (so the container keeps no network), and
``resume`` continues the same conversation with the next user turn. Every turn reaches the model as its
user wrote it; only the session's first issue turn carries mini-swe-agent's issue framing (its
``instance_template``, "Please solve this issue: ..."), as in the paper's runs (Appendix E); how commands
run and how a request ends are said once, in the system message (:data:`SESSION_RULES`). A connection or
authentication error of the model endpoint fails the turn at once with one line naming the endpoint
(:class:`ModelEndpointError`, Harbor records it in ``result.json``); a cancelled trial makes no further
model call or command. After every step it writes the
cumulative conversation as an ATIF trajectory (``trajectory.json``) and as mini-swe-agent's own
trajectory (``mini-swe-agent.trajectory.json``) into the agent log folder. Harbor's own ATIF converter
treats only the first user message as a user step; here every later user *turn* (marked
``extra.swe_taskflow_turn``) is a user step too, and the other user/tool messages are observations of the
preceding agent step (:func:`to_atif`).

Use: ``harbor run -a swe_taskflow_harbor.agent:MiniSweAgent -m MODEL --resume-trajectory
[--ak model_class=deterministic --ak outputs=FILE.json] [--ak model_kwargs='{"api_base": ...}']``.
"""

from __future__ import annotations

import asyncio
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
# LiteLLM (under mini-swe-agent) otherwise fetches its model price map from GitHub at import: traffic to an
# address that is not loopback, which this project never sends (its bundled copy is used instead).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import yaml  # noqa: E402
from harbor.agents.base import BaseAgent  # noqa: E402
from harbor.agents.capabilities import AgentCapabilities  # noqa: E402
from harbor.environments.base import BaseEnvironment  # noqa: E402
from harbor.models.agent.context import AgentContext  # noqa: E402
from harbor.models.trajectories import (Agent, FinalMetrics, Metrics, Observation, ObservationResult,  # noqa: E402
                                        Step, ToolCall, Trajectory)
from harbor.models.trial.paths import EnvironmentPaths  # noqa: E402

import minisweagent  # noqa: E402
from minisweagent.agents.default import DefaultAgent  # noqa: E402
from minisweagent.exceptions import Submitted  # noqa: E402
from minisweagent.models import get_model  # noqa: E402

from swe_taskflow_harbor.endpoint import (ModelEndpointError, describe_endpoint, endpoint_line,  # noqa: E402
                                          is_endpoint_error)
from swe_taskflow_harbor.turns import ISSUE, turn_kind  # noqa: E402

#: Said once, after the configured system message: how the session works (user turns stay as written).
SESSION_RULES = """\
A user sends you requests one at a time in this conversation, about the repository in your environment.

Each of your responses includes your reasoning and at least one bash tool call. Every command runs in a new
subshell: directory and environment changes do not persist (prefix a command with `cd DIR && ...`).

When you are done with the user's current request, issue `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` on its own,
not combined with any other command. The user may then send the next request in this same conversation."""
ATIF_FILE, NATIVE_FILE = "trajectory.json", "mini-swe-agent.trajectory.json"
SCHEMA_VERSION = "ATIF-v1.8"


class TurnCancelled(Exception):
    """Raised in the worker thread, before any model call or command, once Harbor cancelled the step (the
    session stays cancelled: a later step's turn ends ``Cancelled`` at once, as before)."""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def _ts(message: dict) -> str | None:
    t = (message.get("extra") or {}).get("timestamp")
    return datetime.fromtimestamp(t, tz=timezone.utc).isoformat() if isinstance(t, (int, float)) else None


def usage(message: dict) -> tuple[int, int]:
    """(prompt, completion) tokens a LiteLLM response reported; (0, 0) for a model that reports none."""
    resp = (message.get("extra") or {}).get("response") or {}
    u = resp.get("usage") or {}
    return int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0)


def to_atif(messages: list[dict], *, session_id: str, model_name: str, agent_version: str,
            turns: list[dict], total_cost: float) -> dict:
    steps: list[Step] = []
    tin = tout = 0
    for m in messages:
        role = m.get("role")
        extra = m.get("extra") or {}
        if role == "exit":
            continue
        if role == "system":
            steps.append(Step(step_id=len(steps) + 1, timestamp=_ts(m), source="system", message=_text(m.get("content"))))
        elif role == "user" and "swe_taskflow_turn" in extra:
            steps.append(Step(step_id=len(steps) + 1, timestamp=_ts(m), source="user", message=_text(m.get("content")),
                              extra={"turn": extra["swe_taskflow_turn"]}))
        elif role in ("user", "tool"):
            if steps and steps[-1].source == "agent":
                obs = steps[-1].observation or Observation(results=[])
                obs.results.append(ObservationResult(source_call_id=m.get("tool_call_id"),
                                                     content=_text(m.get("content"))))
                steps[-1].observation = obs
        elif role == "assistant":
            p, c = usage(m)
            tin, tout = tin + p, tout + c
            calls = [ToolCall(tool_call_id=str(a.get("tool_call_id") or f"call_{len(steps) + 1}_{i}"),
                              function_name="bash", arguments={"command": a.get("command", "")})
                     for i, a in enumerate(extra.get("actions") or [])]
            steps.append(Step(step_id=len(steps) + 1, timestamp=_ts(m), source="agent", model_name=model_name,
                              message=_text(m.get("content")), tool_calls=calls or None,
                              metrics=Metrics(prompt_tokens=p or None, completion_tokens=c or None,
                                              cost_usd=float(extra.get("cost") or 0.0)),
                              llm_call_count=1))
    traj = Trajectory(schema_version=SCHEMA_VERSION, session_id=session_id,
                      agent=Agent(name="swe-taskflow-mini-swe-agent", version=agent_version, model_name=model_name),
                      steps=steps,
                      final_metrics=FinalMetrics(total_prompt_tokens=tin, total_completion_tokens=tout,
                                                 total_cost_usd=total_cost, total_steps=len(steps)),
                      extra={"turns": turns})
    return traj.to_json_dict()


class HarborShell:
    """mini-swe-agent's Environment protocol over a Harbor environment (commands run in the task container)."""

    def __init__(self, environment: BaseEnvironment, loop: asyncio.AbstractEventLoop, timeout_s: int) -> None:
        self.environment, self.loop, self.timeout_s = environment, loop, timeout_s
        self.config = {"timeout": timeout_s, "environment": type(environment).__name__}
        self.cancelled = lambda: False   # the session's flag (SessionAgent sets it): no command after a cancel

    def execute(self, action: dict, cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        if self.cancelled():
            raise TurnCancelled("the trial was cancelled: no further command")
        command = action.get("command", "")
        call = self.environment.exec(command, cwd=cwd or None, timeout_sec=timeout or self.timeout_s)
        try:
            res = asyncio.run_coroutine_threadsafe(call, self.loop).result()
            out = (res.stdout or "") + (res.stderr or "")
            output = {"output": out, "returncode": res.return_code, "exception_info": ""}
        except Exception as exc:  # noqa: BLE001 - a failed command is an observation, not a crash
            output = {"output": "", "returncode": -1, "exception_info": f"An error occurred while executing the "
                                                                      f"command: {exc}",
                      "extra": {"exception_type": type(exc).__name__}}
        lines = output["output"].lstrip().splitlines(keepends=True)
        if lines and lines[0].strip() == "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" and output["returncode"] == 0:
            submission = "".join(lines[1:])
            raise Submitted({"role": "exit", "content": submission,
                             "extra": {"exit_status": "Submitted", "submission": submission}})
        return output

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        return {"system": "Linux", "release": "", "version": "", "machine": "x86_64", **kwargs}

    def serialize(self) -> dict:
        return {"info": {"config": {"environment": self.config, "environment_type": "harbor"}}}


def _guard(model: Any, session: "SessionAgent") -> None:
    """Wrap the model's one endpoint call: none once cancelled, and a wrong endpoint raises
    :class:`ModelEndpointError`, which the model's retry loop (``abort_exceptions``) does not retry."""
    if hasattr(model, "abort_exceptions"):
        model.abort_exceptions = [*model.abort_exceptions, TurnCancelled, ModelEndpointError]
    inner = getattr(model, "_query", None)
    if callable(inner):
        def _query(*args: Any, **kwargs: Any) -> Any:
            if session.cancelled:
                raise TurnCancelled("the trial was cancelled: no further model call")
            try:
                return inner(*args, **kwargs)
            except Exception as exc:
                if is_endpoint_error(exc):
                    raise ModelEndpointError(endpoint_line(session.endpoint, exc, session.secrets)) from None
                raise
        model._query = _query


class SessionAgent(DefaultAgent):
    """DefaultAgent whose conversation outlives one task: ``turn`` appends the next user message and loops."""

    def __init__(self, model, env, *, frame_issue: bool = True, endpoint: str = "",
                 secrets: tuple[str, ...] = (), **kwargs: Any) -> None:
        from minisweagent.agents.default import AgentConfig
        super().__init__(model, env, **{k: v for k, v in kwargs.items() if k in AgentConfig.model_fields})
        self.exits: list[dict] = []      # each finished turn's exit message (kept out of later prompts)
        self.cancelled = False           # set from the event loop's thread; checked before every call
        self.frame_issue, self.framed = bool(frame_issue), False
        self.endpoint = endpoint or "the model's endpoint"
        self.secrets = secrets
        env.cancelled = lambda: self.cancelled
        _guard(model, self)

    def turn(self, task: str, *, first: bool, turn_index: int) -> dict:
        """Send ``task`` as the user wrote it (the first issue turn in the configured issue framing) and loop."""
        kind = turn_kind(task)
        self.extra_template_vars |= {"task": task}
        if first:
            self.messages = []
            system = self._render_template(self.config.system_template).rstrip("\n") + "\n\n" + SESSION_RULES
            self.add_messages(self.model.format_message(role="system", content=system))
        elif self.messages and self.messages[-1].get("role") == "exit":
            self.exits.append(self.messages.pop())   # the previous turn's end stays in the record, not the prompt
        if kind == ISSUE and self.frame_issue and not self.framed:
            content, self.framed = self._render_template(self.config.instance_template), True
        else:
            content = task
        msg = self.model.format_message(role="user", content=content)
        msg.setdefault("extra", {}).update(swe_taskflow_turn=turn_index, swe_taskflow_kind=kind)
        self.add_messages(msg)
        self.n_consecutive_format_errors = 0
        return self._loop()

    def query(self) -> dict:
        if self.cancelled:
            raise TurnCancelled("the trial was cancelled: no further model call")
        return super().query()

    def _loop(self) -> dict:
        from minisweagent.exceptions import FormatError, InterruptAgentFlow
        while True:
            try:
                self.step()
                self.n_consecutive_format_errors = 0
            except TurnCancelled:
                self.add_messages({"role": "exit", "content": "Cancelled",
                                   "extra": {"exit_status": "Cancelled", "submission": ""}})
            except FormatError as e:
                self.cost += (e.messages[0].get("extra") or {}).get("cost", 0.0)   # billed before parsing failed
                self.n_consecutive_format_errors += 1
                self.add_messages(*e.messages)
                if 0 < self.config.max_consecutive_format_errors <= self.n_consecutive_format_errors:
                    self.add_messages({"role": "exit", "content": "RepeatedFormatError",
                                       "extra": {"exit_status": "RepeatedFormatError", "submission": ""}})
            except InterruptAgentFlow as e:
                self.add_messages(*e.messages)
            except Exception as e:  # noqa: BLE001 - recorded as the turn's exit, then re-raised to Harbor
                self.handle_uncaught_exception(e)
                raise
            if self.messages[-1].get("role") == "exit":
                break
        return self.messages[-1].get("extra", {})


def _config(path: str | None) -> dict:
    default = Path(minisweagent.__file__).parent / "config" / "mini.yaml"
    return yaml.safe_load(Path(path or default).read_text())


def check_credentials(model_name: str, model_cfg: dict) -> None:
    """Fail at once, in one line, when a LiteLLM model's API key is missing. LiteLLM reports a missing key as
    an ``InternalServerError`` ("Missing credentials"), which mini-swe-agent retries ten times with backoff:
    minutes per turn, and every turn of every trial again, before anything says what is wrong."""
    if (model_cfg.get("model_class") or "litellm") != "litellm" or (model_cfg.get("model_kwargs") or {}).get("api_key"):
        return
    import litellm

    missing = litellm.validate_environment(model=model_name).get("missing_keys") or []
    if missing:
        raise ValueError(f"model {model_name!r} needs {', '.join(missing)} in the environment (or "
                         "--ak model_kwargs='{\"api_key\": ...}'); nothing was sent")


class MiniSweAgent(BaseAgent):
    """``-a swe_taskflow_harbor.agent:MiniSweAgent``: mini-swe-agent, one conversation across all steps."""

    capabilities = AgentCapabilities(resume=True, atif=True)

    def __init__(self, logs_dir: Path, model_name: str | None = None, *, model_class: str = "",
                 outputs: str | None = None, config: str | None = None, model_kwargs: dict | str | None = None,
                 step_limit: int = 0, cost_limit: float = 3.0, command_timeout: int = 120,
                 frame_issue: bool | str = True, **kwargs: Any) -> None:
        super().__init__(logs_dir=logs_dir, model_name=model_name, **kwargs)
        #: --ak frame_issue=false sends the first issue turn as written too (no "Please solve this issue:").
        self._frame_issue = str(frame_issue).strip().lower() not in ("false", "0", "no", "off")
        self._cfg = _config(config)
        mk = json.loads(model_kwargs) if isinstance(model_kwargs, str) else dict(model_kwargs or {})
        model_cfg = dict(self._cfg.get("model") or {})
        model_cfg["model_kwargs"] = {**(model_cfg.get("model_kwargs") or {}), **mk}
        if model_class:
            model_cfg["model_class"] = model_class
        if model_class == "deterministic":
            if not outputs:
                raise ValueError("model_class=deterministic needs outputs=FILE.json (a list of model outputs)")
            model_cfg = {"model_class": "deterministic", "outputs": json.loads(Path(outputs).read_text()),
                         "observation_template": model_cfg.get("observation_template",
                                                               "<output>{{output.output}}</output>")}
        self._model_cfg = model_cfg
        self._agent_kwargs = {**(self._cfg.get("agent") or {}), "step_limit": int(step_limit),
                              "cost_limit": float(cost_limit)}
        self._command_timeout = int(command_timeout)
        self._session: SessionAgent | None = None
        self._turn = 0

    @staticmethod
    def name() -> str:
        return "swe-taskflow-mini-swe-agent"

    def version(self) -> str:
        return minisweagent.__version__

    async def setup(self, environment: BaseEnvironment) -> None:
        return

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        name = self.model_name or self._model_cfg.get("model_name") or "deterministic"
        check_credentials(name, self._model_cfg)
        model = get_model(name, dict(self._model_cfg))
        shell = HarborShell(environment, asyncio.get_running_loop(), self._command_timeout)
        mk = self._model_cfg.get("model_kwargs") or {}
        self._session = SessionAgent(model, shell, frame_issue=self._frame_issue,
                                     endpoint=describe_endpoint(name, mk),
                                     secrets=tuple(str(v) for k, v in mk.items() if "key" in k.lower() and v),
                                     **self._agent_kwargs)
        await self._run_turn(instruction, environment, context, first=True)

    async def resume(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        if self._session is None:
            return await self.run(instruction, environment, context)
        session = self._session
        session.env = HarborShell(environment, asyncio.get_running_loop(), self._command_timeout)
        session.env.cancelled = lambda: session.cancelled
        await self._run_turn(instruction, environment, context, first=False)

    async def _run_turn(self, instruction: str, environment: BaseEnvironment, context: AgentContext, *,
                        first: bool) -> None:
        session = self._session
        start = len(session.messages)
        cost0 = session.cost
        try:
            await asyncio.to_thread(session.turn, instruction, first=first, turn_index=self._turn)
        except asyncio.CancelledError:
            session.cancelled = True   # the thread makes no further model call or command (TurnCancelled)
            raise
        finally:
            new = session.messages[start:]
            tin = sum(usage(m)[0] for m in new)
            tout = sum(usage(m)[1] for m in new)
            context.n_input_tokens, context.n_output_tokens = tin, tout
            context.cost_usd = session.cost - cost0
            exit_extra = (session.messages[-1].get("extra") or {}) if session.messages else {}
            context.metadata = {"turn": self._turn, "exit_status": exit_extra.get("exit_status", ""),
                                "api_calls": sum(1 for m in new if m.get("role") == "assistant")}
            await self._write_trajectories(environment)
            self._turn += 1

    async def _write_trajectories(self, environment: BaseEnvironment) -> None:
        s = self._session
        turns = []
        for m in s.messages:
            extra = m.get("extra") or {}
            if "swe_taskflow_turn" in extra:
                turns.append({"turn": extra["swe_taskflow_turn"], "messages": 0, "exit_status": ""})
            if turns:
                turns[-1]["messages"] += 1
        for ex, rec in zip(s.exits + ([s.messages[-1]] if s.messages and s.messages[-1].get("role") == "exit" else []),
                           turns):
            rec["exit_status"] = (ex.get("extra") or {}).get("exit_status", "")
        model_name = getattr(s.model.config, "model_name", self.model_name or "")
        atif = to_atif(s.messages, session_id=str(self.session_id or "session"), model_name=model_name,
                       agent_version=self.version(), turns=turns, total_cost=s.cost)
        native = s.serialize({"info": {"swe_taskflow": {"turns": turns, "turn_exits": s.exits}}})
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        paths = EnvironmentPaths.for_os(environment.os)
        for name, doc in ((ATIF_FILE, atif), (NATIVE_FILE, native)):
            host = self.logs_dir / name
            host.write_text(json.dumps(doc, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
            target = paths.agent_dir / name
            if not environment.is_path_mounted(target, host):   # Harbor copies /logs/agent back over the host's
                await environment.upload_file(host, str(target))


__all__ = ["MiniSweAgent", "SessionAgent", "HarborShell", "SESSION_RULES", "SCHEMA_VERSION", "TurnCancelled",
           "ModelEndpointError", "to_atif", "usage"]
