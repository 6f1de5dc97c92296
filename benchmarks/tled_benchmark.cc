// SPDX-License-Identifier: LGPL-2.1-or-later
// tled_benchmark: Total Lagrangian Explicit Dynamics of the truth cube
// (E = 3000 Pa, nu = 0.49, bottom on rollers, top pressed down 10 %,
// one-point hexahedra with hourglass control) at 45^3 = 91,125 hexahedra
// and at 100^3 = 1 M hexahedra. For each size, precision and nodal sum it
// prints ms per step, element updates per second, the byte floor of a step
// (TLED::Model::bytes_per_step) and the fraction of the device's measured
// copy bandwidth that the step reaches, next to the host stepper on all
// cores (timed over fewer steps) and the atomic nodal sum, in the same run.
//
// Usage: tled_benchmark [--steps N] [--host-steps N] [--sizes n1,n2,...]
//                       [--steps-per-graph N] [--no-host] [--drift]
//   --drift: instead, run the 45^3 cube (or the first size) N steps in
//   float and in double on the GPU and print how far float drifts from
//   double (displacements, centre node, reaction force on the top face).

#include <deal.II/base/multithread_info.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/tled/tled_stepper.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "../tests/tled_test_meshes.h"
#include "stepper_benchmarking.h"

using namespace GPUAssembly::TLED;
using namespace Benchmarking;

namespace
{
  constexpr double cube_size   = 0.08; // m
  constexpr double compression = 0.1;

  struct Row
  {
    std::string  what;
    unsigned int steps      = 0;
    double       seconds    = 0;
    std::size_t  bytes      = 0;
    unsigned int n_elements = 0;
  };

  void
  print(const Row &row, const double bandwidth, const double host_ms)
  {
    const double ms = 1e3 * row.seconds / row.steps;
    std::cout << std::left << std::setw(34) << row.what << std::right
              << std::setw(8) << row.steps << std::fixed << std::setprecision(3)
              << std::setw(11) << ms << std::setw(12) << std::setprecision(0)
              << 1e3 / ms << std::scientific << std::setprecision(3)
              << std::setw(12) << row.n_elements / (ms * 1e-3) << std::fixed
              << std::setprecision(1) << std::setw(10) << row.bytes / 1048576.
              << std::setw(10);
    if (bandwidth > 0)
      std::cout << 100. * row.bytes / (ms * 1e-3) / bandwidth << " %";
    else
      std::cout << "-";
    if (host_ms > 0)
      std::cout << std::setw(10) << std::setprecision(1) << host_ms / ms << "x";
    std::cout << std::endl;
  }

  template <typename Number>
  Row
  time_stepper(Stepper<Number>          &stepper,
               const Model<Number>      &model,
               const BoundaryConditions &bc,
               const Integration        &integration,
               const unsigned int        n_steps,
               const unsigned int        warm_up,
               const std::string        &what)
  {
    stepper.reinit(model, bc, integration);
    stepper.advance(warm_up);
    Row row;
    row.what       = what;
    row.steps      = n_steps;
    row.seconds    = seconds_to_advance(stepper, n_steps);
    row.bytes      = model.bytes_per_step();
    row.n_elements = model.n_elements;
    return row;
  }

  double
  top_force(const Model<double> &model, const std::vector<double> &u)
  {
    const std::vector<double> f   = internal_forces(model, u);
    double                    sum = 0;
    for (unsigned int v = 0; v < model.n_nodes; ++v)
      if (model.coordinates[3 * v + 2] > cube_size * (1 - 1e-9))
        sum += f[3 * v + 2];
    return sum;
  }
} // namespace

