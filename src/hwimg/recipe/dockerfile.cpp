#include "hwimg/recipe/dockerfile.hpp"

#include <algorithm>
#include <cctype>

#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::recipe {
namespace {

std::string upper(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}


// Words split at blanks, quotes kept together and removed ("a b"=c -> a b=c).
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (const char c : text) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

// `# escape=X` among the parser directives at the top of the file (docs/recipe.md cites Docker's).
char escape_directive(const std::vector<std::string>& lines) {
  for (const auto& raw : lines) {
    const auto line = util::trim(raw);
    if (!line.starts_with('#')) break;
    auto directive = util::trim(line.substr(1));
    const auto equals = directive.find('=');
    if (equals == std::string_view::npos) break;
    if (util::to_lower(util::trim(directive.substr(0, equals))) == "escape") {
      const auto value = util::trim(directive.substr(equals + 1));
      if (value == "`") return '`';
      return '\\';
    }
  }
  return '\\';
}

Result<std::vector<ArgDeclaration>> parse_arg(const Instruction& instruction, const std::filesystem::path& file) {
  std::vector<ArgDeclaration> declarations;
  for (const auto& word : words_of(instruction.arguments)) {
    const auto equals = word.find('=');
    ArgDeclaration declaration{word.substr(0, equals), std::nullopt, instruction.line};
    if (equals != std::string::npos) declaration.default_value = word.substr(equals + 1);
    if (declaration.name.empty()) break;
    declarations.push_back(std::move(declaration));
  }
  if (declarations.empty()) {
    return fail("{}:{}:1: expected a name after ARG (ARG NAME or ARG NAME=DEFAULT)", file.string(), instruction.line);
  }
  return declarations;
}

Result<Stage> parse_from(const Instruction& instruction, std::string_view raw_line, const std::filesystem::path& file) {
  Stage stage;
  stage.line = instruction.line;
  const auto words = words_of(instruction.arguments);
  std::size_t i = 0;
  for (; i < words.size() && words[i].starts_with("--"); ++i) {
    if (words[i].starts_with("--platform=")) stage.platform = words[i].substr(std::string_view("--platform=").size());
  }
  if (i == words.size()) {
    return fail("{}:{}:1: expected an image after FROM (FROM IMAGE [AS NAME])", file.string(), instruction.line);
  }
  stage.from = words[i];
  const auto column = raw_line.find(stage.from);
  stage.from_column = column == std::string_view::npos ? 1 : static_cast<int>(column) + 1;
  if (i + 1 < words.size()) {
    if (util::to_lower(words[i + 1]) != "as" || words.size() != i + 3) {
      return fail("{}:{}:1: expected \"AS NAME\" after the image in FROM, got \"{}\"", file.string(), instruction.line,
                  util::join(std::vector<std::string>(words.begin() + static_cast<std::ptrdiff_t>(i) + 1, words.end()), " "));
    }
    stage.name = util::to_lower(words[i + 2]);
  }
  return stage;
}

// The stage or image of a COPY --from= or of each RUN --mount=...,from=.
void record_uses(const Instruction& instruction, Stage& stage) {
  for (const auto& word : words_of(instruction.arguments)) {
    if (!word.starts_with("--")) break;
    if (word.starts_with("--from=")) {
      stage.uses.push_back(word.substr(7));
    } else if (word.starts_with("--mount=")) {
      for (const auto& option : util::split(word.substr(8), ',')) {
        if (option.starts_with("from=")) stage.uses.push_back(option.substr(5));
      }
    }
  }
}

}  // namespace

