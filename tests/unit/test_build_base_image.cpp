// Bases as a build resolves them: the platform entry an index offers for a variant, a
// single-manifest base of another platform refused, base layers put into a layout (linked from a
// layout, copied from the cache), documents read once into the blob cache, and different bases
// opened at the same time.

#include <chrono>
#include <future>

#include <doctest/doctest.h>

#include <sys/stat.h>

#include "canned_server.hpp"
#include "hwimg/build/base_image.hpp"
#include "test_support.hpp"

using namespace hwimg;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

oci::Platform linux_platform(std::string architecture, std::string variant = {}) {
  return {"linux", std::move(architecture), std::move(variant)};
}

oci::Descriptor entry(const oci::Platform& platform) {
  oci::Descriptor descriptor;
  descriptor.platform = platform;
  descriptor.digest = oci::Digest::sha256_of(platform.str());
  return descriptor;
}

ino_t inode_of(const fs::path& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_ino;
}

build::BaseResolver resolver_without_cache(const fs::path& directory) {
  return build::BaseResolver(directory, {}, []() -> Result<image::BlobCache*> { return fail("no cache"); });
}

}  // namespace

TEST_CASE("an index's amd64 entry is the highest level the variant's level allows") {
  const std::vector<oci::Descriptor> images{entry(linux_platform("amd64")), entry(linux_platform("amd64", "v2")),
                                            entry(linux_platform("amd64", "v4")), entry(linux_platform("arm64", "v8"))};
  CHECK(build::pick_platform(images, linux_platform("amd64", "v3"))->platform->variant == "v2");
  CHECK(build::pick_platform(images, linux_platform("amd64", "v4"))->platform->variant == "v4");
  CHECK(build::pick_platform(images, linux_platform("amd64"))->platform->variant.empty());
  CHECK(build::pick_platform(images, linux_platform("arm64", "v8"))->platform->architecture == "arm64");
  const auto none = build::pick_platform(images, linux_platform("ppc64le"));
  REQUIRE_FALSE(none);
  CHECK(none.error().message ==
        "it has no image for linux/ppc64le; it has linux/amd64, linux/amd64/v2, linux/amd64/v4, linux/arm64/v8");
}

TEST_CASE("a single-manifest base is checked against the variant's platform by its config") {
  auto tmp = test::scratch_directory();
  auto layout = oci::Layout::open(tmp.path() / "bases", oci::OpenMode::create);
  REQUIRE(layout);
  test::tag_in_layout(*layout, test::put_image(*layout, linux_platform("arm64", "v8")), "arm");
  test::tag_in_layout(*layout, test::put_image(*layout, linux_platform("amd64", "v3")), "v3");
  test::tag_in_layout(*layout, test::put_image(*layout, {"", "", ""}), "unsaid");
  auto bases = resolver_without_cache(tmp.path());
  const auto resolve = [&](const std::string& text, const oci::Platform& platform) {
    const auto reference = image::parse_image_reference(text);
    REQUIRE(reference);
    return bases.resolve(*reference, text, platform, build::ImageRole::base);
  };

  const auto arm_on_amd64 = resolve("oci:bases:arm", linux_platform("amd64"));
  REQUIRE_FALSE(arm_on_amd64);
  CHECK(arm_on_amd64.error().message ==
        "failed to use base image oci:bases:arm: it is an image for linux/arm64/v8 (its config says so), not linux/amd64");
  CHECK(resolve("oci:bases:arm", linux_platform("arm64", "v8")));

  // A v3 base cannot carry a variant that runs on v2 hosts; a v4 variant may use it.
  CHECK_FALSE(resolve("oci:bases:v3", linux_platform("amd64", "v2")));
  CHECK(resolve("oci:bases:v3", linux_platform("amd64", "v4")));
  // A config that does not say is taken as it is.
  CHECK(resolve("oci:bases:unsaid", linux_platform("amd64", "v2")));
}

TEST_CASE("base layers from a layout are hard-linked, cached ones are copied") {
  auto tmp = test::scratch_directory();
  const auto from = tmp.path() / "layer";
  test::write_file(from, "layer bytes");
  const auto layer_digest = oci::Digest::sha256_of("layer bytes");
  build::BaseImage base;
  oci::Descriptor layer;
  layer.digest = layer_digest;
  layer.size = 11;
  base.layers = {layer};

  SUBCASE("from a layout") {
    base.source = *image::parse_image_reference("oci:elsewhere:1");
    auto target = oci::Layout::open(tmp.path() / "out", oci::OpenMode::create);
    REQUIRE(target);
    REQUIRE(build::import_base_layers(base, {from}, *target));
    CHECK(inode_of(target->blob_path(layer_digest)) == inode_of(from));
  }
  SUBCASE("from the cache") {
    base.source = *image::parse_image_reference("registry.example.org/base:1");
    auto target = oci::Layout::open(tmp.path() / "out", oci::OpenMode::create);
    REQUIRE(target);
    REQUIRE(build::import_base_layers(base, {from}, *target));
    const auto copy = target->blob_path(layer_digest);
    CHECK(inode_of(copy) != inode_of(from));
    test::write_file(from, "rewritten in the cache");
    CHECK(*util::read_file(copy) == "layer bytes");
  }
}

