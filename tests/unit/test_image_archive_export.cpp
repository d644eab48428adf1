// Image archives: Docker's manifest.json and the archive's index.json, the tar's entries, their
// mtime and bytes, and an export that fails (a corrupt layer) leaving neither the file nor a temporary.

#include <doctest/doctest.h>

#include <archive.h>
#include <archive_entry.h>

#include <map>
#include <memory>

#include "hwimg/image/archive_export.hpp"
#include "test_support.hpp"

using namespace hwimg;

namespace {

struct TarReadFree {
  void operator()(archive* a) const { archive_read_free(a); }
};

// Every entry of a tar: name -> content ("" for directories), in the order written; each owned by
// 0 and dated `mtime`.
std::vector<std::pair<std::string, std::string>> tar_entries(const std::filesystem::path& path,
                                                             std::int64_t mtime = 0) {
  std::unique_ptr<archive, TarReadFree> tar(archive_read_new());
  REQUIRE(archive_read_support_format_tar(tar.get()) == ARCHIVE_OK);
  REQUIRE(archive_read_open_filename(tar.get(), path.c_str(), 1 << 16) == ARCHIVE_OK);
  std::vector<std::pair<std::string, std::string>> entries;
  archive_entry* entry = nullptr;
  while (archive_read_next_header(tar.get(), &entry) == ARCHIVE_OK) {
    CHECK(archive_entry_uid(entry) == 0);
    CHECK(archive_entry_mtime(entry) == mtime);
    std::string content(static_cast<std::size_t>(archive_entry_size(entry)), '\0');
    if (!content.empty()) {
      REQUIRE(archive_read_data(tar.get(), content.data(), content.size()) == static_cast<la_ssize_t>(content.size()));
    }
    entries.emplace_back(archive_entry_pathname(entry), std::move(content));
  }
  return entries;
}

struct TinyImage {
  image::MemoryReader memory;
  oci::Descriptor manifest;
  std::vector<oci::Descriptor> layers;
};

std::unique_ptr<TinyImage> tiny_image() {
  auto image = std::make_unique<TinyImage>();
  image->layers = {image->memory.add("first layer bytes", oci::media_type::layer_gzip),
                   image->memory.add("second layer bytes", oci::media_type::layer_zstd)};
  image->manifest = test::put_image(image->memory, {"linux", "amd64", ""}, {}, {}, {}, image->layers);
  return image;
}

}  // namespace

TEST_CASE("docker-archive manifest.json: config and layers as layout blob paths, in order, with RepoTags") {
  oci::Manifest manifest;
  manifest.config.digest = oci::Digest::sha256_of("config");
  manifest.layers = {{std::string(oci::media_type::layer_gzip), oci::Digest::sha256_of("a"), 1, {}, {}},
                     {std::string(oci::media_type::layer_zstd), oci::Digest::sha256_of("b"), 1, {}, {}}};
  CHECK(image::docker_archive_manifest(manifest, {"127.0.0.1:5000/hello:1.0"}) ==
        fmt::format(R"([{{"Config":"blobs/sha256/{}","RepoTags":["127.0.0.1:5000/hello:1.0"],)"
                    R"("Layers":["blobs/sha256/{}","blobs/sha256/{}"]}}])",
                    oci::Digest::sha256_of("config").hex(), oci::Digest::sha256_of("a").hex(),
                    oci::Digest::sha256_of("b").hex()));
  CHECK(image::docker_archive_manifest(manifest, {}).find(R"("RepoTags":[])") != std::string::npos);
}

TEST_CASE("archive index.json: the one manifest with its tag and its full image name, no platform") {
  const oci::Descriptor manifest{std::string(oci::media_type::manifest), oci::Digest::sha256_of("m"), 7,
                                 oci::Platform{"linux", "amd64", "v2"}, {}};
  auto oci_index = oci::parse_index(image::archive_index(manifest, {image::ArchiveFormat::oci, "1.0", {"x:1.0"}}));
  REQUIRE(oci_index);
  REQUIRE(oci_index->manifests.size() == 1);
  CHECK(oci_index->manifests[0].digest == manifest.digest);
  CHECK(!oci_index->manifests[0].platform);
  CHECK(oci_index->manifests[0].annotations ==
        oci::Annotations{{"org.opencontainers.image.ref.name", "1.0"}, {"io.containerd.image.name", "docker.io/library/x:1.0"}});
  auto unnamed = oci::parse_index(image::archive_index(manifest, {image::ArchiveFormat::oci, "", {}}));
  REQUIRE(unnamed);
  CHECK(unnamed->manifests[0].annotations.empty());
  auto docker_index = oci::parse_index(image::archive_index(manifest, {image::ArchiveFormat::docker, "1.0", {"x:1.0"}}));
  REQUIRE(docker_index);
  CHECK(docker_index->manifests[0].annotations ==
        oci::Annotations{{"org.opencontainers.image.ref.name", "1.0"}, {"io.containerd.image.name", "docker.io/library/x:1.0"}});
}

