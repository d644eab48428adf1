#include "hwimg/registry/detail/challenge.hpp"

#include <algorithm>

#include "hwimg/util/strings.hpp"

namespace hwimg::registry {
namespace {

bool is_token_char(char c) {
  return c != ' ' && c != '\t' && c != ',' && c != '=' && c != '"';
}

class Scanner {
public:
  explicit Scanner(std::string_view text) : m_text(text) {}
  void skip_spaces() {
    while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t')) ++m_pos;
  }
  void skip_separators() {
    while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t' || m_text[m_pos] == ',')) ++m_pos;
  }
  [[nodiscard]] bool done() const { return m_pos >= m_text.size(); }
  [[nodiscard]] char peek() const { return done() ? '\0' : m_text[m_pos]; }
  void advance() { ++m_pos; }
  [[nodiscard]] std::size_t position() const { return m_pos; }
  void rewind(std::size_t pos) { m_pos = pos; }
  std::string token() {
    const auto start = m_pos;
    while (!done() && is_token_char(m_text[m_pos])) ++m_pos;
    return std::string(m_text.substr(start, m_pos - start));
  }
  std::string quoted() {
    std::string out;
    advance();  // opening quote
    while (!done() && peek() != '"') {
      if (peek() == '\\' && m_pos + 1 < m_text.size()) advance();
      out += peek();
      advance();
    }
    if (!done()) advance();  // closing quote
    return out;
  }

private:
  std::string_view m_text;
  std::size_t m_pos = 0;
};

// "repository:name:pull,push" -> ("repository:name", ["pull", "push"]).
std::pair<std::string, std::vector<std::string>> split_actions(const std::string& scope) {
  const auto colon = scope.rfind(':');
  if (colon == std::string::npos) return {scope, {}};
  return {scope.substr(0, colon), util::split(scope.substr(colon + 1), ',')};
}

}  // namespace

std::string Challenge::param(const std::string& key) const {
  const auto it = params.find(key);
  return it == params.end() ? std::string() : it->second;
}

std::vector<Challenge> parse_challenges(std::string_view header) {
  std::vector<Challenge> out;
  Scanner s(header);
  while (true) {
    s.skip_separators();
    if (s.done()) break;
    auto scheme = s.token();
    if (scheme.empty()) {
      s.advance();
      continue;
    }
    Challenge challenge{util::to_lower(scheme), {}};
    while (true) {
      s.skip_separators();
      const auto mark = s.position();
      auto key = s.token();
      s.skip_spaces();
      if (key.empty() || s.peek() != '=') {
        s.rewind(mark);  // the next challenge's scheme
        break;
      }
      s.advance();
      s.skip_spaces();
      challenge.params[util::to_lower(key)] = s.peek() == '"' ? s.quoted() : s.token();
    }
    out.push_back(std::move(challenge));
  }
  return out;
}

std::vector<std::string> split_scopes(std::string_view scope) {
  std::vector<std::string> out;
  for (const auto& word : util::split(scope, ' ')) {
    for (const auto& piece : util::split(word, ',')) {
      if (piece.empty()) continue;
      if (piece.find(':') != std::string::npos || out.empty()) {
        out.push_back(piece);
      } else {
        out.back() += "," + piece;
      }
    }
  }
  return out;
}

std::vector<std::string> merge_scopes(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::pair<std::string, std::vector<std::string>>> merged;
  for (const auto* list : {&a, &b}) {
    for (const auto& scope : *list) {
      auto [resource, actions] = split_actions(scope);
      auto it = std::find_if(merged.begin(), merged.end(), [&](const auto& m) { return m.first == resource; });
      if (it == merged.end()) {
        merged.emplace_back(resource, std::vector<std::string>{});
        it = std::prev(merged.end());
      }
      for (auto& action : actions) {
        if (std::find(it->second.begin(), it->second.end(), action) == it->second.end()) {
          it->second.push_back(std::move(action));
        }
      }
    }
  }
  std::vector<std::string> out;
  for (const auto& [resource, actions] : merged) out.push_back(resource + ":" + util::join(actions, ","));
  return out;
}

}  // namespace hwimg::registry
