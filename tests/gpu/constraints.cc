// SPDX-License-Identifier: LGPL-2.1-or-later
// Constraints with entries on the device: every assembly method, followed
// by the constraint plan, equals the host reference (which the test
// 'constraints' compares with deal.II) to 1e-13 in double on hanging-node,
// periodic and chained constraints; all methods but LocalElem-atomic are
// bitwise repeatable; float is within float rounding; DeviceConstraints'
// distribute() and set_zero() equal their host forms. With --pattern
// device the adapters build their pattern and K on the GPU. Needs a GPU:
// exits with 77 where there is none.

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/lac/device_constraints.h>

#include "../constraint_problems.h"
#include "../dealii_reference.h"
#include "../tests.h"
#include "device_assembly.h"
#include "gpu_tests.h"

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  // Where the adapters build their pattern and K (--pattern device).
  PatternConstruction pattern_construction = PatternConstruction::host;

  struct Variant
  {
    AssemblyMethod method;
    bool           node_pairs;
    bool           symmetric;

    std::string
    name() const
    {
      return to_string(method) + (node_pairs ? " node pairs" : "") +
             (symmetric ? " symmetric" : "");
    }
  };

  const std::vector<Variant> variants = {
    {AssemblyMethod::global_nz, false, false},
    {AssemblyMethod::global_nz, false, true},
    {AssemblyMethod::shared_nz, false, false},
    {AssemblyMethod::shared_nz, true, false},
    {AssemblyMethod::local_elem_atomic, false, false},
    {AssemblyMethod::local_elem_colored, false, false}};



  template <int dim, typename Number, class Kernel>
  void
  device_assemble(const MeshArrays      &arrays,
                  const Variant         &variant,
                  const AssemblyOptions &options,
                  const Kernel          &kernel,
                  const unsigned int     n_repetitions,
                  std::vector<Number>   &values,
                  std::vector<Number>   &rhs)
  {
    auto data    = Testing::assembler_data<dim, Number>(variant.method,
                                                     variant.node_pairs,
                                                     variant.symmetric);
    data.options = options;
    Testing::device_assemble<dim>(arrays,
                                  data,
                                  kernel,
                                  n_repetitions,
                                  values,
                                  rhs);
  }



  template <int dim>
  void
  test_case(Testing::Checks               &checks,
            const Testing::ConstrainedCase constrained_case,
            const unsigned int             degree,
            const Form                     form,
            const unsigned int             extra_refinements)
  {
    const unsigned int        n_components = form == Form::elasticity ? dim : 1;
    Testing::TestProblem<dim> problem;
    Testing::setup_constrained_problem(problem,
                                       constrained_case,
                                       degree,
                                       n_components,
                                       extra_refinements);

    for (const bool keep : {true, false})
      {
        const DoFHandlerAdapter<dim> adapter =
          Testing::make_adapter(problem,
                                {SupplementalDataFormat::quadrature_gradients,
                                 keep,
                                 pattern_construction});
        const MeshArrays &arrays = adapter.get_arrays();
        AssemblyOptions   options;
        options.use_inhomogeneities_for_rhs = !keep;
        const std::string name =
          problem.name() + ", " + to_string(form) + ", " +
          Testing::to_string(constrained_case) + " (" +
          std::to_string(arrays.n_elements) + " cells" +
          (keep ? "" :
                  ", constrained couplings dropped, inhomogeneities in "
                  "the rhs") +
          ")";

        with_kernel<dim, double>(form, n_components, [&](const auto &kernel) {
          std::vector<double> reference_values, reference_rhs;
          HostAssembler<dim, double>(arrays).assemble(kernel,
                                                      reference_values,
                                                      reference_rhs,
                                                      options);
          for (const Variant &variant : variants)
            {
              // The mass kernel has neither a node-pair form nor a
              // declared symmetry.
              if ((variant.symmetric || variant.node_pairs) &&
                  form == Form::mass)
                continue;
              std::vector<double> values, rhs, values_2, rhs_2;
              device_assemble<dim>(arrays,
                                   variant,
                                   options,
                                   kernel,
                                   1,
                                   values,
                                   rhs);
              device_assemble<dim>(arrays,
                                   variant,
                                   options,
                                   kernel,
                                   3,
                                   values_2,
                                   rhs_2);
              const double matrix_error =
                Testing::relative_l2_error(values, reference_values);
              const double rhs_error =
                Testing::relative_l2_error(rhs, reference_rhs);
              checks.check(matrix_error <= 1e-13 && rhs_error <= 1e-13,
                           name + ", " + variant.name() +
                             " in double equals the host reference: "
                             "relative errors " +
                             Testing::scientific(matrix_error) + ", " +
                             Testing::scientific(rhs_error) + " <= 1e-13");
              if (variant.method != AssemblyMethod::local_elem_atomic)
                checks.check(values == values_2 && rhs == rhs_2,
                             name + ", " + variant.name() +
                               ": bitwise identical on a fresh plan and "
                               "after repeated re-assembly");
            }
        });

        with_kernel<dim, float>(form, n_components, [&](const auto &kernel) {
          std::vector<double> reference_values, reference_rhs;
          with_kernel<dim, double>(
            form,
            n_components,
            [&](const auto &double_kernel) {
              HostAssembler<dim, double>(arrays).assemble(double_kernel,
                                                          reference_values,
                                                          reference_rhs,
                                                          options);
            });
          for (const Variant &variant : {variants[0], variants[3], variants[5]})
            {
              if (variant.node_pairs && form == Form::mass)
                continue;
              std::vector<float> values, rhs;
              device_assemble<dim>(arrays,
                                   variant,
                                   options,
                                   kernel,
                                   1,
                                   values,
                                   rhs);
              const double matrix_error =
                Testing::relative_l2_error(values, reference_values);
              const double rhs_error =
                Testing::relative_l2_error(rhs, reference_rhs);
              checks.check(matrix_error < 1e-6 && rhs_error < 1e-6,
                           name + ", " + variant.name() +
                             " in float against double on the host: "
                             "relative errors " +
                             Testing::scientific(matrix_error) + ", " +
                             Testing::scientific(rhs_error) +
                             " < 1e-6 (float rounding)");
            }
        });
      }
  }



  template <int dim>
  void
  test_device_constraints(Testing::Checks &checks)
  {
    Testing::TestProblem<dim> problem;
    Testing::setup_constrained_problem(problem,
                                       Testing::ConstrainedCase::chained,
                                       2,
                                       dim,
                                       1);
    typename DoFHandlerAdapter<dim>::AdditionalData data;
    data.pattern_construction            = pattern_construction;
    const DoFHandlerAdapter<dim> adapter = Testing::make_adapter(problem, data);
    const MeshArrays            &arrays  = adapter.get_arrays();
    const std::vector<double>    x = Testing::random_values(arrays.n_dofs, 11);

    DeviceConstraints<double> constraints(arrays);
    DeviceVector<double>      device_x(x);
    constraints.distribute(device_x);
    std::vector<double> distributed = x;
    distribute_constraints(ConstraintLines(arrays), distributed);
    Vector<double> reference(x.begin(), x.end());
    problem.constraints.distribute(reference);
    const std::vector<double> ours = device_x.to_host();
    const double to_host           = Testing::max_difference(ours, distributed);
    const double to_dealii         = Testing::max_difference(ours, reference);
    checks.check(to_host <= 1e-15 && to_dealii <= 1e-14,
                 problem.name() + ", " +
                   std::to_string(constraints.n_constraints()) +
                   " constrained DoFs: DeviceConstraints::distribute() "
                   "equals its host form (max difference " +
                   Testing::scientific(to_host) +
                   ") and AffineConstraints::distribute() (" +
                   Testing::scientific(to_dealii) + ")");

    constraints.set_zero(device_x);
    const std::vector<double> zeroed   = device_x.to_host();
    bool                      as_asked = true;
    for (unsigned int i = 0; i < zeroed.size(); ++i)
      as_asked &= problem.constraints.is_constrained(i) ? zeroed[i] == 0. :
                                                          zeroed[i] == ours[i];
    checks.check(as_asked,
                 problem.name() +
                   ": DeviceConstraints::set_zero() zeroes exactly the "
                   "constrained entries");
  }
} // namespace



