#include "hwimg/util/output.hpp"

namespace hwimg::util {
namespace {

class NullOutput final : public Output {
public:
  void progress(std::string_view) override {}
  void status(std::string_view) override {}
  void clear_status() override {}
  void warning(std::string_view) override {}
  void notice(std::string_view) override {}
  void log(std::string_view) override {}
  [[nodiscard]] bool logging() const override { return false; }
};

}  // namespace

Output& null_output() {
  static NullOutput output;
  return output;
}

}  // namespace hwimg::util
