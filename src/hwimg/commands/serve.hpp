#pragma once
// `hwimg serve`: a node-local registry mirror that answers a tag with this node's variant
// (docs/serve.md).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hwimg/commands/terminal_output.hpp"
#include "hwimg/serve/tag_answer.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::commands {

struct ServeArguments {
  std::string listen = "127.0.0.1:5050";
  std::vector<std::string> upstreams;
  std::vector<std::string> insecure_upstreams;
  std::optional<std::filesystem::path> host_file;
  std::optional<std::string> gpus;  // absent: NVIDIA_VISIBLE_DEVICES, else all
  std::filesystem::path ca_file;
  std::filesystem::path docker_config_dir;  // empty: $DOCKER_CONFIG or ~/.docker
  std::string ttl = "60s";
  serve::ForeignImages foreign = serve::ForeignImages::pass_through;  // --foreign
  std::string refresh = "10m";
  std::string upstream_check = "60s";
  // Limits (docs/serve.md#limits).
  unsigned max_connections = 4096;
  unsigned max_client_connections = 1024;
  std::string header_timeout = "10s";
  std::string idle_timeout = "2m";
  unsigned max_fetches = 256;
  std::string fetch_wait = "30s";
  Verbose verbose = Verbose::no;  // every upstream exchange on stderr
};

// Runs until SIGTERM; one line per resolution on stderr.
[[nodiscard]] Result<int> run_serve(const ServeArguments& arguments);

}  // namespace hwimg::commands
