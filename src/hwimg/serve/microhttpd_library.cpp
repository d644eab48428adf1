#include "hwimg/serve/detail/microhttpd_library.hpp"

#include "hwimg/util/process_library.hpp"

namespace hwimg::serve {
namespace {

Result<void> bind(const util::SharedLibrary& library, MicrohttpdLibrary& mhd) {
  bool all = true;
  all &= library.bind(mhd.start_daemon, "MHD_start_daemon");
  all &= library.bind(mhd.stop_daemon, "MHD_stop_daemon");
  all &= library.bind(mhd.quiesce_daemon, "MHD_quiesce_daemon");
  all &= library.bind(mhd.get_daemon_info, "MHD_get_daemon_info");
  all &= library.bind(mhd.get_connection_values, "MHD_get_connection_values");
  all &= library.bind(mhd.get_connection_info, "MHD_get_connection_info");
  all &= library.bind(mhd.suspend_connection, "MHD_suspend_connection");
  all &= library.bind(mhd.resume_connection, "MHD_resume_connection");
  all &= library.bind(mhd.create_response_from_buffer, "MHD_create_response_from_buffer");
  all &= library.bind(mhd.create_response_from_callback, "MHD_create_response_from_callback");
  all &= library.bind(mhd.add_response_header, "MHD_add_response_header");
  all &= library.bind(mhd.queue_response, "MHD_queue_response");
  all &= library.bind(mhd.destroy_response, "MHD_destroy_response");
  if (!all) return fail("failed to load libmicrohttpd: libmicrohttpd.so.12 lacks functions hwimg needs (0.9.71 or newer)");
  return {};
}

util::ProcessLibrary<MicrohttpdLibrary> g_microhttpd(
    "libmicrohttpd.so.12", "failed to load libmicrohttpd, which `hwimg serve` needs (install libmicrohttpd12)", bind);

}  // namespace

Result<const MicrohttpdLibrary*> load_microhttpd() {
  return g_microhttpd.get();
}

}  // namespace hwimg::serve
