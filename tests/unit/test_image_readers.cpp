// image/: the in-memory and layout readers (resolve, verified reads, size limits, pinned
// references), open_image's reference syntax, and walking an image through a reader.

#include <doctest/doctest.h>

#include <filesystem>

#include <sys/stat.h>

#include "hwimg/image/documents.hpp"
#include "hwimg/image/layout_reader.hpp"
#include "hwimg/image/memory_reader.hpp"
#include "hwimg/image/open_image.hpp"
#include "test_support.hpp"

using namespace hwimg;
namespace fs = std::filesystem;

namespace {

const oci::Platform amd64_v3{"linux", "amd64", "v3"};
const oci::Platform arm64{"linux", "arm64", "v8"};

std::string error_of(const Result<std::string>& result) { return result ? "<no error>" : result.error().message; }

// A layout tagged as `hwimg build` writes it: the index as TAG, each variant as TAG-<id>.
struct TaggedLayout {
  util::TempDir tmp = test::scratch_directory("hwimg-image-");
  fs::path root = tmp.path() / "layout";
  oci::Layout layout = oci::Layout::open(root, oci::OpenMode::create).value();
  oci::Descriptor v3 = test::put_image(layout, amd64_v3, {}, {{"org.hwimg.variant", "cpu-x86-64-v3"}});
  oci::Descriptor arm = test::put_image(layout, arm64, {}, {{"org.hwimg.variant", "arm64"}});
  oci::Descriptor index = test::put_index(layout, {v3, arm}, {{"org.opencontainers.image.title", "app"}});

  TaggedLayout() {
    test::tag_in_layout(layout, index, "1.0");
    test::tag_in_layout(layout, v3, "1.0-cpu-x86-64-v3");
    test::tag_in_layout(layout, v3, "stable");
  }
};

}  // namespace

TEST_CASE("MemoryReader resolves tags and digests and reads what it stored") {
  image::MemoryReader reader("mem/app");
  const auto config = reader.add("{}", oci::media_type::config);
  const auto manifest = test::put_image(reader, amd64_v3);
  reader.tag("1.0", manifest);

  CHECK(reader.name() == "mem/app");
  CHECK(config.digest == oci::Digest::sha256_of("{}"));
  CHECK(config.size == 2);
  CHECK(config.media_type == oci::media_type::config);

  const auto by_tag = reader.resolve("1.0");
  REQUIRE(by_tag);
  CHECK(*by_tag == manifest);  // the tag keeps the platform and annotations it was given
  const auto by_digest = reader.resolve(manifest.digest.str());
  REQUIRE(by_digest);
  CHECK(by_digest->digest == manifest.digest);
  CHECK(by_digest->size == manifest.size);
  CHECK(by_digest->media_type == oci::media_type::manifest);
  CHECK_FALSE(by_digest->platform.has_value());

  CHECK(reader.read(config).value() == "{}");
  CHECK(reader.resolve("2.0").error().message == "failed to resolve 2.0 in mem/app: no such tag or digest");
  const auto absent = oci::Digest::sha256_of("absent");
  CHECK(reader.read({std::string(oci::media_type::config), absent, 6, {}, {}}).error().message ==
        "failed to read blob " + absent.str() + " from mem/app: no such blob");
  CHECK_FALSE(reader.local_blob(config.digest).has_value());
  CHECK(reader.pinned_reference(manifest.digest, "1.0") == "mem/app@" + manifest.digest.str());
}

TEST_CASE("MemoryReader verifies size and digest against the descriptor") {
  image::MemoryReader reader;
  const auto config = reader.add(R"({"os":"linux"})", oci::media_type::config);

  auto longer = config;
  longer.size += 1;
  CHECK(error_of(reader.read(longer)) == fmt::format("failed to read blob {} from memory: size is 14 bytes, "
                                                     "descriptor says 15",
                                                     config.digest.str()));

  reader.corrupt(config.digest, R"({"os":"LINUX"})");  // same size, other bytes
  CHECK(error_of(reader.read(config)) ==
        fmt::format("failed to read blob {} from memory: digest mismatch, content hashes to {}", config.digest.str(),
                    oci::Digest::sha256_of(R"({"os":"LINUX"})").str()));
}

