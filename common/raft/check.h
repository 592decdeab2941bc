// DFS_RAFT_CHECK: an invariant check that aborts in every build type. Raft's safety
// rests on a few invariants (never truncate a committed entry, never commit past the
// log); breaking one is a bug, so the node stops rather than diverging silently.
// TODO(#4): fold into a shared DFS_CHECK once common/ has one.
#pragma once

#include <cstdio>
#include <cstdlib>

#define DFS_RAFT_CHECK(cond)                                                        \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: raft invariant failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                          \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)
