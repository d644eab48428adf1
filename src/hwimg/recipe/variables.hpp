#pragma once
// ${name} substitution in recipe strings; "$${" writes a literal "${" (for the shell).

#include <map>
#include <string>
#include <vector>

#include "hwimg/recipe/recipe.hpp"

namespace hwimg::recipe {

using Variables = std::map<std::string, std::string>;

// Every variable a recipe may use (docs/recipe.md), set for each variant.
[[nodiscard]] const std::vector<std::string>& known_variables();

[[nodiscard]] Result<std::string> substitute(const LocatedString& text, const Variables& variables);

// Whether the text names any ${variable} ("$${" is a literal, not a variable).
[[nodiscard]] bool names_variables(const LocatedString& text);

// Checks every ${...} in the recipe names a known variable, before anything is built.
[[nodiscard]] Result<void> check_variables(const Recipe& recipe);

}  // namespace hwimg::recipe
