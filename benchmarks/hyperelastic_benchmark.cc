// SPDX-License-Identifier: LGPL-2.1-or-later
// Steps per second of the hyperelastic app with the chapter's real-time
// settings (dt = 0.01, Newton 2e-5, CG 1e-4 relative; Fig. 16.13), on
// built-in tetrahedral bars from the size of the chapter's hand model
// (about 29 k nodes, 125 k tetrahedra) to a few million tetrahedra, for
// the GPU configurations and the host path on all cores, with the stage
// breakdown of Figures 16.10-16.11. GPU steps run as one device graph each
// (Step graph = true), their stages split by the device's clock; the "host
// loop" row drives the same kernels from the host, stage by stage.
//
// Usage: hyperelastic_benchmark [--steps N] [--host-steps N]
//                               [--sizes NX,NY,NZ ...] [--no-host] [--all]
// Sizes are cells of a 3 x 1 x 1 bar along x, y, z (5 tetrahedra each).
// All configurations and the host path run on the first size; on the
// others only the first N (--large-configs N, default 2: GlobalNZ in double
// and float), unless --all is given.

#include <deal.II/base/multithread_info.h>
#include <deal.II/base/timer.h>

#include <gpu_assembly/base/device.h>

#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "../tests/hyperelastic_test_utilities.h"

namespace
{
  struct Row
  {
    std::string                   configuration;
    double                        seconds_per_step = 0;
    double                        newton_per_step  = 0;
    double                        cg_per_newton    = 0;
    std::map<std::string, double> stages;
  };

  Row
  measure(const std::string &prm_text,
          const std::string &name,
          const unsigned int n_steps,
          std::string       &mesh_line)
  {
    std::ostringstream log;
    // Warm-up steps: first-call set-up in cuSPARSE and the GPU's clocks
    // ramping up stay out of the measurement.
    auto               solid = Testing::run_hyperelastic(prm_text, 10, log);
    const auto        &a     = solid->arrays();
    std::ostringstream mesh;
    mesh << a.n_nodes << " nodes, " << a.n_elements << " tetrahedra, "
         << a.n_dofs << " unknowns, " << a.n_nonzeros() << " nonzeros";
    mesh_line = mesh.str();

    const auto before = solid->statistics();
    solid->reset_timers();
    dealii::Timer timer;
    for (unsigned int s = 0; s < n_steps; ++s)
      solid->do_step();
    timer.stop();
    const auto &after = solid->statistics();

    Row row;
    row.configuration    = name;
    row.seconds_per_step = timer.wall_time() / n_steps;
    const double newton =
      after.n_newton_iterations - before.n_newton_iterations;
    row.newton_per_step = newton / n_steps;
    row.cg_per_newton =
      (after.n_cg_iterations - before.n_cg_iterations) / std::max(newton, 1.);
    row.stages = solid->stage_times();
    return row;
  }
} // namespace



