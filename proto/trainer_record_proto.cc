// proto/trainer_record_proto.cc
#include "proto/trainer_record_proto.h"

#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <nlohmann/json.hpp>

#include "proto/config_value.h"

namespace rung::wire {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using records::JsonText;

using records::internal::HasFields;
using records::internal::IsOptional;
using records::internal::IsVector;

// ---------------------------------------------------------------------------------------- writing

template <class Struct>
void WriteStruct(const Struct& value, Message* message);

// One scalar or nested value into a singular field.
template <class Value>
void SetValue(const Value& value, const FieldDescriptor* field, Message* message) {
  const Reflection* reflection = message->GetReflection();
  if constexpr (std::is_same_v<Value, int64_t>) {
    reflection->SetInt64(message, field, value);
  } else if constexpr (std::is_same_v<Value, double>) {
    reflection->SetDouble(message, field, value);
  } else if constexpr (std::is_same_v<Value, bool>) {
    reflection->SetBool(message, field, value);
  } else if constexpr (std::is_same_v<Value, std::string>) {
    reflection->SetString(message, field, value);
  } else if constexpr (std::is_same_v<Value, JsonText>) {
    // A JSON value (ConfigValue); none for an empty document. The text is the JSON a record decoded.
    if (value.empty()) return;
    const nlohmann::json document = nlohmann::json::parse(value.text, nullptr, /*allow_exceptions=*/false);
    reflection->MutableMessage(message, field)
        ->CopyFrom(ToConfigValue(document.is_discarded() ? nlohmann::json(value.text) : document));
  } else {
    WriteStruct(value, reflection->MutableMessage(message, field));
  }
}

template <class Value>
void AddValue(const Value& value, const FieldDescriptor* field, Message* message) {
  const Reflection* reflection = message->GetReflection();
  if constexpr (std::is_same_v<Value, int64_t>) {
    reflection->AddInt64(message, field, value);
  } else if constexpr (std::is_same_v<Value, double>) {
    reflection->AddDouble(message, field, value);
  } else if constexpr (std::is_same_v<Value, std::string>) {
    reflection->AddString(message, field, value);
  } else if constexpr (IsVector<Value>::value) {  // a row: a message of one repeated field
    Message* row = reflection->AddMessage(message, field);
    const FieldDescriptor* values = row->GetDescriptor()->field(0);
    for (const auto& element : value) AddValue(element, values, row);
  } else {
    WriteStruct(value, reflection->AddMessage(message, field));
  }
}

template <class Struct>
void WriteStruct(const Struct& value, Message* message) {
  const Descriptor* descriptor = message->GetDescriptor();
  Struct::Fields(value, [&](const char* name, const auto& member) {
    using Member = std::decay_t<decltype(member)>;
    const FieldDescriptor* field = descriptor->FindFieldByName(name);
    if (field == nullptr) return;  // CheckRecordMessages() reports it
    if constexpr (IsOptional<Member>::value) {
      if (member) SetValue(*member, field, message);
    } else if constexpr (IsVector<Member>::value) {
      for (const auto& element : member) AddValue(element, field, message);
    } else {
      SetValue(member, field, message);
    }
  });
}

// ---------------------------------------------------------------------------------------- reading

template <class Struct>
Status ReadStruct(const Message& message, const std::string& path, Struct* value);

// A JSON value's text; INVALID_ARGUMENT for one nested deeper than records::kMaxJsonTextDepth (writing
// it again would recurse that deep).
Status ReadJsonValue(const Message& message, const std::string& path, JsonText* value) {
  const auto& json_value = static_cast<const v1::ConfigValue&>(message);
  if (ConfigValueDeeperThan(json_value, records::kMaxJsonTextDepth)) {
    return Status::InvalidArgument("field '" + path + "' nests deeper than " +
                                   std::to_string(records::kMaxJsonTextDepth) + " levels");
  }
  value->text = FromConfigValue(json_value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return Status::Ok();
}

template <class Value>
Status GetValue(const Message& message, const FieldDescriptor* field, const std::string& path, Value* value) {
  const Reflection* reflection = message.GetReflection();
  if constexpr (std::is_same_v<Value, int64_t>) {
    *value = reflection->GetInt64(message, field);
  } else if constexpr (std::is_same_v<Value, double>) {
    *value = reflection->GetDouble(message, field);
  } else if constexpr (std::is_same_v<Value, bool>) {
    *value = reflection->GetBool(message, field);
  } else if constexpr (std::is_same_v<Value, std::string>) {
    *value = reflection->GetString(message, field);
  } else if constexpr (std::is_same_v<Value, JsonText>) {
    value->text.clear();
    if (!reflection->HasField(message, field)) return Status::Ok();
    return ReadJsonValue(reflection->GetMessage(message, field), path, value);
  } else {
    return ReadStruct(reflection->GetMessage(message, field), path, value);
  }
  return Status::Ok();
}

template <class Value>
Status GetRepeatedValue(const Message& message, const FieldDescriptor* field, int index, const std::string& path,
                        Value* value) {
  const Reflection* reflection = message.GetReflection();
  if constexpr (std::is_same_v<Value, int64_t>) {
    *value = reflection->GetRepeatedInt64(message, field, index);
  } else if constexpr (std::is_same_v<Value, double>) {
    *value = reflection->GetRepeatedDouble(message, field, index);
  } else if constexpr (std::is_same_v<Value, std::string>) {
    *value = reflection->GetRepeatedString(message, field, index);
  } else if constexpr (IsVector<Value>::value) {  // a row: a message of one repeated field
    const Message& row = reflection->GetRepeatedMessage(message, field, index);
    const FieldDescriptor* values = row.GetDescriptor()->field(0);
    const int size = row.GetReflection()->FieldSize(row, values);
    value->clear();
    value->reserve(static_cast<size_t>(size));
    for (int column = 0; column < size; ++column) {
      typename Value::value_type element{};
      RUNG_RETURN_IF_ERROR(GetRepeatedValue(row, values, column, path + "[" + std::to_string(column) + "]", &element));
      value->push_back(std::move(element));
    }
  } else {
    return ReadStruct(reflection->GetRepeatedMessage(message, field, index), path, value);
  }
  return Status::Ok();
}

template <class Struct>
Status ReadStruct(const Message& message, const std::string& path, Struct* value) {
  const Descriptor* descriptor = message.GetDescriptor();
  const Reflection* reflection = message.GetReflection();
  Status status;
  Struct::Fields(*value, [&](const char* name, auto& member) {
    using Member = std::decay_t<decltype(member)>;
    if (!status.ok()) return;
    const FieldDescriptor* field = descriptor->FindFieldByName(name);
    if (field == nullptr) return;
    const std::string field_path = path + "." + name;
    if constexpr (IsOptional<Member>::value) {
      if (!reflection->HasField(message, field)) {
        member.reset();
        return;
      }
      typename Member::value_type inner{};
      status = GetValue(message, field, field_path, &inner);
      member = std::move(inner);
    } else if constexpr (IsVector<Member>::value) {
      const int size = reflection->FieldSize(message, field);
      member.clear();
      member.reserve(static_cast<size_t>(size));
      for (int index = 0; index < size && status.ok(); ++index) {
        typename Member::value_type element{};
        status = GetRepeatedValue(message, field, index, field_path + "[" + std::to_string(index) + "]", &element);
        member.push_back(std::move(element));
      }
    } else {
      status = GetValue(message, field, field_path, &member);
    }
  });
  return status;
}

// ------------------------------------------------------------------------------------- the check

// The proto type a C++ member maps to, and whether it is repeated / has presence.
struct ExpectedField {
  FieldDescriptor::CppType type;
  bool repeated = false;
  bool presence = false;
  const Descriptor* message = nullptr;  // for a nested struct: the message it must be
};

template <class Value>
constexpr FieldDescriptor::CppType CppTypeOf() {
  if constexpr (std::is_same_v<Value, int64_t>) return FieldDescriptor::CPPTYPE_INT64;
  if constexpr (std::is_same_v<Value, double>) return FieldDescriptor::CPPTYPE_DOUBLE;
  if constexpr (std::is_same_v<Value, bool>) return FieldDescriptor::CPPTYPE_BOOL;
  if constexpr (std::is_same_v<Value, std::string>) return FieldDescriptor::CPPTYPE_STRING;
  return FieldDescriptor::CPPTYPE_MESSAGE;
}

template <class Struct>
void CheckStruct(const Descriptor* descriptor, const std::string& path, std::vector<std::string>* differences);

template <class Value>
void CheckMember(const FieldDescriptor* field, bool repeated, bool presence, const std::string& path,
                 std::vector<std::string>* differences) {
  const FieldDescriptor::CppType expected = CppTypeOf<Value>();
  if (field->cpp_type() != expected) {
    differences->push_back(path + ": the header's type maps to " +
                           std::string(FieldDescriptor::CppTypeName(expected)) + ", the proto field is " +
                           field->cpp_type_name());
    return;
  }
  if (field->is_repeated() != repeated) {
    differences->push_back(path + (repeated ? ": a vector in the header, not repeated in the proto"
                                            : ": repeated in the proto, not a vector in the header"));
  }
  if (!repeated && field->has_presence() != presence && expected != FieldDescriptor::CPPTYPE_MESSAGE) {
    differences->push_back(path + (presence ? ": std::optional in the header, not `optional` in the proto"
                                            : ": `optional` in the proto, not std::optional in the header"));
  }
  if constexpr (IsVector<Value>::value) {  // a row: a message of exactly one repeated field
    const Descriptor* row = field->message_type();
    if (row->field_count() != 1) {
      differences->push_back(path + ": a vector of vectors in the header; proto message " + row->full_name() +
                             " must hold exactly one repeated field");
      return;
    }
    CheckMember<typename Value::value_type>(row->field(0), true, false, path + "[]", differences);
  } else if constexpr (std::is_same_v<Value, JsonText>) {  // a JSON value
    if (field->message_type() != v1::ConfigValue::descriptor()) {
      differences->push_back(path + ": a JsonText in the header; the proto field must be a ConfigValue, not " +
                             field->message_type()->full_name());
    }
  } else if constexpr (CppTypeOf<Value>() == FieldDescriptor::CPPTYPE_MESSAGE) {
    CheckStruct<Value>(field->message_type(), path, differences);
  }
}

template <class Struct>
void CheckStruct(const Descriptor* descriptor, const std::string& path, std::vector<std::string>* differences) {
  std::set<std::string> seen;
  Struct value{};
  Struct::Fields(value, [&](const char* name, auto& member) {
    using Member = std::decay_t<decltype(member)>;
    seen.insert(name);
    const std::string member_path = path + "." + name;
    const FieldDescriptor* field = descriptor->FindFieldByName(name);
    if (field == nullptr) {
      differences->push_back(member_path + ": in the header, not in proto message " + descriptor->full_name());
      return;
    }
    if constexpr (IsOptional<Member>::value) {
      CheckMember<typename Member::value_type>(field, false, true, member_path, differences);
    } else if constexpr (IsVector<Member>::value) {
      CheckMember<typename Member::value_type>(field, true, false, member_path, differences);
    } else {
      CheckMember<Member>(field, false, false, member_path, differences);
    }
  });
  for (int index = 0; index < descriptor->field_count(); ++index) {
    const std::string& name = descriptor->field(index)->name();
    if (seen.count(name) == 0) {
      differences->push_back(path + "." + name + ": in proto message " + descriptor->full_name() +
                             ", not in the header");
    }
  }
}

// OK without differences; else INVALID_ARGUMENT listing them, one per line.
Status DifferencesStatus(const std::vector<std::string>& differences) {
  if (differences.empty()) return Status::Ok();
  std::string message;
  for (const std::string& difference : differences) message += difference + "\n";
  return Status::InvalidArgument(message);
}

// The oneof field of TrainerRecord that holds alternative `Record`.
template <class Record>
const FieldDescriptor* OneofField() {
  return v1::TrainerRecord::descriptor()->FindFieldByName(std::string(Record::kType));
}

template <size_t Index = 0>
StatusOr<records::TrainerRecord> ReadAlternative(const v1::TrainerRecord& message, const FieldDescriptor* set) {
  if constexpr (Index == std::variant_size_v<records::TrainerRecord>) {
    return Status::InvalidArgument("TrainerRecord holds no record of a type this build knows");
  } else {
    using Record = std::variant_alternative_t<Index, records::TrainerRecord>;
    if (set != OneofField<Record>()) return ReadAlternative<Index + 1>(message, set);
    Record record;
    RUNG_RETURN_IF_ERROR(ReadStruct(message.GetReflection()->GetMessage(message, set),
                                    std::string(Record::kType), &record));
    return records::TrainerRecord(std::move(record));
  }
}

template <size_t Index = 0>
void CheckAlternatives(std::vector<std::string>* differences) {
  if constexpr (Index < std::variant_size_v<records::TrainerRecord>) {
    using Record = std::variant_alternative_t<Index, records::TrainerRecord>;
    const FieldDescriptor* field = OneofField<Record>();
    if (field == nullptr || field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      differences->push_back("TrainerRecord has no message field '" + std::string(Record::kType) + "'");
    } else {
      CheckStruct<Record>(field->message_type(), std::string(Record::kType), differences);
    }
    CheckAlternatives<Index + 1>(differences);
  }
}

}  // namespace

v1::TrainerRecord ToProto(const records::TrainerRecord& record) {
  v1::TrainerRecord message;
  std::visit(
      [&](const auto& alternative) {
        using Record = std::decay_t<decltype(alternative)>;
        const FieldDescriptor* field = OneofField<Record>();
        if (field == nullptr) return;
        WriteStruct(alternative, message.GetReflection()->MutableMessage(&message, field));
      },
      record);
  return message;
}

StatusOr<records::TrainerRecord> FromProto(const v1::TrainerRecord& record) {
  const google::protobuf::OneofDescriptor* oneof = v1::TrainerRecord::descriptor()->FindOneofByName("record");
  const FieldDescriptor* set = oneof == nullptr ? nullptr : record.GetReflection()->GetOneofFieldDescriptor(record, oneof);
  if (set == nullptr) return Status::InvalidArgument("TrainerRecord holds no record");
  return ReadAlternative(record, set);
}

template <class Struct>
void StructToMessage(const Struct& value, google::protobuf::Message* message) {
  WriteStruct(value, message);
}

template <class Struct>
Status StructFromMessage(const google::protobuf::Message& message, Struct* value) {
  *value = Struct{};
  return ReadStruct(message, message.GetDescriptor()->name(), value);
}

template <class Struct>
Status CheckStructMessage(const google::protobuf::Descriptor* descriptor) {
  std::vector<std::string> differences;
  CheckStruct<Struct>(descriptor, descriptor->name(), &differences);
  return DifferencesStatus(differences);
}

#define RUNG_WIRE_STRUCT(Type)                                                        \
  template void StructToMessage<Type>(const Type&, google::protobuf::Message*);     \
  template Status StructFromMessage<Type>(const google::protobuf::Message&, Type*); \
  template Status CheckStructMessage<Type>(const google::protobuf::Descriptor*);
RUNG_WIRE_STRUCT(records::AttentionDiagnostics)
RUNG_WIRE_STRUCT(records::NiahGridDiagnostics)
RUNG_WIRE_STRUCT(records::BandAblationDiagnostics)
RUNG_WIRE_STRUCT(records::HeadInfluenceDiagnostics)
RUNG_WIRE_STRUCT(records::ExtrapolationResult)
RUNG_WIRE_STRUCT(records::ProbeResult)
RUNG_WIRE_STRUCT(records::Tensor)
#undef RUNG_WIRE_STRUCT

Status CheckRecordMessages() {
  std::vector<std::string> differences;
  CheckAlternatives(&differences);
  const int alternatives = static_cast<int>(std::variant_size_v<records::TrainerRecord>);
  if (v1::TrainerRecord::descriptor()->field_count() != alternatives) {
    differences.push_back("TrainerRecord has " + std::to_string(v1::TrainerRecord::descriptor()->field_count()) +
                          " record fields, the header " + std::to_string(alternatives) + " record types");
  }
  return DifferencesStatus(differences);
}

const v1::TrainerRecord* AddStdoutLine(const std::string& line, v1::MetricBatch* batch) {
  v1::StdoutLine* out = batch->add_stdout();
  StatusOr<records::TrainerRecord> record = records::DecodeRecord(line);
  if (!record.ok()) {
    out->set_text(line);
    return nullptr;
  }
  *out->mutable_record() = ToProto(*record);
  return &out->record();
}

}  // namespace rung::wire
