#pragma once

#include <string>

namespace nk::test {

// Whether nothing listens on ip:port (a probe bind with SO_REUSEADDR only:
// it fails on a listening socket, gRPC's SO_REUSEPORT or not, but not on
// connections left in TIME_WAIT), for daemons on loopback addresses of
// their own.
bool addressFree(const std::string& ip, int port);

}  // namespace nk::test
