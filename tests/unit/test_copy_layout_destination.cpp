// copy/layout_destination: a copier that fails, by an error or by an exception, fails the copy
// before any manifest or tag is written.

#include <doctest/doctest.h>

#include <stdexcept>

#include "hwimg/copy/layout_destination.hpp"
#include "hwimg/image/memory_reader.hpp"
#include "hwimg/oci/media_types.hpp"
#include "test_support.hpp"

using namespace hwimg;
namespace fs = std::filesystem;

namespace {

// A memory reader whose blob copies throw, as a copier meeting std::bad_alloc or a
// filesystem_error would.
class ThrowingReader final : public image::ImageReader {
public:
  explicit ThrowingReader(std::unique_ptr<image::MemoryReader> inner) : m_inner(std::move(inner)) {}
  [[nodiscard]] std::string name() const override { return m_inner->name(); }
  [[nodiscard]] Result<oci::Descriptor> resolve(std::string_view tag_or_digest) override {
    return m_inner->resolve(tag_or_digest);
  }
  [[nodiscard]] Result<std::string> read(const oci::Descriptor& descriptor) override {
    return m_inner->read(descriptor);
  }
  [[nodiscard]] Result<void> copy_blob(const oci::Descriptor&, const fs::path&) override {
    throw std::runtime_error("the copier threw");
  }
  [[nodiscard]] std::optional<fs::path> local_blob(const oci::Digest&) const override { return std::nullopt; }
  [[nodiscard]] Result<std::vector<std::string>> referrers(const std::vector<oci::Digest>& subjects) override {
    return m_inner->referrers(subjects);
  }
  [[nodiscard]] std::string pinned_reference(const oci::Digest& digest, std::string_view tag) const override {
    return m_inner->pinned_reference(digest, tag);
  }

private:
  std::unique_ptr<image::MemoryReader> m_inner;
};

}  // namespace

TEST_CASE("a copier that throws fails the copy into a layout, and no manifest naming its blob is written") {
  const auto tmp = test::scratch_directory();
  auto memory = std::make_unique<image::MemoryReader>();
  const auto layer = test::put_blob(*memory, "layer", oci::media_type::layer_gzip);
  const auto variant = test::put_image(*memory, {"linux", "amd64", ""}, {}, {}, {}, {layer});
  registry::PushPlan plan;
  plan.root = {variant, memory->read(variant).value(), "v1"};
  REQUIRE(plan.add_manifest(plan.root));
  plan.order_blobs();
  image::OpenedImage source;
  source.reader = std::make_unique<ThrowingReader>(std::move(memory));
  registry::ClientOptions options;
  options.jobs = 1;

  copy::CopySummary summary;
  const auto out = tmp.path() / "out";
  const auto copied = copy::write_to_layout(source, options, plan, out, summary);
  REQUIRE_FALSE(copied.has_value());
  CHECK(copied.error().message == "failed to copy blobs into " + out.string() + ": the copier threw");
  CHECK(summary.blobs_copied == 0);
  const auto layout = oci::Layout::open(out).value();
  CHECK_FALSE(layout.has_blob(variant.digest));
  CHECK(layout.read_index_json().value().manifests.empty());
}
