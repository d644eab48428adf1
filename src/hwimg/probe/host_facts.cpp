#include "hwimg/probe/host_facts.hpp"

#include <algorithm>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/hw/target_hints.hpp"
#include "hwimg/util/json_reader.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::probe {
namespace {

using json = nlohmann::ordered_json;  // written in a stable, readable key order
using util::json::Json;

json optional_value(const auto& value) {
  return value ? json(*value) : json(nullptr);
}

json nvidia_json(const NvidiaFacts& nvidia) {
  json gpus = json::array();
  for (const auto& gpu : nvidia.gpus) {
    gpus.push_back({{"index", gpu.index},
                    {"uuid", gpu.uuid},
                    {"name", gpu.name},
                    {"compute_capability", optional_value(gpu.compute_capability)},
                    {"brand", optional_value(gpu.brand)},
                    {"memory_mib", optional_value(gpu.memory_mib)}});
  }
  return {{"driver_version", optional_value(nvidia.driver_version)},
          {"cuda_driver_version", optional_value(nvidia.cuda_driver_version)},
          {"source", nvidia.source},
          {"gpus", std::move(gpus)}};
}

// Reads typed members, naming the key path in every error.
class Reader {
public:
  explicit Reader(std::string file_name) : m_file_name(std::move(file_name)) {}

  template <typename... Args>
  std::unexpected<Error> error(std::string_view key, fmt::format_string<Args...> format, Args&&... args) const {
    return fail("failed to read host facts {}: {}: {}", m_file_name, key,
                fmt::format(format, std::forward<Args>(args)...));
  }

  template <typename T>
  Result<T> named(Result<T> value, std::string_view key) const {
    if (!value) return error(key, "{}", value.error().message);
    return value;
  }

  Result<std::optional<std::string>> string(const Json& parent, std::string_view name, std::string_view key) const {
    return named(util::json::string_member(parent, name), key);
  }

  Result<std::optional<std::int64_t>> integer(const Json& parent, std::string_view name, std::string_view key) const {
    return named(util::json::integer_member(parent, name), key);
  }

