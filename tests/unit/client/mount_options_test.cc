#include <doctest/doctest.h>

#include <fstream>

#include "client-fuse/mount/options.h"

namespace dfs::mount {
namespace {

std::string error_of(const Status& s) { return s ? "" : s.error().context(); }
template <class T>
std::string error_of(const Result<T>& r) {
  return r ? "" : r.error().context();
}

}  // namespace

TEST_CASE("client/mount_options: sources") {
  SUBCASE("one monitor, default port, root") {
    auto s = parse_source("mon1:/");
    REQUIRE(s);
    CHECK(s->mon_addrs == std::vector<std::string>{"mon1:6789"});
    CHECK(s->subdir == "/");
  }
  SUBCASE("several monitors, one trailing port for all") {
    auto s = parse_source("dfs1,dfs2,dfs3:6790:/lxc/containers/");
    REQUIRE(s);
    CHECK(s->mon_addrs == std::vector<std::string>{"dfs1:6790", "dfs2:6790", "dfs3:6790"});
    CHECK(s->subdir == "/lxc/containers");
  }
  SUBCASE("ports per monitor") {
    auto s = parse_source("10.0.0.1:7000,10.0.0.2,10.0.0.3:7002:/");
    REQUIRE(s);
    CHECK(s->mon_addrs ==
          std::vector<std::string>{"10.0.0.1:7000", "10.0.0.2:6789", "10.0.0.3:7002"});
  }
  SUBCASE("IPv6 in brackets") {
    auto s = parse_source("[::1]:19789,[fe80::2]:/a//b/./c");
    REQUIRE(s);
    CHECK(s->mon_addrs == std::vector<std::string>{"[::1]:19789", "[fe80::2]:6789"});
    CHECK(s->subdir == "/a/b/c");
  }
  SUBCASE("monitors from the config") {
    auto s = parse_source(":/");
    REQUIRE(s);
    CHECK(s->mon_addrs.empty());
  }
  SUBCASE("bad sources say what is wrong") {
    CHECK(error_of(parse_source("mon1")).find("mon1[,mon2...][:port]:/[subdir]") !=
          std::string::npos);
    CHECK(error_of(parse_source("mon1:99999:/")).find("bad port") != std::string::npos);
    CHECK(error_of(parse_source("mon1:x:/")).find("bad port") != std::string::npos);
    CHECK(!parse_source("mon1,,mon2:/"));
    CHECK(!parse_source("fe80::1:/"));
    CHECK(error_of(parse_source("mon1:/a/../b")).find("..") != std::string::npos);
  }
}

TEST_CASE("client/mount_options: option lists") {
  MountOptions o;
  SUBCASE("fstab noise is accepted") {
    CHECK(apply_option_list(o,
                            "_netdev,defaults,auto,noauto,nofail,rw,x-systemd.automount,"
                            "x-systemd.mount-timeout=30,user,comment=dfs"));
    CHECK(o.kernel_options.empty());
    CHECK(!o.read_only);
  }
  SUBCASE("the file system's own options") {
    CHECK(apply_option_list(o,
                            "name=lxc,ro,fs=main,entry_timeout=2.5,attr_timeout=0,"
                            "negative_timeout=0,op_timeout=15,mount_timeout=5,noacl,"
                            "nowriteback,nosplice,prefill_kb=16,readahead_kb=1024,poll_us=0,listing_data_kb=16,"
                            "log_level=debug"));
    CHECK(o.name == "lxc");
    CHECK(o.read_only);
    CHECK(o.fs == "main");
    CHECK(o.entry_timeout == 2.5);
    CHECK(kernel_cache_seconds(o.entry_timeout, true) == 2.5);
    CHECK(o.attr_timeout == 0);
    CHECK(o.op_timeout_s == 15);
    CHECK(o.mount_timeout_s == 5);
    CHECK(!o.posix_acl);
    CHECK(!o.writeback_cache);
    CHECK(!o.splice);
    CHECK(o.prefill_bytes == 16u << 10);
    CHECK(o.readahead_bytes == 1u << 20);
    CHECK(o.busy_poll_us == 0u);
    CHECK(o.listing_data_bytes == 16u << 10);
    CHECK(o.log_level == "debug");
  }
  SUBCASE("cache mode") {
    CHECK(o.exclusive);
    CHECK(kernel_cache_seconds(o.attr_timeout, o.exclusive) == kExclusiveCacheSeconds);
    CHECK(apply_option_list(o, "cache=shared"));
    CHECK(!o.exclusive);
    CHECK(kernel_cache_seconds(o.attr_timeout, o.exclusive) == kSharedCacheSeconds);
    CHECK(error_of(apply_option_list(o, "cache=maybe")).find("exclusive or shared") !=
          std::string::npos);
  }
  SUBCASE("busy polling: 50 us by default, off on one CPU, as set otherwise") {
    CHECK(busy_poll_us_for(o.busy_poll_us, 2) == 50);
    CHECK(busy_poll_us_for(o.busy_poll_us, 1) == 0);
    CHECK(apply_option_list(o, "poll_us=200"));
    CHECK(busy_poll_us_for(o.busy_poll_us, 1) == 200);
  }
  SUBCASE("listings carry inline data up to 64 KiB by default, up to 1 MiB if asked") {
    CHECK(o.listing_data_bytes == 64u << 10);
    CHECK(apply_option_list(o, "listing_data_kb=0"));
    CHECK(o.listing_data_bytes == 0u);
    CHECK(error_of(apply_option_list(o, "listing_data_kb=2048")) ==
          "option listing_data_kb must be 0..1024");
  }
  SUBCASE("four listings are fetched ahead at a time by default; 0 turns it off") {
    CHECK(o.prefetch_listings == 16u);
    CHECK(apply_option_list(o, "prefetch_listings=0"));
    CHECK(o.prefetch_listings == 0u);
    CHECK(error_of(apply_option_list(o, "prefetch_listings=65")) ==
          "option prefetch_listings must be 0..64");
  }
  SUBCASE("64 MiB of object writes go behind by default; 0 makes every write wait") {
    CHECK(o.write_behind_bytes == 64u << 20);
    CHECK(apply_option_list(o, "write_behind_mb=0"));
    CHECK(o.write_behind_bytes == 0u);
    CHECK(apply_option_list(o, "write_behind_mb=8"));
    CHECK(o.write_behind_bytes == 8u << 20);
    CHECK(error_of(apply_option_list(o, "write_behind_mb=5000")) ==
          "option write_behind_mb must be 0..4096");
  }
  SUBCASE("32 MiB of files' data is fetched ahead by default; 0 turns it off") {
    CHECK(o.data_ahead_bytes == 32u << 20);
    CHECK(apply_option_list(o, "data_ahead_mb=0"));
    CHECK(o.data_ahead_bytes == 0u);
    CHECK(error_of(apply_option_list(o, "data_ahead_mb=4097")) ==
          "option data_ahead_mb must be 0..4096");
  }
  SUBCASE("kernel flags pass through") {
    CHECK(apply_option_list(o, "nosuid,nodev,noatime"));
    CHECK(o.kernel_options == std::vector<std::string>{"nosuid", "nodev", "noatime"});
  }
  SUBCASE("bad options fail with one clear line") {
    CHECK(error_of(apply_option_list(o, "name=a,bogus")) == "unknown option 'bogus'");
    CHECK(error_of(apply_option_list(o, "name=")).find("needs a value") != std::string::npos);
    CHECK(error_of(apply_option_list(o, "ro=1")).find("takes no value") != std::string::npos);
    CHECK(error_of(apply_option_list(o, "op_timeout=abc")).find("whole number") !=
          std::string::npos);
    CHECK(error_of(apply_option_list(o, "entry_timeout=-1")).find("seconds") != std::string::npos);
    CHECK(error_of(apply_option_list(o, "secret=AQB")).find("secretfile") != std::string::npos);
    CHECK(error_of(apply_option_list(o, "secretfile=/nonexistent/key")).find("cannot be read") !=
          std::string::npos);
    CHECK(error_of(apply_option_list(o, "log_level=loud")).find("log_level") != std::string::npos);
    CHECK(error_of(apply_option_list(o, "poll_us=5000000")).find("poll_us") != std::string::npos);
  }
  SUBCASE("--help names every option") {
    auto help = parse_mount_args({"--help"});
    REQUIRE(help);
    CHECK(help->help);
    auto h = parse_mount_args({"-h"});
    REQUIRE(h);
    CHECK(h->help);
    std::string text = mount_usage();
    for (const char* key :
         {"name=", "secretfile=", "conf=", "fs=", "fsid=", "ro ", "cache=", "entry_timeout=",
          "attr_timeout=", "negative_timeout=", "op_timeout=", "mount_timeout=", "readahead_kb=",
          "poll_us=", "nowriteback", "noacl", "nosplice", "prefill_kb=", "nokillpriv", "debug", "log_file=", "log_level="}) {
      CHECK_MESSAGE(text.find(key) != std::string::npos, key);
    }
  }
  SUBCASE("sloppy ignores unknown options") {
    o.sloppy = true;
    CHECK(apply_option_list(o, "bogus,other=1"));
  }
  SUBCASE("an existing secretfile is accepted") {
    std::string path = "/tmp/dfs-client-test-secret";
    std::ofstream(path) << "key\n";
    CHECK(apply_option_list(o, "secretfile=" + path));
    CHECK(o.secretfile == path);
  }
}

TEST_CASE("client/mount_options: mount(8) arguments") {
  SUBCASE("as mount -t dfs passes them") {
    auto o = parse_mount_args({"dfs1,dfs2:/data", "/mnt/dfs", "-o", "rw,name=lxc,_netdev", "-n"});
    REQUIRE(o);
    CHECK(o->source_text == "dfs1,dfs2:/data");
    CHECK(o->mountpoint == "/mnt/dfs");
    CHECK(o->name == "lxc");
    CHECK(o->source.subdir == "/data");
    CHECK(!o->foreground);
  }
  SUBCASE("foreground, verbose, sloppy, joined -o") {
    auto o = parse_mount_args({"-fvs", "-oname=x,whatever", "m:/", "/mnt"});
    REQUIRE(o);
    CHECK(o->foreground);
    CHECK(o->verbose);
    CHECK(o->name == "x");
  }
  SUBCASE("mistakes") {
    CHECK(error_of(parse_mount_args({"m:/"})).find("usage") != std::string::npos);
    CHECK(error_of(parse_mount_args({"m:/", "/mnt", "-o"})).find("-o") != std::string::npos);
    CHECK(error_of(parse_mount_args({"m:/", "/mnt", "-x"})).find("-x") != std::string::npos);
    CHECK(error_of(parse_mount_args({"m:/", "/mnt", "-o", "frob"})) == "unknown option 'frob'");
  }
}

TEST_CASE("client/mount_options: libfuse options escape commas of the source") {
  auto o = parse_mount_args({"a,b:/x", "/mnt", "-o", "ro,nosuid"});
  REQUIRE(o);
  std::string s = fuse_mount_options(*o, true);
  CHECK(s == "default_permissions,subtype=dfs,fsname=a\\,b:/x,allow_other,ro,nosuid");
  CHECK(fuse_mount_options(*o, false).find("allow_other") == std::string::npos);
}

}  // namespace dfs::mount
