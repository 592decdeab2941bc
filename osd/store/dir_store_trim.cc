// DirStore journal trimming: once enough journal records have been applied to their
// files, a background thread fdatasyncs those files and deletes the records in one
// synced batch. Until then replay at open re-applies them (idempotently).
#include "osd/store/dir_store.h"
#include "osd/store/rocks_status.h"
#include "osd/store/store_keys.h"

namespace dfs::osd {

namespace {
// Journaled bytes that trigger a trim regardless of the record count (bounds the
// memtable space and the replay time).
constexpr uint64_t kTrimBytes = 64 << 20;
}  // namespace

void DirStore::trim_loop() {
  std::unique_lock lock(trim_mu_);
  while (true) {
    trim_cv_.wait(lock, [this] { return stopping_ || trim_requested_; });
    if (stopping_) return;
    trim_requested_ = false;
    lock.unlock();
    ignore_error(trim_journal(), "a failure makes the store read-only; replay repairs it");
    lock.lock();
  }
}

void DirStore::maybe_request_trim() {
  if (pending_.record_count() < options_.journal_trim_records &&
      pending_.byte_count() < kTrimBytes) {
    return;
  }
  {
    std::lock_guard lock(trim_mu_);
    trim_requested_ = true;
  }
  trim_cv_.notify_one();
}

// Only the records in the snapshot are deleted: their writes happened before it was
// taken, so the syncs below make them durable. A record a concurrent apply deletes
// as stale is deleted twice, which is harmless.
Status DirStore::trim_journal() {
  if (read_only_.load()) return make_error(ErrorCode::kReadOnly, "not trimming");
  PendingJournal::Snapshot snapshot = pending_.snapshot();
  if (snapshot.empty()) return ok_status();
  rocksdb::WriteBatch batch;
  for (const auto& [fid, records] : snapshot) {
    Result<FileRef> file = files_.open(fid);
    if (file) {
      DFS_TRY_STATUS(sync_file(*file));
    } else if (file.error().code() != ErrorCode::kNotFound) {
      return go_read_only(std::move(file).error().with_context("while trimming the journal"));
    }  // else: removed since; its records are moot
    for (const PendingJournal::Record& r : records) {
      DFS_TRY_STATUS(rocks_status(batch.Delete(store_keys::journal_key(r.seq)), "batch"));
    }
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  rocksdb::Status s = db_->Write(wo, &batch);
  if (!s.ok()) return go_read_only(rocks_error(s, "while trimming the journal"));
  pending_.forget(snapshot);
  return ok_status();
}

}  // namespace dfs::osd