  Result<std::vector<std::string>> strings(const Json& parent, std::string_view name, std::string_view key) const {
    HWIMG_TRY_ASSIGN(auto values, named(util::json::strings_member(parent, name), key));
    return values.value_or(std::vector<std::string>{});
  }

private:
  std::string m_file_name;
};

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool is_version_text(std::string_view text) {
  const auto parts = util::split(text, '.');
  return parts.size() >= 2 && std::ranges::all_of(parts, [](const std::string& part) {
           return !part.empty() && std::ranges::all_of(part, [](char c) { return c >= '0' && c <= '9'; });
         });
}

// A MIDR field as /proc/cpuinfo writes it ("0x41", "0xd4f"), arm64 only; empty when absent.
Result<std::string> read_midr_field(const Reader& reader, const Json& cpu, hw::CpuArch arch, std::string_view name,
                                    std::string_view example) {
  const auto key = fmt::format("cpu.{}", name);
  HWIMG_TRY_ASSIGN(auto value, reader.string(cpu, name, key));
  if (!value) {
    return std::string();
  }
  if (arch != hw::CpuArch::arm64) {
    return reader.error(key, "only arm64 CPUs have one, got \"{}\" for {}", *value, hw::cpu_arch_name(arch));
  }
  auto code = util::to_lower(util::trim(*value));
  if (code.size() < 3 || !code.starts_with("0x") || !std::ranges::all_of(code.substr(2), is_hex_digit)) {
    return reader.error(key, "expected a hexadecimal code such as \"{}\", got \"{}\"", example, *value);
  }
  return code;
}

Result<CpuFacts> read_cpu(const Reader& reader, const Json& cpu) {
  CpuFacts facts;
  HWIMG_TRY_ASSIGN(auto arch, reader.string(cpu, "arch", "cpu.arch"));
  if (!arch) {
    return reader.error("cpu.arch", "missing (expected \"amd64\" or \"arm64\")");
  }
  const auto parsed_arch = hw::parse_cpu_arch(*arch);
  if (!parsed_arch) {
    return reader.error("cpu.arch", "unknown architecture \"{}\" (expected \"amd64\" or \"arm64\")", *arch);
  }
  facts.arch = *parsed_arch;
  HWIMG_TRY_ASSIGN(facts.implementer, read_midr_field(reader, cpu, facts.arch, "implementer", "0x41"));
  HWIMG_TRY_ASSIGN(facts.cpu_part, read_midr_field(reader, cpu, facts.arch, "cpu_part", "0xd4f"));
  HWIMG_TRY_ASSIGN(auto vendor, reader.string(cpu, "vendor", "cpu.vendor"));
  // The implementer names the vendor when the file does not; a known implementer must agree with it.
  const auto implementer_vendor = hw::arm_vendor_name(facts.implementer);
  const bool has_vendor = vendor && !util::trim(*vendor).empty();
  facts.vendor = has_vendor ? hw::cpu_vendor_name(*vendor) : implementer_vendor;
  if (has_vendor && implementer_vendor != facts.implementer && implementer_vendor != facts.vendor) {
    return reader.error("cpu.vendor", "\"{}\" contradicts cpu.implementer \"{}\" ({})", *vendor, facts.implementer,
                        implementer_vendor);
  }
  HWIMG_TRY_ASSIGN(auto model_name, reader.string(cpu, "model_name", "cpu.model_name"));
  facts.model_name = model_name.value_or("");
  HWIMG_TRY_ASSIGN(auto family, reader.integer(cpu, "family", "cpu.family"));
  HWIMG_TRY_ASSIGN(auto model, reader.integer(cpu, "model", "cpu.model"));
  if (family) {
    facts.family = static_cast<int>(*family);
  }
  if (model) {
    facts.model = static_cast<int>(*model);
  }
  HWIMG_TRY_ASSIGN(auto features, reader.strings(cpu, "features", "cpu.features"));
  const auto canonical = hw::make_feature_set(features);
  facts.features.assign(canonical.begin(), canonical.end());
  HWIMG_TRY_ASSIGN(auto level, reader.string(cpu, "level", "cpu.level"));
  if (level) {
    facts.level = hw::parse_x86_level(*level);
    if (!facts.level || facts.arch != hw::CpuArch::amd64) {
      return reader.error("cpu.level", "unknown level \"{}\" for {} (expected x86-64-v1 ... x86-64-v4)", *level,
                          hw::cpu_arch_name(facts.arch));
    }
  }
  HWIMG_TRY_ASSIGN(auto microarch, reader.string(cpu, "microarch", "cpu.microarch"));
  if (microarch) {
    const auto* target = hw::find_cpu_target(*microarch);
    if (target == nullptr || target->arch != facts.arch) {
      return reader.error("cpu.microarch", "unknown microarchitecture \"{}\"{}", *microarch,
                          hw::cpu_target_hint(*microarch));
    }
    facts.microarch = std::string(target->name);
  }
  derive_cpu_facts(facts);
  return facts;
}

Result<GpuFacts> read_gpu(const Reader& reader, const Json& gpu, std::size_t position) {
  const auto key = [&](std::string_view name) { return fmt::format("nvidia.gpus[{}].{}", position, name); };
  if (!gpu.is_object()) {
    return reader.error(fmt::format("nvidia.gpus[{}]", position), "expected an object");
  }
  GpuFacts facts;
  HWIMG_TRY_ASSIGN(auto index, reader.integer(gpu, "index", key("index")));
  facts.index = static_cast<int>(index.value_or(static_cast<std::int64_t>(position)));
  HWIMG_TRY_ASSIGN(auto uuid, reader.string(gpu, "uuid", key("uuid")));
  facts.uuid = uuid.value_or("");
  HWIMG_TRY_ASSIGN(auto name, reader.string(gpu, "name", key("name")));
  facts.name = name.value_or("");
  HWIMG_TRY_ASSIGN(auto capability, reader.string(gpu, "compute_capability", key("compute_capability")));
  if (capability && !is_version_text(*capability)) {
    return reader.error(key("compute_capability"), "expected a version such as \"9.0\", got \"{}\"", *capability);
  }
  facts.compute_capability = capability;
  HWIMG_TRY_ASSIGN(auto brand, reader.string(gpu, "brand", key("brand")));
  facts.brand = brand;
  HWIMG_TRY_ASSIGN(auto memory, reader.integer(gpu, "memory_mib", key("memory_mib")));
  if (memory) {
    if (*memory < 0) {
      return reader.error(key("memory_mib"), "expected a non-negative integer");
    }
    facts.memory_mib = static_cast<std::uint64_t>(*memory);
  }
  return facts;
}

Result<NvidiaFacts> read_nvidia(const Reader& reader, const Json& nvidia) {
  NvidiaFacts facts;
  HWIMG_TRY_ASSIGN(auto driver, reader.string(nvidia, "driver_version", "nvidia.driver_version"));
  if (driver && !is_version_text(*driver)) {
    return reader.error("nvidia.driver_version", "expected a version such as \"580.65.06\", got \"{}\"", *driver);
  }
  facts.driver_version = driver;
  HWIMG_TRY_ASSIGN(auto cuda, reader.string(nvidia, "cuda_driver_version", "nvidia.cuda_driver_version"));
  if (cuda && !is_version_text(*cuda)) {
    return reader.error("nvidia.cuda_driver_version", "expected a version such as \"13.0\", got \"{}\"", *cuda);
  }
  facts.cuda_driver_version = cuda;
  HWIMG_TRY_ASSIGN(auto source, reader.string(nvidia, "source", "nvidia.source"));
  facts.source = source.value_or("");
  const auto gpus = nvidia.find("gpus");
  if (gpus != nvidia.end() && !gpus->is_null()) {
    if (!gpus->is_array()) {
      return reader.error("nvidia.gpus", "expected an array of objects");
    }
    for (std::size_t i = 0; i < gpus->size(); ++i) {
      HWIMG_TRY_ASSIGN(auto gpu, read_gpu(reader, (*gpus)[i], i));
      facts.gpus.push_back(std::move(gpu));
    }
  }
  return facts;
}

Result<Json> parse_json(std::string_view text, std::string_view file_name) {
  return with_context(util::json::parse(text), fmt::format("failed to read host facts {}", file_name));
}

}  // namespace

