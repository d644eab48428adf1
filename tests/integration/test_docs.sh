#!/usr/bin/env bash
# The reference pages stay true: every page under docs/ and every heading anchor that the code,
# tests, scripts, examples and docs cite exists, and nothing cites design notes kept outside the
# repository; docs/commands.md is what scripts/gen-docs makes from this binary's --help; the README
# opens with the two commands, both of which exist.
source "$(dirname "$0")/lib.sh"
cd "$HWIMG_SOURCE_DIR"

# Where citations must resolve inside the repository.
cited_trees=(src tests scripts bench examples recipes matrix registry docs README.md)

# The anchors GitHub gives the headings of markdown file $1 (code fences skipped): lower case,
# characters other than letters, digits, space, - and _ dropped, spaces made -, repeats -1, -2, ...
doc_anchors() {
  awk '
    /^(```|~~~)/ { fence = !fence; next }
    fence || !/^#+ / { next }
    {
      text = $0
      sub(/^#+ +/, "", text); sub(/ +#+ *$/, "", text); sub(/ +$/, "", text)
      slug = tolower(text); gsub(/[^a-z0-9 _-]/, "", slug); gsub(/ /, "-", slug)
      if (slug in seen) { print slug "-" seen[slug]; seen[slug]++ } else { print slug; seen[slug] = 1 }
    }' "$1"
}

declare -A anchor_cache
# check_target CITING_FILE LINE PATH ANCHOR: prints a problem when PATH (relative to the repository
# root) does not exist or, for a markdown page, has no heading with that anchor.
check_target() {
  local file=$1 line=$2 path=$3 anchor=$4
  if [ ! -e "$path" ]; then
    echo "$file:$line: cites $path, which does not exist"
    return
  fi
  [ -n "$anchor" ] && [[ "$path" == *.md ]] || return 0
  [ -n "${anchor_cache[$path]+set}" ] || anchor_cache[$path]=$'\n'"$(doc_anchors "$path")"$'\n'
  [[ "${anchor_cache[$path]}" == *$'\n'"$anchor"$'\n'* ]] ||
    echo "$file:$line: cites $path#$anchor, but $path has no heading with that anchor"
}

# Every broken or forbidden citation as "FILE:LINE: problem"; nothing when all is well.
check_citations() {
  local hit file rest line text path anchor resolved
  # (a), (b) docs/<page>.md or docs/<page>.md#<anchor> from the repository root, or ../docs/<page>.md
  # from the citing file.
  while IFS= read -r hit; do
    file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}; text=${rest#*:}
    text=${text#"${text%%[.d]*}"}
    path=${text%%#*}; anchor=${text#"$path"}; anchor=${anchor#\#}
    resolved=$path
    [[ "$path" == ../* ]] && resolved=$(realpath -m --relative-to=. "$(dirname "$file")/$path")
    check_target "$file" "$line" "$resolved" "$anchor"
  done < <(grep -rnoEI '(^|[^A-Za-z0-9_./-])((\.\./)*docs/[A-Za-z0-9_.-]+\.md)(#[A-Za-z0-9_-]*)?' \
             "${cited_trees[@]}" || true)
  # Relative markdown links, [text](<page>.md#<anchor>) or [text](#<anchor>), from the linking page.
  while IFS= read -r hit; do
    file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}; text=${rest#*:}
    text=${text#](}; text=${text%)}
    path=${text%%#*}; anchor=${text#"$path"}; anchor=${anchor#\#}
    if [ -z "$path" ]; then
      resolved=$file
    else
      resolved=$(realpath -m --relative-to=. "$(dirname "$file")/$path")
    fi
    check_target "$file" "$line" "$resolved" "$anchor"
  done < <(find "${cited_trees[@]}" -name '*.md' -type f -print0 |
             xargs -0 grep -noE '\]\([A-Za-z0-9_./-]*(#[A-Za-z0-9_-]+)?\)' /dev/null || true)
  # (c) design notes and reference pages kept outside the repository (public URLs are fine).
  while IFS= read -r hit; do
    file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}; text=${rest#*:}
    [[ "$text" == http* ]] && continue
    echo "$file:$line: cites $text, which is not in the repository (cite docs/ or a public URL)"
  done < <(grep -rnoEI '(https?://[^ )>]*)?(DESIG[N]\.md|referenc[e]/[A-Za-z0-9_-]+\.md)' \
             "${cited_trees[@]}" || true)
}

step "citations of docs/ pages and anchors"
problems=$(check_citations | awk '!seen[$0]++')
[ -z "$problems" ] || fail "broken citations:"$'\n'"$problems"

step "docs/commands.md matches --help"
"$HWIMG_SOURCE_DIR/scripts/gen-docs" "$HWIMG" > "$TEST_TMP/commands.md"
diff -u docs/commands.md "$TEST_TMP/commands.md" || fail "docs/commands.md is stale: run scripts/gen-docs build/hwimg > docs/commands.md"

step "the README's quick start"
first_block=$(awk '/^```/ {n++; next} n == 1 {print}' README.md)
assert_eq 2 "$(grep -c . <<<"$first_block")" "the README's first block has exactly two commands"
for script in $(awk '{print $1}' <<<"$first_block"); do
  [ -x "$script" ] || fail "README command $script is not an executable script"
done
grep -q 'scripts/test' .ci/run || fail ".ci/run does not run the README's test command"
echo PASS
