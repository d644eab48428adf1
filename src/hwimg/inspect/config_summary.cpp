#include "hwimg/inspect/config_summary.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hwimg/inspect/detail/config_json.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::inspect {
namespace {

// Exec form, as the config holds it and `docker inspect` shows it: each argument quoted.
std::string command_text(const std::vector<std::string>& arguments) {
  return nlohmann::json(arguments).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json text_or_null(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

}  // namespace

bool is_image_config(std::string_view media_type) {
  return media_type == oci::media_type::config || media_type == oci::media_type::docker_config;
}

bool env_shown(std::string_view entry) {
  const auto name = entry.substr(0, entry.find('='));
  return name.starts_with("HWIMG_") || name.starts_with("NVIDIA_") || name == "CUDA_VERSION";
}

std::vector<std::string> config_lines(const oci::ImageConfig& config, const oci::Annotations& shown) {
  std::vector<std::string> parts;
  if (config.entrypoint) parts.push_back("entrypoint " + command_text(*config.entrypoint));
  if (config.cmd) parts.push_back("cmd " + command_text(*config.cmd));
  if (!config.entrypoint && !config.cmd) parts.emplace_back("no entrypoint or cmd");
  if (!config.working_dir.empty()) parts.push_back("workdir " + config.working_dir);
  // Runtimes start the process as root when the image names no user (image-spec config.md, User).
  parts.push_back(config.user.empty() ? std::string("user root (none set)") : "user " + config.user);
  if (!config.created.empty()) parts.push_back("created " + config.created);
  std::vector<std::string> lines{"config " + util::join(parts, ", ")};

  std::vector<std::string> others;
  for (const auto& entry : config.env) {
    if (env_shown(entry)) {
      lines.push_back("env " + entry);
    } else {
      others.push_back(entry.substr(0, entry.find('=')));
    }
  }
  if (config.env.empty()) {
    lines.emplace_back("env none");
  } else if (!others.empty()) {
    lines.push_back(fmt::format("env {} {}: {}", others.size(), others.size() == config.env.size() ? "set" : "more",
                                util::join(others, ", ")));
  }
  for (const auto& [key, value] : config.labels) {
    if (const auto same = shown.find(key); same == shown.end() || same->second != value) {
      lines.push_back(fmt::format("label {} = {}", key, value));
    }
  }
  return lines;
}

namespace detail {

nlohmann::json config_json(const oci::ImageConfig& config) {
  const auto command = [](const std::optional<std::vector<std::string>>& arguments) {
    return arguments ? nlohmann::json(*arguments) : nlohmann::json(nullptr);
  };
  return {{"created", text_or_null(config.created)},
          {"entrypoint", command(config.entrypoint)},
          {"cmd", command(config.cmd)},
          {"workingDir", text_or_null(config.working_dir)},
          {"user", text_or_null(config.user)},
          {"env", config.env},
          {"labels", config.labels}};
}

}  // namespace detail
}  // namespace hwimg::inspect
