#!/bin/sh
# Run the advisor from cron: recommend, keep the evidence, tell the admins on a change.
# Exit codes (advisor recommend): 0 keep, 10 change recommended, 2 bad input,
# 3 source unavailable (slurmctld/slurmdbd down), 4 missing extra, 5 previous run still busy,
# 6 --apply failed and was rolled back, 7 the rollback failed too (restore by hand),
# 130/143 interrupted/terminated. Defaults: /etc/slurm-policy-advisor/advisor.toml.
# To enact changes as well, set APPLY=--apply (slurm.conf must end with
# "Include /etc/slurm/advisor.conf"; see docs/recommend.md).
#
# This script exits 0 when the advisor ran (a change or none, or the previous run still
# busy) and with the advisor's own code when it failed, after writing the failure to its
# standard error: cron mails a job's output where it can, and logs its exit code. Where
# `mail` exists, the failure and each recommended change are also mailed to $MAILTO.
set -u
ADVISOR=${ADVISOR:-/opt/slurm-policy-advisor/.venv/bin/advisor}
OUT=${OUT:-/var/lib/slurm-policy-advisor}
MAILTO=${MAILTO:-root}
APPLY=${APPLY:-}
SOURCE=${SOURCE:-slurm}

# mail standard input to $MAILTO with the subject $1, where mail is installed
notify() {
    if command -v mail >/dev/null 2>&1; then
        mail -s "$1" "$MAILTO"
    else
        cat >/dev/null
    fi
}

if ! mkdir -p "$OUT"; then
    echo "advisor-cron: cannot make $OUT (set OUT to a folder this user can write)" >&2
    exit 3
fi
"$ADVISOR" recommend --from "$SOURCE" --write "$OUT/change" $APPLY --json \
    >"$OUT/last.json.tmp" 2>"$OUT/last.err"
code=$?
case $code in
    0)  mv "$OUT/last.json.tmp" "$OUT/last.json" ;;
    10) mv "$OUT/last.json.tmp" "$OUT/last.json"
        "$ADVISOR" report --last 5 | notify "slurm-policy-advisor: change recommended" ;;
    5)  rm -f "$OUT/last.json.tmp" ;;                 # the previous run is still simulating
    *)  rm -f "$OUT/last.json.tmp"
        echo "slurm-policy-advisor failed (exit $code):" >&2
        cat "$OUT/last.err" >&2
        notify "slurm-policy-advisor failed (exit $code)" <"$OUT/last.err"
        exit $code ;;
esac
exit 0
