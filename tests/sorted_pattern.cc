// SPDX-License-Identifier: LGPL-2.1-or-later
// The pattern and K(e, d1, d2) built by sorting on the host (the twin of the
// GPU build) against the adapter's row-by-row host build, array by array,
// on meshes with hanging nodes, periodicity, chained lines and tetrahedra,
// with and without keep_constrained_dofs; and the adapter's choice of where
// it builds them on a machine without a CUDA device (the test runs with
// CUDA_VISIBLE_DEVICES=-1).

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/adapter/sorted_pattern.h>
#include <gpu_assembly/base/exceptions.h>

#include "pattern_cases.h"

using namespace dealii;
using namespace GPUAssembly;

template <int dim>
void
check_twin(const std::string               &name,
           const Testing::TestProblem<dim> &problem,
           Testing::Checks                 &checks)
{
  Testing::for_each_keep_constrained_dofs<dim>(
    name,
    [&](typename DoFHandlerAdapter<dim>::AdditionalData data,
        const std::string                              &what) {
      data.pattern_construction = PatternConstruction::host;
      const DoFHandlerAdapter<dim> adapter =
        Testing::make_adapter(problem, data);
      checks.check(adapter.pattern_built_on() == PatternConstruction::host,
                   what + ": pattern_construction host builds on the host");
      MeshArrays twin = adapter.get_arrays();
      twin.row_offsets.clear();
      twin.column_indices.clear();
      twin.nonzero_map.clear();
      GPUAssembly::internal::make_pattern_by_sorting(twin);
      GPUAssembly::internal::fill_nonzero_map_by_search(twin);
      Testing::check_same_pattern(checks,
                                  what + ", built by sorting on the host",
                                  adapter.get_arrays(),
                                  twin);
    });
}



void
check_choice_without_device(Testing::Checks &checks)
{
  Testing::TestProblem<2> problem;
  Testing::setup_constrained_problem(problem,
                                     Testing::ConstrainedCase::refined_ball,
                                     1,
                                     1);
  DoFHandlerAdapter<2>::AdditionalData data;
  data.pattern_construction            = PatternConstruction::automatic;
  const DoFHandlerAdapter<2> automatic = Testing::make_adapter(problem, data);
  checks.check(automatic.pattern_built_on() == PatternConstruction::host,
               "pattern_construction automatic builds on the host where "
               "no CUDA device is present");
  data.pattern_construction = PatternConstruction::device;
  checks.check_throws<ExcUnsupportedInput>(
    [&]() {
      Testing::make_adapter(problem, data);
    },
    "pattern_construction is 'device', but this machine has no CUDA device",
    "pattern_construction device without a CUDA device is refused");
}



int
main()
{
  Testing::Checks checks;
  Testing::for_each_pattern_case(false,
                                 [&](const std::string &name,
                                     const auto        &problem) {
                                   check_twin(name, problem, checks);
                                 });
  check_choice_without_device(checks);
  return checks.exit_code();
}
