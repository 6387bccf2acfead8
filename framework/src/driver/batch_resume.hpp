// Resumable batches: an image whose complete results are already in its folder is not
// registered again (outputs.resume). Complete is checked, not assumed, since a batch may have
// been killed while writing, or run with another pipeline or on other files.
#pragma once

#include <regpipe/host/pipeline.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <variant>
#include <vector>

namespace regpipe {

// The report.json of a complete result of `one` (one image's pipeline, its outputs.dir the
// image's folder), or why there is none: no report (or outputs.report off), a report that does
// not parse or names another pipeline_digest (another pipeline, image or input file), or an
// output file missing, empty or (the registered image) without a readable header.
std::variant<nlohmann::json, std::string> complete_result(const Pipeline& one);

}  // namespace regpipe
