#pragma once
// Options that take one of a few words (--format text|json, --compression gzip|zstd): the help shows
// them as {a,b} with the default, and a word that is not one is a usage error in hwimg's voice,
// naming the nearest ("--format: \"jsn\" is not one of {text,json} (did you mean json?)").

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "hwimg/util/strings.hpp"

namespace hwimg::cli {

// "{a,b,c}".
inline std::string choice_list(const std::vector<std::string>& words) { return "{" + util::join(words, ",") + "}"; }

inline CLI::Validator choice_validator(std::vector<std::string> words) {
  const auto list = choice_list(words);
  return CLI::Validator(
      [words = std::move(words), list](std::string& value) -> std::string {
        for (const auto& word : words) {
          if (word == value) return {};
        }
        // Only a near miss is suggested: two edits turn "fish" into "bash".
        const auto near = util::nearest(value, words);
        const bool close = near && util::edit_distance(util::to_lower(value), util::to_lower(*near)) <=
                                       std::max<std::size_t>(1, value.size() / 3);
        return "\"" + value + "\" is not one of " + list + (close ? " (did you mean " + *near + "?)" : "");
      },
      "");
}

enum class DefaultShown { yes, no };

// --NAME WORD, stored as the value paired with the word. `value` holds the default on call, shown
// in the help unless `shown` says no (an option that is required).
template <typename T>
CLI::Option* add_choice_option(CLI::App& command, const std::string& name, T& value,
                               std::vector<std::pair<std::string, T>> choices, std::string description,
                               DefaultShown shown = DefaultShown::yes) {
  std::vector<std::string> words;
  std::string default_word;
  for (const auto& [word, choice] : choices) {
    words.push_back(word);
    if (choice == value && shown == DefaultShown::yes) default_word = word;
  }
  auto* option = command.add_option_function<std::string>(
      name,
      [&value, choices = std::move(choices)](const std::string& word) {
        for (const auto& [candidate, choice] : choices) {
          if (candidate == word) value = choice;
        }
      },
      std::move(description) + (default_word.empty() ? "" : " (default: " + default_word + ")"));
  option->check(choice_validator(words))->option_text(choice_list(words));
  return option;
}

// The same for a positional argument or an option kept as its word.
inline CLI::Option* add_choice_option(CLI::App& command, const std::string& name, std::string& value,
                                      const std::vector<std::string>& words, std::string description,
                                      DefaultShown shown = DefaultShown::yes) {
  std::vector<std::pair<std::string, std::string>> choices;
  for (const auto& word : words) choices.emplace_back(word, word);
  return add_choice_option<std::string>(command, name, value, std::move(choices), std::move(description), shown);
}

}  // namespace hwimg::cli
