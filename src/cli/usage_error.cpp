#include "usage_error.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "hwimg/util/strings.hpp"

namespace hwimg::cli {

namespace {

std::vector<std::string> subcommand_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const auto* subcommand : command.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(subcommand->get_name());
  }
  return names;
}

struct NamedCommand {
  const CLI::App* command;
  std::string name;                  // as people type it: "hwimg cache ls"
  std::optional<std::string> stray;  // the first word after it that is no option, when it has subcommands
};

// The command the words name, down to a nested one, and what follows it.
NamedCommand named_command(const CLI::App& app, std::span<const std::string> words) {
  NamedCommand named{&app, "hwimg", std::nullopt};
  for (const auto& word : words) {
    if (word.starts_with('-')) continue;
    const CLI::App* next = nullptr;
    for (const auto* subcommand : named.command->get_subcommands([](const CLI::App*) { return true; })) {
      if (subcommand->get_name() == word) next = subcommand;
    }
    if (next == nullptr) {
      if (!subcommand_names(*named.command).empty()) named.stray = word;
      break;
    }
    named.command = next;
    named.name += " " + word;
  }
  return named;
}

std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const auto* option : command.get_options()) {
    for (const auto& name : option->get_lnames()) names.push_back("--" + name);
    for (const auto& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

std::string one_line(std::string text) {
  std::ranges::replace(text, '\n', ' ');
  return std::string(util::trim(text));
}

}  // namespace

std::string usage_message(const CLI::App& app, const CLI::ParseError& error, std::span<const std::string> words) {
  const auto [command, name, stray] = named_command(app, words);
  const auto commands = subcommand_names(*command);
  if (stray) {
    return fmt::format("unknown command \"{}\"{}; {} --help lists the commands", *stray,
                       util::did_you_mean(*stray, commands), name);
  }
  const auto known = option_names(*command);
  for (const auto& word : words) {
    if (!word.starts_with('-') || word == "-" || word == "--") continue;
    const auto option = word.substr(0, word.find('='));
    if (std::ranges::find(known, option) != known.end()) continue;
    return fmt::format("unknown option {} for {}{}", option, name, util::did_you_mean(option, known));
  }
  if (!commands.empty() && dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    return fmt::format("{} needs a command: {} ({} --help)", name, util::join(commands, ", "), name);
  }
  std::string message = one_line(error.what());
  // CLI11's "The following arguments were not expected: a b" said as hwimg says things.
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr && message.find(": ") != std::string::npos) {
    message = fmt::format("unexpected argument{} {} for {}", message.find("arguments") != std::string::npos ? "s" : "",
                          message.substr(message.find(": ") + 2), name);
  }
  if (message.ends_with("?)")) return message;  // it names the likely fix already
  return fmt::format("{} (see {} --help)", message, name);
}

}  // namespace hwimg::cli
