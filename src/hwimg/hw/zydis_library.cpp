#include "hwimg/hw/detail/zydis_library.hpp"

#include "hwimg/util/process_library.hpp"

namespace hwimg::hw::detail {
namespace {

Result<void> bind(const util::SharedLibrary& library, ZydisLibrary& zydis) {
  bool all = true;
  all &= library.bind(zydis.decoder_init, "ZydisDecoderInit");
  all &= library.bind(zydis.decoder_enable_mode, "ZydisDecoderEnableMode");
  all &= library.bind(zydis.decode_instruction, "ZydisDecoderDecodeInstruction");
  all &= library.bind(zydis.decode_full, "ZydisDecoderDecodeFull");
  all &= library.bind(zydis.calc_absolute_address, "ZydisCalcAbsoluteAddress");
  all &= library.bind(zydis.mnemonic_string, "ZydisMnemonicGetString");
  if (!all) return fail("failed to load Zydis: libZydis.so.4.0 lacks functions hwimg needs (Zydis 4 is required)");
  return {};
}

util::ProcessLibrary<ZydisLibrary> g_zydis("libZydis.so.4.0", "failed to load Zydis to check CPU code (install libzydis4.0)",
                                          bind);

}  // namespace

Result<const ZydisLibrary*> load_zydis() { return g_zydis.get(); }

}  // namespace hwimg::hw::detail
