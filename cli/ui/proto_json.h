#pragma once

#include <nlohmann/json.hpp>

namespace google::protobuf {
class Message;
}

namespace nk::ui {

// A daemon message as the page reads it: proto field names, 64-bit
// integers as JSON numbers (protobuf's own JSON mapping makes them
// strings), enums by name, NaN and infinities as null, every field present
// (zero values included, so the page never guesses a default).
class ProtoJson {
 public:
  static nlohmann::json toJson(const google::protobuf::Message& message);
};

}  // namespace nk::ui
