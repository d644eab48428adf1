#include <memory>

#include "choice_option.hpp"
#include "commands.hpp"
#include "hwimg/commands/serve.hpp"

namespace hwimg::cli {

void define_serve_command(CLI::App& subcommand, Action& action) {
  auto arguments = std::make_shared<commands::ServeArguments>();
  auto host_file = std::make_shared<std::string>();
  auto gpus = std::make_shared<std::string>();
  auto verbose = std::make_shared<bool>(false);
  auto* command = &subcommand;
  command->add_option("--listen", arguments->listen, "ADDRESS:PORT to listen on (loopback by default)")
      ->capture_default_str();
  command->add_option("--upstream", arguments->upstreams,
                      "a registry host[:port] to mirror; repeat; the first takes requests that name none. "
                      "NAME=HOST:PORT gives one with a port a name for /v2/NAME/<repo>/... paths")
      ->option_text("[NAME=]HOST[:PORT]");
  command->add_option("--insecure-upstream", arguments->insecure_upstreams,
                      "a registry to mirror without TLS verification (plain HTTP allowed); repeat")
      ->option_text("[NAME=]HOST[:PORT]");
  auto* host = command->add_option("--host", *host_file, "Judge against this facts file (hwimg probe --format json) "
                                                          "instead of probing this node")
                   ->check(CLI::ExistingFile);
  auto* gpu_option = command->add_option("--gpus", *gpus, "The GPUs containers get: all, none, or indexes / UUIDs "
                                                          "(default: NVIDIA_VISIBLE_DEVICES, else all)");
  command->add_option("--ca-file", arguments->ca_file, "PEM file of CA certificates to trust for the upstreams")
      ->check(CLI::ExistingFile);
  command->add_option("--docker-config", arguments->docker_config_dir,
                      "directory of config.json with the node's credentials (default: $DOCKER_AUTH_CONFIG's "
                      "credentials, then $DOCKER_CONFIG or ~/.docker)");
  command->add_option("--ttl", arguments->ttl, "How long a tag's answer is kept (ms, s, m, h)")->capture_default_str();
  add_choice_option(*command, "--foreign", arguments->foreign,
                    {{"pass-through", serve::ForeignImages::pass_through}, {"select", serve::ForeignImages::select}},
                    "Tags of images hwimg did not build: pass them on unchanged, or answer with the entry hwimg select "
                    "picks (platform level such as linux/amd64/v3, NVIDIA_REQUIRE_* in configs); none fits: "
                    "MANIFEST_UNKNOWN with the reasons");
  command->add_option("--refresh", arguments->refresh, "How often the node's facts are probed again; SIGHUP does it "
                                                       "at once")
      ->capture_default_str();
  command->add_option("--upstream-check", arguments->upstream_check,
                      "How often each upstream is checked (reachable, TLS, credentials) for /readyz; also at start")
      ->capture_default_str();
  command->add_option("--max-connections", arguments->max_connections, "Client connections open at once, in all")
      ->capture_default_str()
      ->check(CLI::Range(16U, 1U << 20));
  command->add_option("--max-client-connections", arguments->max_client_connections,
                      "Client connections open at once from one address (local clients share 127.0.0.1)")
      ->capture_default_str()
      ->check(CLI::Range(1U, 1U << 20));
  command->add_option("--header-timeout", arguments->header_timeout,
                      "A connection that has not sent a whole request (header, and body if any) this long after "
                      "opening, or after its last answer, is closed")
      ->capture_default_str();
  command->add_option("--idle-timeout", arguments->idle_timeout,
                      "A connection on which nothing was sent or received this long is closed")
      ->capture_default_str();
  command->add_option("--max-fetches", arguments->max_fetches,
                      "Requests answered from the upstreams at once (a blob's for as long as it streams)")
      ->capture_default_str()
      ->check(CLI::Range(1U, 65536U));
  command->add_option("--fetch-wait", arguments->fetch_wait,
                      "How long a request beyond --max-fetches waits before it is answered 503 with Retry-After")
      ->capture_default_str();
  command->add_flag("-v,--verbose", *verbose, "log every upstream HTTP exchange to stderr (credentials are never shown)");
  command->footer(
      "Endpoints: /v2/... (the registry API's read side), /healthz (liveness), /readyz (the upstreams answer),\n"
      "/metrics (Prometheus).\n"
      "Requests: /v2/<repo>/...?ns=<upstream> (containerd), /v2/<upstream>/<repo>/... (CRI-O, podman, skopeo,\n"
      "enroot, direct references), /v2/<repo>/... (the first --upstream). SIGTERM lets requests in flight finish.");
  command->callback([arguments, host_file, gpus, verbose, host, gpu_option, &action] {
    if (host->count() > 0) arguments->host_file = *host_file;
    if (gpu_option->count() > 0) arguments->gpus = *gpus;
    arguments->verbose = *verbose ? commands::Verbose::yes : commands::Verbose::no;
    action = [arguments] { return commands::run_serve(*arguments); };
  });
}

}  // namespace hwimg::cli