TEST_CASE("document limits: 4 MiB for indexes and manifests, 16 MiB for anything else") {
  const oci::Descriptor manifest{std::string(oci::media_type::manifest), {}, 0, {}, {}};
  const oci::Descriptor docker_list{std::string(oci::media_type::docker_manifest_list), {}, 0, {}, {}};
  const oci::Descriptor config{std::string(oci::media_type::config), {}, 0, {}, {}};
  CHECK(oci::document_limit(manifest) == std::size_t{4} << 20);
  CHECK(oci::document_limit(docker_list) == std::size_t{4} << 20);
  CHECK(oci::document_limit(config) == std::size_t{16} << 20);
}

// Every reader bounds what it reads by oci::document_limit, the one in memory too.
TEST_CASE("MemoryReader refuses a manifest larger than the document limit") {
  image::MemoryReader reader;
  const auto big = reader.add(std::string((std::size_t{4} << 20) + 1, ' '), oci::media_type::manifest);
  const auto read = reader.read(big);
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().message.find("more than the 4 MiB limit") != std::string::npos);
}

TEST_CASE("LayoutReader resolves tags and digests of index.json") {
  TaggedLayout l;
  const auto reader = image::LayoutReader::open(l.root);
  REQUIRE(reader);
  auto& r = **reader;
  CHECK(r.name() == "oci:" + l.root.string());

  const auto index = r.resolve("1.0");
  REQUIRE(index);
  CHECK(index->digest == l.index.digest);
  CHECK(index->media_type == oci::media_type::index);
  CHECK(index->ref_name() == "1.0");
  const auto by_digest = r.resolve(l.v3.digest.str());
  REQUIRE(by_digest);
  CHECK(by_digest->digest == l.v3.digest);
  CHECK(by_digest->size == l.v3.size);

  CHECK(r.resolve("1.1").error().message ==
        fmt::format("failed to resolve tag \"1.1\" in {}: no such tag (did you mean 1.0?)", l.root.string()));
  const auto unknown = oci::Digest::sha256_of("nothing");
  CHECK(r.resolve(unknown.str()).error().message ==
        fmt::format("failed to resolve {} in {}: no image of the layout has that digest", unknown.str(), l.root.string()));
  // An empty tag names the only image; this layout has three entries.
  CHECK(r.resolve("").error().message ==
        fmt::format("failed to resolve {0}: it holds 3 images, name one with oci:{0}:TAG", l.root.string()));

  CHECK(image::LayoutReader::open(l.tmp.path() / "none").error().message.find("no oci-layout file") !=
        std::string::npos);
}

TEST_CASE("LayoutReader: an empty tag names the only image of a layout") {
  const auto tmp = test::scratch_directory("hwimg-image-");
  const auto layout = oci::Layout::open(tmp.path(), oci::OpenMode::create).value();
  const auto only = test::put_image(layout, arm64);
  test::tag_in_layout(layout, only, "latest");
  const auto reader = image::LayoutReader::open(tmp.path()).value();
  const auto resolved = reader->resolve("");
  REQUIRE(resolved);
  CHECK(resolved->digest == only.digest);
  CHECK(resolved->ref_name() == "latest");
}

TEST_CASE("LayoutReader reads verified blobs within the document limits and names local blobs") {
  TaggedLayout l;
  const auto reader = image::LayoutReader::open(l.root).value();
  CHECK(reader->read(l.index).value() == l.layout.read_blob(l.index).value());
  CHECK(reader->local_blob(l.v3.digest) == l.root / "blobs" / "sha256" / l.v3.digest.hex());

  auto oversized = l.v3;
  oversized.size = (std::int64_t{4} << 20) + 1;
  CHECK(error_of(reader->read(oversized)) ==
        fmt::format("failed to read blob {} from {}: its descriptor says 4194305 bytes, more than the 4 MiB limit",
                    l.v3.digest.str(), l.root.string()));
  auto negative = l.v3;
  negative.size = -1;
  CHECK(error_of(reader->read(negative)).find("its descriptor says -1 bytes") != std::string::npos);
  // A config may be larger than a manifest: 5 MiB passes the limit and fails only the size check.
  const auto manifest = image::read_manifest(*reader, l.v3).value();
  auto config = manifest.config;
  config.size = std::int64_t{5} << 20;
  CHECK(error_of(reader->read(config)).ends_with(fmt::format("descriptor says {}", config.size)));

  test::write_file(l.root / "blobs" / "sha256" / manifest.config.digest.hex(), std::string(
      static_cast<std::size_t>(manifest.config.size), 'x'));
  CHECK(error_of(reader->read(manifest.config)).find("digest mismatch, content hashes to " +
                                                     oci::Digest::sha256_of(std::string(
                                                         static_cast<std::size_t>(manifest.config.size), 'x')).str()) !=
        std::string::npos);
}

