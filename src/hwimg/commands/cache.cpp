#include "hwimg/commands/cache.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hwimg/build/variant_builder.hpp"
#include "hwimg/commands/environment.hpp"
#include "hwimg/image/cache_prune.hpp"
#include "hwimg/util/byte_size.hpp"
#include "hwimg/util/duration.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::commands {
namespace fs = std::filesystem;
using Clock = std::chrono::system_clock;

namespace {

fs::path root_of(const CacheArguments& arguments) {
  return arguments.cache.empty() ? cache_root() : fs::absolute(arguments.cache).lexically_normal();
}

// "sha256:<hex>" for blobs, root filesystems and code needs (the blob's, the image manifest's, the
// layer's digest), the staging key for staging layouts.
std::string display_name(const image::CacheEntry& entry) {
  const auto last = fs::path(entry.name).filename();
  if (entry.kind == image::CacheEntryKind::staging) return last.string();
  return "sha256:" + (entry.kind == image::CacheEntryKind::needs ? last.stem() : last).string();
}

std::string age(Clock::time_point then, Clock::time_point now) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - then).count();
  if (seconds < 60) return "just now";
  if (seconds < 3600) return fmt::format("{} min ago", seconds / 60);
  if (seconds < 2 * 86400) return fmt::format("{} h ago", seconds / 3600);
  return fmt::format("{} days ago", seconds / 86400);
}

nlohmann::ordered_json entry_json(const image::CacheEntry& entry) {
  nlohmann::ordered_json out{{"kind", image::kind_name(entry.kind)},
                             {"name", display_name(entry)},
                             {"path", entry.name},
                             {"bytes", entry.bytes},
                             {"last_used", build::rfc3339(Clock::to_time_t(entry.last_used))},
                             {"in_use", entry.in_use}};
  if (!entry.about.empty()) out["recipe"] = entry.about;
  return out;
}

std::string cap_text(const std::optional<std::uint64_t>& cap) {
  return cap ? util::format_byte_size(*cap) : "off";
}

nlohmann::ordered_json cap_json(const std::optional<std::uint64_t>& cap) {
  return cap ? nlohmann::ordered_json(*cap) : nlohmann::ordered_json(nullptr);
}

}  // namespace

Result<std::optional<std::uint64_t>> cache_cap(const fs::path& root, const std::optional<std::string>& flag) {
  const auto text = flag ? flag : variable("HWIMG_CACHE_MAX_SIZE");
  if (!text || text->empty()) return image::default_cache_cap(root);
  if (*text == "off") return std::optional<std::uint64_t>();
  HWIMG_TRY_ASSIGN(const auto size, with_context(util::parse_byte_size(*text),
                                                 flag ? "--cache-max-size" : "HWIMG_CACHE_MAX_SIZE"));
  return size;
}

void apply_cache_cap(const fs::path& root, std::uint64_t cap, util::Output& output) {
  const auto report = image::prune_cache(root, {cap, std::nullopt}, Clock::now(), image::PruneWait::skip_if_busy);
  if (!report) {
    output.warning(report.error().message);
    return;
  }
  for (const auto& failure : report->failures) output.warning("failed to prune the cache: " + failure);
  if (!report->removed.empty()) {
    output.progress(fmt::format("cache {}: removed {} least recently used entries ({}) to stay within its cap of {}",
                                root.string(), report->removed.size(), util::format_byte_size(report->removed_bytes),
                                util::format_byte_size(cap)));
  }
  if (report->kept_bytes > cap) {
    output.warning(fmt::format(
        "the cache {} holds {}, over its cap of {}: {} of it is in use by running builds (this one included) and "
        "stays; raise the cap with HWIMG_CACHE_MAX_SIZE or --cache-max-size",
        root.string(), util::format_byte_size(report->kept_bytes), util::format_byte_size(cap),
        util::format_byte_size(report->in_use_bytes)));
  }
}

Result<int> run_cache_ls(const CacheArguments& arguments) {
  const auto root = root_of(arguments);
  HWIMG_TRY_ASSIGN(const auto entries, image::list_cache(root));
  HWIMG_TRY_ASSIGN(const auto cap, cache_cap(root, std::nullopt));
  std::uint64_t total = 0;
  for (const auto& entry : entries) total += entry.bytes;
  if (arguments.format == DataFormat::json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& entry : entries) list.push_back(entry_json(entry));
    const nlohmann::ordered_json out{
        {"cache", root.string()}, {"bytes", total}, {"cap", cap_json(cap)}, {"entries", std::move(list)}};
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  const auto now = Clock::now();
  if (!entries.empty()) fmt::print("{:<10} {:>10}  {:<13} {}\n", "KIND", "SIZE", "LAST USED", "NAME");
  for (const auto& entry : entries) {
    auto name = display_name(entry);
    if (!entry.about.empty()) name += "  " + entry.about;
    if (entry.in_use) name += "  (in use)";
    fmt::print("{:<10} {:>10}  {:<13} {}\n", image::kind_name(entry.kind), util::format_byte_size(entry.bytes),
               age(entry.last_used, now), name);
  }
  fmt::print("{}: {} in {} entr{}, cap {}\n", root.string(), util::format_byte_size(total), entries.size(),
             entries.size() == 1 ? "y" : "ies", cap_text(cap));
  return 0;
}

Result<int> run_cache_prune(const CacheArguments& arguments) {
  const auto root = root_of(arguments);
  image::PrunePolicy policy;
  if (arguments.max_size) {
    HWIMG_TRY_ASSIGN(policy.max_size, with_context(util::parse_byte_size(*arguments.max_size), "--max-size"));
  }
  if (arguments.older_than) {
    HWIMG_TRY_ASSIGN(const auto older, with_context(util::parse_duration(*arguments.older_than), "--older-than"));
    policy.older_than = std::chrono::duration_cast<std::chrono::seconds>(older);
  }
  if (!policy.max_size && !policy.older_than) {
    HWIMG_TRY_ASSIGN(policy.max_size, cache_cap(root, std::nullopt));
  }
  HWIMG_TRY_ASSIGN(const auto report, image::prune_cache(root, policy, Clock::now(), image::PruneWait::block));
  if (arguments.format == DataFormat::json) {
    nlohmann::ordered_json removed = nlohmann::ordered_json::array();
    for (const auto& entry : report.removed) removed.push_back(entry_json(entry));
    const nlohmann::ordered_json out{{"cache", root.string()},
                                     {"removed", std::move(removed)},
                                     {"removed_bytes", report.removed_bytes},
                                     {"kept_bytes", report.kept_bytes},
                                     {"kept_entries", report.kept.size()},
                                     {"in_use_bytes", report.in_use_bytes},
                                     {"failures", report.failures}};
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("{}: removed {} entr{} ({}); it holds {} in {} entr{} ({} in use)\n", root.string(),
               report.removed.size(), report.removed.size() == 1 ? "y" : "ies",
               util::format_byte_size(report.removed_bytes), util::format_byte_size(report.kept_bytes),
               report.kept.size(), report.kept.size() == 1 ? "y" : "ies", util::format_byte_size(report.in_use_bytes));
  }
  if (!report.failures.empty()) {
    return fail("failed to prune the cache {}: {}", root.string(),
                util::join_at_most(report.failures, "; ", util::max_listed_errors));
  }
  return 0;
}

}  // namespace hwimg::commands
