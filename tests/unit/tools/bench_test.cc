// dfs bench's parsers and writers, on fio output recorded on this machine
// (tests/unit/tools/data): figures read right, every kind of fio failure a clear error,
// tables that say when they are incomplete, SVG that is a well-formed document, and
// the configuration a report names for each target.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tools/dfs/bench/fio.h"
#include "tools/dfs/bench/report.h"
#include "tools/dfs/bench/svg_plot.h"
#include "tools/dfs/bench/target_info.h"

namespace dfs::bench {
namespace {

std::string data_file(const std::string& name) {
  std::ifstream in(std::string(DFS_TEST_DATA_DIR) + "/" + name);
  REQUIRE_MESSAGE(in.good(), "missing test data " << name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("fio: a recorded 4k randwrite run parses to its figures") {
  auto r = parse_fio_json(data_file("fio_randwrite_4k.json"), "randwrite");
  REQUIRE(r);
  CHECK(r->bytes_per_s == doctest::Approx(144491978));
  CHECK(r->iops == doctest::Approx(35276.36).epsilon(0.001));
  CHECK(r->p50_us == doctest::Approx(199.68));
  CHECK(r->p99_us == doctest::Approx(4292.608));
  CHECK(r->p999_us > r->p99_us);
  // The run wrote: its read side did nothing, which is an error, not a zero.
  auto read = parse_fio_json(data_file("fio_randwrite_4k.json"), "randread");
  REQUIRE_FALSE(read);
  CHECK(contains(read.error().context(), "no read I/O"));
}

TEST_CASE("fio: failures are errors with a reason, never figures") {
  auto job_error = parse_fio_json(data_file("fio_job_error.json"), "randwrite");
  REQUIRE_FALSE(job_error);
  CHECK(job_error.error().code() == ErrorCode::kIoError);
  CHECK(contains(job_error.error().context(), "error 5"));

  auto cut = parse_fio_json(data_file("fio_truncated.json"), "randwrite");
  REQUIRE_FALSE(cut);
  CHECK(contains(cut.error().context(), "not complete JSON"));

  // A missing target directory: fio prints to stderr and nothing to stdout.
  CHECK(contains(data_file("fio_missing_dir.stderr"), "/nonexistent is not a directory"));
  auto nothing = parse_fio_json("", "write");
  REQUIRE_FALSE(nothing);
  CHECK(contains(nothing.error().context(), "fio wrote nothing"));

  auto no_jobs = parse_fio_json(R"({"fio version": "fio-3.33", "jobs": []})", "write");
  REQUIRE_FALSE(no_jobs);
  CHECK(contains(no_jobs.error().context(), "no jobs"));
}

TEST_CASE("fio: the matrix and its command lines") {
  auto full = fio_matrix(false);
  CHECK(full.size() == 7 * 4 * 2);
  auto quick = fio_matrix(true);
  CHECK(quick.size() == 3 * 4);
  CHECK(block_label(4096) == "4k");
  CHECK(block_label(32u << 20) == "32m");
  auto args = fio_arguments({"randwrite", 32u << 20, 8, 8}, {"/mnt/dfs/b", 16u << 20, 5, false});
  auto has = [&](const std::string& a) { return std::find(args.begin(), args.end(), a) != args.end(); };
  CHECK(has("--rw=randwrite"));
  CHECK(has("--bs=32m"));
  CHECK(has("--numjobs=8"));
  CHECK(has("--direct=0"));
  CHECK(has("--size=134217728"));  // a file holds at least four blocks
  CHECK(has("--output-format=json"));
}

std::vector<Sample> samples_with(const std::string& failure) {
  std::vector<Sample> s;
  for (int round = 1; round <= 3; ++round) {
    s.push_back({"tree", "rsync write", "s", false, "baseline /var/tmp", true, round, 2.0 + round, ""});
    s.push_back({"tree", "rsync write", "s", false, "/mnt/dfs", false, round, 10.0 + round, ""});
  }
  Sample bad{"tree", "read-back", "s", false, "/mnt/dfs", false, 1, 0, failure};
  s.push_back({"tree", "read-back", "s", false, "baseline /var/tmp", true, 1, 1.0, ""});
  s.push_back(bad);
  return s;
}

TEST_CASE("report: medians, ratios, and an incomplete table says so") {
  auto whole = samples_with("");
  whole.back().value = 3.0;
  Table t = markdown_table(whole, "tree");
  CHECK(t.complete);
  CHECK(contains(t.markdown, "| rsync write | /mnt/dfs | 12.0 s | 4.00 s | 3.00 |"));
  CHECK(contains(t.markdown, "| read-back | /mnt/dfs | 3.00 s | 1.00 s | 3.00 |"));
  CHECK_FALSE(contains(t.markdown, "INCOMPLETE"));

  Table partial = markdown_table(samples_with("copy differs from the source: etc/passwd"), "tree");
  CHECK_FALSE(partial.complete);
  CHECK(contains(partial.markdown, "INCOMPLETE"));
  CHECK(contains(partial.markdown, "failed: copy differs from the source: etc/passwd"));

  std::string csv = to_csv(samples_with("a, \"quoted\" reason"));
  CHECK(contains(csv, "suite,figure,unit,target,baseline,round,value,error\n"));
  CHECK(contains(csv, "tree,rsync write,s,/mnt/dfs,0,2,12,\n"));
  CHECK(contains(csv, ",\"a, \"\"quoted\"\" reason\"\n"));
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 2, 3}) == 2.5);
}

TEST_CASE("svg: a plot is a complete document with labelled axes and a legend") {
  LinePlot p{"randwrite, 1 job", "block size", "MB/s", {"4k", "64k", "1m"},
             {{"/mnt/dfs", {10, 80, 150}}, {"baseline <local>", {40, -1, 600}}}};
  std::string svg = render_svg(p);
  CHECK(svg.rfind("<?xml version=\"1.0\"", 0) == 0);
  CHECK(contains(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
  CHECK(contains(svg, ">block size</text>"));
  CHECK(contains(svg, ">MB/s</text>"));
  CHECK(contains(svg, ">randwrite, 1 job</text>"));
  CHECK(contains(svg, ">/mnt/dfs</text>"));
  CHECK(contains(svg, ">baseline &lt;local&gt;</text>"));  // escaped
  CHECK(contains(svg, ">64k</text>"));
  // Two lines; the missing point leaves the second with two vertices.
  size_t lines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++lines;
  CHECK(lines == 2);
  // Tags balance: every element opened is closed or self-closing.
  size_t opens = 0, closes = 0;
  for (size_t i = 0; i + 1 < svg.size(); ++i) {
    if (svg[i] == '<' && svg[i + 1] != '/' && svg[i + 1] != '?') ++opens;
    if ((svg[i] == '<' && svg[i + 1] == '/') || (svg[i] == '/' && svg[i + 1] == '>')) ++closes;
  }
  CHECK(opens == closes);
  CHECK(nice_step(600) == 200);
  CHECK(nice_step(7) == 2);
  CHECK(nice_step(0) == 1);
}

TEST_CASE("target info: the mount a path is on, escapes and stacked mounts included") {
  const std::string mountinfo =
      "22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
      "40 22 0:50 / /mnt/dfs rw,nosuid shared:20 - fuse.dfs dfs1,dfs2,dfs3:/ rw,user_id=0\n"
      "41 22 0:51 / /mnt/with\\040space rw - tmpfs tmpfs rw\n"
      "42 40 0:52 / /mnt/dfs/lxc rw - fuse.dfs 10.0.0.1:7000:/lxc rw\n"
      "43 22 0:53 / /mnt/dfs2 rw - xfs /dev/vdb rw\n";
  auto root = mount_of(mountinfo, "/var/tmp/x");
  REQUIRE(root);
  CHECK(root->fstype == "ext4");
  CHECK(root->mountpoint == "/");
  auto dfs = mount_of(mountinfo, "/mnt/dfs/bench");
  REQUIRE(dfs);
  CHECK(dfs->fstype == "fuse.dfs");
  CHECK(dfs->source == "dfs1,dfs2,dfs3:/");
  CHECK(dfs->mountpoint == "/mnt/dfs");
  CHECK(mount_of(mountinfo, "/mnt/dfs")->mountpoint == "/mnt/dfs");
  CHECK(mount_of(mountinfo, "/mnt/dfs/lxc/c1")->source == "10.0.0.1:7000:/lxc");
  // /mnt/dfs2 is not under /mnt/dfs.
  CHECK(mount_of(mountinfo, "/mnt/dfs2/a")->fstype == "xfs");
  CHECK(mount_of(mountinfo, "/mnt/with space/a")->fstype == "tmpfs");
  // Mounted on top of an earlier mount at the same point: the later line wins.
  auto stacked = mount_of(mountinfo + "44 40 0:54 / /mnt/dfs rw - nfs4 srv:/x rw\n", "/mnt/dfs/b");
  CHECK(stacked->fstype == "nfs4");
  CHECK_FALSE(mount_of("", "/a"));
}

TEST_CASE("target info: the metadata configuration in words") {
  auto replica = [](std::string name, std::string role) {
    return MetadataReplica{std::move(name), 0, true, std::move(role), ""};
  };
  auto three = describe_metadata({replica("mds.a", "follower"), replica("mds.b", "leader"),
                                  replica("mds.c", "follower")});
  CHECK(three ==
        "rank 0 replicated by a Raft group of 3 MDS (mds.b leading; mds.a, mds.c following), "
        "the default");
  auto one = describe_metadata({MetadataReplica{"mds.a", 0, false, "", ""}});
  CHECK(one == "rank 0 on one MDS (mds.a) with its own log, not replicated (the default is 3 "
               "replicas)");
  auto down = describe_metadata({replica("mds.a", "leader"), replica("mds.b", "follower"),
                                 MetadataReplica{"mds.c", 0, false, "", "kTimeout: no answer"}});
  CHECK(contains(down,
                 "Raft group of 3 MDS (mds.a leading; mds.b following; mds.c not answering)"));
  auto five = describe_metadata({replica("mds.a", "leader"), replica("mds.b", "follower"),
                                 replica("mds.c", "follower"), replica("mds.d", "follower"),
                                 replica("mds.e", "follower")});
  CHECK(contains(five, "Raft group of 5 MDS"));
  CHECK(contains(five, "(the default is 3)"));
  auto silent = describe_metadata({MetadataReplica{"mds.a", 0, false, "", "kTimeout: no answer"}});
  CHECK(silent == "rank 0 on 1 MDS, none answering (mds.a): replication unknown");
  auto electing = describe_metadata({replica("mds.a", "candidate"), replica("mds.b", "follower"),
                                     MetadataReplica{"mds.c", 0, false, "", "kUnavailable"}});
  CHECK(contains(electing, "(mds.b following; mds.a electing; mds.c not answering)"));
  CHECK(describe_metadata({}) == "no MDS in the cluster map");
}

}  // namespace
}  // namespace dfs::bench
