"""Test commands and log parsers for SWE-bench (Verified) tasks, from SWE-bench's own per-repository specs.

SWE-Bench Pro ships one ``run_scripts/<instance_id>/`` folder per task (``run_script.sh`` runs the tests,
``parser.py`` turns their output into per-test statuses); ``export harbor`` reads that format. SWE-bench keeps the
same knowledge as code in the ``swebench`` package: ``MAP_REPO_VERSION_TO_SPECS[repo][version]`` (test command,
environment commands, install step) and ``MAP_REPO_TO_PARSER[repo]`` (the log parser). This module writes the
same two files per task from ``swebench==4.1.0`` (5.x dropped the specs), offline, so a checkpoint verifier needs
neither the package nor a network at grading time:

- ``run_script.sh``: the spec's environment commands (conda ``testbed``, locale), then the spec's test command
  with the test directives ``swebench.harness.test_spec.python.get_test_directives`` derives from the test patch,
  between SWE-bench's own output markers. The checkpoint verifier applies the test patch before it and restores
  the repository after, so the script neither applies nor reverts it. The spec's ``install`` step (``pip install
  -e .`` and similar) is left out and named in a comment: the task image was installed at the base commit, and a
  re-install needs a package index a network-less verifier does not have (not confirmed here: no image runs on
  this machine).
- ``parser.py``: the repository's parser function, copied verbatim from the package, with the grading rule of
  ``swebench.harness.grading.test_passed`` (XFAIL counts as passed) and the ``>>>>> Start/End Test Output``
  window ``get_logs_eval`` reads.

It is a command (``python -m builder.sources.swebench_specs --tasks SPEC --out DIR``), not a build stage: the
package is an optional extra (``pip install -e '.[verified]'``) that a build must not need, and a folder whose
files are a pure function of the rows and the pinned package version is reproducible on every machine; a build
then records each file's sha256 (``[source] run_scripts``), as for SWE-Bench Pro's run scripts.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.owned import owned_temp_dir, swap_dir

#: The one swebench release whose specs the files are generated from.
SWEBENCH_VERSION = "4.1.0"
START = ">>>>> Start Test Output"
END = ">>>>> End Test Output"
#: SWE-bench's images: the repository at /testbed, its environment the conda env ``testbed``.
REPO_DIR, ENV_NAME = "/testbed", "testbed"
INDEX_FILE = "specs.json"


@dataclass(frozen=True)
class TaskSpec:
    """What SWE-bench's specs say about one task."""

    instance_id: str
    repo: str
    version: str
    test_command: str           # the spec's test_cmd and the test directives, as make_eval_script_list joins them
    env_commands: tuple[str, ...]
    install: str                # the spec's install step (left out of run_script.sh, see the module docstring)
    parser_name: str            # the function MAP_REPO_TO_PARSER[repo] names
    image: str                  # swebench's remote instance image key


def _swebench():
    try:
        import swebench
        from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS
        from swebench.harness.log_parsers import MAP_REPO_TO_PARSER
        from swebench.harness.test_spec.python import get_test_directives
        from swebench.harness.test_spec.test_spec import TestSpec
    except ImportError as exc:
        raise ConfigError(f"the swebench package is not installed ({exc.name})", field="swebench",
                          expected=f"swebench=={SWEBENCH_VERSION}",
                          hint="pip install -e '.[verified]' (MIT; 5.x dropped the per-repository specs)") from None
    if swebench.__version__ != SWEBENCH_VERSION:
        raise ConfigError("another swebench release is installed", field="swebench",
                          expected=SWEBENCH_VERSION, actual=swebench.__version__,
                          hint="pip install swebench==4.1.0: the generated files are pinned to its specs")
    return MAP_REPO_VERSION_TO_SPECS, MAP_REPO_TO_PARSER, get_test_directives, TestSpec


def image_key(test_spec_cls, instance_id: str, repo: str, version: str) -> str:
    """swebench's remote instance image (``TestSpec.instance_image_key`` with namespace ``swebench``). Built from
    the dataclass, not ``make_test_spec``: that one also derives the environment script, which fetches some
    repositories' requirement files from GitHub (django, for one) and so needs a network."""
    ts = test_spec_cls(instance_id=instance_id, repo=repo, version=version, repo_script_list=[], eval_script_list=[],
                       env_script_list=[], arch="x86_64", FAIL_TO_PASS=[], PASS_TO_PASS=[], language="py",
                       docker_specs={}, namespace="swebench")
    return ts.instance_image_key


#: Characters no value pasted into a generated script may hold: a newline would end the line (or the comment) it is
#: pasted into, whatever the quoting.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def shell_word(value: Any, *, field: str, where: str = "", row_number: int | None = None) -> str:
    """``value`` (from an untrusted row: a test file path the test patch names, ...) as one quoted shell word;
    InputError for a non-string or one holding a control character."""
    if not isinstance(value, str) or not value or _CONTROL.search(value):
        raise InputError("a value pasted into run_script.sh must be one line of text", path=where or None,
                         row=row_number, field=field, actual=value,
                         hint="a file name with a newline or control character cannot be run safely")
    return shlex.quote(value)