TEST_CASE("an image archive holds the layout, manifest.json for docker, each blob once; the same bytes twice") {
  auto image = tiny_image();
  const auto scratch = test::scratch_directory();
  const auto output = scratch.path() / "hello.tar";
  const image::ArchiveOptions options{image::ArchiveFormat::docker, "1.0", {"hello:1.0"}};
  auto written = image::write_image_archive(image->memory, image->manifest, options, output);
  REQUIRE_MESSAGE(written, written.error().message);
  CHECK(written->layers == 2);
  CHECK(written->bytes == std::filesystem::file_size(output));
  const auto entries = tar_entries(output);
  std::vector<std::string> names;
  std::map<std::string, std::string> contents;
  for (const auto& [name, content] : entries) {
    names.push_back(name);
    contents[name] = content;
  }
  const auto manifest_bytes = image->memory.read(image->manifest).value();
  const auto manifest = oci::parse_manifest(manifest_bytes).value();
  const auto blob = [](const oci::Digest& digest) { return "blobs/sha256/" + digest.hex(); };
  CHECK(names == std::vector<std::string>{"oci-layout", "index.json", "manifest.json", "blobs/", "blobs/sha256/",
                                          blob(image->manifest.digest), blob(manifest.config.digest),
                                          blob(image->layers[0].digest), blob(image->layers[1].digest)});
  CHECK(contents["oci-layout"] == R"({"imageLayoutVersion":"1.0.0"})");
  CHECK(contents["manifest.json"] == image::docker_archive_manifest(manifest, {"hello:1.0"}));
  CHECK(contents[blob(image->manifest.digest)] == manifest_bytes);
  CHECK(contents[blob(image->layers[1].digest)] == "second layer bytes");

  const auto again = scratch.path() / "again.tar";
  REQUIRE(image::write_image_archive(image->memory, image->manifest, options, again));
  CHECK(util::read_file(again).value() == util::read_file(output).value());

  const auto oci_tar = scratch.path() / "oci.tar";
  REQUIRE(image::write_image_archive(image->memory, image->manifest, {image::ArchiveFormat::oci, "1.0", {}}, oci_tar));
  for (const auto& [name, content] : tar_entries(oci_tar)) CHECK(name != "manifest.json");
}

TEST_CASE("an image archive's entries are dated options.mtime: the same time gives the same bytes, another not") {
  auto image = tiny_image();
  const auto scratch = test::scratch_directory();
  image::ArchiveOptions options{image::ArchiveFormat::oci, "1.0", {}, 1700000000};
  const auto first = scratch.path() / "first.tar";
  const auto second = scratch.path() / "second.tar";
  const auto epoch = scratch.path() / "epoch.tar";
  REQUIRE(image::write_image_archive(image->memory, image->manifest, options, first));
  REQUIRE(image::write_image_archive(image->memory, image->manifest, options, second));
  CHECK(tar_entries(first, 1700000000).size() == 8);
  CHECK(util::read_file(first).value() == util::read_file(second).value());
  options.mtime = 0;
  REQUIRE(image::write_image_archive(image->memory, image->manifest, options, epoch));
  CHECK(tar_entries(epoch, 0).size() == 8);
  CHECK(util::read_file(first).value() != util::read_file(epoch).value());
}

TEST_CASE("a layer that does not match its digest fails the export and leaves nothing behind") {
  auto image = tiny_image();
  image->memory.corrupt(image->layers[1].digest, "other bytes");
  const auto scratch = test::scratch_directory();
  const auto output = scratch.path() / "hello.tar";
  const auto written = image::write_image_archive(image->memory, image->manifest,
                                                  {image::ArchiveFormat::oci, "1.0", {}}, output);
  REQUIRE(!written);
  CHECK(written.error().message.starts_with(
      fmt::format("failed to export memory@{} to {}: ", image->manifest.digest.str(), output.string())));
  CHECK(written.error().message.find(image->layers[1].digest.str()) != std::string::npos);
  CHECK(std::filesystem::is_empty(scratch.path()));
}
