#!/bin/sh
# Run the advisor from cron: recommend, keep the evidence, tell the admins on a change.
# Exit codes (advisor recommend): 0 keep, 10 change recommended, 2 bad input,
# 3 source unavailable (slurmctld/slurmdbd down), 4 missing extra, 5 previous run still busy,
# 6 --apply failed and was rolled back, 7 the rollback failed too (restore by hand),
# 130/143 interrupted/terminated. Defaults: /etc/slurm-policy-advisor/advisor.toml.
# To enact changes as well, set APPLY=--apply (slurm.conf must end with
# "Include /etc/slurm/advisor.conf"; see docs/recommend.md).
set -u
ADVISOR=${ADVISOR:-/opt/slurm-policy-advisor/.venv/bin/advisor}
OUT=${OUT:-/var/lib/slurm-policy-advisor}
MAILTO=${MAILTO:-root}
APPLY=${APPLY:-}

mkdir -p "$OUT"
"$ADVISOR" recommend --from slurm --write "$OUT/change" $APPLY --json >"$OUT/last.json.tmp" \
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