def _one_line(text: Any) -> str:
    """``text`` for a comment line of a generated script: control characters (a newline) become spaces."""
    return _CONTROL.sub(" ", str(text))


def _text(row: Mapping[str, Any], key: str, *, where: str, row_number: int | None, number: bool = False) -> str:
    """A row's text field ("" when absent); InputError naming the field for any other type (a number too, for a
    version). Never ``str()`` of an unknown value: a 5,000-deep list would end in a RecursionError."""
    value = row.get(key)
    extra = row.get("extra")
    if value is None and isinstance(extra, Mapping):
        value = extra.get(key)
    if value is None or isinstance(value, str):
        return value or ""
    if number and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise InputError("expected text", path=where or None, row=row_number, field=key,
                     actual=f"a value of type {type(value).__name__}")


def _instance(row: Mapping[str, Any], *, where: str = "", row_number: int | None = None) -> dict[str, Any]:
    """A SWE-bench instance dict from a source row or a normalized Task's fields (every field used checked)."""
    def text(key: str, number: bool = False) -> str:
        return _text(row, key, where=where, row_number=row_number, number=number)

    return {"instance_id": text("instance_id"), "repo": text("repo"), "base_commit": text("base_commit"),
            "version": text("version", number=True), "test_patch": text("test_patch"),
            "problem_statement": text("problem_statement"), "patch": text("patch"),
            "environment_setup_commit": text("environment_setup_commit") or None,
            "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]"}


def task_spec(row: Mapping[str, Any], *, where: str = "", row_number: int | None = None) -> TaskSpec:
    """The spec of one row (raises InputError naming the row and field when SWE-bench has none for it)."""
    specs_map, parsers, directives, test_spec_cls = _swebench()
    inst = _instance(row, where=where, row_number=row_number)
    iid, repo, version = inst["instance_id"], inst["repo"], inst["version"]
    if repo not in specs_map:
        raise InputError("SWE-bench has no specs for this repository", path=where or None, row=row_number,
                         field="repo", actual=repo, hint=str(iid))
    if version not in specs_map[repo]:
        raise InputError("SWE-bench has no specs for this repository version", path=where or None, row=row_number,
                         field="version", actual=version, hint=f"{iid}: known {sorted(specs_map[repo])}")
    if repo not in parsers:
        raise InputError("SWE-bench has no log parser for this repository", path=where or None, row=row_number,
                         field="repo", actual=repo, hint=str(iid))
    spec = specs_map[repo][version]
    test_cmd = spec["test_cmd"]
    if not isinstance(test_cmd, str):
        raise InputError("the spec's test command is not one shell line", path=where or None, row=row_number,
                         field="test_cmd", actual=test_cmd, hint=str(iid))
    if not iid or _CONTROL.search(iid):
        raise InputError("instance id is not one line of text", path=where or None, row=row_number,
                         field="instance_id", actual=iid)
    words = [shell_word(d, field="test_patch", where=where, row_number=row_number) for d in directives(inst)]
    return TaskSpec(instance_id=iid, repo=repo, version=version,
                    test_command=" ".join([test_cmd, *words]),
                    env_commands=tuple(spec.get("eval_commands", ())), install=str(spec.get("install", "")),
                    parser_name=parsers[repo].__name__,
                    image=image_key(test_spec_cls, iid, repo, version))


def run_script(spec: TaskSpec) -> str:
    """The script's text. Every value from a row is either a quoted word (the test directives, see
    :func:`shell_word`) or in a comment with its control characters blanked; the rest is SWE-bench's specs."""
    lines = ["#!/bin/bash",
             f"# {_one_line(spec.instance_id)} ({_one_line(spec.repo)} {_one_line(spec.version)}): SWE-bench "
             f"{SWEBENCH_VERSION}'s eval commands,",
             "# generated by builder.sources.swebench_specs. The checkpoint verifier applies the test patch before",
             "# this script and restores the repository after it.",
             f"# Left out: the spec's install step ({_one_line(spec.install) or 'none'}); the image was installed "
             "at the",
             "# base commit, and a re-install would need a package index (none at grading time).",
             "set -o pipefail",
             "exec 2>&1",
             "source /opt/miniconda3/bin/activate",
             f"conda activate {ENV_NAME}",
             f"cd {REPO_DIR}",
             *spec.env_commands,
             f"echo '{START}'",
             spec.test_command,
             "rc=$?",
             f"echo '{END}'",
             "exit $rc",
             ""]
    return "\n".join(lines)


_PARSER_HEAD = '''"""SWE-bench {version} log parser for {repo} ({name}), copied from swebench.harness.log_parsers.

Usage: python parser.py STDOUT STDERR OUT_JSON; writes {{"tests": [{{"name", "status"}}]}} as SWE-Bench Pro's
parsers do. Only the text between SWE-bench's output markers is parsed (as swebench's get_logs_eval does), and
XFAIL counts as PASSED (swebench.harness.grading.test_passed). Generated by builder.sources.swebench_specs.
"""

import json
import re
import sys
from enum import Enum


class TestStatus(Enum):
    FAILED = "FAILED"
    PASSED = "PASSED"
    SKIPPED = "SKIPPED"
    ERROR = "ERROR"
    XFAIL = "XFAIL"


START_TEST_OUTPUT = {start!r}
END_TEST_OUTPUT = {end!r}
TestSpec = object

'''

