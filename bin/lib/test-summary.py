#!/usr/bin/env python3
"""Summarises the JUnit reports written by one Maven run: tests, failures and skips per module,
then one line naming every test class that skipped tests or ran none, and why.

usage: test-summary.py ROOT STAMP
  ROOT   the repository root
  STAMP  a file touched before the run: reports older than it are from earlier runs and ignored
"""
import glob
import os
import sys
import xml.etree.ElementTree as ET

root, stamp = sys.argv[1], sys.argv[2]
since = os.path.getmtime(stamp)
modules = {}
skipped = []


def skip_reason(element):
    """A skip's reason: the report's message, else the first line of the aborted assumption it holds."""
    text = element.get("message") or (element.text or "").strip()
    if not text:
        return "no reason given"
    line = text.splitlines()[0]
    for prefix in ("org.opentest4j.TestAbortedException: ", "Assumption failed: "):
        if line.startswith(prefix):
            line = line[len(prefix):]
    return line.strip()[:160]


for report in sorted(glob.glob(os.path.join(root, "**", "target", "*-reports", "TEST-*.xml"), recursive=True)):
    if os.path.getmtime(report) < since:
        continue
    module = os.path.relpath(report, root).split(os.sep + "target" + os.sep)[0]
    try:
        suite = ET.parse(report).getroot()
    except ET.ParseError as ex:
        skipped.append(f"{os.path.basename(report)} (unreadable report: {ex})")
        continue
    name = suite.get("name", "?")
    tests = int(suite.get("tests", 0))
    skips = int(suite.get("skipped", 0))
    failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    totals = modules.setdefault(module, [0, 0, 0, 0])
    totals[0] += 1
    totals[1] += tests
    totals[2] += failed
    totals[3] += skips
    short = name.rsplit(".", 1)[-1]
    if tests == 0:
        skipped.append(f"{short} (ran no test)")
    elif skips:
        reasons = sorted({skip_reason(case.find("skipped"))
                          for case in suite.iter("testcase") if case.find("skipped") is not None})
        skipped.append(f"{short} ({skips} of {tests} skipped: {'; '.join(reasons)})")

if not modules:
    print("run-tests: no test reports were written by this run")
    sys.exit(0)
print("run-tests: per module: classes / tests / failed / skipped")
for module, (classes, tests, failed, skips) in sorted(modules.items()):
    print(f"  {module:<34} {classes:>4} {tests:>6} {failed:>6} {skips:>6}")
if skipped:
    print("run-tests: SKIPPED: " + ", ".join(skipped))
else:
    print("run-tests: nothing skipped")
