#include "hwimg/commands/serve.hpp"

#include "hwimg/commands/environment.hpp"
#include "hwimg/serve/server.hpp"
#include "hwimg/util/duration.hpp"

namespace hwimg::commands {
namespace {

Result<std::chrono::milliseconds> positive_duration(std::string_view flag, const std::string& text) {
  HWIMG_TRY_ASSIGN(const auto value, util::parse_duration(text));
  if (value.count() <= 0) return fail_usage("invalid {} \"{}\": it must be longer than 0", flag, text);
  return value;
}

}  // namespace

Result<int> run_serve(const ServeArguments& arguments) {
  TerminalOutput output(Progress::shown, arguments.verbose);
  serve::ServeOptions options;
  options.listen = arguments.listen;
  for (const auto* list : {&arguments.upstreams, &arguments.insecure_upstreams}) {
    for (const auto& text : *list) {
      HWIMG_TRY_ASSIGN(auto upstream, serve::parse_upstream(text));
      upstream.insecure = list == &arguments.insecure_upstreams;
      options.upstreams.upstreams.push_back(std::move(upstream));
    }
  }
  options.upstreams.client.ca_file = arguments.ca_file;
  options.upstreams.client.docker_config_dir =
      arguments.docker_config_dir.empty() ? docker_config_dir() : arguments.docker_config_dir;
  if (arguments.docker_config_dir.empty()) {
    options.upstreams.client.docker_auth_config = variable("DOCKER_AUTH_CONFIG").value_or("");
  }
  options.upstreams.client.output = &output;
  options.host_file = arguments.host_file;
  if (!options.host_file) {
    HWIMG_TRY_ASSIGN(options.probe, probe_options());
  }
  HWIMG_TRY_ASSIGN(options.mirror.gpus,
                   select::choose_gpu_selection(arguments.gpus, variable("NVIDIA_VISIBLE_DEVICES")));
  HWIMG_TRY_ASSIGN(options.mirror.ttl, util::parse_duration(arguments.ttl));
  options.mirror.foreign = arguments.foreign;
  HWIMG_TRY_ASSIGN(options.refresh, positive_duration("--refresh", arguments.refresh));
  HWIMG_TRY_ASSIGN(options.upstream_check, positive_duration("--upstream-check", arguments.upstream_check));
  options.http.connection_limit = arguments.max_connections;
  options.http.client_limit = arguments.max_client_connections;
  HWIMG_TRY_ASSIGN(options.http.header_timeout, positive_duration("--header-timeout", arguments.header_timeout));
  HWIMG_TRY_ASSIGN(options.http.idle_timeout, positive_duration("--idle-timeout", arguments.idle_timeout));
  options.http.fetch_limit = arguments.max_fetches;
  HWIMG_TRY_ASSIGN(options.http.fetch_wait, positive_duration("--fetch-wait", arguments.fetch_wait));
  options.output = &output;
  return serve::run_server(options);
}

}  // namespace hwimg::commands
