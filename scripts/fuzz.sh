#!/usr/bin/env bash
# Run the atheris fuzz targets in fuzz/: scripts/fuzz.sh [TARGET|all] [SECONDS] [libFuzzer flags...]
#
#   TARGET   readers | extract | text | jsonarray | all (default: all, one after the other)
#   SECONDS  fuzzing time per target (default 60)
#
# Each target starts from a seed corpus built from fixtures/ (fuzz/corpus/TARGET-seeds) and keeps
# what it learns in fuzz/corpus/TARGET; crashes go to fuzz/crashes/TARGET-*, the logs to
# fuzz/logs/ (all gitignored). libFuzzer stops at a crash: the run is restarted (from the corpus
# it has grown) until SECONDS are spent, at most 20 times, so one run can report several crashes.
# Prints executions and crashes per target; exit status 0 when no target crashed.
# NOTE: under atheris a process's RSS grows by a few KB per execution (text: ~3 GB after 400k;
# replaying the same inputs without atheris stays flat), so a long run of a target can end in an
# out-of-memory round (fuzz/crashes/TARGET-oom-*): the next round starts afresh from the corpus.
# Needs `pip install atheris`. On a shared machine: nice -n 19 scripts/fuzz.sh ...
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS=(readers extract text jsonarray)
target="${1:-all}"
seconds="${2:-60}"
shift $(( $# > 2 ? 2 : $# ))
PY="${PYTHON:-python}"

run_one() {
    local t="$1"
    shift
    [[ -f "fuzz/fuzz_$t.py" ]] || { echo "fuzz.sh: no target '$t' (${TARGETS[*]})" >&2; return 2; }
    mkdir -p "fuzz/corpus/$t" fuzz/crashes fuzz/logs
    rm -rf "fuzz/corpus/$t-seeds"
    "$PY" fuzz/_seeds.py "$t" "fuzz/corpus/$t-seeds"
    local end=$(( $(date +%s) + seconds )) runs=0 crashes=0 round=0 left status log n
    rm -f "fuzz/logs/$t".*.log
    while left=$(( end - $(date +%s) )); (( left > 0 && round < 20 )); do
        round=$(( round + 1 ))
        log="fuzz/logs/$t.$round.log"
        status=0
        # NOTE: -max_len bounds an input, -timeout one execution, -rss_limit_mb the memory.
        "$PY" "fuzz/fuzz_$t.py" -max_total_time="$left" -max_len=8192 -timeout=30 \
            -rss_limit_mb=3072 -artifact_prefix="fuzz/crashes/$t-" -print_final_stats=1 "$@" \
            "fuzz/corpus/$t" "fuzz/corpus/$t-seeds" >"$log" 2>&1 || status=$?
        n=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' \
            || grep -Eo '^#[0-9]+' "$log" | tail -1 | tr -d '#' || echo 0)
        runs=$(( runs + ${n:-0} ))
        if (( status != 0 )); then
            crashes=$(( crashes + 1 ))
            echo "$t: round $round ended with status $status: $(grep -m1 -E \
                'Uncaught Python exception|ERROR: libFuzzer' "$log" || echo '?') ($log)"
        fi
    done
    echo "$t: $runs executions in $seconds s, $crashes crash(es) (fuzz/crashes/$t-*)"
    (( crashes == 0 ))
}

failed=0
if [[ "$target" == all ]]; then
    for t in "${TARGETS[@]}"; do run_one "$t" "$@" || failed=1; done
else
    run_one "$target" "$@" || failed=1
fi
exit "$failed"