_PARSER_TAIL = '''

def statuses(log):
    if START_TEST_OUTPUT in log and END_TEST_OUTPUT in log:
        log = log.split(START_TEST_OUTPUT)[1].split(END_TEST_OUTPUT)[0]
    return {{name: ("PASSED" if status == "XFAIL" else status) for name, status in {name}(log, None).items()}}


def main(stdout_path, stderr_path, out_path):
    texts = []
    for path in (stdout_path, stderr_path):
        with open(path, encoding="utf-8", errors="replace") as fh:
            texts.append(fh.read())
    found = statuses("\\n".join(texts))
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump({{"tests": [{{"name": k, "status": v}} for k, v in found.items()]}}, fh, indent=2)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print("Usage: python parser.py <stdout_file> <stderr_file> <output_json>")
        sys.exit(1)
    main(sys.argv[1], sys.argv[2], sys.argv[3])
'''


def parser_source(spec: TaskSpec) -> str:
    from swebench.harness.log_parsers import MAP_REPO_TO_PARSER
    func = MAP_REPO_TO_PARSER[spec.repo]
    body = inspect.getsource(func).rstrip("\n") + "\n"
    return (_PARSER_HEAD.format(version=SWEBENCH_VERSION, repo=spec.repo, name=func.__name__, start=START, end=END)
            + body + _PARSER_TAIL.format(name=func.__name__))


def write_run_scripts(rows: Iterable[Mapping[str, Any]], out: str | os.PathLike, *, where: str = "") -> dict:
    """``out/<instance_id>/run_script.sh`` and ``parser.py`` for every row, and ``out/specs.json`` (per task the
    test command, parser, image and both files' sha256). Written into a temporary folder and renamed: a failure
    leaves nothing. Every row must have a spec (one InputError names the first that has none)."""
    from swe_taskflow.hashing import sha256_hex
    from swe_taskflow.safepath import inside

    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError("output folder exists and is not empty", path=str(out), field="--out")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = owned_temp_dir(".run-scripts-", out.parent)
    index: dict[str, Any] = {"generator": "builder.sources.swebench_specs", "swebench": SWEBENCH_VERSION, "tasks": {}}
    try:
        for n, row in enumerate(rows, start=1):
            if not isinstance(row, Mapping):
                raise InputError("a row is not an object", path=where or None, row=n,
                                 actual=f"a value of type {type(row).__name__}")
            iid = row.get("instance_id")
            if not isinstance(iid, str) or "/" in iid or "\\" in iid or iid in (".", ".."):
                raise InputError("instance id is not one path component", path=where or None, row=n,
                                 field="instance_id", actual=iid if isinstance(iid, str) else
                                 f"a value of type {type(iid).__name__}")
            inside(tmp, iid)
            spec = task_spec(row, where=where, row_number=n)
            files = {"run_script.sh": run_script(spec), "parser.py": parser_source(spec)}
            (tmp / iid).mkdir()
            for name, text in files.items():
                (tmp / iid / name).write_bytes(text.encode("utf-8"))
            (tmp / iid / "run_script.sh").chmod(0o755)
            index["tasks"][iid] = {"repo": spec.repo, "version": spec.version, "test_command": spec.test_command,
                                   "parser": spec.parser_name, "image": spec.image, "install_left_out": spec.install,
                                   "files": {k: sha256_hex(v.encode("utf-8")) for k, v in files.items()}}
        (tmp / INDEX_FILE).write_text(json.dumps(index, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        swap_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return index


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m builder.sources.swebench_specs",
                                 description="Write SWE-bench run scripts and log parsers (run_scripts/ format) "
                                             "from swebench 4.1.0's specs.")
    ap.add_argument("--tasks", required=True, help="SWE-bench rows: a local file or folder, or a Hub id")
    ap.add_argument("--out", required=True, help="a new (or empty) folder")
    args = ap.parse_args(argv)
    from swe_taskflow.errors import TaskflowError
    from swe_taskflow.owned import sweep_dead_owners

    sweep_dead_owners()   # what killed commands left, as every swe-taskflow command does first

    from . import load_tasks
    try:
        load = load_tasks(args.tasks)
        bad = [t for t in load.tasks if t.status != "ok"]
        if bad:
            raise InputError(f"malformed row: {bad[0].reason}", path=args.tasks)
        rows = [{**t.to_dict(), "version": (t.extra or {}).get("version")} for t in load.tasks]
        index = write_run_scripts(rows, args.out, where=args.tasks)
    except TaskflowError as exc:
        print(f"swebench_specs: error: {exc}")
        return 2
    except RecursionError:   # a value nested deeper than Python's stack, wherever a reader met it
        print(f"swebench_specs: error: {args.tasks}: a row holds a value nested too deeply to read")
        return 2
    print(f"wrote {len(index['tasks'])} run scripts and parsers (swebench {SWEBENCH_VERSION}) to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
