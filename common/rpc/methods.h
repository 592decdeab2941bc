// Method ids of every RPC. Never reuse a number: old peers may still send it.
#pragma once

#include <cstdint>

namespace dfs::rpc {

enum Method : uint32_t {
  kHello = 1,

  kMonGetMap = 100,
  kMonSubscribe = 101,
  kMonMapUpdate = 102,  // one-way push, mon -> subscriber
  kMonCommand = 103,
  kMonOsdBeacon = 104,
  kMonFailureReport = 105,
  kMonStatus = 106,

  kOsdWrite = 200,
  kOsdRead = 201,
  kOsdStat = 202,
  kOsdList = 203,
  kOsdRepWrite = 204,
  kOsdStatFs = 205,
};

}  // namespace dfs::rpc