std::optional<std::size_t> Dockerfile::find_stage(std::string_view name) const {
  const auto wanted = util::to_lower(name);
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (!stages[i].name.empty() && stages[i].name == wanted) return i;
  }
  if (!wanted.empty() && std::ranges::all_of(wanted, [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
    const auto number = std::stoul(wanted.substr(0, 9));
    if (number < stages.size()) return number;
  }
  return std::nullopt;
}

bool Dockerfile::declares(std::string_view name) const {
  const auto named = [&](const ArgDeclaration& arg) { return arg.name == name; };
  if (std::ranges::any_of(global_args, named)) return true;
  return std::ranges::any_of(stages, [&](const Stage& stage) { return std::ranges::any_of(stage.args, named); });
}

Result<Dockerfile> parse_dockerfile(std::string_view text, const std::filesystem::path& file) {
  Dockerfile dockerfile;
  dockerfile.file = file;
  dockerfile.text = text;
  const auto lines = util::split(text, '\n');
  dockerfile.escape = escape_directive(lines);

  std::vector<std::pair<Instruction, std::string_view>> instructions;  // with the keyword's raw line
  std::string pending;
  int pending_line = 0;
  std::string_view pending_raw;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = lines[n];
    if (line.ends_with('\r')) line.remove_suffix(1);
    const auto trimmed = util::trim(line);
    // Comment and empty lines are dropped, inside a continued instruction too.
    if (trimmed.empty() || trimmed.starts_with('#')) continue;
    if (pending.empty()) {
      pending_line = static_cast<int>(n) + 1;
      pending_raw = line;
    }
    auto part = line;
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.back())) != 0) part.remove_suffix(1);
    const bool continued = part.ends_with(dockerfile.escape);
    if (continued) part.remove_suffix(1);
    pending += (pending.empty() ? "" : " ") + std::string(util::trim(part));
    if (continued && n + 1 < lines.size()) continue;
    const auto body = util::trim(pending);
    const auto space = std::ranges::find_if(body, [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
    const auto keyword_length = static_cast<std::size_t>(space - body.begin());
    instructions.push_back({Instruction{upper(body.substr(0, keyword_length)),
                                        std::string(util::trim(body.substr(keyword_length))), pending_line},
                            pending_raw});
    pending.clear();
  }

  for (const auto& [instruction, raw] : instructions) {
    if (instruction.keyword == "FROM") {
      HWIMG_TRY_ASSIGN(auto stage, parse_from(instruction, raw, file));
      stage.instructions.push_back(instruction);
      dockerfile.stages.push_back(std::move(stage));
      continue;
    }
    if (dockerfile.stages.empty()) {
      if (instruction.keyword != "ARG") {
        return fail("{}:{}:1: expected FROM (or ARG) before {}: every instruction belongs to a stage", file.string(),
                    instruction.line, instruction.keyword);
      }
      HWIMG_TRY_ASSIGN(auto declarations, parse_arg(instruction, file));
      std::ranges::move(declarations, std::back_inserter(dockerfile.global_args));
      continue;
    }
    auto& stage = dockerfile.stages.back();
    stage.instructions.push_back(instruction);
    if (instruction.keyword == "ARG") {
      HWIMG_TRY_ASSIGN(auto declarations, parse_arg(instruction, file));
      std::ranges::move(declarations, std::back_inserter(stage.args));
    } else if (instruction.keyword == "COPY" || instruction.keyword == "ADD" || instruction.keyword == "RUN") {
      record_uses(instruction, stage);
    }
  }
  if (dockerfile.stages.empty()) {
    return fail("{}:1:1: expected a FROM instruction: the Dockerfile has no stage", file.string());
  }
  return dockerfile;
}

Result<Dockerfile> load_dockerfile(const std::filesystem::path& file) {
  HWIMG_TRY_ASSIGN(const auto text, with_context(util::read_file(file), "failed to read the Dockerfile"));
  return parse_dockerfile(text, file);
}

ArgValues global_arg_values(const Dockerfile& dockerfile, const ArgValues& build_args) {
  ArgValues values;
  for (const auto& arg : dockerfile.global_args) {
    if (const auto given = build_args.find(arg.name); given != build_args.end()) {
      values[arg.name] = given->second;
    } else if (arg.default_value) {
      // A default may use the global ARGs declared before it.
      values[arg.name] = expand_arguments(*arg.default_value, values, dockerfile.escape, "").value_or(*arg.default_value);
    }
  }
  return values;
}

}  // namespace hwimg::recipe
