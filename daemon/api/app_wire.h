#pragma once

#include "apps/app_record.h"
#include "nodekeeper/v1/apps.pb.h"

namespace nk {

// The apps side's records as wire messages, in one place for the service
// and the control stream.
class AppWire {
 public:
  static void toProto(const AppThreadRecord& thread, nodekeeper::v1::AppThread* out);
  static void toProto(const AppRecord& app, nodekeeper::v1::App* out);
  static void toProto(uint64_t app_id, const AppDecisionRecord& decision, nodekeeper::v1::AppDecision* out);
};

}  // namespace nk
