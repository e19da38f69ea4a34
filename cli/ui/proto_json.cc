#include "cli/ui/proto_json.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <cmath>

namespace nk::ui {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

nlohmann::json number(double value) {
  if (!std::isfinite(value)) return nullptr;
  return value;
}

nlohmann::json single(const Message& message, const Reflection& r, const FieldDescriptor& f) {
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return r.GetInt32(message, &f);
    case FieldDescriptor::CPPTYPE_INT64: return r.GetInt64(message, &f);
    case FieldDescriptor::CPPTYPE_UINT32: return r.GetUInt32(message, &f);
    case FieldDescriptor::CPPTYPE_UINT64: return r.GetUInt64(message, &f);
    case FieldDescriptor::CPPTYPE_DOUBLE: return number(r.GetDouble(message, &f));
    case FieldDescriptor::CPPTYPE_FLOAT: return number(r.GetFloat(message, &f));
    case FieldDescriptor::CPPTYPE_BOOL: return r.GetBool(message, &f);
    case FieldDescriptor::CPPTYPE_ENUM: return r.GetEnum(message, &f)->name();
    case FieldDescriptor::CPPTYPE_STRING: return r.GetString(message, &f);
    case FieldDescriptor::CPPTYPE_MESSAGE: return ProtoJson::toJson(r.GetMessage(message, &f));
  }
  return nullptr;
}

nlohmann::json element(const Message& message, const Reflection& r, const FieldDescriptor& f, int i) {
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return r.GetRepeatedInt32(message, &f, i);
    case FieldDescriptor::CPPTYPE_INT64: return r.GetRepeatedInt64(message, &f, i);
    case FieldDescriptor::CPPTYPE_UINT32: return r.GetRepeatedUInt32(message, &f, i);
    case FieldDescriptor::CPPTYPE_UINT64: return r.GetRepeatedUInt64(message, &f, i);
    case FieldDescriptor::CPPTYPE_DOUBLE: return number(r.GetRepeatedDouble(message, &f, i));
    case FieldDescriptor::CPPTYPE_FLOAT: return number(r.GetRepeatedFloat(message, &f, i));
    case FieldDescriptor::CPPTYPE_BOOL: return r.GetRepeatedBool(message, &f, i);
    case FieldDescriptor::CPPTYPE_ENUM: return r.GetRepeatedEnum(message, &f, i)->name();
    case FieldDescriptor::CPPTYPE_STRING: return r.GetRepeatedString(message, &f, i);
    case FieldDescriptor::CPPTYPE_MESSAGE: return ProtoJson::toJson(r.GetRepeatedMessage(message, &f, i));
  }
  return nullptr;
}

}  // namespace

nlohmann::json ProtoJson::toJson(const Message& message) {
  nlohmann::json out = nlohmann::json::object();
  const auto* descriptor = message.GetDescriptor();
  const Reflection* reflection = message.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    // An unset member of a oneof is left out: the one set says which it is.
    if (field->containing_oneof() && !reflection->HasField(message, field)) continue;
    if (field->is_repeated()) {
      nlohmann::json list = nlohmann::json::array();
      int size = reflection->FieldSize(message, field);
      for (int j = 0; j < size; ++j) list.push_back(element(message, *reflection, *field, j));
      out[field->name()] = std::move(list);
    } else {
      out[field->name()] = single(message, *reflection, *field);
    }
  }
  return out;
}

}  // namespace nk::ui
