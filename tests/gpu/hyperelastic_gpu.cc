// The hyperelastic app's GPU path against its host path: the same short
// simulations must give the same positions (1e-10 relative in double),
// for GlobalNZ (full and symmetric element data), SharedNZ, QR-compressed
// S(e) and hexahedra; GPU runs are bitwise reproducible; single precision
// stays close to the double-precision host run.

#include <gpu_assembly/base/device.h>

#include <sstream>

#include "../hyperelastic_test_utilities.h"
#include "../tests.h"

namespace
{
  using namespace Testing;

  const std::string scenario = R"(
subsection Geometry
  set Bar size     = 4, 1, 1
  set Subdivisions = 8, 2, 2
  set Cell type    = @CELLS@
end
subsection Boundary conditions
  set Load region        = 3.9, 0, 0, 4, 1, 1
  set Load               = 0, 0.02, -0.05
  set Load time function = sin(pi*t/2)
end
subsection Initial conditions
  set Velocity = 0; 0; 0.02*x
end
subsection Solver
  set Newton tolerance      = @NEWTON@
  set CG relative tolerance = @CG@
end
)";

  std::string
  make_scenario(const std::string &cells,
                const std::string &newton,
                const std::string &cg,
                const std::string &execution)
  {
    std::string text = scenario;
    text.replace(text.find("@CELLS@"), 7, cells);
    text.replace(text.find("@NEWTON@"), 8, newton);
    text.replace(text.find("@CG@"), 4, cg);
    return text + "subsection Execution\n" + execution + "end\n";
  }
} // namespace



int
main()
{
  if (GPUAssembly::n_cuda_devices() == 0)
    {
      std::cout << "No CUDA device: skipped." << std::endl;
      return skip_return_code;
    }
  std::cout << GPUAssembly::describe_execution_path() << std::endl;
  Checks             checks;
  std::ostringstream log;
  const unsigned int n_steps = 20;

  struct Case
  {
    std::string name, cells, execution;
  };
  const std::vector<Case> cases = {
    {"GlobalNZ, symmetric element data",
     "tetrahedra",
     "  set Assembly method = GlobalNZ\n"},
    {"GlobalNZ, full element data",
     "tetrahedra",
     "  set Assembly method = GlobalNZ\n  set Symmetric element data = "
     "false\n"},
    {"SharedNZ", "tetrahedra", "  set Assembly method = SharedNZ\n"},
    {"GlobalNZ, QR-compressed S(e)",
     "tetrahedra",
     "  set Compressed supplemental data = true\n"},
    {"GlobalNZ, hexahedra", "hexahedra", ""},
    {"SharedNZ, hexahedra", "hexahedra", "  set Assembly method = SharedNZ\n"}};

  for (const Case &c : cases)
    {
      const auto host =
        run_hyperelastic(make_scenario(c.cells,
                                       "1e-11",
                                       "1e-13",
                                       c.execution + "  set Device = host\n"),
                         n_steps,
                         log);
      const auto gpu =
        run_hyperelastic(make_scenario(c.cells,
                                       "1e-11",
                                       "1e-13",
                                       c.execution + "  set Device = gpu\n"),
                         n_steps,
                         log);
      const auto [u_host, p_host] = host->state();
      const auto [u_gpu, p_gpu]   = gpu->state();
      const double position_difference =
        max_relative_difference(positions(*gpu, u_gpu),
                                positions(*host, u_host));
      const double displacement_difference =
        max_relative_difference(u_gpu, u_host);
      const double momentum_difference = max_relative_difference(p_gpu, p_host);
      checks.check(position_difference < 1e-10 &&
                     displacement_difference < 1e-8 &&
                     momentum_difference < 1e-8,
                   c.name + ": GPU vs host after " + std::to_string(n_steps) +
                     " steps, positions " + scientific(position_difference) +
                     ", displacements " + scientific(displacement_difference) +
                     ", momenta " + scientific(momentum_difference) +
                     " (relative)");
    }

  {
    // No atomics anywhere in a step: two GPU runs agree bit for bit.
    const std::string prm =
      make_scenario("tetrahedra", "1e-11", "1e-13", "  set Device = gpu\n");
    const auto first  = run_hyperelastic(prm, n_steps, log);
    const auto second = run_hyperelastic(prm, n_steps, log);
    checks.check(first->state() == second->state(),
                 "GlobalNZ: two GPU runs give bitwise identical states");
  }

  {
    // Single precision with tolerances it can reach, against the double
    // host run with the same tolerances.
    const std::string execution = "  set Precision = float\n";
    const auto        host      = run_hyperelastic(
      make_scenario("tetrahedra", "1e-4", "1e-6", "  set Device = host\n"),
      n_steps,
      log);
    const auto gpu =
      run_hyperelastic(make_scenario("tetrahedra",
                                     "1e-4",
                                     "1e-6",
                                     execution + "  set Device = gpu\n"),
                       n_steps,
                       log);
    const double difference =
      max_relative_difference(positions(*gpu, gpu->state().first),
                              positions(*host, host->state().first));
    checks.check(difference < 1e-4,
                 "float GPU vs double host, Newton 1e-4: positions differ "
                 "by " +
                   scientific(difference) + " (relative)");
  }

  return checks.exit_code();
}
