// read_uncompressed_blob: a layer blob's tar, whatever its compression, in pieces; what a diff_id
// is the digest of, so a Dockerfile build's layers can be compressed by hwimg itself.

#include <doctest/doctest.h>

#include "hwimg/image/uncompressed_blob.hpp"
#include "hwimg/oci/layer_writer.hpp"
#include "hwimg/util/files.hpp"
#include "test_support.hpp"

using namespace hwimg;

TEST_CASE("a layer blob's tar is read back whole whatever its compression, and its digest is the diff_id") {
  for (const auto compression : {oci::Compression::none, oci::Compression::gzip, oci::Compression::zstd}) {
    const auto scratch = test::scratch_directory();
    auto layout = oci::Layout::open(scratch.path() / "layout", oci::OpenMode::create);
    REQUIRE(layout);
    REQUIRE(util::write_file_atomic(scratch.path() / "file.txt", std::string(3 << 20, 'x')));
    oci::LayerOptions options;
    options.compression.compression = compression;
    const auto written = oci::write_layer(*layout, {{scratch.path() / "file.txt", "/opt/file.txt"}}, options);
    REQUIRE(written);
    oci::Sha256 hash;
    std::size_t pieces = 0;
    const auto read = image::read_uncompressed_blob(layout->blob_path(written->descriptor.digest), "x",
                                                    [&](std::string_view bytes) -> Result<void> {
                                                      hash.update(bytes);
                                                      ++pieces;
                                                      return {};
                                                    });
    REQUIRE_MESSAGE(read.has_value(), read.error().message);
    CHECK(hash.finish() == written->diff_id);
    CHECK(pieces >= 3);  // in pieces, never whole
  }
  const auto scratch = test::scratch_directory();
  REQUIRE(util::write_file_atomic(scratch.path() / "broken", std::string("\x1f\x8b\x08\x00garbage", 12)));
  const auto broken = image::read_uncompressed_blob(scratch.path() / "broken", "sha256:abc", [](std::string_view) -> Result<void> { return {}; });
  REQUIRE_FALSE(broken.has_value());
  CHECK(broken.error().message.starts_with("failed to read layer sha256:abc: "));
}
