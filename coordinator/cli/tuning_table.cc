#include "coordinator/cli/tuning_table.h"

#include <nlohmann/json.hpp>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/text_table.h"
#include "proto/config_value.h"

namespace rung::cli {

namespace pb = rung::v1;
using nlohmann::json;

void PrintTuning(const pb::GetTuningResponse& response, const std::string& format, std::ostream& out) {
  TextTable table({"cell", "status", "tried (" + response.key() + "=metric)", "best", "bracketed", "next_centre",
                   "reason"});
  for (const pb::TuningCell& cell : response.cells()) {
    std::string name = cell.rung_label();
    for (const pb::ConfigEntry& entry : cell.cell()) {
      if (entry.key() == "rung") continue;
      name += (name.empty() ? "" : " ") + ValueText(wire::FromConfigValue(entry.value()));
    }
    std::string tried_text;
    json tried = json::array();
    for (const pb::TunedValue& value : cell.tried()) {
      tried_text += (tried_text.empty() ? "" : " ") + Number(value.value(), 3) + "=" +
                    (value.has_metric() ? Number(value.metric(), 4) : value.state());
      tried.push_back({{"value", value.value()},
                       {"loss", value.has_metric() ? json(value.metric()) : json(nullptr)},
                       {"state", value.state()}});
    }
    json row = {{"cell", wire::FromConfigEntries(cell.cell())},
                {"rung_label", cell.rung_label()},
                {"status", cell.status()},
                {"tried", tried},
                {"best", cell.has_best() ? json(cell.best()) : json(nullptr)},
                {"bracketed", cell.bracketed()},
                {"reason", cell.reason()},
                {"next_center", cell.has_next_center() ? json(cell.next_center()) : json(nullptr)}};
    // People read 3 digits; a script's CSV gets every digit (ExactNumber), blank where there is none.
    const bool csv = format == "csv";
    auto shown = [csv](bool has, double value) {
      return !has ? std::string(csv ? "" : "-") : csv ? ExactNumber(value) : Number(value, 3);
    };
    table.AddRow({name, cell.status(), tried_text.empty() ? "-" : tried_text, shown(cell.has_best(), cell.best()),
                  cell.bracketed() ? "yes" : "no", shown(cell.has_next_center(), cell.next_center()), cell.reason()},
                 row);
  }
  if (format == "table") {
    out << "search of " << response.key() << " over " << Number(response.anchor(), 4) << " x "
        << Number(response.ratio(), 6) << "^i: " << response.tuning() << ", " << response.cells_size()
        << " cells, at most " << response.worst_case_trials() << " trials\n";
  }
  table.Print(out, format);
}

}  // namespace rung::cli
