#include "hwimg/hw/nvidia_require.hpp"

#include <algorithm>
#include <array>
#include <ranges>

#include <fmt/format.h>

#include "hwimg/util/strings.hpp"

namespace hwimg::hw {

namespace {

constexpr std::array<std::string_view, 4> key_names{"cuda", "driver", "arch", "brand"};
// Longest first, so "<=" is not read as "<" followed by "=...".
constexpr std::array<std::pair<std::string_view, RequireOp>, 6> operators{{
    {">=", RequireOp::ge}, {"<=", RequireOp::le}, {"!=", RequireOp::ne},
    {">", RequireOp::gt},  {"<", RequireOp::lt},  {"=", RequireOp::eq},
}};

std::string_view op_text(RequireOp op) {
  for (const auto& [text, value] : operators) {
    if (value == op) {
      return text;
    }
  }
  return "=";
}

bool is_version(std::string_view value) { return DriverVersion::parse(value).has_value(); }

Result<RequireTerm> parse_term(std::string_view text) {
  const auto op_at = text.find_first_of("<>=!");
  if (op_at == std::string_view::npos) {
    return fail("'{}' has no operator (=, !=, <, <=, >, >=)", text);
  }
  const auto key = util::to_lower(text.substr(0, op_at));
  const auto key_it = std::ranges::find(key_names, key);
  if (key_it == key_names.end()) {
    const std::vector<std::string> keys(key_names.begin(), key_names.end());
    return fail("unknown key '{}' in '{}'{}", text.substr(0, op_at), text, util::did_you_mean(key, keys));
  }
  RequireTerm term;
  term.key = static_cast<RequireKey>(key_it - key_names.begin());
  auto rest = text.substr(op_at);
  const auto op_it = std::ranges::find_if(operators, [&](const auto& entry) { return rest.starts_with(entry.first); });
  if (op_it == operators.end()) {
    return fail("invalid operator in '{}'", text);
  }
  term.op = op_it->second;
  term.value = std::string(rest.substr(op_it->first.size()));
  if (term.value.starts_with('=') || term.value.starts_with('<') || term.value.starts_with('>')) {
    return fail("invalid operator in '{}'", text);
  }
  if (term.value.empty() || term.value.find_first_of("<>=!") != std::string::npos) {
    return fail("invalid value in '{}'", text);
  }
  if (term.key == RequireKey::brand) {
    if (term.op != RequireOp::eq && term.op != RequireOp::ne) {
      return fail("brand takes only = or != in '{}'", text);
    }
  } else if (!is_version(term.value)) {
    return fail("'{}' is not a version (digits and dots) in '{}'", term.value, text);
  }
  return term;
}

bool compare(std::strong_ordering order, RequireOp op) {
  switch (op) {
    case RequireOp::eq: return order == 0;
    case RequireOp::ne: return order != 0;
    case RequireOp::lt: return order < 0;
    case RequireOp::le: return order <= 0;
    case RequireOp::gt: return order > 0;
    case RequireOp::ge: return order >= 0;
  }
  return false;
}

// libnvidia-container's brand names run words together ("NvidiaRTX"); NVML's have spaces.
std::string brand_key(std::string_view brand) {
  std::string key;
  for (const char c : util::to_lower(brand)) {
    if (c != ' ' && c != '-' && c != '_') {
      key += c;
    }
  }
  return key;
}

// A missing fact makes the term hold, as in libnvidia-container.
bool holds(const RequireTerm& term, const RequireHost& host, const RequireDevice* device) {
  const auto version_holds = [&](const std::string& actual) {
    return compare(*DriverVersion::parse(actual) <=> *DriverVersion::parse(term.value), term.op);
  };
  switch (term.key) {
    case RequireKey::cuda: return !host.cuda || version_holds(host.cuda->str());
    case RequireKey::driver: return !host.driver || version_holds(host.driver->str());
    case RequireKey::arch: return !device || version_holds(device->arch.str());
    case RequireKey::brand: {
      if (!device) {
        return true;
      }
      const bool equal = brand_key(device->brand) == brand_key(term.value);
      return term.op == RequireOp::eq ? equal : !equal;
    }
  }
  return false;
}

bool holds(const RequireExpression& expression, const RequireHost& host, const RequireDevice* device) {
  return std::ranges::any_of(expression.alternatives, [&](const RequireAlternative& alternative) {
    return std::ranges::all_of(alternative.terms, [&](const RequireTerm& term) { return holds(term, host, device); });
  });
}

std::vector<RequireTerm> arch_terms(const CapabilityRange& range) {
  if (range.max_exclusive && range.max_exclusive->major == range.min.major &&
      range.max_exclusive->minor == range.min.minor + 1) {
    return {{RequireKey::arch, RequireOp::eq, range.min.str()}};
  }
  std::vector<RequireTerm> terms{{RequireKey::arch, RequireOp::ge, range.min.str()}};
  if (range.max_exclusive) {
    terms.push_back({RequireKey::arch, RequireOp::lt, range.max_exclusive->str()});
  }
  return terms;
}

bool contains(const CapabilityRange& outer, const CapabilityRange& inner) {
  if (outer.min > inner.min) {
    return false;
  }
  return !outer.max_exclusive || (inner.max_exclusive && *inner.max_exclusive <= *outer.max_exclusive);
}

// The capability ranges the targets serve, leaving out ranges another one already covers.
std::vector<CapabilityRange> covered_ranges(std::span<const GpuTarget> targets, bool sass_only) {
  std::vector<CapabilityRange> all;
  for (const auto& target : targets) {
    if (!sass_only || target.kind == CodeKind::sass) {
      std::ranges::copy(served_capabilities(target), std::back_inserter(all));
    }
  }
  std::vector<CapabilityRange> kept;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const bool redundant = std::ranges::any_of(std::views::iota(std::size_t{0}, all.size()), [&](std::size_t j) {
      return j != i && contains(all[j], all[i]) && (!contains(all[i], all[j]) || j < i);
    });
    if (!redundant) {
      kept.push_back(all[i]);
    }
  }
  return kept;
}

}  // namespace

