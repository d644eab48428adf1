#include <memory>

#include "commands.hpp"
#include "format_option.hpp"
#include "hwimg/commands/registry_tools.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_ls_command(CLI::App& subcommand, Action& action) {
  struct Arguments {
    commands::ListTagsArguments list;
    std::size_t page_size = 0;
  };
  auto args = std::make_shared<Arguments>();
  auto* command = &subcommand;
  command->add_option("REPOSITORY", args->list.repository, "REGISTRY/REPO (no tag)")->required();
  auto* page_size = command->add_option("--page-size", args->page_size,
                                        "ask for pages of N tags (?n=N), following the Link header to the last "
                                        "(default: the registry's own paging)")
                        ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  auto exclude = std::make_shared<bool>(false);
  command->add_flag("--exclude-digest-tags", *exclude,
                    "leave out the referrers tags (sha256-<hex>: NFD artifacts, signatures listed for a registry "
                    "without the referrers API)");
  add_data_format_option(*command, args->list.format, "one tag per line", "{\"repository\", \"tags\"}");
  add_registry_options(*command, args->list.registry);
  command->footer("Tags come sorted, each once. Exit status: 0 listed, 1 failure (the registry's status and error "
                  "code in the message), 2 usage mistake.");
  command->callback([args, page_size, exclude, &action] {
    if (page_size->count() > 0) args->list.page_size = args->page_size;
    if (*exclude) args->list.digest_tags = commands::DigestTags::exclude;
    action = [args] { return commands::run_list_tags(args->list); };
  });
}

}  // namespace hwimg::cli
