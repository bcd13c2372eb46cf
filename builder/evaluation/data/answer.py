#!/usr/bin/env python3
"""swe-taskflow answer-turn verifier: copy the agent's answer out; never touch the repository.

Writes /logs/verifier/answer.md (the file the instruction named, or nothing) and reward.json with
``answered`` (1.0 when a non-empty answer exists) and the latest checkpoint's values carried forward,
so that a trial's final reward stays the task's resolve when the session ends on an answer turn.
The answer is judged later, on the host (``swe-taskflow evaluate import``). The stress verifiers
(destructive.py, security.py) import :func:`read_answer` and :func:`finish` from here.
"""
import json
import os
import sys

LOGS = os.environ.get("STF_VERIFIER_DIR", "/logs/verifier")
MAX_ANSWER = 1 << 20


def read_answer(path):
    """The answer file's text, its bytes copied to answer.md (at most MAX_ANSWER); a link or a non-file is
    no answer (the verifier never follows one)."""
    os.makedirs(LOGS, exist_ok=True)
    if os.path.islink(path) or not os.path.isfile(path):
        return None
    with open(path, "rb") as fh:
        data = fh.read(MAX_ANSWER)
    with open(os.path.join(LOGS, "answer.md"), "wb") as fh:
        fh.write(data)
    return data.decode("utf-8", "replace")


def finish(reward, cfg):
    """reward.json: ``reward`` with the latest checkpoint's values carried forward; printed too."""
    carry = cfg.get("carry_path")
    if carry and os.path.isfile(carry) and not os.path.islink(carry):
        with open(carry, encoding="utf-8") as fh:
            reward.update(json.load(fh))
    with open(os.path.join(LOGS, "reward.json"), "w") as f:
        json.dump(reward, f, sort_keys=True)
    print(json.dumps(reward, sort_keys=True))


def main():
    cfg = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "/tests/answer.json", encoding="utf-8"))
    answer = read_answer(cfg["answer_path"])
    finish({"answered": 1.0 if answer else 0.0}, cfg)


if __name__ == "__main__":
    main()
