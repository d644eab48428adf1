#include "hwimg/serve/server.hpp"

#include <charconv>
#include <csignal>
#include <ctime>
#include <memory>

#include <malloc.h>
#include <sys/resource.h>

#include "hwimg/registry/cancellation.hpp"
#include "hwimg/registry/reference.hpp"
#include "hwimg/serve/health_check.hpp"
#include "hwimg/serve/systemd_notify.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::serve {
namespace {

// At the stop, an upstream exchange that moved nothing for this long is cut rather than left to
// the registry client's stall timeout (60 s), which would hold its worker, and the exit, that long.
// Exchanges that move may go on for the grace.
constexpr std::chrono::milliseconds stalled_at_stop{2'000};

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

// Each connection holds a descriptor, and each fetch one or two more (its upstream connection, a
// redirect's). The soft limit is raised toward the hard one (systemd's default soft limit, 1024,
// is below the default connection limit); connections the hard limit leaves no room for are
// taken off the connection limit.
void fit_descriptor_limit(ServerSettings& settings, util::Output& output) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    output.warning("failed to read the open-files limit; connections are not fitted to it");
    return;
  }
  const rlim_t reserve = 2 * static_cast<rlim_t>(settings.fetch_limit) + 128;
  const rlim_t wanted = settings.connection_limit + reserve;
  if (limit.rlim_cur < wanted) {
    rlimit raised = limit;
    raised.rlim_cur = std::min(wanted, limit.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  if (limit.rlim_cur >= wanted) return;
  const auto room = limit.rlim_cur > reserve + 64 ? limit.rlim_cur - reserve : 64;
  settings.connection_limit = static_cast<unsigned>(room);
  settings.client_limit = std::min(settings.client_limit, settings.connection_limit);
  output.warning(fmt::format("the open-files limit ({}) leaves room for {} connections, not {}: raise LimitNOFILE",
                             limit.rlim_cur, room, wanted - reserve));
}

// glibc raises its mmap threshold to the size of each large block freed, after which blocks up to
// that size come from the arena of the thread that asked and stay there when freed: fetch workers
// reading a few upstream answers of several MiB (up to the manifest limit) each would keep them
// for good, one arena per worker. A fixed threshold gives every large block back when freed.
void give_back_large_blocks(util::Output& output) {
  if (::mallopt(M_MMAP_THRESHOLD, 256 * 1024) != 1) output.warning("failed to fix malloc's mmap threshold");
}

std::optional<SystemdNotifier> open_notifier(util::Output& output) {
  auto notifier = SystemdNotifier::from_environment();
  if (notifier) return std::move(*notifier);
  output.warning(fmt::format("not telling systemd how serve does: {}", notifier.error().message));
  return std::nullopt;
}

void notify(const std::optional<SystemdNotifier>& notifier, std::string_view state, util::Output& output) {
  if (!notifier) return;
  if (auto sent = notifier->notify(state); !sent) output.warning(sent.error().message);
}

// WATCHDOG=1 only while the server answers its own /healthz.
void tend_watchdog(const SystemdNotifier& notifier, const std::string& address, std::uint16_t port,
                   util::Output& output) {
  if (auto healthy = check_health(address, port, std::chrono::seconds(5)); !healthy) {
    output.warning(fmt::format("{}; not telling systemd's watchdog that serve is alive", healthy.error().message));
    return;
  }
  if (auto sent = notifier.notify("WATCHDOG=1"); !sent) output.warning(sent.error().message);
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
  const auto cancellation = std::make_shared<registry::Cancellation>();
  auto upstream_settings = options.upstreams;
  upstream_settings.client.cancellation = cancellation;
  Upstreams upstreams(std::move(upstream_settings));
  Metrics metrics;
  Mirror mirror(upstreams, host, metrics, output, options.mirror);

  const auto notifier = open_notifier(output);
  const SignalWaiter signals;
  ServerSettings settings = options.http;
  settings.address = listen.first;
  settings.port = listen.second;
  settings.output = &output;
  settings.grace_over = [cancellation] { cancellation->cut_stalled(std::chrono::milliseconds(0)); };
  fit_descriptor_limit(settings, output);
  give_back_large_blocks(output);
  // Checked from the start, as the server listens: an upstream that is down must not keep the node's
  // pulls of the others (or /healthz) waiting.
  UpstreamHealth health(upstreams, output, options.upstream_check);
  mirror.watch_readiness([&health] { return health.readiness(); });
  HWIMG_TRY_ASSIGN(auto server, HttpServer::start(settings, mirror.handlers()));
  metrics.watch_load([&server] { return server->load(); });
  if (!registry::is_loopback_host(listen.first)) {
    output.warning(fmt::format("listening on {}, which other machines can reach: anyone there can pull through this "
                               "mirror with the node's credentials",
                               listen.first));
  }
  output.progress(fmt::format("listening on {}:{}; mirroring {}; host: {}",
                              listen.first.find(':') != std::string::npos ? "[" + listen.first + "]" : listen.first,
                              server->port(), util::join(upstreams.names(), ", "), describe(*host.facts())));
  notify(notifier, "READY=1", output);
  using Steady = std::chrono::steady_clock;
  // systemd's advice: ping at half the interval it kills at.
  // (Zero: no watchdog. A plain duration, where an optional one drew GCC 12's maybe-uninitialized.)
  const auto watchdog = notifier && notifier->watchdog()
                            ? std::chrono::duration_cast<std::chrono::milliseconds>(*notifier->watchdog() / 2)
                            : std::chrono::milliseconds(0);
  auto next_refresh = Steady::now() + options.refresh;
  auto next_watchdog = watchdog.count() > 0 ? Steady::now() : Steady::time_point::max();
  while (true) {
    const auto until = std::min(next_refresh, next_watchdog);
    const int signal = signals.wait(std::max(std::chrono::ceil<std::chrono::milliseconds>(until - Steady::now()),
                                             std::chrono::milliseconds(0)));
    if (signal == SIGTERM || signal == SIGINT) break;
    if (signal == SIGHUP || Steady::now() >= next_refresh) {
      reload(host, mirror, output);
      next_refresh = Steady::now() + options.refresh;
    }
    if (watchdog.count() > 0 && Steady::now() >= next_watchdog) {
      tend_watchdog(*notifier, listen.first, server->port(), output);
      next_watchdog = Steady::now() + watchdog;
    }
  }
  notify(notifier, "STOPPING=1", output);
  output.progress("stopping: letting requests in flight finish");
  metrics.watch_load(nullptr);
  cancellation->cut_stalled(stalled_at_stop);
  server->shutdown(options.grace);
  return 0;
}

}  // namespace hwimg::serve
