// Validation shared by both ObjectStore backends, so that they reject the same
// transactions with the same codes before applying anything.
#pragma once

#include "common/status/status.h"
#include "osd/store/object_store.h"

namespace dfs::osd {

// kInvalidArgument when a write or truncate reaches past kMaxObjectBytes.
Status check_op_bounds(const Transaction::Op& op);

// kInvalidArgument: set_version on an object that does not exist at that point.
Unexpected missing_object_error(const ObjectKey& key);

// True for the ops that name an object (every op but put_meta and delete_meta).
bool is_object_op(const Transaction::Op& op);

}  // namespace dfs::osd