TEST_CASE("copy_file_contents copies every byte and refuses an existing target") {
  auto tmp = test::scratch_directory();
  std::string big(3 << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 % 251);
  test::write_file(tmp.path() / "from", big);
  REQUIRE(util::copy_file_contents(tmp.path() / "from", tmp.path() / "to"));
  CHECK(*util::read_file(tmp.path() / "to") == big);
  const auto again = util::copy_file_contents(tmp.path() / "from", tmp.path() / "to");
  REQUIRE_FALSE(again);
  CHECK(again.error().message.find("failed to create " + (tmp.path() / "to").string()) == 0);
  const auto missing = util::copy_file_contents(tmp.path() / "missing", tmp.path() / "other");
  REQUIRE_FALSE(missing);
  CHECK_FALSE(fs::exists(tmp.path() / "other"));
}

TEST_CASE("documents are read once into the blob cache; a corrupt cached one is read again with a warning") {
  auto tmp = test::scratch_directory();
  hwimg::test::WarningLog warnings;
  auto cache = image::BlobCache::open(tmp.path() / "cache", warnings);
  REQUIRE(cache);
  image::MemoryReader source("registry.example.org/base");
  const auto manifest = test::put_image(source, linux_platform("amd64"));

  REQUIRE(*(*cache)->read_document(source, manifest) == *source.read(manifest));
  image::MemoryReader gone("registry.example.org/gone");
  CHECK(*(*cache)->read_document(gone, manifest) == *source.read(manifest));

  test::write_file((*cache)->blob_path(manifest.digest), "garbage");
  CHECK_FALSE((*cache)->read_document(gone, manifest));
  REQUIRE(warnings.lines.size() == 1);
  CHECK(warnings.lines[0] == "the cached document " + manifest.digest.str() + " in " + (tmp.path() / "cache").string() +
                                 " is corrupt: reading it again");
  CHECK(*(*cache)->read_document(source, manifest) == *source.read(manifest));
  CHECK(*util::read_file((*cache)->blob_path(manifest.digest)) == *source.read(manifest));
}

TEST_CASE("a cached blob of another size than its descriptor's is fetched again without being hashed") {
  auto tmp = test::scratch_directory();
  hwimg::test::WarningLog warnings;
  auto cache = image::BlobCache::open(tmp.path() / "cache", warnings);
  REQUIRE(cache);
  image::MemoryReader source("registry.example.org/base");
  const auto layer = source.add("eighteen bytes ...", oci::media_type::layer_gzip);
  test::write_file((*cache)->blob_path(layer.digest), "garbage");
  const auto fetched = (*cache)->get(source, layer);
  REQUIRE_MESSAGE(fetched.has_value(), fetched.error().message);
  CHECK(*util::read_file(*fetched) == "eighteen bytes ...");
  REQUIRE(warnings.lines.size() == 1);
  CHECK(warnings.lines[0] == "the cached blob " + layer.digest.str() + " in " + (tmp.path() / "cache").string() +
                                 " is corrupt (it is 7 bytes, its descriptor says 18): fetching it again");
}

TEST_CASE("different bases open at the same time: a registry that has not answered holds up no other base") {
  auto tmp = test::scratch_directory();
  auto layout = oci::Layout::open(tmp.path() / "local", oci::OpenMode::create);
  REQUIRE(layout);
  test::tag_in_layout(*layout, test::put_image(*layout, linux_platform("amd64")), "1");
  // Takes connections into its backlog and never answers: opening a base there waits.
  std::uint16_t port = 0;
  auto silent = test::listen_on_loopback(port);
  image::OpenOptions options;
  options.registry.plain_http = true;
  options.registry.max_attempts = 1;
  build::BaseResolver bases(tmp.path(), options, []() -> Result<image::BlobCache*> { return fail("no cache"); });
  const auto resolve = [&](const std::string& text) {
    return std::async(std::launch::async, [&bases, text] {
      return bases.resolve(*image::parse_image_reference(text), text, linux_platform("amd64"), build::ImageRole::base);
    });
  };

  auto waiting = resolve("127.0.0.1:" + std::to_string(port) + "/base:1");
  std::this_thread::sleep_for(200ms);
  auto local = resolve("oci:local:1");
  const bool local_resolved = local.wait_for(10s) == std::future_status::ready;
  const bool still_waiting = waiting.wait_for(0s) == std::future_status::timeout;
  silent.reset();  // resets the connection waiting in the backlog
  CHECK(local_resolved);
  CHECK(still_waiting);
  REQUIRE(local.get());
  CHECK_FALSE(waiting.get());
}
