#include "common/util/host_port.h"

#include <doctest/doctest.h>

namespace dfs {

TEST_CASE("common/host_port: names, IPv4 and bracketed IPv6 with their ports") {
  auto v4 = split_host_port("10.0.0.2:6800");
  REQUIRE(v4);
  CHECK(v4->host == "10.0.0.2");
  CHECK(v4->port == 6800);
  auto name = split_host_port("dfs1:0");
  REQUIRE(name);
  CHECK(name->host == "dfs1");
  CHECK(name->port == 0);
  auto v6 = split_host_port("[fd00::1]:6789");
  REQUIRE(v6);
  CHECK(v6->host == "[fd00::1]");
  CHECK(v6->port == 6789);
}

TEST_CASE("common/host_port: a missing or bad port is refused with the address named") {
  for (const char* bad : {"dfs1", "dfs1:", "[fd00::1]", "dfs1:65536", "dfs1:12x", "dfs1:-1",
                          "dfs1:123456"}) {
    INFO(bad);
    auto r = split_host_port(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == ErrorCode::kInvalidArgument);
    CHECK(r.error().to_string().find(std::string("'") + bad + "'") != std::string::npos);
  }
}

}  // namespace dfs
