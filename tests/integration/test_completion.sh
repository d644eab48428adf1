#!/usr/bin/env bash
# `hwimg completion bash|zsh` and `hwimg --version`: the bash script is sourced and its function
# called as bash's completion would call it; zsh is checked live only where zsh is installed.
source "$(dirname "$0")/lib.sh"

step "--version"
assert_eq "hwimg 0.1.0" "$("$HWIMG" --version)" "version line"

step "bash: the script loads and registers hwimg"
"$HWIMG" completion bash > "$TEST_TMP/hwimg.bash"
bash -n "$TEST_TMP/hwimg.bash" || fail "the bash script has a syntax error"

# complete WORD...: COMPREPLY (one per line) for the command line WORD... with the cursor on the
# last word, in a fresh bash that sourced the script.
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _hwimg; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$TEST_TMP/hwimg.bash" "$@"
}
registered=$(bash -c 'source "$1"; complete -p hwimg' _ "$TEST_TMP/hwimg.bash")
assert_eq "complete -o filenames -F _hwimg hwimg" "$registered" "complete -p hwimg"

step "bash: subcommands, options, nested subcommands, option values"
assert_eq "build" "$(complete_words hwimg bu)" "hwimg bu<TAB>"
assert_eq "--compression
--compression-level" "$(complete_words hwimg build --comp)" "hwimg build --comp<TAB>"
assert_eq "create" "$(complete_words hwimg index c)" "hwimg index c<TAB>"
assert_eq "--from" "$(complete_words hwimg index create --fr)" "hwimg index create --fr<TAB>"
assert_eq "--version" "$(complete_words hwimg --ver)" "hwimg --ver<TAB>"
# A value of --tag that looks like a subcommand does not change the command being completed.
assert_eq "--only" "$(complete_words hwimg build --tag push --on)" "option values are skipped"
mkdir -p "$TEST_TMP/files" && touch "$TEST_TMP/files/recipe.yaml"
assert_eq "$TEST_TMP/files/recipe.yaml" "$(complete_words hwimg build --matrix "$TEST_TMP/files/re")" "files after --matrix"
# The script follows the real command line: it offers exactly the subcommands --help lists.
listed=$("$HWIMG" --help | awk '/^Subcommands:/ {on=1; next} on && /^  [a-z]/ {print $1}' | sort)
[ "$(wc -l <<<"$listed")" -ge 9 ] || fail "--help lists too few subcommands: $listed"
assert_eq "$listed" "$(complete_words hwimg '' | sort)" "hwimg <TAB> = the subcommands of --help"

step "zsh"
"$HWIMG" completion zsh > "$TEST_TMP/_hwimg"
assert_eq "#compdef hwimg" "$(head -n 1 "$TEST_TMP/_hwimg")" "first line"
assert_contains "$(cat "$TEST_TMP/_hwimg")" '"index create") echo "--from' "nested subcommand options"
expect_failure "$HWIMG" completion fish
assert_contains "$OUT" "SHELL: \"fish\" is not one of {bash,zsh}" "unknown shell"
if ! command -v zsh >/dev/null 2>&1; then
  echo "zsh is not installed: the zsh script was checked for its structure only"
  echo PASS
  exit 0
fi
zsh -n "$TEST_TMP/_hwimg" || fail "the zsh script has a syntax error"
# compadd exists only inside the completion system; a stand-in prints what it would offer for
# the word under the cursor.
zsh_complete() {
  zsh -c 'compdef() { :; }; _files() { :; }
    compadd() { [[ $1 == -- ]] && shift; local w; for w in "$@"; do [[ $w == ${words[CURRENT]}* ]] && print -r -- $w; done; return 0; }
    source "$1"; shift; words=("$@"); CURRENT=$#; _hwimg' _ "$TEST_TMP/_hwimg" "$@"
}
assert_eq "--compression
--compression-level" "$(zsh_complete hwimg build --comp)" "zsh: hwimg build --comp<TAB>"
assert_eq "create" "$(zsh_complete hwimg index c)" "zsh: hwimg index c<TAB>"
assert_eq "build" "$(zsh_complete hwimg bu)" "zsh: hwimg bu<TAB>"
echo PASS