TEST_CASE("LayoutReader copies only regular files: a layer that is /dev/zero or a FIFO is refused at once") {
  TaggedLayout l;
  const auto reader = image::LayoutReader::open(l.root).value();
  const auto layer = l.layout.put_blob("layer bytes", oci::media_type::layer_gzip).value();
  const auto blob = l.root / "blobs" / "sha256" / layer.digest.hex();
  const auto destination = l.tmp.path() / "copied";
  for (const std::string kind : {"a character device", "a FIFO"}) {
    CAPTURE(kind);
    fs::remove(blob);
    if (kind == "a FIFO") {
      REQUIRE(::mkfifo(blob.c_str(), 0600) == 0);  // nobody writes: before, the copy waited for ever
    } else {
      fs::create_symlink("/dev/zero", blob);
    }
    const auto copied = reader->copy_blob(layer, destination);
    REQUIRE_FALSE(copied.has_value());
    CHECK(copied.error().message ==
          fmt::format("failed to read blob {} from {}: failed to read {}: it is {}, not a regular file",
                      layer.digest.str(), l.root.string(), blob.string(), kind));
    CHECK_FALSE(fs::exists(destination));
  }
}

TEST_CASE("LayoutReader pins a manifest by the preferred tag, another tag, or its digest") {
  TaggedLayout l;
  const auto reader = image::LayoutReader::open(l.root).value();
  const auto name = "oci:" + l.root.string();
  CHECK(reader->pinned_reference(l.v3.digest, "stable") == name + ":stable");
  CHECK(reader->pinned_reference(l.v3.digest, "1.0-cpu-x86-64-v3") == name + ":1.0-cpu-x86-64-v3");
  // Without the preferred tag, the first tag index.json lists for it.
  CHECK(reader->pinned_reference(l.v3.digest, "other") == name + ":1.0-cpu-x86-64-v3");
  CHECK(reader->pinned_reference(l.arm.digest, "1.0-arm64") == name + "@" + l.arm.digest.str());
}

// `hwimg select` prints "oci:DIR@sha256:..." for a variant without a tag: a digest listed only by
// an index of the layout.
TEST_CASE("the digest reference pinned for an untagged variant opens again") {
  TaggedLayout l;
  const auto reader = image::LayoutReader::open(l.root).value();
  const auto pinned = reader->pinned_reference(l.arm.digest, "");
  REQUIRE(pinned == "oci:" + l.root.string() + "@" + l.arm.digest.str());
  const auto opened = image::open_image(pinned, {});
  REQUIRE_MESSAGE(opened.has_value(), opened.error().message);
  CHECK(opened->root.digest == l.arm.digest);
}

TEST_CASE("image references: oci:DIR:TAG, oci:DIR@sha256:..., registry references") {
  const auto tagged = image::parse_image_reference("oci:out/app:1.0-cpu-x86-64-v3");
  REQUIRE(tagged);
  CHECK(tagged->kind == image::SourceKind::layout);
  CHECK(tagged->text == "oci:out/app:1.0-cpu-x86-64-v3");
  CHECK(tagged->directory == "out/app");
  CHECK(tagged->tag == "1.0-cpu-x86-64-v3");
  CHECK_FALSE(tagged->digest.has_value());
  CHECK(tagged->tag_or_digest() == "1.0-cpu-x86-64-v3");

  const auto digest = oci::Digest::sha256_of("manifest");
  const auto pinned = image::parse_image_reference("oci:/srv/layout@" + digest.str());
  REQUIRE(pinned);
  CHECK(pinned->kind == image::SourceKind::layout);
  CHECK(pinned->directory == "/srv/layout");
  CHECK(pinned->tag.empty());
  CHECK(pinned->digest == digest);
  CHECK(pinned->tag_or_digest() == digest.str());

  const auto untagged = image::parse_image_reference("oci:layout");
  REQUIRE(untagged);
  CHECK(untagged->tag.empty());
  CHECK(untagged->tag_or_digest().empty());

  const auto hub = image::parse_image_reference("ubuntu:22.04");
  REQUIRE(hub);
  CHECK(hub->kind == image::SourceKind::registry);
  CHECK(hub->registry.registry == "docker.io");
  CHECK(hub->registry.repository == "library/ubuntu");
  CHECK(hub->tag == "22.04");
  CHECK(hub->tag_or_digest() == "22.04");
  CHECK(hub->directory.empty());

  const auto local = image::parse_image_reference("127.0.0.1:5443/team/app@" + digest.str());
  REQUIRE(local);
  CHECK(local->kind == image::SourceKind::registry);
  CHECK(local->registry.registry == "127.0.0.1:5443");
  CHECK(local->registry.repository == "team/app");
  CHECK(local->tag.empty());
  CHECK(local->digest == digest);
  CHECK(local->tag_or_digest() == digest.str());

  CHECK(image::parse_image_reference("oci::1.0").error().message ==
        "failed to parse layout reference \"oci::1.0\": empty directory");
  CHECK(image::parse_image_reference("oci:dir:bad-").error().message.starts_with("invalid tag \"bad-\""));
  CHECK(image::parse_image_reference("Team/App:1").error().message.starts_with(
      "failed to parse reference \"Team/App:1\""));
}

