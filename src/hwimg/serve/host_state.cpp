#include "hwimg/serve/host_state.hpp"

namespace hwimg::serve {

Result<bool> HostState::refresh() {
  HWIMG_TRY_ASSIGN(auto facts, m_load());
  auto json = probe::to_json(facts);
  std::lock_guard lock(m_mutex);
  if (m_facts && json == m_json) return false;
  m_facts = std::make_shared<const probe::HostFacts>(std::move(facts));
  m_json = std::move(json);
  return true;
}

std::shared_ptr<const probe::HostFacts> HostState::facts() const {
  std::lock_guard lock(m_mutex);
  return m_facts;
}

}  // namespace hwimg::serve
