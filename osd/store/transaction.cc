// Transaction: the builder half of object_store.h. Ops are recorded as given; the
// backends validate them when applying.
#include "osd/store/object_store.h"

namespace dfs::osd {

namespace {

Transaction::Op object_op(Transaction::OpType type, ObjectKey key) {
  Transaction::Op op;
  op.type = type;
  op.key = std::move(key);
  return op;
}

Transaction::Op meta_op(Transaction::OpType type, std::string meta_key) {
  Transaction::Op op;
  op.type = type;
  op.meta_key = std::move(meta_key);
  return op;
}

}  // namespace

void Transaction::write(ObjectKey key, uint64_t offset, std::string data) {
  Op& op = ops_.emplace_back(object_op(OpType::kWrite, std::move(key)));
  op.offset = offset;
  op.data = std::move(data);
}

void Transaction::truncate(ObjectKey key, uint64_t size) {
  ops_.emplace_back(object_op(OpType::kTruncate, std::move(key))).offset = size;
}

void Transaction::remove(ObjectKey key) {
  ops_.emplace_back(object_op(OpType::kRemove, std::move(key)));
}

void Transaction::set_version(ObjectKey key, ObjectVersion version) {
  ops_.emplace_back(object_op(OpType::kSetVersion, std::move(key))).version = version;
}

void Transaction::put_meta(std::string key, std::string value) {
  ops_.emplace_back(meta_op(OpType::kPutMeta, std::move(key))).data = std::move(value);
}

void Transaction::delete_meta(std::string key) {
  ops_.emplace_back(meta_op(OpType::kDeleteMeta, std::move(key)));
}

}  // namespace dfs::osd