TEST_CASE("a layout's path typed without oci: is refused with the reference to write") {
  TaggedLayout l;
  const auto root = l.root.string();
  CHECK(image::parse_command_line_reference(root).error().message ==
        "failed to parse reference \"" + root + "\": that is an image layout on this machine; write oci:" + root);
  CHECK(image::parse_command_line_reference(root + ":1.0").error().message ==
        "failed to parse reference \"" + root + ":1.0\": that is an image layout on this machine; write oci:" + root +
            ":1.0");
  CHECK(image::layout_written_bare("oci:" + root) == std::nullopt);
  CHECK(image::parse_command_line_reference("oci:" + root + ":1.0").has_value());

  // A bare name in the working directory would also be a Docker Hub repository: neither is guessed.
  const auto before = fs::current_path();
  fs::current_path(l.tmp.path());
  const auto bare = image::parse_command_line_reference("layout:1.0");
  const auto explicit_hub = image::parse_command_line_reference("docker.io/library/layout:1.0");
  const auto other_name = image::parse_command_line_reference("ubuntu:22.04");
  const auto named_registry = image::parse_command_line_reference("127.0.0.1:5443/layout:1.0");
  fs::current_path(before);
  CHECK(bare.error().message ==
        "failed to parse reference \"layout:1.0\": it names an image layout on this machine and an image on Docker "
        "Hub; write oci:layout:1.0 for the layout or docker.io/library/layout:1.0 for Docker Hub");
  REQUIRE(explicit_hub);
  CHECK(explicit_hub->registry.repository == "library/layout");
  CHECK(other_name.has_value());
  CHECK(named_registry.has_value());
}

TEST_CASE("open_image opens layouts, relative ones against the base directory") {
  TaggedLayout l;
  const auto absolute = image::open_image("oci:" + l.root.string() + ":1.0", {});
  REQUIRE_MESSAGE(absolute, absolute.error().message);
  CHECK(absolute->reference.kind == image::SourceKind::layout);
  CHECK(absolute->root.digest == l.index.digest);
  CHECK(absolute->reader->name() == "oci:" + l.root.string());

  image::OpenOptions options;
  options.base_directory = l.tmp.path();
  const auto relative = image::open_image("oci:layout:1.0-cpu-x86-64-v3", options);
  REQUIRE_MESSAGE(relative, relative.error().message);
  CHECK(relative->root.digest == l.v3.digest);
  CHECK(relative->reference.directory == "layout");  // as written
  CHECK(relative->reader->name() == "oci:" + (l.tmp.path() / "layout").string());

  const auto by_digest = image::open_image("oci:layout@" + l.v3.digest.str(), options);
  REQUIRE_MESSAGE(by_digest, by_digest.error().message);
  CHECK(by_digest->root.digest == l.v3.digest);

  // Without a base directory a relative layout is looked for in the working directory.
  const auto elsewhere = image::open_image("oci:layout:1.0", {});
  REQUIRE_FALSE(elsewhere);
  CHECK(elsewhere.error().message == "failed to open image layout layout: no oci-layout file (not an OCI image layout)");
  const auto missing_tag = image::open_image("oci:layout:2.0", options);
  REQUIRE_FALSE(missing_tag);
  CHECK(missing_tag.error().message.starts_with("failed to resolve tag \"2.0\""));
}

