#include "hwimg/compat/nfd_cpuid.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace hwimg::compat {
namespace {

using FlagName = std::pair<std::string_view, std::string_view>;

// klauspost/cpuid v2 FeatureID names for the amd64 features hwimg's levels and targets use, sorted
// by the /proc/cpuinfo name (docs/nfd.md#cpu-flags). Absent there: clflushopt, clwb, fsgsbase, rdpid.
constexpr auto k_amd64_flags = std::to_array<FlagName>({
    {"3dnow", "AMD3DNOW"},        {"3dnowext", "AMD3DNOWEXT"},   {"abm", "LZCNT"},
    {"adx", "ADX"},               {"aes", "AESNI"},              {"amx_bf16", "AMXBF16"},
    {"amx_fp16", "AMXFP16"},      {"amx_int8", "AMXINT8"},       {"amx_tile", "AMXTILE"},
    {"avx", "AVX"},               {"avx2", "AVX2"},              {"avx512_bf16", "AVX512BF16"},
    {"avx512_bitalg", "AVX512BITALG"}, {"avx512_fp16", "AVX512FP16"}, {"avx512_vbmi2", "AVX512VBMI2"},
    {"avx512_vnni", "AVX512VNNI"}, {"avx512_vp2intersect", "AVX512VP2INTERSECT"},
    {"avx512_vpopcntdq", "AVX512VPOPCNTDQ"}, {"avx512bw", "AVX512BW"}, {"avx512cd", "AVX512CD"},
    {"avx512dq", "AVX512DQ"},     {"avx512er", "AVX512ER"},      {"avx512f", "AVX512F"},
    {"avx512ifma", "AVX512IFMA"}, {"avx512pf", "AVX512PF"},      {"avx512vbmi", "AVX512VBMI"},
    {"avx512vl", "AVX512VL"},     {"avx_ifma", "AVXIFMA"},       {"avx_ne_convert", "AVXNECONVERT"},
    {"avx_vnni", "AVXVNNI"},      {"avx_vnni_int16", "AVXVNNIINT16"}, {"avx_vnni_int8", "AVXVNNIINT8"},
    {"bmi1", "BMI1"},             {"bmi2", "BMI2"},              {"cldemote", "CLDEMOTE"},
    {"clzero", "CLZERO"},         {"cmov", "CMOV"},              {"cmpccxadd", "CMPCCXADD"},
    {"cx16", "CX16"},             {"cx8", "CMPXCHG8"},           {"f16c", "F16C"},
    {"fma", "FMA3"},              {"fma4", "FMA4"},              {"fpu", "X87"},
    {"fxsr", "FXSR"},             {"gfni", "GFNI"},              {"lahf_lm", "LAHF"},
    {"mmx", "MMX"},               {"movbe", "MOVBE"},            {"movdir64b", "MOVDIR64B"},
    {"movdiri", "MOVDIRI"},       {"pclmulqdq", "CLMUL"},        {"pni", "SSE3"},
    {"popcnt", "POPCNT"},         {"rdrand", "RDRAND"},          {"rdseed", "RDSEED"},
    {"serialize", "SERIALIZE"},   {"sha_ni", "SHA"},             {"sse", "SSE"},
    {"sse2", "SSE2"},             {"sse4_1", "SSE4"},            {"sse4_2", "SSE42"},
    {"sse4a", "SSE4A"},           {"ssse3", "SSSE3"},            {"syscall", "SYSCALL"},
    {"tbm", "TBM"},               {"vaes", "VAES"},              {"vpclmulqdq", "VPCLMULQDQ"},
    {"waitpkg", "WAITPKG"},       {"xop", "XOP"},                {"xsave", "XSAVE"},
    {"xsavec", "XSAVEC"},         {"xsaveopt", "XSAVEOPT"},
});

// The arm64 ones (Linux hwcap names); the rest (sve2, bf16, i8mm, ...) have no klauspost flag.
constexpr auto k_arm64_flags = std::to_array<FlagName>({
    {"aes", "AESARM"},     {"asimd", "ASIMD"},   {"asimddp", "ASIMDDP"}, {"asimdfhm", "FHM"},
    {"asimdhp", "ASIMDHP"}, {"asimdrdm", "ASIMDRDM"}, {"atomics", "ATOMICS"}, {"crc32", "CRC32"},
    {"dcpop", "DCPOP"},    {"evtstrm", "EVTSTRM"}, {"fcma", "FCMA"},     {"fp", "FP"},
    {"fphp", "FPHP"},      {"jscvt", "JSCVT"},   {"lrcpc", "LRCPC"},     {"pacg", "GPA"},
    {"pmull", "PMULL"},    {"rng", "RNDR"},      {"sha1", "SHA1"},       {"sha2", "SHA2"},
    {"sha3", "SHA3"},      {"sha512", "SHA512"}, {"sm3", "SM3"},         {"sm4", "SM4"},
    {"sve", "SVE"},
});

template <std::size_t N>
std::optional<std::string_view> find_flag(const std::array<FlagName, N>& table, std::string_view feature) {
  const auto it = std::ranges::lower_bound(table, feature, {}, &FlagName::first);
  if (it == table.end() || it->first != feature) return std::nullopt;
  return it->second;
}

}  // namespace

std::optional<std::string_view> nfd_cpuid_flag(hw::CpuArch arch, std::string_view feature) {
  return arch == hw::CpuArch::amd64 ? find_flag(k_amd64_flags, feature) : find_flag(k_arm64_flags, feature);
}

}  // namespace hwimg::compat