int
main(int argc, char *argv[])
{
  try
    {
      unsigned int                           n_steps       = 100;
      unsigned int                           n_host_steps  = 10;
      bool                                   run_host      = true;
      bool                                   all_configs   = false;
      unsigned int                           large_configs = 2;
      std::vector<std::vector<unsigned int>> sizes;
      for (int i = 1; i < argc; ++i)
        {
          const std::string arg = argv[i];
          if (arg == "--steps" && i + 1 < argc)
            n_steps = std::stoi(argv[++i]);
          else if (arg == "--host-steps" && i + 1 < argc)
            n_host_steps = std::stoi(argv[++i]);
          else if (arg == "--no-host")
            run_host = false;
          else if (arg == "--all")
            all_configs = true;
          else if (arg == "--large-configs" && i + 1 < argc)
            large_configs = std::stoi(argv[++i]);
          else if (arg == "--sizes")
            while (i + 1 < argc && argv[i + 1][0] != '-')
              {
                std::vector<unsigned int> n;
                std::stringstream         in(argv[++i]);
                for (std::string part; std::getline(in, part, ',');)
                  n.push_back(std::stoi(part));
                if (n.size() != 3)
                  throw std::runtime_error("--sizes takes NX,NY,NZ triples");
                sizes.push_back(n);
              }
          else
            throw std::runtime_error("unknown argument " + arg);
        }
      if (sizes.empty())
        sizes = {{60, 20, 20}, {120, 40, 40}, {180, 60, 60}};
      if (GPUAssembly::n_cuda_devices() == 0)
        {
          std::cout << "hyperelastic_benchmark needs a CUDA device."
                    << std::endl;
          return 77;
        }
      std::cout << GPUAssembly::describe_execution_path()
                << "\nHost: " << dealii::MultithreadInfo::n_threads()
                << " threads\n"
                << "Chapter real-time settings: dt = 0.01, mu = 5, lambda = "
                   "2, rho = 1, Newton 2e-5 absolute, CG 1e-4 relative; a "
                   "3 x 1 x 1 bar clamped at x = 0, its end dragged by a "
                   "force (0, 0.3, -0.5) sin(2 pi t).\n"
                << std::endl;

      for (const auto &n : sizes)
        {
          std::ostringstream base;
          base << "subsection Geometry\n  set Bar size = 3, 1, 1\n"
               << "  set Subdivisions = " << n[0] << ", " << n[1] << ", "
               << n[2] << "\nend\n"
               << "subsection Boundary conditions\n"
               << "  set Load region = 2.95, 0, 0, 3, 1, 1\n"
               << "  set Load = 0, 0.3, -0.5\n"
               << "  set Load time function = sin(2*pi*t)\nend\n"
               << "subsection Time\n  set Time step = 0.01\n"
               << "  set End time = 1000\nend\n"
               << "subsection Solver\n  set Newton tolerance = 2e-5\n"
               << "  set CG relative tolerance = 1e-4\nend\n";
          const std::vector<std::pair<std::string, std::string>> configs = {
            {"GPU GlobalNZ sym, double",
             "  set Device = gpu\n  set Assembly method = GlobalNZ\n"},
            {"GPU GlobalNZ sym, float",
             "  set Device = gpu\n  set Precision = float\n"},
            {"GPU GlobalNZ sym, double, host loop",
             "  set Device = gpu\n  set Step graph = false\n"},
            {"GPU GlobalNZ full, double",
             "  set Device = gpu\n  set Symmetric element data = false\n"},
            {"GPU SharedNZ, double",
             "  set Device = gpu\n  set Assembly method = SharedNZ\n"},
            {"GPU GlobalNZ sym, QR S(e), double",
             "  set Device = gpu\n  set Compressed supplemental data = "
             "true\n"}};
          std::vector<Row> rows;
          std::string      mesh_line;
          // Beyond the first mesh only the two main GPU configurations run
          // (each configuration sets up its own mesh, which takes long for
          // millions of tetrahedra); the host path only where asked.
          const bool     first_mesh = (&n == &sizes.front());
          const unsigned n_configs =
            first_mesh || all_configs ? configs.size() : large_configs;
          for (unsigned int c = 0; c < n_configs; ++c)
            rows.push_back(measure(base.str() + "subsection Execution\n" +
                                     configs[c].second + "end\n",
                                   configs[c].first,
                                   n_steps,
                                   mesh_line));
          if (run_host && (first_mesh || all_configs))
            rows.push_back(measure(
              base.str() + "subsection Execution\n  set Device = host\nend\n",
              "host, " + std::to_string(dealii::MultithreadInfo::n_threads()) +
                " threads, double",
              n_host_steps,
              mesh_line));

          std::cout << "Mesh: " << mesh_line << "\n";
          std::cout << std::left << std::setw(36) << "configuration"
                    << std::right << std::setw(10) << "steps/s" << std::setw(11)
                    << "ms/step" << std::setw(9) << "NR/step" << std::setw(9)
                    << "CG/NR" << std::setw(10) << "assembly" << std::setw(8)
                    << "solve" << std::setw(8) << "update" << std::setw(11)
                    << "vs host"
                    << "\n";
          const double host_time = run_host && (first_mesh || all_configs) ?
                                     rows.back().seconds_per_step :
                                     0.;
          for (const Row &row : rows)
            {
              double total = 0;
              for (const auto &[stage, seconds] : row.stages)
                total += seconds;
              const auto percent = [&](const std::string &stage) {
                const auto         it = row.stages.find(stage);
                std::ostringstream out;
                out << std::fixed << std::setprecision(1)
                    << (it == row.stages.end() || total == 0 ?
                          0. :
                          100. * it->second / total)
                    << '%';
                return out.str();
              };
              std::cout << std::left << std::setw(36) << row.configuration
                        << std::right << std::fixed << std::setprecision(1)
                        << std::setw(10) << 1. / row.seconds_per_step
                        << std::setprecision(3) << std::setw(11)
                        << 1e3 * row.seconds_per_step << std::setprecision(2)
                        << std::setw(9) << row.newton_per_step
                        << std::setprecision(1) << std::setw(9)
                        << row.cg_per_newton << std::setw(10)
                        << percent("Assembly") << std::setw(8)
                        << percent("Solve (Jacobi-CG)") << std::setw(8)
                        << percent("Update") << std::setw(10)
                        << std::setprecision(1)
                        << (host_time > 0 ? host_time / row.seconds_per_step :
                                            0.)
                        << "x\n";
            }
          std::cout << std::endl;
        }
    }
  catch (std::exception &exc)
    {
      std::cerr << "hyperelastic_benchmark: " << exc.what() << std::endl;
      return 1;
    }
  return 0;
}