TEST_CASE("list_images, read_manifest and read_config walk an image through a reader") {
  image::MemoryReader reader;
  const auto layer = reader.add("layer bytes", oci::media_type::layer_gzip);
  const auto v3 = test::put_image(reader, amd64_v3, {"CUDA_VERSION=12.8.0"}, {{"org.hwimg.variant", "v3"}},
                                  {{"org.opencontainers.image.source", "https://example.org"}}, {layer});
  const auto arm = test::put_image(reader, arm64);
  const auto nested = test::put_index(reader, {arm});
  const auto root = test::put_index(reader, {v3, nested, arm}, {{"org.opencontainers.image.title", "app"}});

  oci::Annotations index_annotations;
  const auto images = image::list_images(reader, root, &index_annotations);
  REQUIRE(images);
  REQUIRE(images->size() == 2);  // the nested index is not an image
  CHECK((*images)[0] == v3);
  CHECK((*images)[1] == arm);
  CHECK(index_annotations == oci::Annotations{{"org.opencontainers.image.title", "app"}});
  // A manifest is its own only image.
  CHECK(image::list_images(reader, v3).value() == std::vector<oci::Descriptor>{v3});

  const auto manifest = image::read_manifest(reader, v3);
  REQUIRE(manifest);
  CHECK(manifest->layers == std::vector<oci::Descriptor>{layer});
  const auto config = image::read_config(reader, *manifest);
  REQUIRE(config);
  CHECK(config->architecture == "amd64");
  CHECK(config->variant == "v3");
  CHECK(config->env_value("CUDA_VERSION") == "12.8.0");
  CHECK(config->labels.at("org.opencontainers.image.source") == "https://example.org");

  // Documents that do not parse name what was being read.
  const auto not_json = reader.add("not json", oci::media_type::manifest);
  CHECK(image::read_manifest(reader, not_json).error().message.starts_with(
      "failed to read manifest " + not_json.digest.str() + ": "));
  CHECK(image::list_images(reader, reader.add("[]", oci::media_type::index)).error().message.starts_with(
      "failed to read image index "));
  oci::Manifest broken_config = *manifest;
  broken_config.config = reader.add("{\"os\": 1}", oci::media_type::config);
  CHECK(image::read_config(reader, broken_config).error().message.starts_with(
      "failed to read image config " + broken_config.config.digest.str() + ": "));
  // A corrupt blob stops the walk with the reader's message.
  reader.corrupt(v3.digest, std::string(static_cast<std::size_t>(v3.size), ' '));
  CHECK(image::read_manifest(reader, v3).error().message.find("digest mismatch") != std::string::npos);
}

TEST_CASE("readers list a manifest's referrers: a layout's untagged entries, a memory reader's stored ones") {
  TaggedLayout fixture;
  oci::Manifest artifact;
  artifact.artifact_type = "application/vnd.example.signature";
  artifact.config = fixture.layout.put_blob("{}", oci::media_type::empty).value();
  artifact.layers = {fixture.layout.put_blob("signed", "application/octet-stream").value()};
  artifact.subject = oci::Descriptor{fixture.v3.media_type, fixture.v3.digest, fixture.v3.size, {}, {}};
  const auto bytes = oci::to_json(artifact);
  auto listed = fixture.layout.put_blob(bytes, oci::media_type::manifest).value();
  listed.artifact_type = artifact.artifact_type;
  REQUIRE(fixture.layout.update_index_json([&](oci::Index& index) -> Result<void> {
    index.manifests.push_back(listed);
    return {};
  }));

  auto layout_reader = image::LayoutReader::open(fixture.root).value();
  CHECK(layout_reader->referrers({fixture.v3.digest}).value() == std::vector<std::string>{bytes});
  CHECK(layout_reader->referrers({fixture.arm.digest}).value().empty());
  // The image itself still resolves by its tags, the referrer listed beside it untagged.
  CHECK(layout_reader->resolve("1.0").value().digest == fixture.index.digest);

  image::MemoryReader memory;
  const auto subject = test::put_image(memory, amd64_v3);
  artifact.subject = oci::Descriptor{subject.media_type, subject.digest, subject.size, {}, {}};
  const auto in_memory = oci::to_json(artifact);
  memory.add(in_memory, oci::media_type::manifest);
  CHECK(memory.referrers({subject.digest}).value() == std::vector<std::string>{in_memory});
  CHECK(memory.referrers({oci::Digest::sha256_of("other")}).value().empty());
}
