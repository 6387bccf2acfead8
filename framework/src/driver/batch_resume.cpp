#include "driver/batch_resume.hpp"

#include "driver/pipeline_digest.hpp"
#include "driver/run_outputs.hpp"

#include <regpipe/host/image.hpp>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace regpipe {

std::variant<nlohmann::json, std::string> complete_result(const Pipeline& one) {
  if (!one.outputs.report) return std::string("outputs.report is off: nothing tells a complete result");
  const fs::path report_path = one.outputs.dir / (one.outputs.prefix + "report.json");
  std::error_code ec;
  if (!fs::is_regular_file(report_path, ec)) return "no " + report_path.string();
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(std::ifstream(report_path));
  } catch (const nlohmann::json::exception&) {
    return report_path.string() + " does not parse";
  }
  const auto digest = report.find("pipeline_digest");
  if (digest == report.end() || !digest->is_string() || *digest != pipeline_digest(one))
    return report_path.string() + " is from another pipeline or other input files";
  for (const std::string& name : written_output_names(one)) {
    const fs::path file = one.outputs.dir / name;
    if (!fs::is_regular_file(file, ec) || fs::file_size(file, ec) == 0 || ec)
      return file.string() + " is missing or empty";
  }
  if (one.outputs.registered_image) {
    const fs::path image = one.outputs.dir / (one.outputs.prefix + "registered" + one.outputs.image_format);
    try {
      check_image_header(image);
    } catch (const std::exception& e) {
      return image.string() + ": " + e.what();
    }
  }
  return report;
}

}  // namespace regpipe
