// Batch mode of `regpipe run`: one reference, many moving images (Li & Kumar 2014 suggest
// reusing the reference's preprocessing). The components are created, and the reference
// read and prepared (pyramid, centre of mass, mass radius), once for the whole batch.
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/driver.hpp>

#include "driver/run_outputs.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One moving image registered to the prepared reference into `one.outputs.dir`; returns
// its final cost and fills `phases` as it goes. Throws as register_images does.
double register_one(const Pipeline& one, RegistrationImages& images,
                    const PreparedReference& reference, RegistrationComponents& components,
                    const PluginHost& plugins, HostServices& services, PhaseSeconds& phases) {
  const auto start = Clock::now();
  load_moving(one.inputs, one.inputs.moving.front(), images);
  phases.reading = seconds_since(start);
  prepare_output_dir(one.outputs.dir);  // after the read: an unreadable image leaves no folder
  const auto registration_start = Clock::now();
  RegistrationResult result = register_images(one, images, reference, components, services);
  phases.registration = seconds_since(registration_start);
  result.seconds_loading = phases.reading;
  write_outputs(one, images, result, plugins, services, start, phases);
  return result.final_cost;
}

}  // namespace

size_t run_batch(const Pipeline& p, const PluginHost& plugins, HostServices& services) {
  const auto start = Clock::now();
  prepare_output_dir(p.outputs.dir);
  // Components first: a bad parameter fails before any image is read.
  RegistrationComponents components = create_registration_components(p, plugins, services);
  RegistrationImages images;
  load_reference(p.inputs, images);
  const PreparedReference reference = prepare_reference(p, images, *components.resampler);

  nlohmann::json results = nlohmann::json::array();
  size_t failures = 0;
  PhaseSeconds sums{0.0, 0.0, 0.0};  // over the images registered
  const size_t n = p.inputs.moving.size();
  for (size_t i = 0; i < n; ++i) {
    const ImageInput& moving = p.inputs.moving[i];
    Pipeline one = p;
    one.inputs.moving = {moving};
    one.outputs.dir = p.outputs.dir / moving_stem(moving.path);
    const auto image_start = Clock::now();
    nlohmann::json entry = {{"path", moving.path.string()}, {"outputs", one.outputs.dir.string()}};
    const auto failed = [&](const std::exception& e) {
      entry["status"] = "failed";
      entry["error"] = e.what();
      entry["final_cost"] = nullptr;
    };
    PhaseSeconds phases;
    try {
      const double cost = register_one(one, images, reference, components, plugins, services, phases);
      entry["status"] = "ok";
      entry["error"] = nullptr;
      entry["final_cost"] = cost;
    } catch (const ComponentError& e) {
      if (e.status() == RP_CANCELLED) throw;  // Ctrl-C stops the batch, not only this image
      failed(e);
    } catch (const std::exception& e) {  // unreadable image, no overlap, full disk, ...
      failed(e);
    }
    entry["seconds"] = seconds_since(image_start);
    // Where the time went (null: not reached); NaN is JSON's null in nlohmann's dump.
    entry["seconds_reading"] = phases.reading;
    entry["seconds_registration"] = phases.registration;
    entry["seconds_writing"] = phases.writing;
    const bool ok = entry["status"] == "ok";
    if (!ok) {
      ++failures;
      entry["outputs"] = nullptr;
    } else {
      sums.reading += phases.reading;
      sums.registration += phases.registration;
      sums.writing += phases.writing;
    }
    if (ok)
      std::printf("[%zu/%zu] %s: ok, cost %.6f, %.3f s (reading %.3f, registration %.3f, "
                  "writing %.3f) -> %s\n",
                  i + 1, n, moving.path.c_str(), entry["final_cost"].get<double>(),
                  entry["seconds"].get<double>(), phases.reading, phases.registration,
                  phases.writing, one.outputs.dir.c_str());
    else
      std::printf("[%zu/%zu] %s: FAILED: %s\n", i + 1, n, moving.path.c_str(),
                  entry["error"].get<std::string>().c_str());
    std::fflush(stdout);
    results.push_back(std::move(entry));
  }

  const double total = seconds_since(start);
  const size_t registered = n - failures;
  const nlohmann::json summary = {
      {"images", n},
      {"failures", failures},
      {"seconds_total", total},
      {"registrations_per_minute", total > 0.0 ? 60.0 * double(registered) / total : 0.0},
      // Paid once here; without batch mode every image would pay it again.
      {"seconds_reference_preparation", reference.seconds},
      // Summed over the images registered: where the batch's time went.
      {"seconds_reading", sums.reading},
      {"seconds_registration", sums.registration},
      {"seconds_writing", sums.writing}};
  const nlohmann::json report = {{"regpipe_version", REGPIPE_VERSION},
                                 {"pipeline", p.source.string()},
                                 {"reference", p.inputs.reference.path.string()},
                                 {"summary", summary},
                                 {"images", results}};
  write_text_atomically(p.outputs.dir / "batch_report.json", report.dump(2) + "\n");
  std::printf("batch: %zu images, %zu failed, total %.3f s, %.1f registrations per minute, "
              "reference prepared once in %.3f s; report in %s\n",
              n, failures, total, summary["registrations_per_minute"].get<double>(),
              reference.seconds, (p.outputs.dir / "batch_report.json").c_str());
  return failures;
}

}  // namespace regpipe
