// The user's cache kept within bounds (docs/cache.md): entries listed with their disk space and
// last use, pruned least recently used first or by age, never one pinned by a live lease, stale
// leases reclaimed; the blob cache, unpacked root filesystems and push staging pin what they use.

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwimg/build/push_staging.hpp"
#include "hwimg/image/cache_prune.hpp"
#include "hwimg/image/memory_reader.hpp"
#include "hwimg/image/rootfs.hpp"
#include "hwimg/util/byte_size.hpp"
#include "hwimg/oci/media_types.hpp"
#include "test_support.hpp"

using namespace hwimg;
namespace fs = std::filesystem;
using Clock = std::chrono::system_clock;

namespace {

std::string hex_of(char c) { return std::string(64, c); }

// A file of `bytes` bytes whose last use was `age` ago.
void entry_file(const fs::path& path, std::size_t bytes, std::chrono::seconds age) {
  test::write_file(path, std::string(bytes, 'x'), 0600);
  const auto when = Clock::to_time_t(Clock::now() - age);
  const timespec times[2] = {{when, 0}, {when, 0}};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

void blob(const fs::path& root, char c, std::size_t bytes, std::chrono::seconds age) {
  entry_file(root / "blobs" / "sha256" / hex_of(c), bytes, age);
}

// A complete root filesystem: its directory, a read-only subdirectory, and its marker.
void rootfs(const fs::path& root, char c, std::chrono::seconds age) {
  const auto directory = root / "rootfs" / hex_of(c);
  test::write_file(directory / "usr" / "bin" / "tool", std::string(10000, 't'));
  REQUIRE(::chmod((directory / "usr").c_str(), 0555) == 0);
  entry_file(root / "rootfs" / (hex_of(c) + ".layers"), 10, age);
}

std::vector<std::string> names(const std::vector<image::CacheEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& entry : entries) out.push_back(entry.name);
  return out;
}

image::PruneReport prune(const fs::path& root, image::PrunePolicy policy) {
  auto report = image::prune_cache(root, policy, Clock::now());
  REQUIRE_MESSAGE(report.has_value(), report.error().message);
  return std::move(*report);
}

}  // namespace

