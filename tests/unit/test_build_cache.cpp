// The build cache: what goes into a variant's cache key, and when a remembered variant is reused.

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>

#include "hwimg/build/build_cache.hpp"
#include "hwimg/matrix/expand.hpp"
#include "test_support.hpp"

using namespace hwimg;
namespace fs = std::filesystem;

namespace {

const std::string recipe_text = R"(name: app
base: scratch
build:
  workdir: src
  run: make OUT="${out}"
layers:
  - {from: "${out}/bin", to: /opt/app/bin}
  - {from: data, to: /opt/app/data}
)";

// A project: recipe.yaml, src/ (the build workdir), data/ (a layer source); the build output ${out}
// and the output layout outside both unless a case moves them.
struct Project {
  util::TempDir tmp = test::scratch_directory("hwimg-cache-");
  fs::path root = tmp.path() / "project";
  fs::path out = tmp.path() / "build" / "out";
  fs::path output = tmp.path() / "layout";
  matrix::Variant variant;
  build::BuildSettings settings;

  Project() {
    auto report = matrix::expand_matrix(matrix::parse_matrix_text("axes: {cpu: [x86-64-v3]}\n", "m.yaml"), {});
    REQUIRE(report.variants.size() == 1);
    variant = std::move(report.variants.front());
    write("recipe.yaml", recipe_text);
    write("src/main.c", "int main(void) { return 0; }\n");
    write("src/Makefile", "all:\n\tcc -o $(OUT)/bin/app main.c\n");
    write("data/table.txt", "1 2 3\n");
    test::write_file(out / "bin" / "app", "built");
  }

  void write(const std::string& relative, std::string_view content) const { test::write_file(root / relative, content); }

  // The key, with the base as the build resolves it (layouts and scratch), or as given.
  std::string key(const build::BaseImage* given = nullptr) const {
    const auto recipe = recipe::load_recipe(root / "recipe.yaml");
    REQUIRE_MESSAGE(recipe.has_value(), recipe.error().message);
    const auto plan = build::plan_variant(*recipe, variant, out);
    REQUIRE_MESSAGE(plan.has_value(), plan.error().message);
    std::shared_ptr<const build::BaseImage> resolved;
    if (given == nullptr) {
      build::BaseResolver bases(recipe->directory(), {}, []() -> Result<image::BlobCache*> { return fail("no cache"); });
      auto base = bases.resolve(*plan);
      REQUIRE_MESSAGE(base.has_value(), base.error().message);
      resolved = *base;
    }
    const auto key = build::variant_cache_key(*recipe, *plan, given != nullptr ? *given : *resolved, settings, output);
    REQUIRE_MESSAGE(key.has_value(), key.error().message);
    CHECK(key->size() == 64);
    return *key;
  }
};

void set_mtime(const fs::path& path, fs::file_time_type time) {
  std::error_code error;
  fs::last_write_time(path, time, error);
  REQUIRE_MESSAGE(!error, error.message());
}

}  // namespace

TEST_CASE("the same inputs give the same key") {
  Project p;
  const auto key = p.key();
  CHECK(p.key() == key);
}

TEST_CASE("a source file's content or mtime changes the key") {
  Project p;
  const auto main_c = p.root / "src" / "main.c";
  const auto before = p.key();
  const auto mtime = fs::last_write_time(main_c);

  SUBCASE("content of another size, same mtime") {
    p.write("src/main.c", "int main(void) { return 1 + 1; }\n");
    set_mtime(main_c, mtime);
    CHECK(p.key() != before);
  }
  SUBCASE("same content, another mtime") {
    set_mtime(main_c, mtime + std::chrono::seconds(5));
    CHECK(p.key() != before);
  }
  SUBCASE("a new file in the workdir") {
    p.write("src/extra.h", "");
    CHECK(p.key() != before);
  }
  SUBCASE("a layer source that does not come from the build") {
    p.write("data/table.txt", "1 2 3 4\n");
    CHECK(p.key() != before);
  }
  SUBCASE("the mode of a source file") {
    fs::permissions(main_c, fs::perms::owner_exec, fs::perm_options::add);
    CHECK(p.key() != before);
  }
}

TEST_CASE("the recipe text and the settings change the key") {
  Project p;
  const auto before = p.key();

  SUBCASE("a comment in the recipe") {
    p.write("recipe.yaml", recipe_text + "# a comment\n");
    CHECK(p.key() != before);
  }
  SUBCASE("zstd instead of gzip") {
    p.settings.compression.compression = oci::Compression::zstd;
    CHECK(p.key() != before);
  }
  SUBCASE("the compression level") {
    p.settings.compression.level = 9;
    CHECK(p.key() != before);
  }
  SUBCASE("SOURCE_DATE_EPOCH") {
    p.settings.source_date_epoch = 1700000000;
    CHECK(p.key() != before);
  }
  SUBCASE("the output layout") {
    p.output = p.tmp.path() / "elsewhere";
    CHECK(p.key() == before);  // the layout is where the key is kept, not an input
  }
  SUBCASE("the thread count does not change a byte, nor the key") {
    p.settings.compression.threads = 1;
    CHECK(p.key() == before);
  }
}

