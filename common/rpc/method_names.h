// Names of the RPC methods for people and metrics: kOsdWrite is "osd_write".
#pragma once

#include <cstdint>
#include <string>

namespace dfs::rpc {

// The method's name, or "method_<n>" for a number this build does not know.
std::string method_name(uint32_t method);

}  // namespace dfs::rpc
