#include "hwimg/commands/serve.hpp"

#include "hwimg/commands/environment.hpp"
#include "hwimg/registry/reference.hpp"
#include "hwimg/serve/server.hpp"
#include "hwimg/util/duration.hpp"

namespace hwimg::commands {
namespace {

// An upstream is named as references name registries: host[:port], no scheme, no path.
Result<void> check_upstream(const std::string& name) {
  auto parsed = registry::parse_reference(name + "/x");
  if (!parsed || parsed->registry != name) {
    return fail_usage("invalid --upstream \"{}\": expected a registry host[:port], such as registry.example.org", name);
  }
  return {};
}

}  // namespace

Result<int> run_serve(const ServeArguments& arguments) {
  TerminalOutput output(Progress::shown, arguments.verbose);
  serve::ServeOptions options;
  options.listen = arguments.listen;
  for (const auto* list : {&arguments.upstreams, &arguments.insecure_upstreams}) {
    for (const auto& name : *list) HWIMG_TRY(check_upstream(name));
  }
  options.upstreams.names = arguments.upstreams;
  options.upstreams.insecure = arguments.insecure_upstreams;
  options.upstreams.client.ca_file = arguments.ca_file;
  options.upstreams.client.docker_config_dir =
      arguments.docker_config_dir.empty() ? docker_config_dir() : arguments.docker_config_dir;
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
