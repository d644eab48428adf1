#include <doctest/doctest.h>

#include <thread>

#include <sys/stat.h>

#include "hwimg/oci/layout.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/util/files.hpp"
#include "test_support.hpp"

using namespace hwimg;
namespace fs = std::filesystem;

TEST_CASE("a new layout has the marker, an empty index and no stray files") {
  const auto tmp = test::scratch_directory();
  auto layout = oci::Layout::open(tmp.path() / "l", oci::OpenMode::create);
  REQUIRE(layout);
  CHECK(util::read_file(tmp.path() / "l" / "oci-layout").value() == R"({"imageLayoutVersion":"1.0.0"})");
  CHECK(util::read_file(tmp.path() / "l" / "index.json").value() ==
        R"({"manifests":[],"mediaType":"application/vnd.oci.image.index.v1+json","schemaVersion":2})");
  CHECK(fs::is_directory(tmp.path() / "l" / "blobs" / "sha256"));
  CHECK(oci::Layout::open(tmp.path() / "missing").error().message ==
        "failed to open image layout " + (tmp.path() / "missing").string() +
            ": no oci-layout file (not an OCI image layout)");
}

TEST_CASE("blobs are content-addressed and verified when read") {
  const auto tmp = test::scratch_directory();
  auto layout = oci::Layout::open(tmp.path(), oci::OpenMode::create);
  REQUIRE(layout);
  const auto d = layout->put_blob("{}", "application/vnd.oci.empty.v1+json");
  REQUIRE(d);
  CHECK(d->digest.str() == "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  CHECK(layout->read_blob(*d).value() == "{}");
  test::write_file(layout->blob_path(d->digest), "[]");
  CHECK(layout->read_blob(*d).error().message ==
        fmt::format("failed to read blob {} from {}: digest mismatch, content hashes to "
                    "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
                    d->digest.str(), tmp.path().string()));
  test::write_file(layout->blob_path(d->digest), "{ }");
  CHECK(layout->read_blob(*d).error().message.ends_with("it holds more than the 2 bytes expected"));
  test::write_file(layout->blob_path(d->digest), "{");
  CHECK(layout->read_blob(*d).error().message.ends_with("size is 1 bytes, descriptor says 2"));
}

TEST_CASE("only regular files are read from a layout: a blob or index.json that is /dev/zero or a FIFO is refused") {
  const auto tmp = test::scratch_directory();
  auto layout = oci::Layout::open(tmp.path(), oci::OpenMode::create);
  REQUIRE(layout);
  const auto manifest = layout->put_blob(R"({"schemaVersion":2})", oci::media_type::manifest).value();
  const auto blob = layout->blob_path(manifest.digest);
  const auto refused = [&](std::string_view kind) {
    return fmt::format("failed to read blob {} from {}: failed to read {}: it is {}, not a regular file",
                       manifest.digest.str(), tmp.path().string(), blob.string(), kind);
  };

  fs::remove(blob);
  fs::create_symlink("/dev/zero", blob);
  CHECK(layout->read_blob(manifest).error().message == refused("a character device"));
  CHECK(oci::digest_file(blob.string()).error().message ==
        fmt::format("failed to read {}: it is a character device, not a regular file", blob.string()));

  // Nothing writes to the FIFO: before, reading it waited for ever.
  fs::remove(blob);
  REQUIRE(::mkfifo(blob.c_str(), 0600) == 0);
  CHECK(layout->read_blob(manifest).error().message == refused("a FIFO"));
  CHECK(oci::digest_file(blob.string()).error().message ==
        fmt::format("failed to read {}: it is a FIFO, not a regular file", blob.string()));

  // A descriptor may not claim more than a document can be.
  auto huge = manifest;
  huge.size = std::int64_t{1} << 40;
  CHECK(layout->read_blob(huge).error().message ==
        fmt::format("failed to read blob {} from {}: its descriptor says 1099511627776 bytes, more than the 4 MiB limit",
                    manifest.digest.str(), tmp.path().string()));

  const auto index_json = tmp.path() / "index.json";
  fs::remove(index_json);
  fs::create_symlink("/dev/zero", index_json);
  CHECK(layout->read_index_json().error().message ==
        fmt::format("failed to read {}: it is a character device, not a regular file", index_json.string()));
  fs::remove(index_json);
  REQUIRE(::mkfifo(index_json.c_str(), 0600) == 0);
  CHECK(layout->read_index_json().error().message ==
        fmt::format("failed to read {}: it is a FIFO, not a regular file", index_json.string()));
  fs::remove(index_json);
  test::write_file(index_json, R"({"schemaVersion":2,"manifests":[]})" + std::string(std::size_t{64} << 20, ' '));
  CHECK(layout->read_index_json().error().message ==
        fmt::format("failed to read {}: it holds more than the 67108864 bytes expected", index_json.string()));
}

TEST_CASE("concurrent index.json updates all land") {
  const auto tmp = test::scratch_directory();
  auto layout = oci::Layout::open(tmp.path(), oci::OpenMode::create);
  REQUIRE(layout);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      const auto blob = layout->put_blob(fmt::format("{{\"n\":{}}}", i), oci::media_type::manifest).value();
      // A separate Layout object per thread, as separate processes would have.
      auto own = oci::Layout::open(tmp.path()).value();
      REQUIRE(own.update_index_json([&](oci::Index& index) -> Result<void> {
        auto tagged = blob;
        tagged.annotations[std::string(oci::ref_name_annotation)] = fmt::format("t{}", i);
        index.manifests.push_back(tagged);
        return {};
      }));
    });
  }
  for (auto& t : threads) t.join();
  CHECK(layout->read_index_json().value().manifests.size() == 8);
  CHECK(layout->resolve("t5").value().ref_name() == "t5");
  CHECK(layout->resolve("t9").error().message.starts_with("failed to resolve tag \"t9\" in"));
  CHECK(layout->resolve("").error().message.find("it holds 8 images") != std::string::npos);
}

