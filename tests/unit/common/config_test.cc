#include <doctest/doctest.h>

#include "common/config/config.h"

namespace dfs {

TEST_CASE("common/config: sections fall back to type and global") {
  auto config = Config::parse(R"(
# comment
[global]
fsid = abc
mon addrs = 10.0.0.1:6789, 10.0.0.2:6789
weight = 2
[osd]
weight = 3
[osd.1]
weight = 4.5
data = /srv/osd1
)", "test.conf");
  REQUIRE(config);
  CHECK(config->get_or("osd.1", "fsid", "") == "abc");
  CHECK(*config->get_double("osd.1", "weight", 0) == doctest::Approx(4.5));
  CHECK(*config->get_double("osd.2", "weight", 0) == doctest::Approx(3));
  CHECK(*config->get_double("mon.a", "weight", 0) == doctest::Approx(2));
  CHECK(split_list(config->get_or("global", "mon_addrs", "")) ==
        std::vector<std::string>{"10.0.0.1:6789", "10.0.0.2:6789"});
  CHECK(config->sections_of_type("osd") == std::vector<std::string>{"osd.1"});
  CHECK_FALSE(config->get("osd.1", "missing"));
}

TEST_CASE("common/config: errors name the file and line") {
  auto bad = Config::parse("[global]\nno equals sign\n", "x.conf");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().context().find("x.conf:2") != std::string::npos);
  auto config = Config::parse("[osd.0]\nweight = heavy\n", "y.conf");
  REQUIRE(config);
  CHECK_FALSE(config->get_double("osd.0", "weight", 1));
  CHECK_FALSE(config->get_int("osd.0", "weight", 1));
  auto missing = Config::load_file("/nonexistent/dfs.conf");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code() == ErrorCode::kNotFound);
}

}  // namespace dfs
