#!/bin/sh
# Run the advisor from cron: recommend, keep the evidence, tell the admins on a change.
# Exit codes (advisor recommend): 0 keep, 10 change recommended, 2 bad input,
# 3 source unavailable (slurmctld/slurmdbd down), 4 missing extra, 5 previous run still busy.
set -u
ADVISOR=${ADVISOR:-/opt/slurm-policy-advisor/.venv/bin/advisor}
OUT=${OUT:-/var/lib/slurm-policy-advisor}
MAILTO=${MAILTO:-root}

mkdir -p "$OUT"
"$ADVISOR" recommend --from slurm --write "$OUT/change" --json >"$OUT/last.json.tmp" \
    2>"$OUT/last.err"
code=$?
case $code in
    0)  mv "$OUT/last.json.tmp" "$OUT/last.json" ;;
    10) mv "$OUT/last.json.tmp" "$OUT/last.json"
        "$ADVISOR" report --last 5 | mail -s "slurm-policy-advisor: change recommended" \
            "$MAILTO" ;;
    5)  rm -f "$OUT/last.json.tmp" ;;                 # the previous run is still simulating
    *)  rm -f "$OUT/last.json.tmp"
        mail -s "slurm-policy-advisor failed (exit $code)" "$MAILTO" <"$OUT/last.err" ;;
esac
exit 0
