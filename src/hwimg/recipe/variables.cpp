#include "hwimg/recipe/variables.hpp"

#include <algorithm>

#include "hwimg/util/strings.hpp"

namespace hwimg::recipe {

const std::vector<std::string>& known_variables() {
  static const std::vector<std::string> names{
      "variant",    "out",       "cuda.version", "cuda.home",  "gpu.targets", "gpu.gencode",
      "gpu.cmake",  "cpu.level", "cpu.target",   "cpu.march", "driver.version", "driver.branch"};
  return names;
}

namespace {

// Calls `on_variable(name, offset)` for each ${name}; appends literal text to `out`.
template <typename OnVariable>
Result<void> scan(const LocatedString& text, std::string& out, OnVariable on_variable) {
  const auto& s = text.value;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 3, "$${") == 0) {
      out += "${";
      i += 2;
      continue;
    }
    if (s.compare(i, 2, "${") != 0) {
      out += s[i];
      continue;
    }
    const auto close = s.find('}', i + 2);
    if (close == std::string::npos) {
      return fail("{}: unterminated \"${{\" in \"{}\" (expected ${{name}}; write $${{ for a literal ${{)",
                  text.location.str(), s);
    }
    HWIMG_TRY(on_variable(s.substr(i + 2, close - i - 2)));
    i = close;
  }
  return {};
}

Result<void> check_name(const LocatedString& text, const std::string& name) {
  const auto& names = known_variables();
  if (std::ranges::find(names, name) != names.end()) {
    return {};
  }
  return fail("{}: unknown variable ${{{}}}{}; known: {} (write $${{{}}} to pass it to the shell)",
              text.location.str(), name, util::did_you_mean(name, names), util::join(names, ", "), name);
}

}  // namespace

Result<std::string> substitute(const LocatedString& text, const Variables& variables) {
  std::string out;
  HWIMG_TRY(scan(text, out, [&](const std::string& name) -> Result<void> {
    HWIMG_TRY(check_name(text, name));
    const auto it = variables.find(name);
    out += it != variables.end() ? it->second : std::string();
    return {};
  }));
  return out;
}

bool names_variables(const LocatedString& text) {
  bool named = false;
  std::string ignored;
  [[maybe_unused]] const auto scanned = scan(text, ignored, [&](const std::string&) -> Result<void> {
    named = true;
    return {};
  });
  return named;
}

Result<void> check_variables(const Recipe& recipe) {
  std::vector<const LocatedString*> strings{&recipe.base};
  if (recipe.build) {
    strings.push_back(&recipe.build->workdir);
    strings.push_back(&recipe.build->run);
    if (recipe.build->image) strings.push_back(&*recipe.build->image);
  }
  if (const auto& dockerfile = recipe.dockerfile) {
    strings.push_back(&dockerfile->file);
    if (dockerfile->context) strings.push_back(&*dockerfile->context);
    if (dockerfile->target) strings.push_back(&*dockerfile->target);
    for (const auto& [name, value] : dockerfile->args) strings.push_back(&value);
  }
  for (const auto& layer : recipe.layers) {
    strings.push_back(&layer.from);
    strings.push_back(&layer.to);
  }
  for (const auto* list : {&recipe.config.entrypoint, &recipe.config.cmd}) {
    if (*list) {
      for (const auto& item : **list) strings.push_back(&item);
    }
  }
  for (const auto* map : {&recipe.config.env, &recipe.config.labels, &recipe.annotations}) {
    for (const auto& [key, value] : *map) strings.push_back(&value);
  }
  for (const auto* optional : {&recipe.config.workdir, &recipe.config.user, &recipe.config.stop_signal}) {
    if (*optional) strings.push_back(&**optional);
  }
  for (const auto* text : strings) {
    std::string ignored;
    HWIMG_TRY(scan(*text, ignored, [&](const std::string& name) { return check_name(*text, name); }));
  }
  return {};
}

}  // namespace hwimg::recipe