void derive_cpu_facts(CpuFacts& cpu) {
  const auto features = hw::make_feature_set(cpu.features);
  if (cpu.arch == hw::CpuArch::amd64 && !cpu.level) {
    cpu.level = hw::x86_level_of(features);
  }
  if (!cpu.microarch) {
    if (const auto* target = hw::best_microarch(cpu.arch, cpu.vendor, features, cpu.cpu_part)) {
      cpu.microarch = std::string(target->name);
    }
  }
}

std::string to_json(const NvidiaFacts& nvidia) {
  return nvidia_json(nvidia).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string to_json(const HostFacts& facts) {
  const auto& cpu = facts.cpu;
  json cpu_json{{"arch", hw::cpu_arch_name(cpu.arch)},
                {"vendor", cpu.vendor},
                {"model_name", cpu.model_name},
                {"family", optional_value(cpu.family)},
                {"model", optional_value(cpu.model)}};
  // Written only where known (arm64), so amd64 facts keep their shape.
  if (!cpu.implementer.empty()) {
    cpu_json["implementer"] = cpu.implementer;
  }
  if (!cpu.cpu_part.empty()) {
    cpu_json["cpu_part"] = cpu.cpu_part;
  }
  cpu_json["level"] = cpu.level ? json(hw::x86_level_name(*cpu.level)) : json(nullptr);
  cpu_json["microarch"] = optional_value(cpu.microarch);
  cpu_json["features"] = cpu.features;
  json root{{"schema", 1},
            {"os", facts.os},
            {"cpu", std::move(cpu_json)},
            {"nvidia", facts.nvidia ? nvidia_json(*facts.nvidia) : json(nullptr)}};
  // Names come from the CPU and the driver; bytes that are not UTF-8 must not fail the probe.
  return root.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<HostFacts> parse_host_facts(std::string_view text, std::string_view file_name) {
  HWIMG_TRY_ASSIGN(auto root, parse_json(text, file_name));
  const Reader reader{std::string(file_name)};
  if (!root.is_object()) {
    return reader.error("(top level)", "expected an object");
  }
  HWIMG_TRY_ASSIGN(auto schema, reader.integer(root, "schema", "schema"));
  if (schema && *schema != 1) {
    return reader.error("schema", "unsupported version {} (this hwimg reads 1)", *schema);
  }
  HostFacts facts;
  HWIMG_TRY_ASSIGN(auto os, reader.string(root, "os", "os"));
  facts.os = os.value_or("linux");
  const auto cpu = root.find("cpu");
  if (cpu == root.end() || !cpu->is_object()) {
    return reader.error("cpu", "{}", cpu == root.end() ? "missing" : "expected an object");
  }
  HWIMG_TRY_ASSIGN(auto cpu_facts, read_cpu(reader, *cpu));
  facts.cpu = std::move(cpu_facts);
  const auto nvidia = root.find("nvidia");
  if (nvidia != root.end() && !nvidia->is_null()) {
    if (!nvidia->is_object()) {
      return reader.error("nvidia", "expected an object or null");
    }
    HWIMG_TRY_ASSIGN(auto nvidia_facts, read_nvidia(reader, *nvidia));
    facts.nvidia = std::move(nvidia_facts);
  }
  return facts;
}

Result<NvidiaFacts> parse_nvidia_facts(std::string_view text, std::string_view file_name) {
  HWIMG_TRY_ASSIGN(auto root, parse_json(text, file_name));
  const Reader reader{std::string(file_name)};
  if (!root.is_object()) {
    return reader.error("nvidia", "expected an object");
  }
  return read_nvidia(reader, root);
}

std::string cuda_version_text(int encoded) {
  return fmt::format("{}.{}", encoded / 1000, (encoded % 1000) / 10);
}

}  // namespace hwimg::probe
