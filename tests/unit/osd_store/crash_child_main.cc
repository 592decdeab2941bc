// osd_store_crash_child <store path> <ack fd>: the process the crash test kills. Opens
// the store, then applies generation after generation forever, writing each
// acknowledged generation (uint64, native order) to the ack fd. On an error it writes
// UINT64_MAX, explains on stderr and exits non-zero.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/unit/osd_store/crash_workload.h"

namespace {

int fail(int fd, const dfs::Error& error, const char* what) {
  uint64_t marker = UINT64_MAX;
  ssize_t n = ::write(fd, &marker, sizeof marker);
  (void)n;
  std::fprintf(stderr, "crash child: %s: %s\n", what, error.to_string().c_str());
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace dfs::osd;
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <store path> <ack fd>\n", argv[0]);
    return 2;
  }
  int fd = std::atoi(argv[2]);
  auto opened = open_dir_store(crashtest::crash_store_options(argv[1]));
  if (!opened) return fail(fd, opened.error(), "open");
  ObjectStore& store = **opened;
  auto model = crashtest::load_model(store);
  if (!model) return fail(fd, model.error(), "load");
  while (true) {
    Transaction txn = crashtest::next_generation(*model);
    dfs::Status st = store.apply(std::move(txn));
    if (!st) return fail(fd, st.error(), "apply");
    if (::write(fd, &model->gen, sizeof model->gen) != sizeof model->gen) return 4;
  }
}
