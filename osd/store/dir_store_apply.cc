// DirStore::apply: plan every object, write what can be written before the commit
// (new files, appends past the committed size), commit one RocksDB batch with sync,
// then apply journal records and unlink dropped files. The ordering argument is in
// osd/store/FORMAT.md ("Crash consistency").
#include <sys/statvfs.h>

#include <cerrno>

#include "osd/store/dir_store.h"
#include "osd/store/journal_record.h"
#include "osd/store/op_checks.h"
#include "osd/store/posix_io.h"
#include "osd/store/rocks_status.h"
#include "osd/store/store_keys.h"

namespace dfs::osd {

Status DirStore::apply(Transaction txn) {
  if (txn.empty()) return ok_status();
  if (read_only_.load()) {
    return make_error(ErrorCode::kReadOnly, "an earlier sync or commit failed; reopen the store");
  }
  std::map<ObjectKey, OpList> groups;
  OpList meta_ops;
  uint64_t data_bytes = 0;
  for (const Transaction::Op& op : txn.ops()) {
    data_bytes += op.data.size() + op.meta_key.size() + op.key.name.size();
    if (is_object_op(op)) {
      groups[op.key].push_back(&op);
    } else {
      meta_ops.push_back(&op);
    }
  }
  DFS_TRY_STATUS(check_space(data_bytes));
  std::vector<ObjectKey> keys;
  for (const auto& [key, ops] : groups) keys.push_back(key);
  auto held = locks_.lock_exclusive(keys);

  std::vector<ObjectWork> works = DFS_TRY(plan_objects(groups));
  rocksdb::WriteBatch batch;
  Status prepared = prepare_files(works);
  if (prepared) prepared = fill_batch(works, meta_ops, batch);
  if (!prepared) {
    discard_new_files(works);
    return prepared;
  }
  DFS_TRY_STATUS(commit(batch));
  Status finished = finish(works);
  held.clear();
  maybe_request_trim();
  return finished;
}

Status DirStore::check_space(uint64_t data_bytes) const {
  struct statvfs fs {};
  if (::statvfs(options_.path.c_str(), &fs) != 0) return errno_error(errno, "statvfs");
  uint64_t available = uint64_t{fs.f_bavail} * fs.f_frsize;
  // Deferred data is written twice (journal, then file) until the journal is trimmed.
  if (available >= 2 * data_bytes + options_.reserve_bytes) return ok_status();
  return make_error(ErrorCode::kNoSpace, "file system of " + options_.path + " has " +
                                             std::to_string(available) + " bytes free");
}

Result<std::vector<DirStore::ObjectWork>> DirStore::plan_objects(
    const std::map<ObjectKey, OpList>& groups) {
  std::vector<ObjectWork> works;
  works.reserve(groups.size());
  for (const auto& [key, ops] : groups) {
    ObjectWork& w = works.emplace_back();
    w.key = key;
    w.before = DFS_TRY(load_onode(key));
    BlockReader reader = [this, &w](uint64_t block) { return read_blocks(*w.before, block, 1); };
    PlanInput input{.before = w.before,
                    .ops = ops,
                    .block_bytes = block_bytes_,
                    .deferred_max_bytes = options_.deferred_max_bytes,
                    .read_base_block = std::move(reader)};
    Result<ObjectPlan> plan = plan_object(input);
    if (!plan) return std::move(plan).error().with_context("while planning " + key.name);
    w.plan = std::move(plan).value();
  }
  return works;
}

Status DirStore::prepare_files(std::vector<ObjectWork>& works) {
  for (ObjectWork& w : works) {
    Status st = prepare_one(w);
    if (st) continue;
    // A failed write or open may have left the file in an unknown state; only "no
    // space" is known to be harmless (nothing committed, bytes past the size unseen).
    if (st.error().code() == ErrorCode::kIoError) return go_read_only(std::move(st).error());
    return st;
  }
  return ok_status();
}

// Before the commit: take new files, run fresh and direct ops (on bytes no committed
// onode exposes) and sync them, and collect the journal records the commit deletes.
Status DirStore::prepare_one(ObjectWork& w) {
  ObjectPlan& plan = w.plan;
  if (plan.new_file) {
    auto [fid, file] = DFS_TRY(pool_.take());
    plan.after->fid = fid;
    w.target = file;
    files_.insert(fid, std::move(file));
  } else if (plan.mode == WriteMode::kDirect || plan.mode == WriteMode::kJournal) {
    w.target = DFS_TRY(open_data_file(plan.after->fid));
  }
  if (plan.mode == WriteMode::kFresh || plan.mode == WriteMode::kDirect) {
    DFS_TRY_STATUS(apply_file_ops(w.target->fd(), plan.start_size, plan.ops));
    DFS_TRY_STATUS(sync_file(w.target));
    // The bytes are durable; keeping them cached would make every replica's copy of a
    // large write compete for page-cache memory (the OSD's own cache is not the
    // client's read cache). Advisory: a failure changes nothing.
    ignore_error(drop_cached_pages(w.target->fd(), plan.ops), "advisory only");
  }
  // That sync also covers the earlier journaled writes to the file (they ran under
  // this object's lock), so their records can go. A dropped file's records are moot.
  if (plan.mode == WriteMode::kDirect) w.stale_fid = plan.after->fid;
  if (plan.drop_old_file) w.stale_fid = w.before->fid;
  if (w.stale_fid != 0) w.stale_seqs = pending_.seqs_of(w.stale_fid);
  return ok_status();
}

void DirStore::discard_new_files(std::vector<ObjectWork>& works) {
  for (ObjectWork& w : works) {
    if (!w.plan.new_file || !w.target) continue;
    ignore_error(files_.remove(w.plan.after->fid), "an orphan is deleted at the next open");
  }
}

Status DirStore::fill_batch(std::vector<ObjectWork>& works, const OpList& meta_ops,
                            rocksdb::WriteBatch& batch) {
  for (ObjectWork& w : works) {
    std::string key = store_keys::onode_key(w.key);
    if (w.plan.after) {
      DFS_TRY_STATUS(rocks_status(batch.Put(key, encode_onode(*w.plan.after)), "batch"));
    } else if (w.before) {
      DFS_TRY_STATUS(rocks_status(batch.Delete(key), "batch"));
    }
    if (w.plan.mode == WriteMode::kJournal) {
      w.seq = next_seq_.fetch_add(1);
      DFS_TRY_STATUS(
          put_journal_record(batch, w.seq, w.plan.after->fid, w.plan.start_size, w.plan.ops));
    }
    for (uint64_t seq : w.stale_seqs) {
      DFS_TRY_STATUS(rocks_status(batch.Delete(store_keys::journal_key(seq)), "batch"));
    }
  }
  for (const Transaction::Op* op : meta_ops) {
    std::string key = store_keys::meta_key(op->meta_key);
    rocksdb::Status s =
        op->type == Transaction::OpType::kPutMeta ? batch.Put(key, op->data) : batch.Delete(key);
    DFS_TRY_STATUS(rocks_status(s, "batch"));
  }
  return ok_status();
}

Status DirStore::commit(rocksdb::WriteBatch& batch) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  rocksdb::Status s = db_->Write(wo, &batch);
  if (s.ok()) return ok_status();
  // The outcome is unknown (the WAL may hold it), so new files are kept for recovery.
  return go_read_only(rocks_error(s, "while committing a transaction"));
}

