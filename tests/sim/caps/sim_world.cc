#include "tests/sim/caps/sim_world.h"

namespace dfs::caps::sim {

const char* domain_name(Domain d) {
  switch (d) {
    case Domain::kAttr:
      return "attr";
    case Domain::kData:
      return "data";
    case Domain::kDir:
      return "dir";
  }
  return "?";
}

DomainRights rights_of(Domain d) {
  switch (d) {
    case Domain::kAttr:
      return {kAttrShared, kAttrExcl, kNoRights, kNoRights};
    case Domain::kData:
      return {kDataCache, kDataBuffer, kDataRead, kDataWrite};
    case Domain::kDir:
      return {kDirShared, kDirExcl, kNoRights, kNoRights};
  }
  return {};
}

bool domain_of_kind(Domain d, InodeKind kind) {
  if (d == Domain::kAttr) return true;
  return (d == Domain::kData) == (kind == InodeKind::kFile);
}

uint64_t SimStorage::read(Ino ino, Domain d) const {
  auto it = versions_.find(ino);
  return it == versions_.end() ? 0 : it->second[static_cast<int>(d)];
}

bool SimStorage::write(SessionId s, Ino ino, Domain d) {
  if (fenced(s)) {
    ++refused_;
    return false;
  }
  ++versions_[ino][static_cast<int>(d)];
  return true;
}

void SimNetwork::send(TimeMs now, Delivery d) {
  std::uniform_real_distribution<double> p(0, 1);
  if (p(rng_) < faults_.loss) return;
  int copies = p(rng_) < faults_.duplicate ? 2 : 1;
  for (int i = 0; i < copies; ++i) {
    TimeMs delay = std::uniform_int_distribution<TimeMs>(1, faults_.max_delay_ms)(rng_);
    if (faults_.late_max_ms > 0 && p(rng_) < faults_.late) {
      delay += std::uniform_int_distribution<TimeMs>(1, faults_.late_max_ms)(rng_);
    }
    d.at = now + delay;
    d.order = next_order_++;
    queue_.emplace(std::make_pair(d.at, d.order), d);
  }
}

std::optional<Delivery> SimNetwork::pop_due(TimeMs now) {
  if (queue_.empty() || queue_.begin()->first.first > now) return std::nullopt;
  return std::move(queue_.extract(queue_.begin()).mapped());
}

}  // namespace dfs::caps::sim
