#include "cli/ui/request_guard.h"

#include <gtest/gtest.h>

namespace nk::ui {
namespace {

RequestGuard::Request get(std::string_view host) {
  RequestGuard::Request r;
  r.method = "GET";
  r.host = host;
  return r;
}

RequestGuard::Request post(std::optional<std::string_view> origin, std::string_view type, size_t size) {
  RequestGuard::Request r;
  r.method = "POST";
  r.host = "127.0.0.1:8123";
  r.origin = origin;
  r.content_type = type;
  r.body_size = size;
  return r;
}

TEST(RequestGuard, AcceptsOnlyThisServersHostNames) {
  RequestGuard guard(8123);
  EXPECT_FALSE(guard.check(get("127.0.0.1:8123")));
  EXPECT_FALSE(guard.check(get("localhost:8123")));
  EXPECT_FALSE(guard.check(get("LOCALHOST:8123")));
  for (const char* host : {"", "127.0.0.1", "localhost", "127.0.0.1:8124", "evil.example:8123", "evil.example",
                           "127.0.0.1:8123.evil.example", "localhost:81234", "[::1]:8123", "127.0.0.2:8123"}) {
    auto refusal = guard.check(get(host));
    ASSERT_TRUE(refusal) << host;
    EXPECT_EQ(refusal->status, 403) << host;
    EXPECT_NE(refusal->message.find("Host"), std::string::npos) << refusal->message;
  }
}

TEST(RequestGuard, APostNeedsJsonFromThisOrigin) {
  RequestGuard guard(8123);
  EXPECT_FALSE(guard.check(post(std::nullopt, "application/json", 10)));
  EXPECT_FALSE(guard.check(post("http://127.0.0.1:8123", "application/json; charset=utf-8", 10)));
  EXPECT_FALSE(guard.check(post("http://localhost:8123", "Application/JSON", 10)));

  for (const char* origin : {"http://evil.example", "null", "http://127.0.0.1:8124", "https://127.0.0.1:8123",
                             "http://localhost:8123.evil.example"}) {
    auto refusal = guard.check(post(origin, "application/json", 10));
    ASSERT_TRUE(refusal) << origin;
    EXPECT_EQ(refusal->status, 403) << origin;
  }
  for (const char* type : {"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                           "application/jsonx"}) {
    auto refusal = guard.check(post(std::nullopt, type, 10));
    ASSERT_TRUE(refusal) << type;
    EXPECT_EQ(refusal->status, 415) << type;
  }
}

TEST(RequestGuard, RefusesABodyOver64KiB) {
  RequestGuard guard(8123);
  EXPECT_FALSE(guard.check(post(std::nullopt, "application/json", 64 * 1024)));
  auto refusal = guard.check(post(std::nullopt, "application/json", 64 * 1024 + 1));
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->status, 413);
}

TEST(RequestGuard, ServesOnlyGetAndPost) {
  RequestGuard guard(8123);
  RequestGuard::Request r = get("127.0.0.1:8123");
  for (const char* method : {"PUT", "DELETE", "OPTIONS", "PATCH"}) {
    r.method = method;
    auto refusal = guard.check(r);
    ASSERT_TRUE(refusal) << method;
    EXPECT_EQ(refusal->status, 405);
  }
}

TEST(RequestGuard, ChecksTheHostBeforeAnythingElse) {
  RequestGuard guard(8123);
  auto r = post("http://evil.example", "text/plain", 1 << 20);
  r.host = "evil.example:8123";
  auto refusal = guard.check(r);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->status, 403);
  EXPECT_NE(refusal->message.find("Host"), std::string::npos);
}

}  // namespace
}  // namespace nk::ui
