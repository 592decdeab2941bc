#include "osd/store/pending_journal.h"

namespace dfs::osd {

void PendingJournal::add(uint64_t fid, uint64_t seq, uint64_t bytes) {
  std::lock_guard lock(mu_);
  by_fid_[fid].push_back({seq, bytes});
  records_ += 1;
  bytes_ += bytes;
}

std::vector<uint64_t> PendingJournal::seqs_of(uint64_t fid) const {
  std::lock_guard lock(mu_);
  std::vector<uint64_t> out;
  auto it = by_fid_.find(fid);
  if (it == by_fid_.end()) return out;
  for (const Record& r : it->second) out.push_back(r.seq);
  return out;
}

void PendingJournal::forget(uint64_t fid, uint64_t last_seq) {
  std::lock_guard lock(mu_);
  auto it = by_fid_.find(fid);
  if (it == by_fid_.end()) return;
  // Sequence numbers grow per file, so the forgotten records are a prefix.
  std::vector<Record>& records = it->second;
  size_t n = 0;
  while (n < records.size() && records[n].seq <= last_seq) {
    records_ -= 1;
    bytes_ -= records[n].bytes;
    ++n;
  }
  records.erase(records.begin(), records.begin() + static_cast<ptrdiff_t>(n));
  if (records.empty()) by_fid_.erase(it);
}

PendingJournal::Snapshot PendingJournal::snapshot() const {
  std::lock_guard lock(mu_);
  return Snapshot(by_fid_.begin(), by_fid_.end());
}

void PendingJournal::forget(const Snapshot& snapshot) {
  for (const auto& [fid, records] : snapshot) forget(fid, records.back().seq);
}

uint64_t PendingJournal::record_count() const {
  std::lock_guard lock(mu_);
  return records_;
}

uint64_t PendingJournal::byte_count() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

}  // namespace dfs::osd
