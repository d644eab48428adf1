#pragma once
// A Dockerfile as hwimg needs to know it (docs/recipe.md#bring-your-dockerfile): its stages, what
// each stage is built FROM, the build arguments it declares, and the line of every instruction.
// Building it is buildah's job; hwimg reads it to resolve and pin the images it starts from, to
// find the stages every variant shares, and to name the line of a failing instruction.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::recipe {

struct Instruction {
  std::string keyword;    // upper case: FROM, RUN, ...
  std::string arguments;  // the rest, continuation lines joined with a space, comment lines dropped
  int line = 0;           // 1-based, of the keyword
};

struct ArgDeclaration {
  std::string name;
  std::optional<std::string> default_value;  // quotes removed
  int line = 0;
};

struct Stage {
  std::string from;                     // the image (or stage) as written; may use global ARGs
  std::optional<std::string> platform;  // FROM --platform=...
  std::string name;                     // AS name, lower case as Docker compares them; "" when unnamed
  int line = 0;                         // of FROM
  int from_column = 0;                  // 1-based column of the image in the FROM line
  std::vector<ArgDeclaration> args;     // ARGs of the stage: only these are visible to its instructions
  // Stages or images named by COPY --from= and RUN --mount=...,from=, as written.
  std::vector<std::string> uses;
  std::vector<Instruction> instructions;  // the stage's, its FROM first
};

struct Dockerfile {
  std::filesystem::path file;
  std::string text;  // as read: what is pinned and keyed is what was parsed
  char escape = '\\';
  std::vector<ArgDeclaration> global_args;  // before the first FROM: visible to FROM lines only
  std::vector<Stage> stages;

  // The stage named `name` (case-insensitive) or numbered by it, if any.
  [[nodiscard]] std::optional<std::size_t> find_stage(std::string_view name) const;
  // Every name an ARG declares, globally or in a stage.
  [[nodiscard]] bool declares(std::string_view name) const;
};

// Fails with FILE:LINE:COLUMN and what was expected on a Dockerfile with no FROM, an instruction
// other than ARG before the first FROM, a FROM without an image, or an ARG without a name.
[[nodiscard]] Result<Dockerfile> parse_dockerfile(std::string_view text, const std::filesystem::path& file);
[[nodiscard]] Result<Dockerfile> load_dockerfile(const std::filesystem::path& file);

using ArgValues = std::map<std::string, std::string>;

// `text` with $NAME, ${NAME}, ${NAME:-word} and ${NAME:+word} replaced as Docker does; the escape
// character before '$' keeps it literal, and an unset name is empty. `where` prefixes errors.
[[nodiscard]] Result<std::string> expand_arguments(std::string_view text, const ArgValues& values, char escape,
                                                   std::string_view where);

// What the FROM lines see: each global ARG's default, replaced by the build argument of that name.
[[nodiscard]] ArgValues global_arg_values(const Dockerfile& dockerfile, const ArgValues& build_args);

}  // namespace hwimg::recipe
