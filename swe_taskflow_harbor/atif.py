"""A mini-swe-agent conversation as an ATIF trajectory (Harbor's trajectory format), turn boundaries kept.

Harbor's own converter treats only the first user message as a user step; in a multi-turn session
every later user *turn* (marked ``extra.swe_taskflow_turn`` by the agent) is a user step too, and the
other user/tool messages are observations of the preceding agent step.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from harbor.models.trajectories import (Agent, FinalMetrics, Metrics, Observation, ObservationResult, Step,
                                        ToolCall, Trajectory)

SCHEMA_VERSION = "ATIF-v1.8"


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


__all__ = ["to_atif", "usage", "SCHEMA_VERSION"]
