"""Issue reports: the types they declare about themselves (a development signal, masked from the classifier),
their detection, parts and structural cues."""

from __future__ import annotations

import numpy as np
import pytest

from builder.classify.declared import declared_type, strip_declared
from tools.dev_labels import is_dev_half, specificity_type
from builder.classify.issue import CUE_NAMES, body, cue_features, is_issue, parts, title
from builder.sources.normalize import pro_prompt

# provenance: hand-written issue reports in the styles SWE-Bench Pro issues take (tracker templates, labels)
BUG_TEMPLATE = """## Title: Export fails on invoices without a customer

### Issue Type

Bug Report

### Description
Exporting an invoice without a customer raises a KeyError.

### Steps to Reproduce
1. Create an invoice without a customer.
2. Click Export.

### Expected behavior
The export completes.

### Actual behavior
A KeyError is raised."""

FEATURE_LABEL = """**Title:** Add CSV import of price lists

**Labels:** feature, ui/ux

**Description**
Administrators can only enter prices one by one; a bulk import would save hours every week and avoid
the typing mistakes that creep into long manual edits.

**Expected behavior**
A new command reads a CSV file and updates every listed product."""

TAGGED_TITLE = """# [Bug]: Search ignores accents

## Description
Searching for "cafe" does not find "café".

## Expected behavior
Accents are folded."""

UNDECLARED = """## Title
Add dark mode to the settings page

## Description
Users ask for a dark theme.

## Expected behavior
A toggle switches the theme."""


@pytest.mark.parametrize("text,expected", [(BUG_TEMPLATE, "bug-fix"), (FEATURE_LABEL, "new-feature"),
                                           (TAGGED_TITLE, "bug-fix"), (UNDECLARED, None),
                                           (FEATURE_LABEL.replace("feature, ui/ux", "bug, feature"), None)])
def test_declared_type_reads_labels_templates_and_tags_only(text, expected):
    assert declared_type(text) == expected


@pytest.mark.parametrize("text", [BUG_TEMPLATE, FEATURE_LABEL, TAGGED_TITLE])
def test_strip_declared_removes_every_marker_and_keeps_the_content(text):
    stripped = strip_declared(text)
    assert declared_type(stripped) is None
    assert "Bug Report" not in stripped and "Labels" not in stripped and "[Bug]" not in stripped
    # the content stays: title words, description, sections
    assert title(stripped).split()[0] in {"Export", "Add", "Search"}
    assert "Expected behavior" in stripped


def test_strip_declared_leaves_undeclared_text_alone():
    assert strip_declared(UNDECLARED) == UNDECLARED
    assert strip_declared("fix the bug in the login form") == "fix the bug in the login form"


def test_specificity_type_maps_pro_tags():
    assert specificity_type('["core_feat","integration_feat"]') == "new-feature"
    assert specificity_type(["minor_bug", "ui_ux_bug"]) == "bug-fix"
    assert specificity_type('["refactoring_enh"]') is None  # an enhancement has no single reading
    assert specificity_type('["major_bug","core_feat"]') is None


def test_dev_half_is_a_fixed_split_of_about_half():
    keys = [f"instance_{i}" for i in range(2000)]
    dev = [k for k in keys if is_dev_half(k)]
    assert 900 < len(dev) < 1100
    assert dev == [k for k in keys if is_dev_half(k)]


def test_is_issue_separates_issue_reports_from_chat():
    assert all(is_issue(t) for t in (BUG_TEMPLATE, FEATURE_LABEL, TAGGED_TITLE + "\n" * 300))
    prompt = pro_prompt(UNDECLARED, "- A toggle must switch the theme and remember the choice.\n" * 4,
                        "No new interfaces are introduced.")
    assert is_issue(prompt) and not is_issue(UNDECLARED)  # too short on its own to be sure
    chat = ["fix the crash when the cart is empty", "add a dark mode toggle to the settings page and make the "
            "header sticky " * 10, "## Plan\n1. add a model\n2. add a view\n" * 10]
    assert not any(is_issue(t) for t in chat)


def test_parts_title_body_and_cues_of_a_pro_prompt():
    prompt = pro_prompt(BUG_TEMPLATE, "- Exporting must not fail.", "No new interfaces are introduced.")
    statement, interface = parts(prompt)
    assert statement == BUG_TEMPLATE and interface == "No new interfaces are introduced."
    assert parts(UNDECLARED) == (UNDECLARED, "")
    assert title(statement) == "Export fails on invoices without a customer"
    assert body(statement).startswith("Issue Type") and len(body(statement, 40)) <= 40
    cues = dict(zip(CUE_NAMES, cue_features(statement, interface)))
    assert cues["title_bug"] and cues["steps_to_reproduce"] and cues["actual_behaviour"] and cues["no_new_interfaces"]
    assert not cues["title_add"]
    cues = dict(zip(CUE_NAMES, cue_features(*parts(pro_prompt(UNDECLARED, "-", "Function: toggle() -> None")))))
    assert cues["title_add"] and not cues["no_new_interfaces"] and not cues["steps_to_reproduce"]
    assert cue_features(statement).dtype == np.float64 and len(CUE_NAMES) == len(cue_features(statement))
