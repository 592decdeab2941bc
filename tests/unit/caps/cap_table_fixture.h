// Helpers for CapTable tests: a table with short timeouts and typed views of its outbox.
#pragma once

#include <doctest/doctest.h>

#include <optional>
#include <vector>

#include "common/caps/cap_table.h"

namespace dfs::caps::test {

inline CapTableOptions short_options() {
  return CapTableOptions{
      .session_timeout_ms = 1000, .recall_resend_ms = 100, .max_caps_per_session = 100};
}

template <class T>
std::vector<T> sent(const std::vector<Outgoing>& out, SessionId to) {
  std::vector<T> v;
  for (const Outgoing& o : out) {
    if (o.to == to && std::holds_alternative<T>(o.message)) v.push_back(std::get<T>(o.message));
  }
  return v;
}

// The one message of type T to `to` in `out`.
template <class T>
T only(const std::vector<Outgoing>& out, SessionId to) {
  std::vector<T> v = sent<T>(out, to);
  REQUIRE(v.size() == 1);
  return v[0];
}

inline Want want_of(Ino ino, Rights r, uint64_t id, InodeKind kind = InodeKind::kFile) {
  return Want{ino, kind, r, id};
}

}  // namespace dfs::caps::test
