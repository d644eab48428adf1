// What a build step in a builder image sees: the image's top-level entries bound read-only or
// recreated as symlinks, directories on the way to the host's workdir recreated so no mount point
// is ever made in the cached rootfs, the container's /proc, /dev and /tmp, and the environment.

#include <doctest/doctest.h>

#include "hwimg/build/builder_image.hpp"
#include "hwimg/build/container_mounts.hpp"
#include "test_support.hpp"

using namespace hwimg;
namespace fs = std::filesystem;

namespace {

std::string describe(const build::ContainerMount& mount) {
  switch (mount.kind) {
    case build::MountKind::read_only_bind: return "ro " + mount.destination.string();
    case build::MountKind::read_write_bind: return "rw " + mount.destination.string();
    case build::MountKind::directory: return "dir " + mount.destination.string();
    case build::MountKind::symlink: return "link " + mount.destination.string() + " -> " + mount.source.string();
    case build::MountKind::proc: return "proc " + mount.destination.string();
    case build::MountKind::dev: return "dev " + mount.destination.string();
    case build::MountKind::tmpfs: return "tmpfs " + mount.destination.string();
  }
  return "?";
}

// A Debian-like rootfs: merged /usr symlinks, /home with another user, a top-level file.
fs::path make_rootfs(const fs::path& root) {
  for (const auto* d : {"usr/bin", "etc", "home/other", "home/u/old", "proc", "dev", "tmp", "srv"}) {
    fs::create_directories(root / d);
  }
  fs::create_symlink("usr/bin", root / "bin");
  test::write_file(root / "home" / "u" / "notes", "n");
  test::write_file(root / "marker", "m");
  return root;
}

}  // namespace

TEST_CASE("the image's entries are bound read-only, symlinks recreated, and the way to a host directory rebuilt") {
  const auto tmp = test::scratch_directory();
  const auto rootfs = make_rootfs(tmp.path() / "rootfs");
  const auto mounts = build::plan_container_mounts(rootfs, {"/home/u/src", "/tmp/hwimg-build-1/out", "/home/u/src/sub"});
  REQUIRE_MESSAGE(mounts.has_value(), mounts.error().message);
  std::vector<std::string> described;
  for (const auto& mount : *mounts) described.push_back(describe(mount));
  CHECK(described == std::vector<std::string>{
                         "link /bin -> usr/bin", "ro /etc", "dir /home", "ro /home/other", "dir /home/u", "ro /home/u/notes",
                         "ro /home/u/old", "ro /marker", "ro /srv", "ro /usr", "proc /proc", "dev /dev", "tmpfs /tmp",
                         "rw /home/u/src", "rw /tmp/hwimg-build-1/out"});
  for (const auto& mount : *mounts) {
    if (mount.kind == build::MountKind::read_only_bind) CHECK(mount.source == rootfs / mount.destination.relative_path());
    if (mount.kind == build::MountKind::read_write_bind) CHECK(mount.source == mount.destination);
  }
}

TEST_CASE("a host directory that cannot be mounted without changing the image is refused") {
  const auto tmp = test::scratch_directory();
  const auto rootfs = make_rootfs(tmp.path() / "rootfs");
  CHECK(build::plan_container_mounts(rootfs, {"/bin/project"}).error().message ==
        "the host directory /bin/project cannot be mounted in the builder image: /bin is a symlink there");
  CHECK(build::plan_container_mounts(rootfs, {"/marker/x"}).error().message ==
        "the host directory /marker/x cannot be mounted in the builder image: /marker is a file there");
  CHECK(build::plan_container_mounts(rootfs, {"/"}).error().message ==
        "the host directory / cannot be mounted in a builder image: it is the container's own");
  CHECK(build::plan_container_mounts(rootfs, {"/proc/1"}).error().message ==
        "the host directory /proc/1 cannot be mounted in a builder image: it is the container's own");
}

TEST_CASE("a builder step's environment: the image's Env, then the step's variables; PATH and HOME by default") {
  const auto plain = build::builder_environment({}, {{"HWIMG_VARIANT", "cpu-x86-64-v1"}}, 1700000000);
  CHECK(plain == std::map<std::string, std::string>{
                     {"HOME", "/tmp"},
                     {"HWIMG_VARIANT", "cpu-x86-64-v1"},
                     {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
                     {"SOURCE_DATE_EPOCH", "1700000000"}});
  const auto cuda = build::builder_environment(
      {"PATH=/usr/local/cuda/bin:/usr/bin", "CUDA_HOME=/opt/wrong", "NVIDIA_VISIBLE_DEVICES=all", "EMPTY=", "BROKEN"},
      {{"CUDA_HOME", "/usr/local/cuda"}}, 0);
  CHECK(cuda.at("PATH") == "/usr/local/cuda/bin:/usr/bin");
  CHECK(cuda.at("CUDA_HOME") == "/usr/local/cuda");
  CHECK(cuda.at("NVIDIA_VISIBLE_DEVICES") == "all");
  CHECK(cuda.at("EMPTY").empty());
  CHECK_FALSE(cuda.contains("BROKEN"));
  CHECK(cuda.at("SOURCE_DATE_EPOCH") == "0");
}

TEST_CASE("the host platform names the probed amd64 level or arm64, as image indexes do") {
  CHECK(build::host_platform(hw::CpuArch::amd64, hw::X86Level::v3) == oci::Platform{"linux", "amd64", "v3"});
  CHECK(build::host_platform(hw::CpuArch::amd64, hw::X86Level::v1) == oci::Platform{"linux", "amd64", ""});
  CHECK(build::host_platform(hw::CpuArch::amd64, std::nullopt) == oci::Platform{"linux", "amd64", ""});
  CHECK(build::host_platform(hw::CpuArch::arm64, std::nullopt) == oci::Platform{"linux", "arm64", "v8"});
}
