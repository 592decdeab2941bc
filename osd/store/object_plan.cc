#include "osd/store/object_plan.h"

#include <algorithm>

#include "osd/store/op_checks.h"

namespace dfs::osd {

namespace {

// The object as the transaction's ops leave it. `reset` means the content no longer
// depends on the committed content: `tail` starts from an empty object.
struct Logical {
  bool exists = false;
  bool reset = false;
  uint64_t size = 0;
  ObjectVersion version;
  std::vector<FileOp> tail;
};

void start_over(Logical& s, bool keep_version) {
  if (!keep_version) s.version = {};
  s.exists = true;
  s.reset = true;
  s.size = 0;
  s.tail.clear();
}

Status step(Logical& s, const Transaction::Op& op) {
  using OpType = Transaction::OpType;
  DFS_TRY_STATUS(check_op_bounds(op));
  switch (op.type) {
    case OpType::kRemove:
      s = Logical();
      s.reset = true;
      return ok_status();
    case OpType::kWrite:
      // A write covering the whole object replaces it: no old byte survives.
      if (!s.exists) start_over(s, false);
      if (op.offset == 0 && op.data.size() >= s.size && s.size > 0) start_over(s, true);
      s.tail.push_back({FileOp::Kind::kWrite, op.offset, op.data});
      s.size = std::max(s.size, op.offset + op.data.size());
      return ok_status();
    case OpType::kTruncate:
      if (!s.exists) start_over(s, false);
      if (op.offset == 0 && s.size > 0) {
        start_over(s, true);
        return ok_status();
      }
      s.tail.push_back({FileOp::Kind::kTruncate, op.offset, {}});
      s.size = op.offset;
      return ok_status();
    case OpType::kSetVersion:
      if (!s.exists) return missing_object_error(op.key);
      s.version = op.version;
      return ok_status();
    default:
      return make_error(ErrorCode::kInternal, "meta op planned as an object op");
  }
}

// True when every op only touches bytes at or past `committed`, which no reader can see
// until the commit publishes the new size.
bool beyond(std::span<const FileOp> ops, uint64_t committed) {
  return std::all_of(ops.begin(), ops.end(),
                     [&](const FileOp& op) { return op.offset >= committed; });
}

void choose_mode(const PlanInput& in, const Logical& s, ObjectPlan& plan) {
  const std::optional<Onode>& before = in.before;
  bool big = write_bytes(s.tail) > in.deferred_max_bytes;
  if (s.reset) {
    plan.start_size = 0;
    if (big || !before) {
      plan.mode = big ? WriteMode::kFresh : WriteMode::kJournal;
      plan.new_file = true;
      plan.drop_old_file = big && before.has_value();
    } else {
      plan.mode = WriteMode::kJournal;
      plan.after->fid = before->fid;
    }
    return;
  }
  plan.after->fid = before->fid;
  plan.start_size = before->size;
  if (s.tail.empty()) {
    plan.mode = WriteMode::kNone;
  } else if (big && beyond(s.tail, before->size)) {
    plan.mode = WriteMode::kDirect;
  } else {
    plan.mode = WriteMode::kJournal;
  }
}

}  // namespace

Result<ObjectPlan> plan_object(const PlanInput& in) {
  Logical s;
  if (in.before) {
    s.exists = true;
    s.size = in.before->size;
    s.version = in.before->version;
  }
  for (const Transaction::Op* op : in.ops) DFS_TRY_STATUS(step(s, *op));

  ObjectPlan plan;
  if (!s.exists) {
    plan.drop_old_file = in.before.has_value();
    return plan;
  }
  ChecksumInput sums;
  sums.block_bytes = in.block_bytes;
  sums.ops = s.tail;
  if (!s.reset) {
    sums.base_size = in.before->size;
    sums.base_crcs = in.before->crcs;
    sums.read_base_block = in.read_base_block;
  }
  plan.after.emplace();
  plan.after->size = s.size;
  plan.after->version = s.version;
  plan.after->crcs = DFS_TRY(plan_checksums(sums));
  choose_mode(in, s, plan);
  plan.ops = std::move(s.tail);
  return plan;
}

}  // namespace dfs::osd
