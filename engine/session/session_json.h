#pragma once
// The parts of the session format, for every carrier of the same records (the
// session file, the journal, later a remote stream or a result cache): one
// serializer and one validator per part, so a point reads the same everywhere.
#include <nlohmann/json.hpp>
#include <string>

#include "engine/session/session.h"

namespace ks {

// Everything a session holds but its points and drift checks: format, version,
// app, created, provenance, device (with peaks), host, plan, notes.
nlohmann::json sessionHeaderToJson(const Session& session);
// Checks the header as the session loader does; points and drift stay empty.
Result<Session> sessionHeaderFromJson(const nlohmann::json& header);

// One point, as it sits in the session's "points" array.
nlohmann::json pointToJson(const Measurement& m);
// Validates one point against its plan (repetitions, rotation); `path` names it
// in the error ("points[3]").
Result<Measurement> pointFromJson(const nlohmann::json& point, const Plan& plan, const std::string& path);

// The "drift" object; the reader recomputes the verdict from the checks.
nlohmann::json driftToJson(const DriftReport& drift);
// `device`: the session's (nullptr when it has none); the noise floor must be its reference's.
Result<DriftReport> driftFromJson(const nlohmann::json& drift, const Plan& plan, const vk::DeviceInfo* device);

// A device record as sessions store it (not every probed feature: the session's subset).
nlohmann::json deviceInfoToJson(const vk::DeviceInfo& device);
Result<vk::DeviceInfo> deviceInfoFromJson(const nlohmann::json& device, const std::string& path);

// indent < 0: one line. Text that is not UTF-8 (driver strings) is replaced, never thrown on.
std::string dumpJson(const nlohmann::json& j, int indent);

}  // namespace ks
