#!/usr/bin/env bash
# Last step of action.yml: end with contam's exit code, so that the step fails on contamination
# (per fail-on) or on a usage or input error. Bash 3.2 (macOS) compatible.
set -eu
code="${CONTAM_EXIT_CODE:-}"
case "$code" in
  '' | *[!0-9]*)
    echo "::error title=contam action::contam did not run to the end (no exit code)"
    exit 2
    ;;
esac
case "$code" in
  0) ;;
  1) echo "contam exited 1: contamination found (see the annotations and the step summary)" ;;
  *) echo "contam exited $code: a usage or input error (the message is above)" ;;
esac
exit "$code"
