#!/usr/bin/env bash
# The reference pages stay true: docs/commands.md is what scripts/gen-docs makes from this binary's
# --help, and the README opens with the two commands, both of which exist.
source "$(dirname "$0")/lib.sh"
cd "$HWIMG_SOURCE_DIR"
"$HWIMG_SOURCE_DIR/scripts/gen-docs" "$HWIMG" > "$TEST_TMP/commands.md"
diff -u docs/commands.md "$TEST_TMP/commands.md" || fail "docs/commands.md is stale: run scripts/gen-docs build/hwimg > docs/commands.md"
first_block=$(awk '/^```/ {n++; next} n == 1 {print}' README.md)
assert_eq 2 "$(grep -c . <<<"$first_block")" "the README's first block has exactly two commands"
for script in $(awk '{print $1}' <<<"$first_block"); do
  [ -x "$script" ] || fail "README command $script is not an executable script"
done
grep -q 'scripts/test' .ci/run || fail ".ci/run does not run the README's test command"
echo PASS
