#include "osd/store/op_checks.h"

#include <string>

namespace dfs::osd {

Status check_op_bounds(const Transaction::Op& op) {
  using OpType = Transaction::OpType;
  bool too_far = false;
  if (op.type == OpType::kWrite) {
    too_far = op.offset > kMaxObjectBytes || op.data.size() > kMaxObjectBytes - op.offset;
  } else if (op.type == OpType::kTruncate) {
    too_far = op.offset > kMaxObjectBytes;
  }
  if (!too_far) return ok_status();
  return make_error(ErrorCode::kInvalidArgument,
                    "object op reaches past the maximum object size (" +
                        std::to_string(kMaxObjectBytes) + " bytes): " + op.key.name);
}

Unexpected missing_object_error(const ObjectKey& key) {
  return make_error(ErrorCode::kInvalidArgument,
                    "set_version on an object that does not exist: " + key.name);
}

bool is_object_op(const Transaction::Op& op) {
  return op.type != Transaction::OpType::kPutMeta && op.type != Transaction::OpType::kDeleteMeta;
}

}  // namespace dfs::osd
