#pragma once

#include <cstdint>

#include "api/pumped_stream.h"
#include "base/result.h"
#include "node/access_policy.h"
#include "nodekeeper/v1/apps.grpc.pb.h"

namespace nk {

class AppRegistry;

// Apps.Control: a managed app's decisions stream. Its first report says
// which app it is (0: the caller's own); reports then carry its team size,
// and the daemon's decisions go out as they are made. The app closing its
// side ends its control (and unregisters it); the app being unregistered
// by anyone else ends the stream.
class AppControlStream final
    : public PumpedStream<grpc::ServerBidiReactor<nodekeeper::v1::AppReport, nodekeeper::v1::AppDecision>,
                          nodekeeper::v1::AppDecision> {
 public:
  AppControlStream(StreamHost& host, StreamHost::Slot slot, AppRegistry& apps, PeerCredentials peer);

  // Reads the first report.
  void begin();
  void OnReadDone(bool ok) override;

 private:
  Step next(nodekeeper::v1::AppDecision& out, grpc::Status& status) override;
  Status attach();

  AppRegistry& apps_;
  const PeerCredentials peer_;
  nodekeeper::v1::AppReport report_;
  uint64_t app_id_ = 0;  // set before the stream starts
  bool attached_ = false;
  uint64_t sent_seq_ = 0;  // next()'s
};

}  // namespace nk