Status DirStore::finish(std::vector<ObjectWork>& works) {
  Status first_error;
  for (ObjectWork& w : works) {
    Status st = finish_one(w);
    if (!st && first_error) first_error = std::move(st);
  }
  return first_error;
}

// After the commit: run journaled ops on the file, forget obsolete records, unlink the
// files no onode references any more, count objects.
Status DirStore::finish_one(ObjectWork& w) {
  bool skip_io = hook(&DirStoreTestHooks::skip_post_commit_io);
  const ObjectPlan& plan = w.plan;
  if (!w.stale_seqs.empty()) pending_.forget(w.stale_fid, w.stale_seqs.back());
  if (plan.drop_old_file && !skip_io) {
    ignore_error(files_.remove(w.before->fid), "an orphan is deleted at the next open");
  }
  if (w.before.has_value() != plan.after.has_value()) {
    if (plan.after)
      object_count_.fetch_add(1);
    else
      object_count_.fetch_sub(1);
  }
  if (plan.mode != WriteMode::kJournal || skip_io) return ok_status();
  Status st = apply_file_ops(w.target->fd(), plan.start_size, plan.ops);
  if (!st) {
    return go_read_only(std::move(st).error().with_context(
        "while applying a committed journal record (replayed at the next open)"));
  }
  pending_.add(plan.after->fid, w.seq, write_bytes(plan.ops) + 1);
  return ok_status();
}

}  // namespace dfs::osd
