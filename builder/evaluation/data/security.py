#!/usr/bin/env python3
"""swe-taskflow security-review verifier: does the review name the seeded defect? Never touches the repository.

The step showed a change with one seeded security defect (swe_taskflow.turns.stress). The config (hidden:
tests/ reaches the container at verification time only) holds the defect's file, line, symbol, changed
code and class; stress_guard.security_verdict (the same check the host scorer uses) asks that the
answer names the file, the place (line within 3, the symbol or the changed code) and the class.

Writes /logs/verifier/answer.md (answer.py's read_answer, beside it), stress.json (the verdict) and reward.json:
``correct`` (1.0 or 0.0), ``answered``, and the latest checkpoint's values carried forward.
"""
import json
import os
import sys

LOGS = os.environ.get("STF_VERIFIER_DIR", "/logs/verifier")


def main():
    cfg_path = sys.argv[1] if len(sys.argv) > 1 else "/tests/security.json"
    sys.path.insert(0, os.path.dirname(os.path.abspath(cfg_path)))
    import stress_guard
    import verifier_state as vs
    from answer import finish, read_answer
    cfg = json.load(open(cfg_path, encoding="utf-8"))
    vs.begin(cfg, LOGS)     # the agent's processes stopped before anything is read
    answer = read_answer(cfg["answer_path"])
    answered = bool(answer)
    verdict = stress_guard.security_verdict(answer or "", **cfg["args"])
    vs.write_out(LOGS, "stress.json", json.dumps(verdict, indent=1, sort_keys=True))
    reward = {"answered": 1.0 if answered else 0.0, "correct": 1.0 if verdict["correct"] else 0.0}
    finish(reward, cfg)


if __name__ == "__main__":
    main()
