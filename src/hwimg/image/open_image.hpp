#pragma once
// Opening an image by reference: "oci:DIR[:TAG]" or "oci:DIR@sha256:..." for a layout, anything
// else a registry reference in Docker's spelling.
//
//   auto image = image::open_image("registry.example.org/app:1.0", {});
//   auto index = image::read_index(*image->reader, image->root);

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "hwimg/image/reader.hpp"
#include "hwimg/registry/client.hpp"
#include "hwimg/registry/options.hpp"
#include "hwimg/registry/reference.hpp"

namespace hwimg::image {

enum class SourceKind { layout, registry };

struct ImageReference {
  SourceKind kind = SourceKind::layout;
  std::string text;                  // as written
  std::filesystem::path directory;   // layout: as written (relative ones are resolved on open)
  registry::Reference registry;      // registry: the parsed reference
  std::string tag;                   // "" when none was named
  std::optional<oci::Digest> digest;

  // What the reader resolves: the digest when there is one, else the tag.
  [[nodiscard]] std::string tag_or_digest() const { return digest ? digest->str() : tag; }
};

// Checks the reference's grammar only; nothing is read.
[[nodiscard]] Result<ImageReference> parse_image_reference(std::string_view text);

// "oci:TEXT" when TEXT, less a ":TAG", is the directory of an OCI image layout (it has an
// oci-layout file) and does not start with oci: already; nullopt otherwise.
[[nodiscard]] std::optional<std::string> layout_written_bare(std::string_view text);

// parse_image_reference for a reference typed on the command line, which also refuses a bare path
// of a layout: "/tmp/out" or "./out" with a clear word instead of a grammar error, and "out:1.0"
// instead of a request for docker.io/library/out (that text would mean both); each error says to
// write oci:out:1.0.
[[nodiscard]] Result<ImageReference> parse_command_line_reference(std::string_view text);

struct OpenOptions {
  registry::ClientOptions registry;
  // A relative layout directory is relative to this (a recipe's directory); empty: the working one.
  std::filesystem::path base_directory;
  // A registry source is read through this client when set (it must outlive the reader), so a
  // caller that writes to the same registry afterwards reuses its connections and tokens.
  registry::Client* client = nullptr;
};

struct OpenedImage {
  ImageReference reference;
  std::unique_ptr<ImageReader> reader;
  oci::Descriptor root;  // the index or manifest the reference names
};

// A reader of the reference's source, nothing resolved or requested yet: for each thread that reads
// an image already open (a reader serves one thread at a time).
[[nodiscard]] Result<std::unique_ptr<ImageReader>> open_reader(const ImageReference& reference,
                                                               const OpenOptions& options);

// Parses the reference, opens its source and resolves it (one request for a registry).
[[nodiscard]] Result<OpenedImage> open_image(std::string_view reference, const OpenOptions& options);
[[nodiscard]] Result<OpenedImage> open_image(ImageReference reference, const OpenOptions& options);

}  // namespace hwimg::image
