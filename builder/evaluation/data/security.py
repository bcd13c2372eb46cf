#!/usr/bin/env python3
"""swe-taskflow security-review verifier: does the review name the seeded defect? Never touches the repository.

The step showed a change with one seeded security defect (swe_taskflow.stress). The config (hidden:
tests/ reaches the container at verification time only) holds the defect's file, line, symbol, changed
code and class; stress_guard.security_verdict (the same check the host scorer uses) asks that the
answer names the file, the place (line within 3, the symbol or the changed code) and the class.

Writes /logs/verifier/answer.md (as answer.py does), stress.json (the verdict) and reward.json:
``correct`` (1.0 or 0.0), ``answered``, and the latest checkpoint's values carried forward.
"""
import json
import os
import sys

LOGS = os.environ.get("STF_VERIFIER_DIR", "/logs/verifier")
MAX_ANSWER = 1 << 20


def read_answer(path):
    """The answer file's bytes, copied to answer.md, and its text; a link or a non-file is no answer (the
    verifier never follows one)."""
    if os.path.islink(path) or not os.path.isfile(path):
        return None
    with open(path, "rb") as fh:
        data = fh.read(MAX_ANSWER)
    with open(os.path.join(LOGS, "answer.md"), "wb") as fh:
        fh.write(data)
    return data.decode("utf-8", "replace")


def main():
    cfg_path = sys.argv[1] if len(sys.argv) > 1 else "/tests/security.json"
    sys.path.insert(0, os.path.dirname(os.path.abspath(cfg_path)))
    import stress_guard
    cfg = json.load(open(cfg_path, encoding="utf-8"))
    os.makedirs(LOGS, exist_ok=True)
    answer = read_answer(cfg["answer_path"])
    answered = bool(answer)
    verdict = stress_guard.security_verdict(answer or "", **cfg["args"])
    with open(os.path.join(LOGS, "stress.json"), "w") as f:
        json.dump(verdict, f, indent=1, sort_keys=True)
    reward = {"answered": 1.0 if answered else 0.0, "correct": 1.0 if verdict["correct"] else 0.0}
    carry = cfg.get("carry_path")
    if carry and os.path.isfile(carry):
        reward.update(json.load(open(carry)))
    with open(os.path.join(LOGS, "reward.json"), "w") as f:
        json.dump(reward, f, sort_keys=True)
    print(json.dumps(reward, sort_keys=True))


if __name__ == "__main__":
    main()
