#include "tests/unit/locks/lock_model.h"

#include <algorithm>

namespace dfs::locks::test {
namespace {

bool rivals(const Owner& a, const Owner& b) { return a != b && same_space(a.kind, b.kind); }

}  // namespace

LockModel::Bits LockModel::bits_of(Range r) {
  Bits bits;
  for (uint64_t b = r.start; b <= std::min<uint64_t>(r.end, kModelBytes - 1); ++b) bits.set(b);
  if (r.end >= kModelBytes) bits.set(kModelBytes);
  return bits;
}

bool LockModel::in_way(const Held& h, const Bits& bits, LockType type) {
  return (h.write & bits).any() || (type == LockType::kWrite && (h.read & bits).any());
}

void LockModel::apply(const HeldLock& l) {
  const Bits bits = bits_of(l.range);
  Holders& holders = inodes_[l.ino];
  Held& h = holders[l.owner];
  h.read &= ~bits;
  h.write &= ~bits;
  if (l.type == LockType::kRead) h.read |= bits;
  if (l.type == LockType::kWrite) h.write |= bits;
  if (h.read.none() && h.write.none()) holders.erase(l.owner);
  if (holders.empty()) inodes_.erase(l.ino);
}

void LockModel::drop(const Owner& o, Ino ino) {
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return;
  it->second.erase(o);
  if (it->second.empty()) inodes_.erase(it);
}

void LockModel::drop_session(SessionId s) {
  for (auto& [ino, holders] : inodes_) {
    std::erase_if(holders, [s](const auto& e) { return e.first.session == s; });
  }
  std::erase_if(inodes_, [](const auto& e) { return e.second.empty(); });
}

bool LockModel::blocks(Ino ino, const Owner& holder, const Owner& o, Range r, LockType type) const {
  auto it = inodes_.find(ino);
  if (it == inodes_.end() || !rivals(holder, o)) return false;
  auto h = it->second.find(holder);
  return h != it->second.end() && in_way(h->second, bits_of(r), type);
}

std::set<Owner> LockModel::blockers(Ino ino, const Owner& o, Range r, LockType type) const {
  std::set<Owner> out;
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return out;
  const Bits bits = bits_of(r);
  for (const auto& [holder, held] : it->second) {
    if (rivals(holder, o) && in_way(held, bits, type)) out.insert(holder);
  }
  return out;
}

std::optional<LockType> LockModel::first_byte(Ino ino, const Owner& o) const {
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return std::nullopt;
  auto h = it->second.find(o);
  if (h == it->second.end()) return std::nullopt;
  if (h->second.read.test(0)) return LockType::kRead;
  if (h->second.write.test(0)) return LockType::kWrite;
  return std::nullopt;
}

std::string LockModel::conflict() const {
  for (const auto& [ino, holders] : inodes_) {
    for (const auto& [a, ha] : holders) {
      for (const auto& [b, hb] : holders) {
        if (rivals(a, b) && (ha.write & (hb.read | hb.write)).any()) {
          return "ino " + std::to_string(ino) + ": " + to_string(a) + " writes where " +
                 to_string(b) + " holds a lock";
        }
      }
    }
  }
  return {};
}

std::string LockModel::diff(Ino ino, const std::vector<HeldLock>& locks) const {
  Holders table;
  std::map<Owner, const HeldLock*> last;  // each owner's previous range (locks_of order)
  for (const HeldLock& l : locks) {
    const HeldLock*& prev = last[l.owner];
    if (prev != nullptr && prev->range.end >= l.range.start) {
      return "overlapping ranges of one owner: " + to_string(*prev) + ", " + to_string(l);
    }
    if (prev != nullptr && prev->type == l.type && prev->range.end + 1 == l.range.start) {
      return "unmerged ranges of one owner: " + to_string(*prev) + ", " + to_string(l);
    }
    if (l.range.end >= kModelBytes && l.range.end != Range::kEof) {
      return "a range past the model's bytes, not to EOF: " + to_string(l);
    }
    prev = &l;
    Held& h = table[l.owner];
    (l.type == LockType::kRead ? h.read : h.write) |= bits_of(l.range);
  }
  auto it = inodes_.find(ino);
  const Holders none;
  const Holders& model = it == inodes_.end() ? none : it->second;
  if (table == model) return {};
  std::string out = "ino " + std::to_string(ino) + ": table {";
  for (const auto& [o, h] : table) {
    out += " " + to_string(o) + " r=" + h.read.to_string() + " w=" + h.write.to_string();
  }
  out += " } model {";
  for (const auto& [o, h] : model) {
    out += " " + to_string(o) + " r=" + h.read.to_string() + " w=" + h.write.to_string();
  }
  return out + " }";
}

std::vector<Ino> LockModel::inodes() const {
  std::vector<Ino> out;
  for (const auto& [ino, holders] : inodes_) out.push_back(ino);
  return out;
}

}  // namespace dfs::locks::test