int
main(int argc, char *argv[])
{
  unsigned int n_steps = 50000, host_steps = 200, steps_per_graph = 300;
  std::vector<unsigned int> sizes   = {45, 100};
  bool                      no_host = false, drift = false;
  for (int i = 1; i < argc; ++i)
    {
      const std::string arg  = argv[i];
      const auto        next = [&]() -> std::string {
        if (i + 1 >= argc)
          {
            std::cerr << arg << " needs a value" << std::endl;
            std::exit(1);
          }
        return argv[++i];
      };
      if (arg == "--steps")
        n_steps = std::stoul(next());
      else if (arg == "--host-steps")
        host_steps = std::stoul(next());
      else if (arg == "--steps-per-graph")
        steps_per_graph = std::stoul(next());
      else if (arg == "--sizes")
        {
          sizes.clear();
          std::stringstream list(next());
          std::string       item;
          while (std::getline(list, item, ','))
            sizes.push_back(std::stoul(item));
        }
      else if (arg == "--no-host")
        no_host = true;
      else if (arg == "--drift")
        drift = true;
      else
        {
          std::cerr << "Usage: " << argv[0]
                    << " [--steps N] [--host-steps N] [--sizes n1,n2,...] "
                       "[--steps-per-graph N] [--no-host] [--drift]"
                    << std::endl;
          return 1;
        }
    }
  std::cout << GPUAssembly::describe_execution_path() << std::endl;
  if (GPUAssembly::n_cuda_devices() == 0)
    {
      std::cout << "tled_benchmark needs a CUDA device." << std::endl;
      return 1;
    }

  const Material material = Testing::truth_cube_material();
  if (drift)
    {
      const unsigned int  n     = sizes.front();
      const Mesh          mesh  = Testing::make_hexahedral_cube(n, cube_size);
      const Model<double> model = make_model<double>(mesh, material);
      Integration         integration;
      integration.time_step = 0.5 * model.critical_time_step;
      integration.damping   = 20.;
      const BoundaryConditions bc =
        Testing::compression_conditions(mesh,
                                        cube_size,
                                        compression,
                                        0.8 * n_steps * integration.time_step);
      DeviceStepper<double> stepper_double(NodalSum::plan, steps_per_graph);
      stepper_double.reinit(model, bc, integration);
      stepper_double.advance(n_steps);
      DeviceStepper<float> stepper_float(NodalSum::plan, steps_per_graph);
      stepper_float.reinit(make_model<float>(mesh, material), bc, integration);
      stepper_float.advance(n_steps);
      const StateDifference difference =
        compare_states(stepper_float, stepper_double);
      std::vector<double> prev, u_double, u_float;
      stepper_double.get_state(prev, u_double);
      stepper_float.get_state(prev, u_float);
      // The node nearest the centre.
      unsigned int centre = 0;
      double       best   = 1e300;
      for (unsigned int v = 0; v < model.n_nodes; ++v)
        {
          double d = 0;
          for (unsigned int k = 0; k < 3; ++k)
            d += std::pow(model.coordinates[3 * v + k] - cube_size / 2, 2);
          if (d < best)
            best = d, centre = v;
        }
      const double f_double = top_force(model, u_double),
                   f_float  = top_force(model, u_float);
      std::cout << std::scientific << std::setprecision(3) << n << "^3 cube, "
                << model.n_elements << " hexahedra, " << n_steps << " steps of "
                << integration.time_step
                << " s, float against double on the GPU:\n"
                << "  max |u_float - u_double| / max |u_double| = "
                << difference.max_difference / difference.max_reference << "\n"
                << "  centre node u_z: double " << u_double[3 * centre + 2]
                << ", float " << u_float[3 * centre + 2] << ", relative "
                << std::abs(u_float[3 * centre + 2] -
                            u_double[3 * centre + 2]) /
                     std::abs(u_double[3 * centre + 2])
                << "\n  top-face force z: double " << f_double << " N, float "
                << f_float << " N, relative "
                << std::abs(f_float - f_double) / std::abs(f_double)
                << std::endl;
      return 0;
    }

  const double bandwidth = GPUAssembly::measure_copy_bandwidth();
  std::cout << "Copy bandwidth (read + write): " << std::fixed
            << std::setprecision(1) << bandwidth / 1e9 << " GB/s; "
            << dealii::MultithreadInfo::n_threads() << " host threads\n";
  for (const unsigned int n : sizes)
    {
      const Mesh          mesh    = Testing::make_hexahedral_cube(n, cube_size);
      const Model<double> model   = make_model<double>(mesh, material);
      const Model<float>  model_f = make_model<float>(mesh, material);
      Integration         integration;
      integration.time_step = 0.5 * model.critical_time_step;
      integration.damping   = 20.;
      const BoundaryConditions bc =
        Testing::compression_conditions(mesh,
                                        cube_size,
                                        compression,
                                        0.8 * n_steps * integration.time_step);
      std::cout << "\n"
                << n << "^3 truth cube: " << model.n_elements << " hexahedra, "
                << model.n_nodes << " nodes, dt " << std::scientific
                << std::setprecision(3) << integration.time_step << " s\n"
                << std::left << std::setw(34) << "path" << std::right
                << std::setw(8) << "steps" << std::setw(11) << "ms/step"
                << std::setw(12) << "steps/s" << std::setw(12) << "elem/s"
                << std::setw(10) << "MiB/step" << std::setw(12) << "of copy BW"
                << std::setw(11) << "vs host" << std::endl;
      double host_ms = 0;
      if (!no_host)
        {
          HostStepper<double> host;
          const Row           row = time_stepper(host,
                                       model,
                                       bc,
                                       integration,
                                       host_steps,
                                       5,
                                       "host, double, all cores");
          host_ms                 = 1e3 * row.seconds / row.steps;
          print(row, 0, 0);
        }
      for (const NodalSum sum : {NodalSum::plan, NodalSum::atomic})
        {
          const std::string sum_name =
            sum == NodalSum::plan ? "plan" : "atomic";
          DeviceStepper<double> d(sum, steps_per_graph);
          print(time_stepper(d,
                             model,
                             bc,
                             integration,
                             n_steps,
                             steps_per_graph,
                             "GPU, double, " + sum_name),
                bandwidth,
                host_ms);
          DeviceStepper<float> f(sum, steps_per_graph);
          print(time_stepper(f,
                             model_f,
                             bc,
                             integration,
                             n_steps,
                             steps_per_graph,
                             "GPU, float, " + sum_name),
                bandwidth,
                host_ms);
        }
    }
  std::cout << "\nMiB/step: the byte floor of a step (plan layout); of copy "
               "BW: floor / time over the measured copy bandwidth; vs host: "
               "host ms/step over GPU ms/step."
            << std::endl;
  return 0;
}
