"""A refused write into the repository, as each sandbox words it: docker and bubblewrap mount it read-only
("Read-only file system"); a Harbor environment owns its copy by root ("cannot create ...: Permission denied"),
and there a refused read says "Permission denied" too, so only messages that name a write count."""

from __future__ import annotations

import pytest

from builder.proofs.script import owner_write_refused, repo_write_blocked

WRITES = ["/proof/script: 2: cannot create ticketdesk/counter.txt: Permission denied",          # dash
          "/proof/script: line 2: can't create ticketdesk/counter.txt: Permission denied",      # busybox ash
          "touch: cannot touch 'a.txt': Permission denied",
          "rm: cannot remove '/repo/a.txt': Permission denied",
          "mkdir: cannot create directory 'build': Permission denied"]
READS = ["cat: secret.txt: Permission denied", "cat: can't open 'secret.txt': Permission denied",
         "python3: can't open file '/repo/x.py': [Errno 13] Permission denied"]


@pytest.mark.parametrize("line", WRITES)
def test_an_ownership_refused_write_counts_in_the_harbor_sandbox_only(line):
    assert repo_write_blocked(line, owner_write_refused)
    assert not repo_write_blocked(line)                      # docker/bwrap never word it so


@pytest.mark.parametrize("line", READS)
def test_a_refused_read_is_never_a_blocked_write(line):
    assert not repo_write_blocked(line, owner_write_refused) and not repo_write_blocked(line)


def test_read_only_mounts_count_in_every_sandbox_and_writes_elsewhere_do_not():
    ro = "sh: cannot create /repo/x: Read-only file system"
    assert repo_write_blocked(ro) and repo_write_blocked(ro, owner_write_refused)
    assert not repo_write_blocked("sh: cannot create /etc/x: Permission denied", owner_write_refused)
