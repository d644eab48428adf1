#include "hwimg/commands/inspect.hpp"

#include <fmt/format.h>

#include "hwimg/commands/environment.hpp"
#include "hwimg/commands/usage.hpp"
#include "hwimg/image/blob_cache.hpp"
#include "hwimg/image/open_image.hpp"
#include "hwimg/inspect/verification_view.hpp"
#include "hwimg/oci/digest.hpp"

namespace hwimg::commands {
namespace {

// A layout's blob files, each checked against its digest before its needs are kept under that
// digest; a registry's layers fetched into the user's blob cache (verified as they arrive).
verify::BlobSource blob_source(image::ImageReader& reader, util::Output& output,
                               std::unique_ptr<image::BlobCache>& cache) {
  return [&reader, &output, &cache](const oci::Descriptor& layer) -> Result<std::filesystem::path> {
    if (auto local = reader.local_blob(layer.digest)) {
      HWIMG_TRY_ASSIGN(const auto found, oci::digest_file(local->string()));
      if (found.digest != layer.digest) {
        return fail("failed to read layer {}: the blob's content has digest {}", layer.digest.str(), found.digest.str());
      }
      return *local;
    }
    if (!cache) {
      HWIMG_TRY_ASSIGN(cache, image::BlobCache::open(cache_root(), output));
    }
    return cache->get(reader, layer);
  };
}

}  // namespace

Result<int> run_inspect(const InspectArguments& arguments) {
  HWIMG_TRY(as_usage_error(image::parse_image_reference(arguments.reference)));
  TerminalOutput output(arguments.verify_code ? Progress::shown : Progress::hidden, arguments.registry.verbose);
  const auto context = fmt::format("failed to inspect {}", arguments.reference);
  HWIMG_TRY_ASSIGN(auto image, with_context(image::open_image(arguments.reference,
                                                              {client_options(arguments.registry, output), {}}),
                                            context));
  const auto& reference = image.reference;
  auto name = reference.kind == image::SourceKind::registry ? reference.registry.str() : reference.text;
  HWIMG_TRY_ASSIGN(const auto view, with_context(inspect::load_image_view(std::move(name), *image.reader, image.root),
                                                 context));
  if (!arguments.verify_code) {
    fmt::print("{}", inspect::render(view, arguments.format));
    return 0;
  }
  std::unique_ptr<image::BlobCache> blobs;
  const verify::NeedsCache cache(cache_root());
  const verify::VerifyOptions options{blob_source(*image.reader, output, blobs), &cache, &output};
  HWIMG_TRY_ASSIGN(const auto verification, with_context(verify::verify_image(*image.reader, image.root, options),
                                                         context));
  output.clear_status();
  fmt::print("{}", inspect::render(view, arguments.format, &verification));
  return inspect::all_covered(verification) ? 0 : 3;
}

}  // namespace hwimg::commands
