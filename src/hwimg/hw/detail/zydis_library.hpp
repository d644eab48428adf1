#pragma once
// Internal to the hw area: Zydis, the x86 decoder of the CPU-code check (docs/recipe.md#cpu-code),
// is loaded with dlopen on first use instead of being linked, as libcurl and libmicrohttpd are, so
// that only `build` needs it: a node that runs `probe`, `select` or `serve` does not.

#include <Zydis/Zydis.h>

#include "hwimg/util/error.hpp"

namespace hwimg::hw::detail {

struct ZydisLibrary {
  decltype(&::ZydisDecoderInit) decoder_init;
  decltype(&::ZydisDecoderEnableMode) decoder_enable_mode;
  decltype(&::ZydisDecoderDecodeInstruction) decode_instruction;
  decltype(&::ZydisDecoderDecodeFull) decode_full;
  decltype(&::ZydisCalcAbsoluteAddress) calc_absolute_address;
  decltype(&::ZydisMnemonicGetString) mnemonic_string;
};

// Loaded and bound once per process; an error says which package to install.
[[nodiscard]] Result<const ZydisLibrary*> load_zydis();

}  // namespace hwimg::hw::detail
