#!/bin/sh
# oracle-guard on any CI system, or by hand: judge the merge of a branch into the
# branch it targets with oracle-guard, then run the repository's pre-commit hooks.
#
#   examples/ci/plain.sh [TARGET [HEAD]]     (default: origin/main HEAD)
#
# Needs oracle-guard and pre-commit on PATH (oracle-guard installed by the job from a
# pinned source, not from the change), a .pre-commit-config.yaml for the other hooks,
# git 2.38 or later, and full history (a clone that has TARGET and the merge-base: no
# shallow checkout, or 'git fetch --unshallow origin main' first). oracle-guard judges
# what the platform will record: git's merge of HEAD into TARGET's tip, by TARGET's
# rules, and every commit it brings; so a push build of a branch stays red until the
# oracle is restored, whatever the previous push was. pre-commit's range starts at the
# merge-base: commits TARGET gained since the branch was cut (a seed appended on main)
# are not the branch's change. Exit codes: oracle-guard's when it fails (1 a finding,
# 2 an error), else pre-commit's (0 passed, non-zero failed).
set -eu

target=${1:-origin/main}
head=${2:-HEAD}

if ! git rev-parse --verify --quiet "$target^{commit}" >/dev/null; then
  echo "plain.sh: $target is not in this clone: fetch it" \
       "(git fetch origin '+refs/heads/${target#origin/}:refs/remotes/$target')" >&2
  exit 2
fi
if ! base=$(git merge-base "$target" "$head"); then
  echo "plain.sh: $target and $head share no history here: fetch full history" \
       "(git fetch --unshallow origin)" >&2
  exit 2
fi
if [ "$base" = "$(git rev-parse "$head^{commit}")" ]; then
  echo "plain.sh: $head is already in $target: nothing to judge" >&2
  exit 2
fi

echo "plain.sh: judging the merge of $head into $target ($(git rev-parse --short "$base")..$(git rev-parse --short "$head"))"
# The gate: oracle-guard itself, not through pre-commit, whose hooks come from the
# candidate's own .pre-commit-config.yaml (a change could drop them from it).
oracle-guard check --target "$target" --head "$head"
ORACLE_GUARD_TARGET=$target
export ORACLE_GUARD_TARGET  # the rules come from the target's tip, not from the range's start
exec pre-commit run --from-ref "$base" --to-ref "$head" --show-diff-on-failure
