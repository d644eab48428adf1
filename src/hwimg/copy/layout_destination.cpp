#include "hwimg/copy/layout_destination.hpp"

#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <system_error>

#include <fmt/format.h>

#include "hwimg/oci/layout.hpp"
#include "hwimg/registry/referrers.hpp"
#include "hwimg/util/thread_pool.hpp"

namespace hwimg::copy {
namespace {

// The blobs the layout lacks, taken in order by the copiers, and the first failure among them:
// once one copier fails the others finish the blob in hand and take no more.
struct LayoutBlobQueue {
  std::vector<oci::Descriptor> blobs;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::optional<Error> first_error;
  std::uint64_t bytes = 0;
  std::size_t copied = 0;

  void record_failure(Error error) {
    std::lock_guard lock(mutex);
    if (!first_error) first_error = std::move(error);
    failed = true;
  }
};

// Verified into the layout's temporary area, then renamed into blobs/: a killed copy leaves no
// partial blob.
Result<void> copy_into_layout(image::ImageReader& reader, const oci::Layout& layout, const oci::Descriptor& blob) {
  const auto temporary = layout.temporary_file("copy");
  if (auto copied = reader.copy_blob(blob, temporary); !copied) {
    // Readers name the blob in their failures, except in one to write the temporary (a full disk).
    if (copied.error().message.find(blob.digest.str()) != std::string::npos) return copied;
    return std::unexpected(copied.error().context(fmt::format("failed to copy blob {}", blob.digest.str())));
  }
  if (auto adopted = layout.adopt_blob(temporary, blob.digest); !adopted) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    return adopted;
  }
  return {};
}

void copy_queued_blobs(image::ImageReader& reader, const oci::Layout& layout, LayoutBlobQueue& queue) {
  while (!queue.failed) {
    const auto position = queue.next++;
    if (position >= queue.blobs.size()) return;
    const auto& blob = queue.blobs[position];
    if (auto copied = copy_into_layout(reader, layout, blob); !copied) {
      queue.record_failure(std::move(copied.error()));
      return;
    }
    std::lock_guard lock(queue.mutex);
    ++queue.copied;
    queue.bytes += static_cast<std::uint64_t>(blob.size);
  }
}

// The first copier reads through the source's own reader; each other one opens a reader (and for
// a registry a client) of its own, since neither serves two threads at once.
Result<void> copy_missing_blobs(image::OpenedImage& source, const registry::ClientOptions& options,
                                const oci::Layout& layout, LayoutBlobQueue& queue) {
  if (queue.blobs.empty()) return {};
  const auto copiers = std::clamp<std::size_t>(options.jobs, 1, std::max<std::size_t>(queue.blobs.size(), 1));
  const auto copier = [&](std::size_t i) {
    if (i == 0) return copy_queued_blobs(*source.reader, layout, queue);
    auto reader = image::open_reader(source.reference, {options, {}, nullptr});
    if (!reader) return queue.record_failure(std::move(reader.error()));
    copy_queued_blobs(**reader, layout, queue);
  };
  util::ThreadPool pool(static_cast<unsigned>(copiers));
  std::vector<std::future<void>> finished;
  for (std::size_t i = 0; i < copiers; ++i) {
    finished.push_back(pool.submit([&, i] {
      // What a copier throws fails the copy as an error it returns would, and stops the others.
      try {
        copier(i);
      } catch (const std::exception& e) {
        queue.record_failure(Error{fmt::format("failed to copy blobs into {}: {}", layout.root().string(), e.what())});
      }
    }));
  }
  // Every copier's end is collected before anything is written after the blobs.
  for (auto& done : finished) done.get();
  if (queue.first_error) return std::unexpected(std::move(*queue.first_error));
  return {};
}

}  // namespace

Result<void> write_to_layout(image::OpenedImage& source, const registry::ClientOptions& options,
                             const registry::PushPlan& plan, const std::filesystem::path& directory,
                             CopySummary& summary) {
  std::vector<std::pair<oci::Descriptor, std::string>> tagged{{plan.root.descriptor, plan.root.tag}};
  for (const auto& manifest : plan.manifests) {
    if (!manifest.tag.empty()) tagged.emplace_back(manifest.descriptor, manifest.tag);
  }
  for (const auto& [descriptor, tag] : tagged) {
    if (auto valid = oci::validate_tag(tag); !valid) {
      return fail_usage("failed to copy to {}: {}", directory.string(), valid.error().message);
    }
  }
  HWIMG_TRY_ASSIGN(const auto layout, oci::Layout::open(directory, oci::OpenMode::create));
  LayoutBlobQueue queue;
  for (const auto& blob : plan.blobs) {
    if (layout.has_blob(blob.digest)) {
      ++summary.blobs_present;
    } else {
      queue.blobs.push_back(blob);
    }
  }
  auto copied = copy_missing_blobs(source, options, layout, queue);
  summary.blobs_copied += queue.copied;
  summary.bytes_copied += queue.bytes;
  HWIMG_TRY(copied);
  for (const auto& manifest : plan.manifests) {
    HWIMG_TRY(layout.put_blob(manifest.bytes, manifest.descriptor.media_type));
  }
  HWIMG_TRY(layout.put_blob(plan.root.bytes, plan.root.descriptor.media_type));
  // Referrers stay untagged in index.json, where oras-go's layout store finds them
  // (docs/nfd.md#referrers); a ref.name among a manifest's own annotations would tag it there.
  std::vector<oci::Descriptor> referrers;
  for (const auto& referrer : plan.referrers) {
    HWIMG_TRY(layout.put_blob(referrer.bytes, referrer.descriptor.media_type));
    referrers.push_back(referrer.descriptor);
    referrers.back().annotations.erase(std::string(oci::ref_name_annotation));
  }

  return layout.update_index_json([&](oci::Index& index_json) -> Result<void> {
    std::erase_if(index_json.manifests, [&](const oci::Descriptor& d) {
      const auto name = d.ref_name();
      return name && std::ranges::any_of(tagged, [&](const auto& t) { return t.second == *name; });
    });
    // Before the tags, which a rerun takes out and puts back last: its index.json is byte-identical.
    registry::add_referrers(index_json, referrers);
    for (auto [descriptor, tag] : tagged) {
      descriptor.annotations[std::string(oci::ref_name_annotation)] = tag;
      index_json.manifests.push_back(std::move(descriptor));
    }
    return {};
  });
}

}  // namespace hwimg::copy
