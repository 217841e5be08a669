#!/bin/sh
# gitmem-managed-hook v1 -- written by `gitmem hooks install`; remove with `gitmem hooks uninstall`.
# Keeps gitmem's derived index (.memory/index.sqlite) in step with the history git just changed.
# It can never fail or block the git command: its exit status is the status of the hook it replaced
# (saved next to it as <hook>.legacy), and gitmem's own failures go to .memory/hook.log.
PY=@@PYTHON@@
HOOK=@@HOOK@@
LEGACY="$(dirname -- "$0")/$HOOK.legacy"

status=0
if [ "$HOOK" = post-rewrite ]; then
    # git writes the rewritten "<old> <new>" list to post-rewrite's stdin; both hooks need all of
    # it, so keep it (the trailing x stops $(...) from eating the final newlines).
    input=$(cat; echo x)
    input=${input%x}
    if [ -x "$LEGACY" ]; then
        printf '%s' "$input" | "$LEGACY" "$@"
        status=$?
    fi
else
    if [ -x "$LEGACY" ]; then
        "$LEGACY" "$@"
        status=$?
    fi
    input=
fi

# A deleted virtualenv or an uninstalled gitmem must not disturb git: skip quietly, but leave a
# line for `gitmem status` when the workspace has a .memory folder to hold it.
# -P: don't put the work tree on sys.path, so a file in the workspace can't shadow a module.
if [ -x "$PY" ] && printf '%s' "$input" | "$PY" -P -m gitmem.hookrun "$HOOK" "$@" >/dev/null 2>&1; then
    :
elif [ -d .memory ]; then
    echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $HOOK HookError: $PY -m gitmem.hookrun could not run (reinstall gitmem or run \`gitmem hooks install\` again)" 2>/dev/null >> .memory/hook.log
fi
exit $status
