#include "api/peer_listener.h"

#include <arpa/inet.h>

#include <algorithm>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/impl/server_builder_option.h>

#include "api/peer_transport.h"

namespace nk {

namespace {

// A server with the services registered on it and nothing else: no plugin
// (reflection registers itself on every server of the process) and no
// default health service.
class RegisteredServicesOnly final : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments* args) override {
    // gRPC's documented way to keep the default health service off one server.
    args->SetPointer(grpc::kHealthCheckServiceInterfaceArg, nullptr);
  }
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override { plugins->clear(); }
};

}  // namespace

Result<std::unique_ptr<grpc::Server>> PeerListener::start(const std::string& address, grpc::Service& service,
                                                          const PeerTransport& transport) {
  // Before the builder: the health service is decided when the server starts.
  if (transport.mutualTls()) grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  // Another daemon on the same address must be an error, not a silent
  // second listener sharing the port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  if (!transport.mutualTls()) builder.SetOption(std::make_unique<RegisteredServicesOnly>());
  int port = 0;
  builder.AddListeningPort(address, transport.serverCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0)
    return unavailable("cannot listen on " + address +
                       " for peer daemons (address in use, or not one of this host's?)");
  if (transport.mutualTls())
    if (auto* health = server->GetHealthCheckService()) health->SetServingStatus(true);
  return server;
}

bool PeerListener::listensOnEveryInterface(std::string_view address) {
  std::string_view host = address.substr(0, address.rfind(':'));
  if (host.empty()) return true;
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string text(host);
  unsigned char binary[16] = {};
  int family = text.find(':') != std::string::npos ? AF_INET6 : AF_INET;
  if (inet_pton(family, text.c_str(), binary) != 1) return false;
  const size_t size = family == AF_INET6 ? 16 : 4;
  return std::all_of(binary, binary + size, [](unsigned char b) { return b == 0; });
}

}  // namespace nk
