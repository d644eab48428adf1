#pragma once
// Where `inspect --verify` and `check --verify` get layers and keep their needs: a layout's own
// blob files (each checked against its digest first), else the user's blob cache, which fetches a
// registry's layers verified; needs kept in the user's cache (docs/cache.md).

#include <memory>

#include "hwimg/image/blob_cache.hpp"
#include "hwimg/image/reader.hpp"
#include "hwimg/util/output.hpp"
#include "hwimg/verify/image_verify.hpp"

namespace hwimg::commands {

class VerifySources {
public:
  VerifySources(image::ImageReader& reader, util::Output& output);
  VerifySources(const VerifySources&) = delete;
  VerifySources& operator=(const VerifySources&) = delete;

  [[nodiscard]] const verify::VerifyOptions& options() const { return m_options; }

private:
  [[nodiscard]] Result<std::filesystem::path> blob(const oci::Descriptor& layer);

  image::ImageReader& m_reader;
  util::Output& m_output;
  std::unique_ptr<image::BlobCache> m_blobs;  // opened by the first layer a registry holds
  verify::NeedsCache m_cache;
  verify::VerifyOptions m_options;
};

}  // namespace hwimg::commands
