// What `regpipe compare` measured, before it is written out (compare_report.cpp).
#pragma once

#include <regpipe/host/compare.hpp>
#include <regpipe/host/transform.hpp>

#include <Eigen/Core>
#include <map>
#include <string>
#include <vector>

namespace regpipe {

struct CompareRegistration {
  Eigen::Matrix4d ref_to_mov = Eigen::Matrix4d::Identity();
  double mean_displacement_mm = 0.0;  // against the centre, over the reference head
  double seconds = 0.0;               // pyramid + search
  long long evaluations = 0;
  double final_cost = 0.0;
};

struct CompareResults {
  std::string centre_source;            // how the centre was obtained, for the summary
  Eigen::Matrix4d centre = Eigen::Matrix4d::Identity();  // ref_to_mov
  std::array<uint32_t, 3> level_dims{};  // the reference at level_mm
  std::vector<std::string> versions;     // per cost: "id version"
  // agreement: offsets[t] from the centre (output units), values[c][t]
  std::vector<AffineParams> agreement_offsets;
  std::vector<std::vector<double>> agreement;
  // timing per cost: microseconds per evaluation, batched (k = timing_batch) and alone
  std::vector<double> us_batched, us_single;
  // profiles: offsets[p][i] (output units), values[p][c][i]
  std::vector<std::vector<double>> profile_offsets;
  std::vector<std::vector<std::vector<double>>> profiles;
  std::vector<CompareRegistration> registrations;  // per cost when register_each
};

// The output files (name -> content) for the results.
std::map<std::string, std::string> compare_files(const CompareConfig& config,
                                                 const CompareResults& results);

// Output units of parameter p (degrees for rotations) per unit of the abi.h parameter.
double output_units_per_param(int p);

// The half-range of parameter p's profile, in output units.
double profile_half_range(const CompareConfig& config, int p);

}  // namespace regpipe
