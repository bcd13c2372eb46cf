#!/usr/bin/env python3
"""swe-taskflow answer-turn verifier: copy the agent's answer out; never touch the repository.

Writes /logs/verifier/answer.md (the file the instruction named, or nothing) and reward.json with
``answered`` (1.0 when a non-empty answer exists) and the latest checkpoint's values carried forward,
so that a trial's final reward stays the task's resolve when the session ends on an answer turn.
The answer is judged later, on the host (``swe-taskflow evaluate import``). The stress verifiers
(destructive.py, security.py) import :func:`read_answer` and :func:`finish` from here.

The carried values are read only from the checked state folder (verifier_state.py, beside this script)
and only its known keys (a number in [0, 1] each): anything else there is ignored and named in
carry.json, never merged into the reward.
"""
import json
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # verifier_state.py ships beside
import verifier_state as vs  # noqa: E402

LOGS = os.environ.get("STF_VERIFIER_DIR", "/logs/verifier")
MAX_ANSWER = 1 << 20


def read_answer(path):
    """The answer file's text, its bytes copied to answer.md (at most MAX_ANSWER); a link or a non-file is
    no answer (the verifier never follows one)."""
    vs.start_logs(LOGS)
    try:   # opened without following a link, never blocking on a FIFO; only a regular file is read
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        data = fh.read(MAX_ANSWER)
    vs.write_out(LOGS, "answer.md", data)
    return data.decode("utf-8", "replace")


def finish(reward, cfg):
    """reward.json: ``reward`` with the latest checkpoint's known values carried forward (they never replace
    this step's own keys); carry.json says what was taken and what ignored; printed too."""
    out = {}
    carry = cfg.get("carry_path")
    if carry:
        values, report = vs.read_carry(carry)
        out.update(values)
        vs.write_out(LOGS, "carry.json", json.dumps(report, indent=1, sort_keys=True))
        if report["ignored"] or report.get("problem"):
            print("carried checkpoint: %s" % json.dumps(report, sort_keys=True), file=sys.stderr)
    out.update(reward)
    vs.write_out(LOGS, "reward.json", json.dumps(out, sort_keys=True))
    print(json.dumps(out, sort_keys=True))


def main():
    cfg = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "/tests/answer.json", encoding="utf-8"))
    vs.begin(cfg, LOGS)     # the agent's processes stopped before the answer is read
    answer = read_answer(cfg["answer_path"])
    finish({"answered": 1.0 if answer else 0.0}, cfg)


if __name__ == "__main__":
    main()
