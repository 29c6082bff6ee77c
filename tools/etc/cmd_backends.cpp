// etc backends [--json]: the backends this build knows, ahead of time
// (partitioner, preprocess) and at run time (registered, available here).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "compiler/backend/backend_details.h"
#include "compiler/backend/partitioner.h"
#include "runtime/backend/interface.h"
#include "tools/etc/commands.h"

namespace etc::cli {

Action add_backends(CLI::App& app) {
  auto* cmd = app.add_subcommand("backends", "List the backends: registered, available on this machine");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON");
  return [json]() {
    std::set<std::string> names;
    for (const std::string& n : registered_partitioners()) names.insert(n);
    for (const std::string& n : registered_backend_details()) names.insert(n);
    for (size_t i = 0; i < get_num_registered_backends(); ++i) names.insert(get_backend(i).name);
    const std::vector<std::string> partitioners = registered_partitioners();
    const std::vector<std::string> preprocessors = registered_backend_details();
    nlohmann::json list = nlohmann::json::array();
    for (const std::string& name : names) {
      const BackendInterface* runtime = get_backend_class(name);
      list.push_back({{"name", name},
                      {"partitioner", std::count(partitioners.begin(), partitioners.end(), name) > 0},
                      {"preprocess", std::count(preprocessors.begin(), preprocessors.end(), name) > 0},
                      {"runtime", runtime != nullptr},
                      {"available", runtime != nullptr && runtime->is_available()}});
    }
    if (*json) {
      std::cout << nlohmann::json{{"backends", list}}.dump(2, ' ', false,
                                                           nlohmann::json::error_handler_t::replace)
                << "\n";
      return kExitOk;
    }
    std::cout << "backend      partitioner  preprocess  runtime  available here\n";
    auto yes = [](const nlohmann::json& b) { return b.get<bool>() ? "yes" : "no"; };
    for (const auto& b : list) {
      std::string name = b["name"].get<std::string>();
      name.resize(std::max<size_t>(name.size(), 13), ' ');
      std::printf("%s%-13s%-12s%-9s%s\n", name.c_str(), yes(b["partitioner"]), yes(b["preprocess"]),
                  yes(b["runtime"]), yes(b["available"]));
    }
    return kExitOk;
  };
}

}  // namespace etc::cli
