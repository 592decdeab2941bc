#include "mds/ops/meta_view.h"

#include "common/proto/stable_bytes.h"

namespace dfs::mds {

Result<std::optional<proto::Inode>> find_inode(const KvReader& kv, uint64_t ino) {
  auto raw = DFS_TRY(kv.get(inode_key(ino)));
  if (!raw) return std::optional<proto::Inode>();
  proto::Inode inode;
  if (!inode.ParseFromString(*raw)) {
    return make_error(ErrorCode::kCorruption, "undecodable inode " + std::to_string(ino));
  }
  return std::optional<proto::Inode>(std::move(inode));
}

Result<proto::Inode> load_inode(const KvReader& kv, uint64_t ino, ErrorCode missing) {
  auto inode = DFS_TRY(find_inode(kv, ino));
  if (!inode) return make_error(missing, "no inode " + std::to_string(ino));
  return std::move(*inode);
}

Result<std::string> take_inline_data(const KvReader& kv, proto::Inode& inode) {
  std::string in_record = std::move(*inode.mutable_inline_data());
  inode.clear_inline_data();
  if (!inode.inline_()) return std::string();
  auto data = DFS_TRY(kv.get(inline_data_key(inode.ino())));
  if (data) return std::move(*data);
  return in_record;  // the earlier layout: inside the inode record
}

namespace {

Result<Dentry> decode_dentry(const KeyValue& kv) {
  auto key = DFS_TRY(decode_dentry_key(kv.key));
  auto value = DFS_TRY(decode_dentry_value(kv.value));
  return Dentry{key.parent, key.slot, std::move(key.name), value.ino, value.type};
}

// Every entry of `name`'s bucket (normally zero or one).
Result<std::vector<KeyValue>> bucket_entries(const KvReader& kv, uint64_t parent,
                                             std::string_view name) {
  uint64_t bucket = name_bucket(name);
  return kv.scan(dentry_slot_key(parent, bucket * kSlotsPerBucket),
                 dentry_slot_key(parent, (bucket + 1) * kSlotsPerBucket), kSlotsPerBucket);
}

}  // namespace

Result<std::optional<Dentry>> find_dentry(const KvReader& kv, uint64_t parent,
                                          std::string_view name) {
  auto entries = DFS_TRY(bucket_entries(kv, parent, name));
  for (const auto& e : entries) {
    auto dentry = DFS_TRY(decode_dentry(e));
    if (dentry.name == name) return std::optional<Dentry>(std::move(dentry));
  }
  return std::optional<Dentry>();
}

Result<std::vector<Dentry>> list_dentries(const KvReader& kv, uint64_t dir, uint64_t after,
                                          size_t limit) {
  uint64_t from = after < kFirstSlot ? kFirstSlot : after + 1;
  auto raw = DFS_TRY(kv.scan(dentry_slot_key(dir, from), prefix_end(dentry_prefix(dir)), limit));
  std::vector<Dentry> out;
  out.reserve(raw.size());
  for (const auto& e : raw) out.push_back(DFS_TRY(decode_dentry(e)));
  return out;
}

Result<bool> dir_is_empty(const KvReader& kv, uint64_t dir) {
  auto first = DFS_TRY(kv.scan(dentry_prefix(dir), prefix_end(dentry_prefix(dir)), 1));
  return first.empty();
}

Result<uint64_t> read_counter(const KvReader& kv, std::string_view name) {
  auto raw = DFS_TRY(kv.get(meta_key(name)));
  if (!raw) return uint64_t{0};
  if (raw->size() != 8) {
    return make_error(ErrorCode::kCorruption, "malformed counter " + std::string(name));
  }
  return get_be64(*raw);
}

void MetaWriter::put_inode(const proto::Inode& inode) {
  if (inode.inline_data().empty()) {
    txn_.put(inode_key(inode.ino()), proto::stable_bytes(inode));
    return;
  }
  // Data in the record: a reply's copy, or a record of the earlier layout, whose data
  // moves to its own key here so that it is not lost with the record's rewrite.
  proto::Inode record = inode;
  std::string data = std::move(*record.mutable_inline_data());
  record.clear_inline_data();
  txn_.put(inode_key(inode.ino()), proto::stable_bytes(record));
  put_inline_data(inode.ino(), data);
}

void MetaWriter::put_inline_data(uint64_t ino, const std::string& data) {
  if (data.empty()) {
    txn_.del(inline_data_key(ino));
  } else {
    txn_.put(inline_data_key(ino), data);
  }
}

void MetaWriter::delete_inode(uint64_t ino) {
  txn_.del(inode_key(ino));
  txn_.del(inline_data_key(ino));
}

Result<uint64_t> MetaWriter::add_dentry(uint64_t parent, std::string_view name, uint64_t ino,
                                        uint32_t type) {
  auto entries = DFS_TRY(bucket_entries(txn_, parent, name));
  uint64_t bucket = name_bucket(name);
  // Slots of the bucket in use, in order: take the first gap.
  uint64_t slot = bucket * kSlotsPerBucket;
  for (const auto& e : entries) {
    auto key = DFS_TRY(decode_dentry_key(e.key));
    if (key.slot != slot) break;
    ++slot;
  }
  if (slot >= (bucket + 1) * kSlotsPerBucket) {
    return make_error(ErrorCode::kNoSpace,
                      "too many names share the hash bucket of '" + std::string(name) + "'");
  }
  txn_.put(dentry_key(parent, slot, name), encode_dentry_value({ino, type}));
  return slot;
}

void MetaWriter::remove_dentry(const Dentry& dentry) {
  txn_.del(dentry_key(dentry.parent, dentry.slot, dentry.name));
}

void MetaWriter::repoint_dentry(const Dentry& dentry, uint64_t ino, uint32_t type) {
  txn_.put(dentry_key(dentry.parent, dentry.slot, dentry.name), encode_dentry_value({ino, type}));
}

void MetaWriter::set_counter(std::string_view name, uint64_t value) {
  std::string raw;
  put_be64(raw, value);
  txn_.put(meta_key(name), std::move(raw));
}

Status MetaWriter::add_to_counter(std::string_view name, int64_t delta) {
  auto value = DFS_TRY(read_counter(txn_, name));
  set_counter(name, value + static_cast<uint64_t>(delta));
  return ok_status();
}

}  // namespace dfs::mds
