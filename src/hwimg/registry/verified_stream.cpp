#include "hwimg/registry/verified_stream.hpp"

#include <utility>

#include "hwimg/registry/client.hpp"

namespace hwimg::registry {

VerifiedStream::VerifiedStream(Source source, oci::Digest expected, std::optional<std::uint64_t> size)
    : m_source(std::move(source)), m_expected(std::move(expected)), m_size(size) {}

Result<std::optional<std::string>> VerifiedStream::next() {
  while (!m_finished) {
    HWIMG_TRY_ASSIGN(auto piece, m_source());
    if (!piece) break;
    m_received += piece->size();
    if (m_size && m_received > *m_size) {
      m_finished = true;
      m_held.reset();
      return fail("blob {} is larger than its descriptor's {} bytes", m_expected.str(), *m_size);
    }
    m_hash.update(*piece);
    if (auto previous = std::exchange(m_held, std::move(*piece)); previous && !previous->empty()) {
      return std::optional<std::string>(std::move(*previous));
    }
  }
  if (!std::exchange(m_finished, true)) {
    if (m_size && m_received != *m_size) {
      m_held.reset();
      return fail("blob {} has {} bytes, not its descriptor's {}", m_expected.str(), m_received, *m_size);
    }
    if (const auto actual = m_hash.finish(); actual != m_expected) {
      m_held.reset();
      return fail("blob {} does not match its digest (content hashes to {})", m_expected.str(), actual.str());
    }
  }
  return std::exchange(m_held, std::nullopt);
}

Result<void> Client::read_blob(const Reference& repository, const oci::Digest& digest, std::optional<std::uint64_t> size,
                               const std::function<Result<void>(std::string_view)>& on_piece) {
  const auto what = fmt::format("failed to get blob {} from {}", digest.str(), repository.name());
  HWIMG_TRY_ASSIGN(auto answer,
                   with_context(open_stream(repository, ReadMethod::get, "blobs/" + digest.str(), {}), what));
  if (answer.status != 200) return fail("{}: {}", what, describe(answer));
  // A body small enough to have come whole (not streamed) passes through the same checks.
  VerifiedStream stream(
      [this, &answer]() -> Result<std::optional<std::string>> {
        if (answer.streamed) return next_chunk();
        if (answer.body.empty()) return std::optional<std::string>();
        return std::optional<std::string>(std::exchange(answer.body, {}));
      },
      digest, size);
  while (true) {
    HWIMG_TRY_ASSIGN(auto piece, with_context(stream.next(), what));
    if (!piece) return {};
    HWIMG_TRY(with_context(on_piece(*piece), what));
  }
}

}  // namespace hwimg::registry