TEST_CASE("cache sizes are read as ccache and du --si write them") {
  CHECK(util::parse_byte_size("0").value() == 0);
  CHECK(util::parse_byte_size("512").value() == 512);
  CHECK(util::parse_byte_size("20G").value() == 20'000'000'000);
  CHECK(util::parse_byte_size("20GB").value() == 20'000'000'000);
  CHECK(util::parse_byte_size("20GiB").value() == (std::uint64_t{20} << 30));
  CHECK(util::parse_byte_size("512Mi").value() == (std::uint64_t{512} << 20));
  CHECK(util::parse_byte_size("1.5k").value() == 1500);
  CHECK(util::parse_byte_size("1.5 KiB").value() == 1536);
  CHECK(util::parse_byte_size("lots").error().message ==
        "invalid size \"lots\": expected a number of bytes with k, M, G or T (powers of 1000) or Ki, Mi, Gi or Ti "
        "(powers of 1024), such as 20G");
  CHECK(util::parse_byte_size("2XB").error().message.starts_with("invalid size \"2XB\": unknown unit \"XB\""));
  CHECK(util::parse_byte_size("1.2345G").error().message == "invalid size \"1.2345G\": at most three decimals");
  CHECK(util::parse_byte_size("99999999999T").error().message == "invalid size \"99999999999T\": too large");
  CHECK(util::parse_byte_size("lots").error().exit_code == ExitCode::usage);
  CHECK(util::format_byte_size(812) == "812 B");
  CHECK(util::format_byte_size(std::uint64_t{20} << 30) == "20.0 GiB");
}

TEST_CASE("the cache lists blobs, root filesystems and staging layouts, least recently used first") {
  const auto dir = test::scratch_directory();
  const auto& root = dir.path();
  blob(root, 'a', 8192, std::chrono::hours(3));
  blob(root, 'b', 4096, std::chrono::hours(30));
  rootfs(root, 'c', std::chrono::hours(5));
  test::write_file(root / "staging" / "0123456789abcdef" / "oci-layout", "{}");
  test::write_file(image::staging_about_file(root / "staging" / "0123456789abcdef"), "/src/app/recipe.yaml\n");
  // What killed writers left is not an entry.
  test::write_file(root / "blobs" / "sha256" / ".tmp-1-x", "partial");
  test::write_file(root / "rootfs" / (".cccc.tmp-1-x") / "f", "partial");

  const auto entries = image::list_cache(root);
  REQUIRE(entries.has_value());
  CHECK(names(*entries) == std::vector<std::string>{"blobs/sha256/" + hex_of('b'), "rootfs/" + hex_of('c'),
                                                    "blobs/sha256/" + hex_of('a'), "staging/0123456789abcdef"});
  CHECK((*entries)[0].bytes >= 4096);
  CHECK((*entries)[1].bytes >= 10000);  // the files under it count
  CHECK((*entries)[3].about == "/src/app/recipe.yaml");
  CHECK((*entries)[3].kind == image::CacheEntryKind::staging);
  CHECK(image::list_cache(root / "missing").value().empty());
}

TEST_CASE("a prune removes by age, then least recently used first until the cache fits") {
  const auto dir = test::scratch_directory();
  const auto& root = dir.path();
  blob(root, 'a', 40960, std::chrono::hours(1));
  blob(root, 'b', 40960, std::chrono::hours(2));
  blob(root, 'c', 40960, std::chrono::hours(3));
  rootfs(root, 'd', std::chrono::hours(48));
  test::write_file(root / "locks" / ("rootfs-" + hex_of('d')), "");
  test::write_file(root / "locks" / hex_of('c'), "");

  auto report = prune(root, {std::nullopt, std::chrono::hours(24)});
  CHECK(names(report.removed) == std::vector<std::string>{"rootfs/" + hex_of('d')});
  CHECK_FALSE(fs::exists(root / "rootfs" / hex_of('d')));  // its read-only directory too
  CHECK_FALSE(fs::exists(root / "rootfs" / (hex_of('d') + ".layers")));
  CHECK_FALSE(fs::exists(root / "locks" / ("rootfs-" + hex_of('d'))));
  CHECK(report.kept.size() == 3);

  const auto all = report.kept_bytes;
  report = prune(root, {all - 1, std::nullopt});
  CHECK(names(report.removed) == std::vector<std::string>{"blobs/sha256/" + hex_of('c')});
  CHECK_FALSE(fs::exists(root / "locks" / hex_of('c')));
  CHECK(report.kept_bytes <= all - 1);
  CHECK(prune(root, {all, std::nullopt}).removed.empty());
}

TEST_CASE("a prune never removes what a live lease pinned, and reclaims the leases of ended processes") {
  const auto dir = test::scratch_directory();
  const auto& root = dir.path();
  blob(root, 'a', 4096, std::chrono::hours(5));
  blob(root, 'b', 4096, std::chrono::hours(1));
  {
    image::CacheLease lease(root);
    REQUIRE(lease.pin(image::cache_entry::blob(oci::Digest::from_sha256_hex(hex_of('a')))));
    const auto listed = image::list_cache(root).value();
    CHECK(listed[0].in_use);
    CHECK_FALSE(listed[1].in_use);
    const auto report = prune(root, {0, std::nullopt});
    CHECK(names(report.removed) == std::vector<std::string>{"blobs/sha256/" + hex_of('b')});
    CHECK(report.in_use_bytes == report.kept_bytes);
    CHECK(fs::exists(root / "blobs" / "sha256" / hex_of('a')));
  }
  CHECK(fs::is_empty(root / "leases"));  // an ended lease removes its file
  // A lease file nobody holds locked, as a killed build leaves it, pins nothing and goes.
  test::write_file(root / "leases" / "999999-abcdef", "blobs/sha256/" + hex_of('a') + "\n");
  CHECK_FALSE(image::list_cache(root).value()[0].in_use);
  CHECK(names(prune(root, {0, std::nullopt}).removed) == std::vector<std::string>{"blobs/sha256/" + hex_of('a')});
  CHECK(fs::is_empty(root / "leases"));
}

TEST_CASE("a prune that must not wait gives way to one in progress, and pins wait for a prune") {
  const auto dir = test::scratch_directory();
  const auto& root = dir.path();
  blob(root, 'a', 4096, std::chrono::hours(5));
  REQUIRE(util::make_directories(root / "locks"));
  auto running = util::FileLock::acquire(root / "locks" / "prune");
  REQUIRE(running.has_value());
  const auto report = image::prune_cache(root, {0, std::nullopt}, Clock::now(), image::PruneWait::skip_if_busy);
  REQUIRE(report.has_value());
  CHECK(report->skipped);
  CHECK(fs::exists(root / "blobs" / "sha256" / hex_of('a')));
  // A pin takes the prune lock shared: not possible while a prune holds it.
  CHECK_FALSE(util::FileLock::try_acquire(root / "locks" / "prune", util::LockMode::shared).value().has_value());
}

TEST_CASE("the blob cache and unpacked root filesystems pin what they hand out and mark it used") {
  const auto dir = test::scratch_directory();
  const auto lease = std::make_shared<image::CacheLease>(dir.path());
  auto cache = image::BlobCache::open(dir.path(), util::null_output(), lease);
  REQUIRE(cache.has_value());
  image::MemoryReader memory;
  const auto descriptor = memory.add("layer bytes", oci::media_type::layer_gzip);
  const auto path = (*cache)->get(memory, descriptor);
  REQUIRE(path.has_value());
  const auto pinned = image::pinned_entries(dir.path(), image::StaleLeases::keep);
  CHECK(pinned.contains(image::cache_entry::blob(descriptor.digest)));

  // A second process's view: last used an hour ago; a cache hit marks it used now.
  const auto old = Clock::to_time_t(Clock::now() - std::chrono::hours(1));
  const timespec times[2] = {{old, 0}, {old, 0}};
  REQUIRE(::utimensat(AT_FDCWD, path->c_str(), times, 0) == 0);
  auto other = image::BlobCache::open(dir.path());
  REQUIRE(other.has_value());
  REQUIRE((*other)->get(memory, descriptor).has_value());
  CHECK(Clock::now() - image::list_cache(dir.path()).value()[0].last_used < std::chrono::minutes(10));

  const auto manifest = oci::Digest::sha256_of("manifest");
  const auto unpacked = image::unpacked_rootfs(
      **cache, manifest, {}, [] { return Result<std::vector<image::LayerFile>>(); }, image::Ownership::unpacking_user);
  REQUIRE_MESSAGE(unpacked.has_value(), unpacked.error().message);
  CHECK(image::pinned_entries(dir.path(), image::StaleLeases::keep).contains(image::cache_entry::rootfs(manifest)));
  CHECK(image::prune_cache(dir.path(), {0, std::nullopt}, Clock::now()).value().removed.size() == 0);
}

TEST_CASE("push staging is one layout per recipe file, whatever path names it, held by one build at a time") {
  const auto dir = test::scratch_directory();
  test::write_file(dir.path() / "app" / "recipe.yaml", "name: app\n");
  image::CacheLease lease(dir.path() / "cache");
  fs::path layout;
  {
    auto first = build::PushStaging::open(lease, dir.path() / "app" / "recipe.yaml", util::null_output());
    REQUIRE_MESSAGE(first.has_value(), first.error().message);
    layout = first->layout();
    const auto key = layout.filename().string();
    CHECK(layout == dir.path() / "cache" / "staging" / key);
    CHECK(image::pinned_entries(dir.path() / "cache", image::StaleLeases::keep).contains("staging/" + key));
    // Held: a second build of the recipe, however it names it, would wait.
    CHECK_FALSE(util::FileLock::try_acquire(dir.path() / "cache" / "locks" / ("staging-" + key)).value().has_value());
    CHECK(fs::exists(layout / "oci-layout"));
    CHECK(util::read_file(image::staging_about_file(layout)).value() ==
          fs::canonical(dir.path() / "app" / "recipe.yaml").string() + "\n");
  }
  auto again = build::PushStaging::open(lease, dir.path() / "app" / ".." / "app" / "recipe.yaml", util::null_output());
  REQUIRE(again.has_value());
  CHECK(again->layout() == layout);
  test::write_file(dir.path() / "other.yaml", "name: other\n");
  auto other = build::PushStaging::open(lease, dir.path() / "other.yaml", util::null_output());
  REQUIRE(other.has_value());
  CHECK(other->layout() != layout);
}

TEST_CASE("remove_tree removes trees with directories their owner may not write") {
  const auto dir = test::scratch_directory();
  test::write_file(dir.path() / "tree" / "ro" / "inner" / "f", "x");
  REQUIRE(::chmod((dir.path() / "tree" / "ro" / "inner").c_str(), 0500) == 0);
  REQUIRE(::chmod((dir.path() / "tree" / "ro").c_str(), 0000) == 0);
  REQUIRE(util::remove_tree(dir.path() / "tree"));
  CHECK_FALSE(fs::exists(dir.path() / "tree"));
}