TEST_CASE("what the build writes under ${out}, and the output layout inside the workdir, are not inputs") {
  Project p;
  const auto before = p.key();
  test::write_file(p.out / "bin" / "app", "built again, differently");
  test::write_file(p.out / "lib" / "libapp.so", "new");
  CHECK(p.key() == before);

  p.output = p.root / "src" / "layout";  // `hwimg build -o src/layout` from inside the workdir
  test::write_file(p.output / "index.json", "{}");
  const auto with_layout = p.key();
  test::write_file(p.output / "blobs" / "sha256" / "0000", "blob");
  test::write_file(p.output / "index.json", "{\"manifests\":[]}");
  CHECK(p.key() == with_layout);
}

// With TMPDIR inside the project, ${out} (a scratch directory with a random name) lies inside the
// workdir: hashing it would make the cache never hit.
TEST_CASE("files under ${out} do not change the key when ${out} is inside the workdir") {
  Project p;
  p.out = p.root / "src" / ".tmp" / "hwimg-build-1-abc" / "out";
  test::write_file(p.out / "bin" / "app", "built");
  const auto before = p.key();
  test::write_file(p.out / "bin" / "app", "built again");
  test::write_file(p.out / "bin" / "other", "new");
  CHECK(p.key() == before);
}

// Each block size changes the layer bytes on its own: a sum of the two would let a 2 MiB gzip block
// with 3 MiB zstd frames reuse a variant built with 1 MiB and 4 MiB.
TEST_CASE("the gzip block size changes the key whatever the zstd block size") {
  Project p;
  const auto before = p.key();
  p.settings.compression.gzip_block_size = std::size_t{2} << 20;
  p.settings.compression.zstd_block_size = std::size_t{3} << 20;
  CHECK(p.key() != before);
}

TEST_CASE("the base's manifest is an input: a layout rewritten, a tag moved") {
  Project p;
  p.write("recipe.yaml", "name: app\nbase: oci:../base:1\nlayers: [{from: data, to: /data}]\n");
  const auto base = oci::Layout::open(p.tmp.path() / "base", oci::OpenMode::create).value();
  test::tag_in_layout(base, test::put_image(base, {"linux", "amd64", ""}), "1");
  const auto before = p.key();
  test::tag_in_layout(base, test::put_image(base, {"linux", "amd64", ""}, {"NEW=1"}), "1");
  base.update_index_json([](oci::Index& index) -> Result<void> {
    index.manifests.erase(index.manifests.begin());
    return {};
  }).value();
  CHECK(p.key() != before);

  // A registry base by the text and the digest its tag resolved to.
  p.write("recipe.yaml", "name: app\nbase: registry.example.org/base:1\nlayers: [{from: data, to: /data}]\n");
  build::BaseImage registry;
  registry.manifest_descriptor.digest = oci::Digest::sha256_of("one");
  const auto first = p.key(&registry);
  CHECK(p.key(&registry) == first);
  registry.manifest_descriptor.digest = oci::Digest::sha256_of("two");
  CHECK(p.key(&registry) != first);
}

TEST_CASE("the cache returns a remembered variant only while all its blobs are there") {
  const auto tmp = test::scratch_directory("hwimg-cache-");
  const auto layout = oci::Layout::open(tmp.path(), oci::OpenMode::create).value();
  const auto layer = test::put_blob(layout, "layer", oci::media_type::layer_gzip);
  auto manifest = test::put_image(layout, {"linux", "amd64", "v3"}, {}, {{"org.hwimg.variant", "cpu-x86-64-v3"}}, {},
                                  {layer});
  const std::string key(64, 'a');
  CHECK_FALSE(build::cached_variant(layout, key).has_value());
  REQUIRE(build::remember_variant(layout, key, {"cpu-x86-64-v3", manifest, false}));

  const auto hit = build::cached_variant(layout, key);
  REQUIRE(hit.has_value());
  CHECK(hit->id == "cpu-x86-64-v3");
  CHECK(hit->manifest == manifest);  // with its platform and annotations
  CHECK(hit->reused);
  CHECK_FALSE(build::cached_variant(layout, std::string(64, 'b')).has_value());

  const auto config = oci::parse_manifest(layout.read_blob(manifest).value()).value().config;
  SUBCASE("a layer is missing") {
    fs::remove(layout.blob_path(layer.digest));
    CHECK_FALSE(build::cached_variant(layout, key).has_value());
  }
  SUBCASE("the config is missing") {
    fs::remove(layout.blob_path(config.digest));
    CHECK_FALSE(build::cached_variant(layout, key).has_value());
  }
  SUBCASE("the manifest is corrupt") {
    test::write_file(layout.blob_path(manifest.digest), std::string(static_cast<std::size_t>(manifest.size), ' '));
    CHECK_FALSE(build::cached_variant(layout, key).has_value());
  }
  SUBCASE("the cache entry is not JSON") {
    test::write_file(layout.state_directory() / "cache" / (key + ".json"), "not json");
    CHECK_FALSE(build::cached_variant(layout, key).has_value());
  }
  SUBCASE("the cache entry is a FIFO or /dev/zero: a miss at once, not a hang or every byte read") {
    const auto entry = layout.state_directory() / "cache" / (key + ".json");
    fs::remove(entry);
    REQUIRE(::mkfifo(entry.c_str(), 0600) == 0);
    CHECK_FALSE(build::cached_variant(layout, key).has_value());
    fs::remove(entry);
    fs::create_symlink("/dev/zero", entry);
    CHECK_FALSE(build::cached_variant(layout, key).has_value());
  }
}
