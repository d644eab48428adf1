#include <memory>

#include "commands.hpp"
#include "format_option.hpp"
#include "hwimg/commands/cache.hpp"

namespace hwimg::cli {

void define_cache_command(CLI::App& subcommand, Action& action) {
  auto args = std::make_shared<commands::CacheArguments>();
  auto* cache = &subcommand;
  cache->require_subcommand(1);
  const auto add_cache_option = [&](CLI::App& command) {
    command.add_option("--cache", args->cache, "The cache (default: $XDG_CACHE_HOME/hwimg or ~/.cache/hwimg)")
        ->option_text("DIR");
  };
  auto* ls = cache->add_subcommand(
      "ls", "List the cache's blobs, unpacked builder root filesystems and staged builds, least recently used first, "
            "with their sizes");
  add_cache_option(*ls);
  add_data_format_option(*ls, args->format, "KIND SIZE LAST-USED NAME per entry, then the total and the cap",
                         "{\"cache\", \"bytes\", \"cap\", \"entries\": [{\"kind\", \"name\", \"bytes\", "
                         "\"last_used\", \"in_use\", ...}]}");
  ls->callback([args, &action] { action = [args] { return commands::run_cache_ls(*args); }; });

  auto* prune = cache->add_subcommand(
      "prune", "Remove cache entries no running build uses: those not used for --older-than, then the least recently "
               "used until the cache fits --max-size (neither given: the cap that builds apply)");
  add_cache_option(*prune);
  prune->add_option("--max-size", args->max_size, "Keep at most this much: 20G, 512MiB, 0 (everything not in use)")
      ->option_text("SIZE");
  prune->add_option("--older-than", args->older_than, "Remove what was not used for this long: 12h, 7d")
      ->option_text("DURATION");
  add_data_format_option(*prune, args->format, "one line: what was removed and what the cache holds now",
                         "{\"cache\", \"removed\": [entries as cache ls prints them], \"removed_bytes\", "
                         "\"kept_bytes\", ...}");
  prune->callback([args, &action] { action = [args] { return commands::run_cache_prune(*args); }; });
  cache->footer(
      "The cache holds the blobs of registry base and builder images, builder images' unpacked root file systems and "
      "the staging layouts of `build --push` (one per recipe). Each build ends by pruning it to its cap: "
      "--cache-max-size, else HWIMG_CACHE_MAX_SIZE (\"off\": no cap), else 40 GiB or a quarter of its file system "
      "where that is less. Nothing a running build uses is removed. See docs/cache.md.");
}

}  // namespace hwimg::cli
