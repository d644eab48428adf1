#include "hwimg/hw/detail/x86_isa_features.hpp"

#include <array>
#include <vector>

#include <Zydis/Zydis.h>

namespace hwimg::hw::detail {
namespace {

struct IsaSetRow {
  ZydisISASet set;
  std::vector<std::string_view> features;
};

// Zydis's ISA sets are Intel XED's (https://intelxed.github.io/ref-manual/, "ISA sets"); the AVX-512
// sets name their vector length, and a 128- or 256-bit form also needs AVX512VL (Intel SDM vol. 1,
// 15.4). System instructions (VMX, SVM, SGX, TDX, ...) run only in the kernel or a hypervisor and
// are left out, as are the sets of Xeon Phi coprocessors (KNC).
std::vector<IsaSetRow> make_rows() {
  using F = std::vector<std::string_view>;
  std::vector<IsaSetRow> rows{
      {ZYDIS_ISA_SET_X87, F{"fpu"}},
      {ZYDIS_ISA_SET_FCMOV, F{"fpu", "cmov"}},
      {ZYDIS_ISA_SET_CMOV, F{"cmov"}},
      {ZYDIS_ISA_SET_PENTIUMMMX, F{"mmx"}},
      {ZYDIS_ISA_SET_FXSAVE, F{"fxsr"}},
      {ZYDIS_ISA_SET_FXSAVE64, F{"fxsr"}},
      {ZYDIS_ISA_SET_SSE, F{"sse"}},
      {ZYDIS_ISA_SET_SSEMXCSR, F{"sse"}},
      {ZYDIS_ISA_SET_SSE_PREFETCH, F{"sse"}},
      {ZYDIS_ISA_SET_SSE2, F{"sse2"}},
      {ZYDIS_ISA_SET_SSE2MMX, F{"sse2"}},
      {ZYDIS_ISA_SET_SSE3, F{"pni"}},
      {ZYDIS_ISA_SET_SSE3X87, F{"pni"}},
      {ZYDIS_ISA_SET_SSSE3, F{"ssse3"}},
      {ZYDIS_ISA_SET_SSSE3MMX, F{"ssse3"}},
      {ZYDIS_ISA_SET_SSE4, F{"sse4_1"}},
      {ZYDIS_ISA_SET_SSE42, F{"sse4_2"}},
      {ZYDIS_ISA_SET_POPCNT, F{"popcnt"}},
      {ZYDIS_ISA_SET_CMPXCHG16B, F{"cx16"}},
      {ZYDIS_ISA_SET_LAHF, F{"lahf_lm"}},
      {ZYDIS_ISA_SET_AVX, F{"avx"}},
      {ZYDIS_ISA_SET_AVX2, F{"avx2"}},
      {ZYDIS_ISA_SET_AVX2GATHER, F{"avx2"}},
      {ZYDIS_ISA_SET_FMA, F{"fma"}},
      {ZYDIS_ISA_SET_F16C, F{"f16c"}},
      {ZYDIS_ISA_SET_BMI1, F{"bmi1"}},
      {ZYDIS_ISA_SET_BMI2, F{"bmi2"}},
      {ZYDIS_ISA_SET_LZCNT, F{"abm"}},
      {ZYDIS_ISA_SET_MOVBE, F{"movbe"}},
      {ZYDIS_ISA_SET_XSAVE, F{"xsave"}},
      {ZYDIS_ISA_SET_XSAVEOPT, F{"xsaveopt"}},
      {ZYDIS_ISA_SET_XSAVEC, F{"xsavec"}},
      {ZYDIS_ISA_SET_XSAVES, F{"xsaves"}},
      {ZYDIS_ISA_SET_AES, F{"aes"}},
      {ZYDIS_ISA_SET_AVXAES, F{"aes", "avx"}},
      {ZYDIS_ISA_SET_PCLMULQDQ, F{"pclmulqdq"}},
      {ZYDIS_ISA_SET_VAES, F{"vaes", "avx"}},
      {ZYDIS_ISA_SET_VPCLMULQDQ, F{"vpclmulqdq", "avx"}},
      {ZYDIS_ISA_SET_GFNI, F{"gfni"}},
      {ZYDIS_ISA_SET_AVX_GFNI, F{"gfni", "avx"}},
      {ZYDIS_ISA_SET_AVX_VNNI, F{"avx_vnni"}},
      {ZYDIS_ISA_SET_SHA, F{"sha_ni"}},
      {ZYDIS_ISA_SET_ADOX_ADCX, F{"adx"}},
      {ZYDIS_ISA_SET_RDRAND, F{"rdrand"}},
      {ZYDIS_ISA_SET_RDSEED, F{"rdseed"}},
      {ZYDIS_ISA_SET_RDPID, F{"rdpid"}},
      {ZYDIS_ISA_SET_RDTSCP, F{"rdtscp"}},
      {ZYDIS_ISA_SET_RDWRFSGS, F{"fsgsbase"}},
      {ZYDIS_ISA_SET_CLFLUSHOPT, F{"clflushopt"}},
      {ZYDIS_ISA_SET_CLWB, F{"clwb"}},
      {ZYDIS_ISA_SET_CLZERO, F{"clzero"}},
      {ZYDIS_ISA_SET_CLDEMOTE, F{"cldemote"}},
      {ZYDIS_ISA_SET_MOVDIR, F{"movdiri"}},
      {ZYDIS_ISA_SET_SERIALIZE, F{"serialize"}},
      {ZYDIS_ISA_SET_WAITPKG, F{"waitpkg"}},
      {ZYDIS_ISA_SET_RTM, F{"rtm"}},
      {ZYDIS_ISA_SET_MONITORX, F{"mwaitx"}},
      {ZYDIS_ISA_SET_SSE4A, F{"sse4a"}},
      {ZYDIS_ISA_SET_FMA4, F{"fma4"}},
      {ZYDIS_ISA_SET_XOP, F{"xop"}},
      {ZYDIS_ISA_SET_TBM, F{"tbm"}},
      {ZYDIS_ISA_SET_AMD3DNOW, F{"3dnow"}},
      {ZYDIS_ISA_SET_AMX_TILE, F{"amx_tile"}},
      {ZYDIS_ISA_SET_AMX_INT8, F{"amx_int8", "amx_tile"}},
      {ZYDIS_ISA_SET_AMX_BF16, F{"amx_bf16", "amx_tile"}},
      {ZYDIS_ISA_SET_AVX512F_KOP, F{"avx512f"}},
      {ZYDIS_ISA_SET_AVX512F_SCALAR, F{"avx512f"}},
      {ZYDIS_ISA_SET_AVX512BW_KOP, F{"avx512bw"}},
      {ZYDIS_ISA_SET_AVX512DQ_KOP, F{"avx512dq"}},
      {ZYDIS_ISA_SET_AVX512DQ_SCALAR, F{"avx512dq"}},
      {ZYDIS_ISA_SET_AVX512ER_SCALAR, F{"avx512er"}},
      {ZYDIS_ISA_SET_AVX512_4FMAPS_SCALAR, F{"avx512_4fmaps"}},
      {ZYDIS_ISA_SET_AVX512_FP16_SCALAR, F{"avx512_fp16"}},
  };
  // Vector-length forms: 512-bit needs the feature (and AVX512F), 128/256-bit AVX512VL as well.
  struct Family {
    std::vector<std::string_view> features;
    std::vector<ZydisISASet> full;   // 512-bit forms
    std::vector<ZydisISASet> short_; // 128/256-bit forms
  };
  const std::vector<Family> families{
      {{"avx512f"}, {ZYDIS_ISA_SET_AVX512F_512}, {ZYDIS_ISA_SET_AVX512F_128, ZYDIS_ISA_SET_AVX512F_128N, ZYDIS_ISA_SET_AVX512F_256}},
      {{"avx512f", "avx512bw"}, {ZYDIS_ISA_SET_AVX512BW_512}, {ZYDIS_ISA_SET_AVX512BW_128, ZYDIS_ISA_SET_AVX512BW_128N, ZYDIS_ISA_SET_AVX512BW_256}},
      {{"avx512f", "avx512cd"}, {ZYDIS_ISA_SET_AVX512CD_512}, {ZYDIS_ISA_SET_AVX512CD_128, ZYDIS_ISA_SET_AVX512CD_256}},
      {{"avx512f", "avx512dq"}, {ZYDIS_ISA_SET_AVX512DQ_512}, {ZYDIS_ISA_SET_AVX512DQ_128, ZYDIS_ISA_SET_AVX512DQ_128N, ZYDIS_ISA_SET_AVX512DQ_256}},
      {{"avx512f", "avx512er"}, {ZYDIS_ISA_SET_AVX512ER_512}, {}},
      {{"avx512f", "avx512pf"}, {ZYDIS_ISA_SET_AVX512PF_512}, {}},
      {{"avx512f", "avx512_4fmaps"}, {ZYDIS_ISA_SET_AVX512_4FMAPS_512}, {}},
      {{"avx512f", "avx512_4vnniw"}, {ZYDIS_ISA_SET_AVX512_4VNNIW_512}, {}},
      {{"avx512f", "avx512_bf16"}, {ZYDIS_ISA_SET_AVX512_BF16_512}, {ZYDIS_ISA_SET_AVX512_BF16_128, ZYDIS_ISA_SET_AVX512_BF16_256}},
      {{"avx512f", "avx512_bitalg"}, {ZYDIS_ISA_SET_AVX512_BITALG_512}, {ZYDIS_ISA_SET_AVX512_BITALG_128, ZYDIS_ISA_SET_AVX512_BITALG_256}},
      {{"avx512f", "avx512_fp16"}, {ZYDIS_ISA_SET_AVX512_FP16_512}, {ZYDIS_ISA_SET_AVX512_FP16_128, ZYDIS_ISA_SET_AVX512_FP16_128N, ZYDIS_ISA_SET_AVX512_FP16_256}},
      {{"avx512f", "gfni"}, {ZYDIS_ISA_SET_AVX512_GFNI_512}, {ZYDIS_ISA_SET_AVX512_GFNI_128, ZYDIS_ISA_SET_AVX512_GFNI_256}},
      {{"avx512f", "avx512ifma"}, {ZYDIS_ISA_SET_AVX512_IFMA_512}, {ZYDIS_ISA_SET_AVX512_IFMA_128, ZYDIS_ISA_SET_AVX512_IFMA_256}},
      {{"avx512f", "vaes"}, {ZYDIS_ISA_SET_AVX512_VAES_512}, {ZYDIS_ISA_SET_AVX512_VAES_128, ZYDIS_ISA_SET_AVX512_VAES_256}},
      {{"avx512f", "avx512_vbmi2"}, {ZYDIS_ISA_SET_AVX512_VBMI2_512}, {ZYDIS_ISA_SET_AVX512_VBMI2_128, ZYDIS_ISA_SET_AVX512_VBMI2_256}},
      {{"avx512f", "avx512vbmi"}, {ZYDIS_ISA_SET_AVX512_VBMI_512}, {ZYDIS_ISA_SET_AVX512_VBMI_128, ZYDIS_ISA_SET_AVX512_VBMI_256}},
      {{"avx512f", "avx512_vnni"}, {ZYDIS_ISA_SET_AVX512_VNNI_512}, {ZYDIS_ISA_SET_AVX512_VNNI_128, ZYDIS_ISA_SET_AVX512_VNNI_256}},
      {{"avx512f", "avx512_vp2intersect"}, {ZYDIS_ISA_SET_AVX512_VP2INTERSECT_512}, {ZYDIS_ISA_SET_AVX512_VP2INTERSECT_128, ZYDIS_ISA_SET_AVX512_VP2INTERSECT_256}},
      {{"avx512f", "vpclmulqdq"}, {ZYDIS_ISA_SET_AVX512_VPCLMULQDQ_512}, {ZYDIS_ISA_SET_AVX512_VPCLMULQDQ_128, ZYDIS_ISA_SET_AVX512_VPCLMULQDQ_256}},
      {{"avx512f", "avx512_vpopcntdq"}, {ZYDIS_ISA_SET_AVX512_VPOPCNTDQ_512}, {ZYDIS_ISA_SET_AVX512_VPOPCNTDQ_128, ZYDIS_ISA_SET_AVX512_VPOPCNTDQ_256}},
  };
  for (const auto& family : families) {
    for (const auto set : family.full) rows.push_back({set, family.features});
    auto with_vl = family.features;
    with_vl.push_back("avx512vl");
    for (const auto set : family.short_) rows.push_back({set, with_vl});
  }
  return rows;
}

}  // namespace

std::span<const std::string_view> x86_isa_set_features(int isa_set) {
  static const auto table = [] {
    std::array<std::vector<std::string_view>, ZYDIS_ISA_SET_MAX_VALUE + 1> by_set;
    for (auto& row : make_rows()) by_set[static_cast<std::size_t>(row.set)] = std::move(row.features);
    return by_set;
  }();
  if (isa_set < 0 || isa_set > ZYDIS_ISA_SET_MAX_VALUE) return {};
  return table[static_cast<std::size_t>(isa_set)];
}

}  // namespace hwimg::hw::detail
