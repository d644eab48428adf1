#include "hwimg/serve/exchange.hpp"

#include <algorithm>
#include <cstring>
#include <exception>

namespace hwimg::serve {
namespace {

Result<std::optional<std::string>> next_piece(const BodySource& source) {
  try {
    return source();
  } catch (const std::exception& e) {
    return fail("failed to read a streamed body: {}", e.what());
  } catch (...) {
    return fail("failed to read a streamed body: an unexpected error");
  }
}

}  // namespace

Exchange::Exchange(Signal suspend, Signal resume, std::size_t max_buffered)
    : m_suspend(std::move(suspend)), m_resume(std::move(resume)), m_max_buffered(max_buffered) {}

void Exchange::wait_for_answer() {
  std::lock_guard lock(m_mutex);
  if (m_answer || m_abandoned) return;
  m_suspended = true;
  m_suspend();
}

std::optional<std::pair<HttpResponse, Body>> Exchange::take_answer() {
  std::lock_guard lock(m_mutex);
  if (!m_answer) return std::nullopt;
  auto answer = std::exchange(m_answer, std::nullopt);
  return std::pair{std::move(*answer), m_body};
}

Exchange::Piece Exchange::read(char* buffer, std::size_t size) {
  std::lock_guard lock(m_mutex);
  if (m_buffered > 0) {
    std::size_t copied = 0;
    while (copied < size && !m_chunks.empty()) {
      const auto& chunk = m_chunks.front();
      const auto n = std::min(size - copied, chunk.size() - m_offset);
      std::memcpy(buffer + copied, chunk.data() + m_offset, n);
      copied += n;
      m_offset += n;
      if (m_offset == chunk.size()) {
        m_chunks.pop_front();
        m_offset = 0;
      }
    }
    m_buffered -= copied;
    m_room.notify_one();
    return {Piece::Kind::data, copied};
  }
  if (m_end == End::complete) return {Piece::Kind::end, 0};
  if (m_end == End::broken) return {Piece::Kind::broken, 0};
  m_suspended = true;
  m_suspend();
  return {Piece::Kind::waiting, 0};
}

void Exchange::close() {
  std::lock_guard lock(m_mutex);
  m_closed = true;
  m_room.notify_all();
}

void Exchange::deliver(HttpResponse response, Body body) {
  std::lock_guard lock(m_mutex);
  if (m_closed || m_abandoned || m_answer) return;
  response.stream = nullptr;
  m_answer = std::move(response);
  m_body = body;
  wake();
}

void Exchange::pump(const BodySource& source) {
  while (true) {
    {
      std::unique_lock lock(m_mutex);
      m_room.wait(lock, [this] { return m_buffered < m_max_buffered || m_closed || m_abandoned; });
      if (m_closed || m_abandoned) return;
    }
    auto piece = next_piece(source);
    std::lock_guard lock(m_mutex);
    if (m_closed || m_abandoned) return;
    if (!piece) {
      m_end = End::broken;
    } else if (!*piece) {
      m_end = End::complete;
    } else if (!(*piece)->empty()) {
      m_buffered += (*piece)->size();
      m_chunks.push_back(std::move(**piece));
    } else {
      continue;
    }
    wake();
    if (m_end != End::open) return;
  }
}

void Exchange::abandon() {
  std::lock_guard lock(m_mutex);
  m_abandoned = true;
  if (m_end == End::open) m_end = End::broken;
  m_room.notify_all();
  wake();
}

}  // namespace hwimg::serve
