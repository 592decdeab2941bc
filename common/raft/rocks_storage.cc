#include "common/raft/rocks_storage.h"

#include <spdlog/spdlog.h>

#include "common/raft/check.h"
#include "common/raft/log_bytes.h"

namespace dfs::raft {
namespace {

std::string encode_entry(const Entry& e) {
  std::string out;
  out.reserve(9 + e.data.size());
  put_u64(out, e.term);
  out.push_back(static_cast<char>(e.type));
  out += e.data;
  return out;
}

Unexpected corrupt(const std::string& what) {
  return make_error(ErrorCode::kCorruption, "raft log: " + what);
}

}  // namespace

RocksStorage::RocksStorage(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, std::string prefix,
                           ConfState initial)
    : MirroredStorage(std::move(initial)),
      db_(db),
      cf_(cf ? cf : db->DefaultColumnFamily()),
      prefix_(std::move(prefix)) {}

Result<std::unique_ptr<RocksStorage>> RocksStorage::open(rocksdb::DB* db, std::string prefix,
                                                         ConfState initial,
                                                         rocksdb::ColumnFamilyHandle* cf) {
  std::unique_ptr<RocksStorage> s(new RocksStorage(db, cf, std::move(prefix), std::move(initial)));
  Status loaded = s->load();
  if (!loaded) return loaded.error().with_context("opening raft log " + s->prefix_);
  return s;
}

std::string RocksStorage::key(char tag) const { return prefix_ + tag; }

std::string RocksStorage::entry_key(Index index) const {
  std::string k = key('e');
  put_u64(k, index);
  return k;
}

Status RocksStorage::load() {
  rocksdb::ReadOptions ro;
  std::string value;
  rocksdb::Status st = db_->Get(ro, cf_, key('s'), &value);
  if (st.IsNotFound()) {
    // A fresh group: persist the initial configuration with the first sync.
    put_snapshot_meta(mem_.snapshot().meta);
  } else if (!st.ok()) {
    return make_error(ErrorCode::kIoError, st.ToString());
  } else {
    Snapshot snap;
    size_t pos = 0;
    if (!get_u64(value, &pos, &snap.meta.index) || !get_u64(value, &pos, &snap.meta.term)) {
      return corrupt("short snapshot metadata");
    }
    for (uint64_t v; pos < value.size();) {
      if (!get_u64(value, &pos, &v)) return corrupt("snapshot voters");
      snap.meta.conf.voters.push_back(v);
    }
    if (snap.meta.index > 0) {
      st = db_->Get(ro, cf_, key('i'), &snap.data);
      if (!st.ok()) return make_error(ErrorCode::kIoError, "snapshot image: " + st.ToString());
      mem_.apply_snapshot(snap);
    } else {
      mem_ = MemStorage(snap.meta.conf);
    }
  }

  st = db_->Get(ro, cf_, key('h'), &value);
  if (st.ok()) {
    HardState hs;
    size_t pos = 0;
    if (!get_u64(value, &pos, &hs.term) || !get_u64(value, &pos, &hs.vote) ||
        !get_u64(value, &pos, &hs.commit)) {
      return corrupt("short hard state");
    }
    mem_.set_hard_state(hs);
  } else if (!st.IsNotFound()) {
    return make_error(ErrorCode::kIoError, st.ToString());
  }

  // Entries after the snapshot, which must be consecutive.
  std::string upper = key('e' + 1);
  rocksdb::Slice upper_slice(upper);
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_));
  std::vector<Entry> log;
  for (it->Seek(entry_key(mem_.first_index())); it->Valid(); it->Next()) {
    std::string_view k(it->key().data(), it->key().size());
    std::string_view v(it->value().data(), it->value().size());
    Entry e;
    size_t pos = prefix_.size() + 1;
    size_t vpos = 0;
    if (k.size() != pos + 8 || !get_u64(k, &pos, &e.index) || !get_u64(v, &vpos, &e.term) ||
        vpos >= v.size() ||
        static_cast<uint8_t>(v[vpos]) > static_cast<uint8_t>(EntryType::kConfChange)) {
      return corrupt("undecodable entry");
    }
    e.type = static_cast<EntryType>(v[vpos]);
    e.data.assign(v.substr(vpos + 1));
    if (e.index != mem_.first_index() + log.size()) {
      return corrupt("gap before entry " + std::to_string(e.index));
    }
    log.push_back(std::move(e));
  }
  if (!it->status().ok()) return make_error(ErrorCode::kIoError, it->status().ToString());
  mem_.append(log);
  if (mem_.hard_state().commit > mem_.last_index()) {
    return corrupt("commit index beyond the last entry");
  }
  return ok_status();
}

void RocksStorage::put_snapshot_meta(const SnapshotMeta& meta) {
  std::string v;
  put_u64(v, meta.index);
  put_u64(v, meta.term);
  for (NodeId id : meta.conf.voters) put_u64(v, id);
  batch_.Put(cf_, key('s'), v);
}

void RocksStorage::set_hard_state(const HardState& hs) {
  mem_.set_hard_state(hs);
  std::string v;
  put_u64(v, hs.term);
  put_u64(v, hs.vote);
  put_u64(v, hs.commit);
  batch_.Put(cf_, key('h'), v);
}

void RocksStorage::append(const std::vector<Entry>& entries) {
  if (entries.empty()) return;
  Index old_last = mem_.last_index();
  mem_.append(entries);  // checks the preconditions
  // A conflicting suffix beyond the new last entry goes; the rest is overwritten.
  if (old_last > mem_.last_index()) {
    batch_.DeleteRange(cf_, entry_key(mem_.last_index() + 1), entry_key(old_last + 1));
  }
  for (const Entry& e : entries) batch_.Put(cf_, entry_key(e.index), encode_entry(e));
}

void RocksStorage::apply_snapshot(const Snapshot& snap) {
  Index old_first = mem_.first_index();
  Index old_last = mem_.last_index();
  mem_.apply_snapshot(snap);  // keeps the entries after it, or drops the whole log
  // Entries up to the snapshot are gone either way; after it only if the log was dropped.
  Index drop_to = mem_.last_index() > snap.meta.index ? snap.meta.index : old_last;
  if (drop_to >= old_first) {
    batch_.DeleteRange(cf_, entry_key(old_first), entry_key(drop_to + 1));
  }
  put_snapshot_meta(snap.meta);
  batch_.Put(cf_, key('i'), snap.data);
}

Status RocksStorage::sync() {
  if (failed_) return *failed_;
  if (batch_.Count() == 0) return ok_status();
  rocksdb::WriteOptions wo;
  wo.sync = true;
  rocksdb::Status st = db_->Write(wo, &batch_);
  if (!st.ok()) {
    failed_ = Error(ErrorCode::kIoError, "raft log sync failed: " + st.ToString());
    spdlog::error("{} ({})", failed_->to_string(), prefix_);
    return *failed_;
  }
  batch_.Clear();
  ++syncs_;
  return ok_status();
}

}  // namespace dfs::raft