int
main(int argc, char **argv)
{
  // --quick: two cases, for the slower runs under compute-sanitizer;
  // --pattern device: the adapters build their pattern and K on the GPU.
  bool quick = false;
  for (int i = 1; i < argc; ++i)
    {
      const std::string argument = argv[i];
      if (argument == "--quick")
        quick = true;
      else if (argument == "--pattern" && i + 1 < argc &&
               std::string(argv[i + 1]) == "device")
        {
          pattern_construction = PatternConstruction::device;
          ++i;
        }
      else
        {
          std::cerr << "gpu_constraints: unknown argument '" << argument
                    << "' (--quick, --pattern device)" << std::endl;
          return 2;
        }
    }
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Testing::Checks checks;
  using C = Testing::ConstrainedCase;
  try
    {
      test_case<3>(checks, C::chained, 1, Form::elasticity, 0);
      test_device_constraints<3>(checks);
      if (quick)
        return checks.exit_code();
      test_case<2>(checks, C::refined_ball, 1, Form::laplace, 3);
      test_case<2>(checks, C::refined_ball, 2, Form::laplace, 2);
      test_case<3>(checks, C::refined_ball, 1, Form::laplace, 1);
      test_case<2>(checks,
                   C::refined_ball_inhomogeneous,
                   1,
                   Form::elasticity,
                   2);
      test_case<3>(checks,
                   C::refined_ball_inhomogeneous,
                   1,
                   Form::elasticity,
                   1);
      test_case<2>(checks, C::periodic_cube, 2, Form::laplace, 2);
      test_case<3>(checks, C::periodic_cube, 1, Form::elasticity, 1);
      test_case<2>(checks, C::chained, 2, Form::elasticity, 2);
      test_case<3>(checks, C::chained, 1, Form::mass, 1);
      test_device_constraints<2>(checks);
      test_device_constraints<3>(checks);
    }
  catch (const std::exception &exc)
    {
      checks.check(false, std::string("unexpected exception: ") + exc.what());
    }
  return checks.exit_code();
}
