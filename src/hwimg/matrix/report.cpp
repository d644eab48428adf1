#include "hwimg/matrix/report.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace hwimg::matrix {

namespace {

std::string cpu_name(const Variant& variant) {
  return variant.cpu_target.empty() ? variant.cpu_level : variant.cpu_target;
}

nlohmann::json platform_json(const oci::Platform& platform) {
  nlohmann::json json{{"os", platform.os}, {"architecture", platform.architecture}};
  if (!platform.variant.empty()) {
    json["variant"] = platform.variant;
  }
  return json;
}

nlohmann::json gpu_json(const Variant& variant) {
  auto json = nlohmann::json::array();
  for (const auto& target : variant.gpu_targets) {
    json.push_back(target.name());
  }
  return json;
}

}  // namespace

std::string render_table(const MatrixReport& report) {
  // The DRIVER column only for matrices with a driver axis, whose variants bundle one.
  const bool drivers = std::ranges::any_of(report.variants, [](const Variant& v) { return v.bundled_driver.has_value(); });
  std::vector<std::vector<std::string>> rows{{"VARIANT", "PLATFORM", "CUDA", "GPU TARGETS", "CPU"}};
  if (drivers) rows.front().emplace_back("DRIVER");
  for (const auto& variant : report.variants) {
    rows.push_back({variant.id, variant.platform.str(), variant.cuda ? variant.cuda->str() : "-",
                    variant.uses_gpu() ? hw::join_target_names(variant.gpu_targets) : "-", cpu_name(variant)});
    if (drivers) rows.back().push_back(variant.bundled_driver ? variant.bundled_driver->str() : "-");
  }
  std::vector<std::size_t> widths(rows.front().size());
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += i + 1 < row.size() ? fmt::format("{:<{}}  ", row[i], widths[i]) : row[i];
    }
    out += line + "\n";
  }
  return out;
}

std::string render_json(const MatrixReport& report) {
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& variant : report.variants) {
    variants.push_back({
        {"id", variant.id},
        {"cuda", variant.cuda ? nlohmann::json(variant.cuda->str()) : nlohmann::json(nullptr)},
        {"gpu", gpu_json(variant)},
        {"cpu", cpu_name(variant)},
        {"platform", platform_json(variant.platform)},
        {"annotations", variant.annotations},
        {"nvidia_require_cuda", variant.nvidia_require_cuda},
        {"driver", variant.bundled_driver ? nlohmann::json(variant.bundled_driver->str()) : nlohmann::json(nullptr)},
        {"variables", variant.variables},
    });
  }
  const nlohmann::json json{{"variants", variants}, {"warnings", report.warnings}, {"errors", report.errors}};
  return json.dump(2) + "\n";
}

std::string render_github(const MatrixReport& report) {
  nlohmann::json include = nlohmann::json::array();
  for (const auto& variant : report.variants) {
    include.push_back({
        {"variant", variant.id},
        {"cuda", variant.cuda ? variant.cuda->str() : ""},
        {"gpu", hw::join_target_names(variant.gpu_targets)},
        {"cpu", cpu_name(variant)},
        {"platform", variant.platform.str()},
        {"driver", variant.bundled_driver ? variant.bundled_driver->str() : ""},
    });
  }
  return nlohmann::json{{"include", include}}.dump() + "\n";
}

}  // namespace hwimg::matrix