TEST_CASE("layout references and tags follow skopeo and the image spec") {
  const auto ref = oci::parse_layout_reference("oci:out:1.0-cpu-x86-64-v1");
  REQUIRE(ref);
  CHECK(ref->directory == "out");
  CHECK(ref->tag == "1.0-cpu-x86-64-v1");
  CHECK(oci::parse_layout_reference("oci:dir").value().tag.empty());
  CHECK(oci::validate_tag("t-sm_90"));
  CHECK(oci::validate_tag("a.b--c+d@e:f"));
  CHECK(oci::validate_tag("bad-").error().message ==
        "invalid tag \"bad-\": each part must start and end with a letter or digit");
  CHECK(oci::validate_tag("a..b").error().message == "invalid tag \"a..b\": separators cannot repeat");
  CHECK(oci::validate_tag("a b").error().message == "invalid tag \"a b\": character ' ' is not allowed");
}

TEST_CASE("oci:DIR without a tag names the one image, leaving out referrers listed beside it") {
  const auto tmp = test::scratch_directory();
  auto layout = oci::Layout::open(tmp.path(), oci::OpenMode::create);
  REQUIRE(layout);
  const auto image = layout->put_blob(R"({"schemaVersion":2})", "application/vnd.oci.image.manifest.v1+json").value();
  auto referrer = layout->put_blob(R"({"schemaVersion":2,"subject":{}})", "application/vnd.oci.image.manifest.v1+json").value();
  referrer.artifact_type = "application/vnd.nfd.image-compatibility.v1alpha1";
  REQUIRE(layout->update_index_json([&](oci::Index& index) -> Result<void> {
    index.manifests = {image, referrer};
    return {};
  }));
  CHECK(layout->resolve("").value().digest == image.digest);

  auto second = layout->put_blob(R"({"schemaVersion":2,"x":1})", "application/vnd.oci.image.manifest.v1+json").value();
  REQUIRE(layout->update_index_json([&](oci::Index& index) -> Result<void> {
    index.manifests.push_back(second);
    return {};
  }));
  CHECK(layout->resolve("").error().message.find("it holds 2 images") != std::string::npos);
}