std::string RequireTerm::str() const {
  return fmt::format("{}{}{}", key_names[static_cast<std::size_t>(key)], op_text(op), value);
}

std::string RequireAlternative::str() const {
  std::vector<std::string> parts;
  for (const auto& term : terms) {
    parts.push_back(term.str());
  }
  return util::join(parts, ",");
}

std::string RequireExpression::str() const {
  std::vector<std::string> parts;
  for (const auto& alternative : alternatives) {
    parts.push_back(alternative.str());
  }
  return util::join(parts, " ");
}

Result<RequireExpression> parse_nvidia_require(std::string_view text) {
  RequireExpression expression;
  for (const auto& piece : util::split(text, ' ')) {
    RequireAlternative alternative;
    for (const auto& term_text : util::split(piece, ',')) {
      if (term_text.empty()) {
        continue;
      }
      HWIMG_TRY_ASSIGN(alternative.terms.emplace_back(),
                       with_context(parse_term(term_text), fmt::format("failed to parse requirement '{}'", text)));
    }
    if (!alternative.terms.empty()) {
      expression.alternatives.push_back(std::move(alternative));
    }
  }
  return expression;
}

std::optional<std::string> unsatisfied_condition(const RequireExpression& expression, const RequireHost& host) {
  if (expression.alternatives.empty()) {
    return std::nullopt;
  }
  const bool ok = host.devices.empty()
                      ? holds(expression, host, nullptr)
                      : std::ranges::all_of(host.devices, [&](const RequireDevice& device) {
                          return holds(expression, host, &device);
                        });
  if (ok) {
    return std::nullopt;
  }
  return "unsatisfied condition: " + expression.alternatives.front().str();
}

std::string nvidia_require_cuda(CudaVersion toolkit, std::span<const GpuTarget> targets) {
  if (targets.empty()) {
    return {};
  }
  RequireExpression expression;
  const auto add = [&](const RequireTerm& first, const std::vector<CapabilityRange>& ranges) {
    for (const auto& range : ranges) {
      RequireAlternative alternative{{first}};
      std::ranges::copy(arch_terms(range), std::back_inserter(alternative.terms));
      expression.alternatives.push_back(std::move(alternative));
    }
  };
  add({RequireKey::cuda, RequireOp::ge, toolkit.str()}, covered_ranges(targets, false));
  if (const auto floor = minor_compat_floor(toolkit.major)) {
    add({RequireKey::driver, RequireOp::ge, floor->str()}, covered_ranges(targets, true));
  }
  return expression.str();
}

}  // namespace hwimg::hw
