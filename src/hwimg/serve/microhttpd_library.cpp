#include "hwimg/serve/detail/microhttpd_library.hpp"

#include <mutex>
#include <optional>

#include "hwimg/util/shared_library.hpp"

namespace hwimg::serve {
namespace {

MicrohttpdLibrary g_library{};

Result<void> resolve(const util::SharedLibrary& library) {
  bool missing = false;
  const auto bind = [&]<typename F>(F& slot, const char* name) {
    slot = reinterpret_cast<F>(library.find<void>(name));
    missing = missing || slot == nullptr;
  };
  bind(g_library.start_daemon, "MHD_start_daemon");
  bind(g_library.stop_daemon, "MHD_stop_daemon");
  bind(g_library.quiesce_daemon, "MHD_quiesce_daemon");
  bind(g_library.get_daemon_info, "MHD_get_daemon_info");
  bind(g_library.get_connection_values, "MHD_get_connection_values");
  bind(g_library.create_response_from_buffer, "MHD_create_response_from_buffer");
  bind(g_library.create_response_from_callback, "MHD_create_response_from_callback");
  bind(g_library.add_response_header, "MHD_add_response_header");
  bind(g_library.queue_response, "MHD_queue_response");
  bind(g_library.destroy_response, "MHD_destroy_response");
  if (missing) {
    return fail("failed to load libmicrohttpd: libmicrohttpd.so.12 lacks functions hwimg needs (0.9.71 or newer)");
  }
  return {};
}

}  // namespace

Result<const MicrohttpdLibrary*> load_microhttpd() {
  static std::once_flag once;
  static std::optional<util::SharedLibrary> library;
  static Result<void> loaded;
  std::call_once(once, [] {
    auto opened = util::SharedLibrary::open("libmicrohttpd.so.12");
    if (!opened) {
      loaded = std::unexpected(
          opened.error().context("failed to load libmicrohttpd, which `hwimg serve` needs (install libmicrohttpd12)"));
      return;
    }
    library.emplace(std::move(*opened));
    loaded = resolve(*library);
  });
  if (!loaded) return std::unexpected(loaded.error());
  return &g_library;
}

}  // namespace hwimg::serve
