#!/usr/bin/env bash
# Prints "<passed> <failed>" for one ava run's output (a file, or stdin): ava's closing lines
# ("464 tests passed", "2 tests failed", "1 known failure", "1 uncaught exception"...). When a run
# has failures ava prints no "passed" line: the passes are then counted from the "✔" lines it
# prints for each test. Anything that is not a pass counts as a failure, skipped and todo tests
# included: the project keeps none, so one that appears is a finding. A step of npm test beside ava
# that failed ("npm test: npm run lint failed (exit 1)", scripts/tools/test.js) is one failure.
# Output with neither (ava did not run, nothing said why) is one failure.
set -euo pipefail
sed 's/\x1b\[[0-9;]*m//g' "${1:--}" | awk '
  /^ *✔ / { ticks += 1 }
  /^npm test: .* failed \(exit [0-9]+\)$/ { steps += 1 }
  /^ *[0-9]+ (tests?|known failures?|uncaught exceptions?|unhandled rejections?)( [a-z]+)?$/ {
    if ($0 ~ / passed$/) passed += $1; else failed += $1; seen = 1
  }
  END {
    if (!seen && steps == 0) failed = 1
    failed += steps
    if (passed == 0) passed = ticks
    printf "%d %d\n", passed, failed
  }'
