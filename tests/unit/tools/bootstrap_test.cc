// dfs bootstrap's files: the host list, the config that every daemon and the client
// read, and the keyring.
#include <doctest/doctest.h>

#include <set>

#include "common/config/config.h"
#include "tools/dfs/bootstrap.h"

namespace dfs::cli {
namespace {

std::string counting_key() {
  static int n = 0;
  return "key" + std::to_string(++n);
}

BootstrapPlan three_hosts() {
  BootstrapPlan plan;
  plan.hosts = *parse_bootstrap_hosts("dfs1=10.0.0.1, dfs2=10.0.0.2,dfs3");
  plan.fsid = "1234";
  plan.osds_per_host = 2;
  return plan;
}

TEST_CASE("bootstrap host lists: names with and without addresses") {
  auto hosts = parse_bootstrap_hosts("dfs1=10.0.0.1, dfs2=10.0.0.2,dfs3");
  REQUIRE(hosts);
  REQUIRE(hosts->size() == 3);
  CHECK((*hosts)[0].name == "dfs1");
  CHECK((*hosts)[0].addr == "10.0.0.1");
  CHECK((*hosts)[2].addr == "dfs3");
  CHECK(parse_bootstrap_hosts("a=[fd00::1]"));
}

TEST_CASE("bootstrap host lists: refused with a reason") {
  for (const char* bad : {"", "dfs1,dfs2", "a,b,c,d,e,f,g,h,i", "dfs1,dfs1,dfs2", "dfs/1",
                          "dfs1=10.0.0.1:77", "-x", "a=b c"}) {
    CAPTURE(bad);
    auto hosts = parse_bootstrap_hosts(bad);
    REQUIRE_FALSE(hosts);
    CHECK(hosts.error().code() == ErrorCode::kInvalidArgument);
    CHECK_FALSE(hosts.error().context().empty());
  }
}

TEST_CASE("bootstrap config: every daemon has its section and the monitors are listed") {
  BootstrapPlan plan = three_hosts();
  REQUIRE(check_bootstrap_plan(plan));
  auto config = Config::parse(render_config(plan), "test");
  REQUIRE(config);
  CHECK(config->get_or("global", "fsid", "") == "1234");
  CHECK(config->get_or("global", "mon_addrs", "") == "10.0.0.1:6789,10.0.0.2:6789,dfs3:6789");
  CHECK(config->sections_of_type("mon").size() == 3);
  CHECK(config->sections_of_type("mds").size() == 3);
  CHECK(config->sections_of_type("osd").size() == 6);
  CHECK(config->get_or("mon.dfs2", "addr", "") == "10.0.0.2:6789");
  CHECK(config->get_or("mds.dfs2", "addr", "") == "10.0.0.2:6790");
  CHECK(config->get_or("mds.dfs2", "rank", "") == "0");
  CHECK(config->get_or("mds.dfs1", "data", "") == "/var/lib/dfs/mds.dfs1");
  // Host by host, OSD j of a host on port+11+j: osd.2 and osd.3 are dfs2's.
  CHECK(config->get_or("osd.2", "addr", "") == "10.0.0.2:6800");
  CHECK(config->get_or("osd.3", "addr", "") == "10.0.0.2:6801");
  CHECK(config->get_or("osd.3", "host", "") == "dfs2");
  CHECK(config->get_or("osd.5", "log_file", "") == "/var/log/dfs/osd.5.log");
  // Every address is distinct: two daemons of a host never share a port.
  std::set<std::string> addrs;
  for (const auto& s : config->sections()) {
    if (auto a = config->get(s, "addr"); a && s != "global") CHECK(addrs.insert(*a).second);
  }
}

TEST_CASE("bootstrap plans with a bad port or directory are refused") {
  BootstrapPlan plan = three_hosts();
  plan.port = 65530;
  CHECK_FALSE(check_bootstrap_plan(plan));
  plan = three_hosts();
  plan.data_dir = "var/lib/dfs";
  CHECK_FALSE(check_bootstrap_plan(plan));
  plan = three_hosts();
  plan.client = "../x";
  CHECK_FALSE(check_bootstrap_plan(plan));
}

TEST_CASE("bootstrap keyring: a key per daemon and for the client") {
  BootstrapPlan plan = three_hosts();
  const std::string keyring = render_keyring(plan, counting_key);
  for (const char* entity : {"mon.dfs1", "mds.dfs3", "osd.0", "osd.5", "client.admin"}) {
    CAPTURE(entity);
    CHECK(keyring_key(keyring, entity));
  }
  CHECK(keyring_key(keyring, "osd.6").error().code() == ErrorCode::kNotFound);
  // Real keys: 32 random bytes in base64, different every time.
  const std::string a = make_random_key();
  CHECK(a.size() == 44);
  CHECK(a != make_random_key());
}

}  // namespace
}  // namespace dfs::cli
