#include "hwimg/build/container_step.hpp"

#include <chrono>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "hwimg/util/files.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

constexpr std::string_view hostname = "hwimg-build";

// Docker's default capabilities for a root process: enough to chown and set modes in ${out}.
const std::vector<std::string>& default_capabilities() {
  static const std::vector<std::string> names{
      "CAP_CHOWN",  "CAP_DAC_OVERRIDE", "CAP_FSETID",   "CAP_FOWNER",           "CAP_MKNOD",
      "CAP_NET_RAW", "CAP_SETGID",      "CAP_SETUID",   "CAP_SETFCAP",          "CAP_SETPCAP",
      "CAP_SYS_CHROOT", "CAP_KILL",     "CAP_AUDIT_WRITE", "CAP_NET_BIND_SERVICE"};
  return names;
}

Json runc_mount(const ContainerMount& mount) {
  switch (mount.kind) {
    case MountKind::read_only_bind:
      return {{"destination", mount.destination.string()}, {"type", "bind"}, {"source", mount.source.string()},
              {"options", {"rbind", "ro", "nosuid", "nodev"}}};
    case MountKind::read_write_bind:
      return {{"destination", mount.destination.string()}, {"type", "bind"}, {"source", mount.source.string()},
              {"options", {"rbind", "rw", "nosuid", "nodev"}}};
    case MountKind::proc:
      return {{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}};
    case MountKind::dev:
      return {{"destination", "/dev"}, {"type", "tmpfs"}, {"source", "tmpfs"},
              {"options", {"nosuid", "strictatime", "mode=755", "size=65536k"}}};
    case MountKind::tmpfs:
      return {{"destination", mount.destination.string()}, {"type", "tmpfs"}, {"source", "tmpfs"},
              {"options", {"nosuid", "nodev", "mode=1777"}}};
    case MountKind::directory:
    case MountKind::symlink:
      break;
  }
  return nullptr;
}

// runc's OCI runtime configuration: the scratch `root` read-only, the mounts in order, and the
// default devices runc creates in the /dev tmpfs.
std::string runc_config(const ContainerStep& step) {
  Json env = Json::array();
  for (const auto& [name, value] : step.environment) env.push_back(name + "=" + value);
  Json mounts = Json::array();
  for (const auto& mount : step.mounts) {
    if (auto entry = runc_mount(mount); !entry.is_null()) mounts.push_back(std::move(entry));
    if (mount.kind == MountKind::dev) {
      mounts.push_back({{"destination", "/dev/pts"}, {"type", "devpts"}, {"source", "devpts"},
                        {"options", {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}}});
      mounts.push_back({{"destination", "/dev/shm"}, {"type", "tmpfs"}, {"source", "shm"},
                        {"options", {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}}});
    }
  }
  const auto& capabilities = default_capabilities();
  const Json config = {
      {"ociVersion", "1.0.2"},
      {"process",
       {{"terminal", false},
        {"user", {{"uid", 0}, {"gid", 0}}},
        {"args", step.argv},
        {"env", env},
        {"cwd", step.working_directory.string()},
        {"capabilities", {{"bounding", capabilities}, {"effective", capabilities}, {"permitted", capabilities}}},
        {"noNewPrivileges", true}}},
      {"root", {{"path", "root"}, {"readonly", true}}},
      {"hostname", hostname},
      {"mounts", mounts},
      {"linux",
       {{"namespaces", {{{"type", "pid"}}, {{"type", "ipc"}}, {{"type", "uts"}}, {{"type", "mount"}}}},
        {"maskedPaths", {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                         "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware"}},
        {"readonlyPaths", {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}}}}};
  return config.dump(2);
}

// The bundle: config.json and an empty root in which runc makes the mount points; the directories
// and symlinks of the plan are made there first.
Result<util::ProcessSpec> runc_spec(const ContainerStep& step) {
  const auto bundle = step.scratch / "bundle";
  const auto root = bundle / "root";
  HWIMG_TRY(util::make_directories(root));
  std::error_code ec;
  for (const auto& mount : step.mounts) {
    const auto at = root / mount.destination.relative_path();
    if (mount.kind == MountKind::directory) {
      HWIMG_TRY(util::make_directories(at));
    } else if (mount.kind == MountKind::symlink) {
      fs::create_symlink(mount.source, at, ec);
      if (ec) return fail("failed to create the symlink {}: {}", at.string(), ec.message());
    }
  }
  HWIMG_TRY(util::write_file_durable(bundle / "config.json", runc_config(step)));
  util::ProcessSpec spec;
  // A state directory of its own (nothing in /run/runc) and a unique name, which also names the
  // container's cgroup, so concurrent steps never share one.
  spec.argv = {"runc", "--root", (step.scratch / "state").string(), "run", "--bundle", bundle.string(),
               step.scratch.filename().string()};
  return spec;
}

util::ProcessSpec bwrap_spec(const ContainerStep& step) {
  util::ProcessSpec spec;
  auto& argv = spec.argv;
  // Every namespace but the network one, so a build step can fetch what it needs as on the host.
  argv = {"bwrap", "--unshare-all", "--share-net", "--die-with-parent", "--new-session",
          "--hostname", std::string(hostname), "--clearenv"};
  for (const auto& [name, value] : step.environment) {
    argv.insert(argv.end(), {"--setenv", name, value});
  }
  for (const auto& mount : step.mounts) {
    const auto destination = mount.destination.string();
    switch (mount.kind) {
      case MountKind::read_only_bind: argv.insert(argv.end(), {"--ro-bind", mount.source.string(), destination}); break;
      case MountKind::read_write_bind: argv.insert(argv.end(), {"--bind", mount.source.string(), destination}); break;
      case MountKind::directory: argv.insert(argv.end(), {"--dir", destination}); break;
      case MountKind::symlink: argv.insert(argv.end(), {"--symlink", mount.source.string(), destination}); break;
      case MountKind::proc: argv.insert(argv.end(), {"--proc", destination}); break;
      case MountKind::dev: argv.insert(argv.end(), {"--dev", destination}); break;
      case MountKind::tmpfs: argv.insert(argv.end(), {"--tmpfs", destination}); break;
    }
  }
  argv.insert(argv.end(), {"--chdir", step.working_directory.string(), "--"});
  argv.insert(argv.end(), step.argv.begin(), step.argv.end());
  return spec;
}

}  // namespace

Result<ContainerRunner> find_container_runner() {
  const bool root = ::geteuid() == 0;
  const auto runner = root ? ContainerRunner::runc : ContainerRunner::bwrap;
  const std::string program = root ? "runc" : "bwrap";
  util::ProcessSpec spec;
  spec.argv = {program, "--version"};
  spec.timeout = std::chrono::seconds(30);
  const auto result = util::run_process(spec);
  if (!result || result->exit_status != 0) {
    return fail("{} is not installed or does not run (apt-get install {}); hwimg runs build steps in builder "
                "images with {}",
                program, root ? "runc" : "bubblewrap",
                root ? "runc when it runs as root" : "bwrap when it does not run as root");
  }
  return runner;
}

Result<util::ProcessResult> run_container_step(ContainerRunner runner, const ContainerStep& step) {
  util::ProcessSpec spec;
  if (runner == ContainerRunner::runc) {
    HWIMG_TRY_ASSIGN(spec, runc_spec(step));
  } else {
    spec = bwrap_spec(step);
  }
  spec.echo_output = step.echo == EchoOutput::yes;
  return util::run_process(spec);
}

}  // namespace hwimg::build
