// doctest checks for dfs's Result and Status: the expression must be ok, and when it
// is not, the failure message is the error itself rather than a bare "false". Shared
// by the unit and the integration tests so that they fail alike.
#pragma once

#include <doctest/doctest.h>

#include <string>

// Requires `expr` (a Result or Status) to be ok; ends the test case otherwise.
#define DFS_REQUIRE_OK(expr) DFS_ASSERT_OK_(REQUIRE_MESSAGE, expr)
// Checks that `expr` is ok; the test case goes on either way.
#define DFS_CHECK_OK(expr) DFS_ASSERT_OK_(CHECK_MESSAGE, expr)

// `expr` is evaluated once; the message is built only when it failed.
#define DFS_ASSERT_OK_(assert_message, expr)                                               \
  do {                                                                                     \
    const auto& dfs_assert_ok_ = (expr);                                                   \
    assert_message(dfs_assert_ok_.has_value(),                                             \
                   (dfs_assert_ok_ ? std::string() : dfs_assert_ok_.error().to_string())); \
  } while (0)
