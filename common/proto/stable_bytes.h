// Protobuf serialization with a fixed byte order. Plain SerializeAsString writes a
// map field (Inode.xattrs) in hash-table order, which differs between processes and
// even between two maps of one process; what the MDS stores or remembers must be the
// same bytes on every replica, so it is written with sorted map keys.
#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message_lite.h>

#include <string>

namespace dfs::proto {

inline std::string stable_bytes(const google::protobuf::MessageLite& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }  // the coded stream flushes into out when it goes
  return out;
}

}  // namespace dfs::proto
