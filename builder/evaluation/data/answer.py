#!/usr/bin/env python3
"""swe-taskflow answer-turn verifier: copy the agent's answer out; never touch the repository.

Writes /logs/verifier/answer.md (the file the instruction named, or nothing) and reward.json with
``answered`` (1.0 when a non-empty answer exists) and the latest checkpoint's values carried forward,
so that a trial's final reward stays the task's resolve when the session ends on an answer turn.
The answer is judged later, on the host (``swe-taskflow evaluate import``).
"""
import json
import os
import shutil
import sys

LOGS = os.environ.get("STF_VERIFIER_DIR", "/logs/verifier")


def main():
    cfg = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "/tests/answer.json", encoding="utf-8"))
    os.makedirs(LOGS, exist_ok=True)
    path = cfg["answer_path"]
    answered = os.path.isfile(path) and os.path.getsize(path) > 0
    if answered:
        shutil.copyfile(path, os.path.join(LOGS, "answer.md"))
    reward = {"answered": 1.0 if answered else 0.0}
    carry = cfg.get("carry_path")
    if carry and os.path.isfile(carry):
        reward.update(json.load(open(carry)))
    with open(os.path.join(LOGS, "reward.json"), "w") as f:
        json.dump(reward, f, sort_keys=True)
    print(json.dumps(reward, sort_keys=True))


if __name__ == "__main__":
    main()
