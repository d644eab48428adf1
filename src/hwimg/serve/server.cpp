#include "hwimg/serve/server.hpp"

#include <charconv>
#include <csignal>
#include <ctime>

#include "hwimg/registry/reference.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::serve {
namespace {

Result<probe::HostFacts> load_facts(const ServeOptions& options) {
  if (!options.host_file) return probe::probe_host(options.probe);
  HWIMG_TRY_ASSIGN(const auto text, util::read_file(*options.host_file));
  return probe::parse_host_facts(text, options.host_file->string());
}

std::string describe(const probe::HostFacts& facts) {
  const auto cpu = facts.cpu.microarch.value_or(facts.cpu.level ? hw::x86_level_name(*facts.cpu.level)
                                                                : std::string(hw::cpu_arch_name(facts.cpu.arch)));
  if (!facts.nvidia) return fmt::format("{}, no NVIDIA driver", cpu);
  return fmt::format("{}, NVIDIA driver {}, CUDA {}, {} GPU(s)", cpu, facts.nvidia->driver_version.value_or("?"),
                     facts.nvidia->cuda_driver_version.value_or("?"), facts.nvidia->gpus.size());
}

// The signals `serve` handles are taken from every thread and waited for here alone.
class SignalWaiter {
public:
  SignalWaiter() {
    sigemptyset(&m_signals);
    for (const int signal : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&m_signals, signal);
    pthread_sigmask(SIG_BLOCK, &m_signals, &m_previous);
  }
  SignalWaiter(const SignalWaiter&) = delete;
  SignalWaiter& operator=(const SignalWaiter&) = delete;
  ~SignalWaiter() { pthread_sigmask(SIG_SETMASK, &m_previous, nullptr); }

  // The signal that came within `timeout`, or 0.
  int wait(std::chrono::milliseconds timeout) const {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
    const timespec limit{static_cast<std::time_t>(seconds.count()),
                         static_cast<long>(std::chrono::nanoseconds(timeout - seconds).count())};
    const int signal = sigtimedwait(&m_signals, nullptr, &limit);
    return signal > 0 ? signal : 0;
  }

private:
  sigset_t m_signals{};
  sigset_t m_previous{};
};

void reload(HostState& host, Mirror& mirror, util::Output& output) {
  auto changed = host.refresh();
  if (!changed) {
    output.warning(fmt::format("failed to reload the host facts, keeping the old ones: {}", changed.error().message));
  } else if (*changed) {
    mirror.forget_tags();
    output.progress(fmt::format("host facts changed: {}", describe(*host.facts())));
  }
}

}  // namespace

Result<std::pair<std::string, std::uint16_t>> parse_listen_address(std::string_view text) {
  std::string_view address;
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find("]:");
    if (close == std::string_view::npos) return fail_usage("invalid --listen \"{}\": expected [IPv6]:PORT", text);
    address = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return fail_usage("invalid --listen \"{}\": expected ADDRESS:PORT", text);
    address = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  unsigned value = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (error != std::errc() || end != port.data() + port.size() || value > 65535 || address.empty()) {
    return fail_usage("invalid --listen \"{}\": expected ADDRESS:PORT with a port from 0 to 65535", text);
  }
  return std::pair<std::string, std::uint16_t>{std::string(address), static_cast<std::uint16_t>(value)};
}

Result<int> run_server(const ServeOptions& options) {
  auto& output = *options.output;
  HWIMG_TRY_ASSIGN(const auto listen, parse_listen_address(options.listen));
  if (options.upstreams.upstreams.empty()) {
    return fail_usage("failed to serve: name at least one --upstream registry to mirror");
  }
  HostState host([&] { return load_facts(options); });
  HWIMG_TRY(with_context(host.refresh(), "failed to serve: failed to load the host facts"));
  Upstreams upstreams(options.upstreams);
  Metrics metrics;
  Mirror mirror(upstreams, host, metrics, output, options.mirror);

  const SignalWaiter signals;
  ServerSettings settings;
  settings.address = listen.first;
  settings.port = listen.second;
  settings.output = &output;
  HWIMG_TRY_ASSIGN(auto server,
                   HttpServer::start(settings, [&mirror](const HttpRequest& request) { return mirror.handle(request); }));
  if (!registry::is_loopback_host(listen.first)) {
    output.warning(fmt::format("listening on {}, which other machines can reach: anyone there can pull through this "
                               "mirror with the node's credentials",
                               listen.first));
  }
  output.progress(fmt::format("listening on {}:{}; mirroring {}; host: {}",
                              listen.first.find(':') != std::string::npos ? "[" + listen.first + "]" : listen.first,
                              server->port(), util::join(upstreams.names(), ", "), describe(*host.facts())));
  while (true) {
    const int signal = signals.wait(options.refresh);
    if (signal == SIGTERM || signal == SIGINT) break;
    reload(host, mirror, output);
  }
  output.progress("stopping: letting requests in flight finish");
  server->shutdown(options.grace);
  return 0;
}

}  // namespace hwimg::serve
