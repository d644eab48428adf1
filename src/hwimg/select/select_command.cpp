#include "hwimg/select/select_command.hpp"

#include <cstdio>
#include <cstdlib>

#include "hwimg/probe/probe.hpp"
#include "hwimg/select/report.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::select {
namespace {

Result<probe::HostFacts> host_facts(const SelectOptions& options) {
  if (options.host_file) {
    auto text = util::read_file(*options.host_file);
    if (!text) return std::unexpected(text.error());
    return probe::parse_host_facts(*text, options.host_file->string());
  }
  auto probe_options = probe::ProbeOptions::from_environment();
  if (!probe_options) return std::unexpected(probe_options.error());
  return probe::probe_host(*probe_options);
}

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::nullopt : std::optional<std::string>(value);
}

}  // namespace

Result<int> run_select(const SelectOptions& options) {
  auto gpus = choose_gpu_selection(options.gpus, environment("NVIDIA_VISIBLE_DEVICES"));
  if (!gpus) return std::unexpected(gpus.error());
  auto facts = host_facts(options);
  if (!facts) return std::unexpected(facts.error());
  auto source = load_image_source(options.reference, options.registry);
  if (!source) return std::unexpected(source.error());
  auto selection = select_variant(source->candidates, *facts, *gpus);
  if (!selection) return std::unexpected(selection.error());

  if (options.format == OutputFormat::json) {
    fmt::print("{}", render_json(*source, *selection));
  } else if (selection->chosen) {
    fmt::print("{}\n", chosen_reference(*source, *selection));
  }
  std::fflush(stdout);
  if (!selection->chosen) {
    fmt::print(stderr, "hwimg: no variant of {} runs on this host\n{}", options.reference,
               render_explanation(*source, *selection));
    return static_cast<int>(ExitCode::no_match);
  }
  if (options.explain == Explain::yes) {
    fmt::print(stderr, "{}", render_explanation(*source, *selection));
  }
  return 0;
}

}  // namespace hwimg::select
