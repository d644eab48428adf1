#include "hwimg/commands/serve.hpp"

#include "hwimg/commands/environment.hpp"
#include "hwimg/serve/server.hpp"
#include "hwimg/util/duration.hpp"

namespace hwimg::commands {
namespace {

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
  HWIMG_TRY_ASSIGN(options.refresh, util::parse_duration(arguments.refresh));
  if (options.refresh.count() == 0) return fail_usage("invalid --refresh \"{}\": it must be longer than 0", arguments.refresh);
  options.output = &output;
  return serve::run_server(options);
}

}  // namespace hwimg::commands
