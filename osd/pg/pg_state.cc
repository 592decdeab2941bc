#include "osd/pg/pg_state.h"

namespace dfs::osd {
namespace {

void put_be(std::string& out, uint64_t v, int bytes) {
  for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8) out.push_back(char(v >> shift));
}

uint64_t get_be(const std::string& in) {
  uint64_t v = 0;
  for (unsigned char c : in) v = (v << 8) | c;
  return v;
}

}  // namespace

std::string pg_log_prefix(uint32_t pool, uint32_t pg) {
  std::string key = "pglog/";
  put_be(key, pool, 4);
  put_be(key, pg, 4);
  return key;
}

std::string pg_log_key(uint32_t pool, uint32_t pg, uint64_t seq) {
  std::string key = pg_log_prefix(pool, pg);
  put_be(key, seq, 8);
  return key;
}

std::string pg_info_key(uint32_t pool, uint32_t pg) {
  std::string key = "pginfo/";
  put_be(key, pool, 4);
  put_be(key, pg, 4);
  return key;
}

std::string pg_update_key(uint32_t pool, uint32_t pg) {
  std::string key = "pgupd/";
  put_be(key, pool, 4);
  put_be(key, pg, 4);
  return key;
}

bool version_less(const proto::Version& a, const proto::Version& b) {
  return a.epoch() != b.epoch() ? a.epoch() < b.epoch() : a.seq() < b.seq();
}

std::string request_key(const proto::RequestId& reqid) {
  return reqid.client() + "#" + std::to_string(reqid.seq());
}

Result<PgState> PgState::load(ObjectStore& store, uint32_t pool, uint32_t pg) {
  PgState state;
  auto info = DFS_TRY(store.get_meta(pg_info_key(pool, pg)));
  if (info) state.last_seq_ = get_be(*info);
  if (auto update = DFS_TRY(store.get_meta(pg_update_key(pool, pg))); update && update->size() == 16) {
    proto::Version v;
    v.set_epoch(get_be(update->substr(0, 8)));
    v.set_seq(get_be(update->substr(8)));
    state.observe(v);
  }
  auto entries = DFS_TRY(store.scan_meta(pg_log_prefix(pool, pg)));
  for (const auto& [key, value] : entries) {
    proto::PgLogEntry entry;
    if (!entry.ParseFromString(value)) {
      return make_error(ErrorCode::kCorruption, "undecodable PG log entry in pg " +
                                                    std::to_string(pool) + "." + std::to_string(pg));
    }
    state.observe(entry.version());
    if (entry.has_reqid()) state.remember(entry.reqid(), entry.version());
  }
  return state;
}

void PgState::observe(const proto::Version& version) {
  observe_seq(version.seq());
  if (version_less(last_update_, version)) last_update_ = version;
}

void PgState::activate_to(Transaction& txn, uint32_t pool, uint32_t pg,
                          const proto::Version& version) {
  observe(version);
  std::string value;
  put_be(value, last_update_.epoch(), 8);
  put_be(value, last_update_.seq(), 8);
  txn.put_meta(pg_update_key(pool, pg), value);
  std::string info;
  put_be(info, last_seq_, 8);
  txn.put_meta(pg_info_key(pool, pg), info);
}

std::optional<proto::Version> PgState::find(const proto::RequestId& reqid) const {
  auto it = recent_.find(request_key(reqid));
  if (it == recent_.end()) return std::nullopt;
  return it->second;
}

void PgState::remember(const proto::RequestId& reqid, const proto::Version& version) {
  std::string key = request_key(reqid);
  if (recent_.emplace(key, version).second) order_.push_back(key);
  while (order_.size() > kLogEntriesKept) {
    recent_.erase(order_.front());
    order_.pop_front();
  }
}

void PgState::log_to(Transaction& txn, uint32_t pool, uint32_t pg,
                     const proto::PgLogEntry& entry) const {
  uint64_t seq = entry.version().seq();
  txn.put_meta(pg_log_key(pool, pg, seq), entry.SerializeAsString());
  std::string info;
  put_be(info, seq, 8);
  txn.put_meta(pg_info_key(pool, pg), info);
  if (seq > kLogEntriesKept) txn.delete_meta(pg_log_key(pool, pg, seq - kLogEntriesKept));
}

}  // namespace dfs::osd
