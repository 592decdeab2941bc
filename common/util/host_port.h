// "HOST:PORT" addresses as the config and the maps write them: "10.0.0.2:6800",
// "dfs1:6800", "[fd00::1]:6800". One parser for every place that takes one apart.
#pragma once

#include <cstdint>
#include <string>

#include "common/status/status.h"

namespace dfs {

struct HostPort {
  std::string host;  // as written, brackets of an IPv6 address included
  uint16_t port = 0;
};

// Errors: kInvalidArgument when there is no ":PORT" or the port is not 0..65535.
inline Result<HostPort> split_host_port(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size() ||
      address.find(']', colon) != std::string::npos) {
    return make_error(ErrorCode::kInvalidArgument, "address '" + address + "' lacks :port");
  }
  std::string port_text = address.substr(colon + 1);
  if (port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port_text) > 65535) {
    return make_error(ErrorCode::kInvalidArgument, "bad port in address '" + address + "'");
  }
  return HostPort{address.substr(0, colon), static_cast<uint16_t>(std::stoul(port_text))};
}

}  // namespace dfs
