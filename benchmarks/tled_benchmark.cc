// SPDX-License-Identifier: LGPL-2.1-or-later
// tled_benchmark: Total Lagrangian Explicit Dynamics of the truth cube
// (E = 3000 Pa, nu = 0.49, bottom on rollers, top pressed down 10 %,
// one-point hexahedra with hourglass control) at 45^3 = 91,125 hexahedra
// and at 100^3 = 1 M hexahedra. For each size, precision and nodal sum
// (plan, atomic, and fused for each block size) it prints ms per step,
// steps and element updates per second, the bytes the path moves per step
// and their fraction of the device's measured copy bandwidth, the fraction
// of the byte floor (TLED::Model::minimum_bytes_per_step(): element data
// once, displacements and nodal state) that the step reaches, and the
// recomputation factor of the fused sum, next to the host stepper on all
// cores (timed over fewer steps), in the same run.
//
// Usage: tled_benchmark [--steps N] [--host-steps N] [--sizes n1,n2,...]
//                       [--steps-per-graph N] [--no-host] [--drift]
//                       [--nodal-sum plan,atomic,fused]
//                       [--nodes-per-block b1,b2,...] [--precision
//                       double,float]
//   --nodal-sum: the sums to time (all three by default);
//   --nodes-per-block: the node blocks of the fused sum, a row each
//   (multiples of 32 up to 256; default 128);
//   --precision: the precisions to time (both by default);
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
#include <type_traits>
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
    unsigned int steps       = 0;
    double       seconds     = 0;
    std::size_t  bytes       = 0;
    std::size_t  floor_bytes = 0;
    double       recompute   = 1;
    unsigned int n_elements  = 0;
  };

  void
  print_header()
  {
    std::cout << std::left << std::setw(38) << "path" << std::right
              << std::setw(8) << "steps" << std::setw(11) << "ms/step"
              << std::setw(12) << "steps/s" << std::setw(12) << "elem/s"
              << std::setw(10) << "MiB/step" << std::setw(12) << "of copy BW"
              << std::setw(12) << "of floor" << std::setw(10) << "recomp."
              << std::setw(11) << "vs host" << std::endl;
  }

  void
  print(const Row &row, const double bandwidth, const double host_ms)
  {
    const double ms = 1e3 * row.seconds / row.steps;
    std::cout << std::left << std::setw(38) << row.what << std::right
              << std::setw(8) << row.steps << std::fixed << std::setprecision(3)
              << std::setw(11) << ms << std::setw(12) << std::setprecision(0)
              << 1e3 / ms << std::scientific << std::setprecision(3)
              << std::setw(12) << row.n_elements / (ms * 1e-3) << std::fixed
              << std::setprecision(1) << std::setw(10) << row.bytes / 1048576.;
    if (bandwidth > 0)
      std::cout << std::setw(10) << 100. * row.bytes / (ms * 1e-3) / bandwidth
                << " %" << std::setw(10)
                << 100. * row.floor_bytes / (ms * 1e-3) / bandwidth << " %";
    else
      std::cout << std::setw(12) << "-" << std::setw(12) << "-";
    std::cout << std::setw(10) << std::setprecision(2) << row.recompute;
    if (host_ms > 0)
      std::cout << std::setw(10) << std::setprecision(1) << host_ms / ms << "x";
    std::cout << std::endl;
  }

  std::string
  name(const NodalSum sum)
  {
    return sum == NodalSum::plan   ? "plan" :
           sum == NodalSum::atomic ? "atomic" :
                                     "fused";
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
    row.what        = what;
    row.steps       = n_steps;
    row.seconds     = seconds_to_advance(stepper, n_steps);
    row.bytes       = model.bytes_per_step();
    row.floor_bytes = model.minimum_bytes_per_step();
    row.n_elements  = model.n_elements;
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
  std::vector<unsigned int> sizes  = {45, 100};
  std::vector<NodalSum>     sums   = {NodalSum::plan,
                                      NodalSum::atomic,
                                      NodalSum::fused};
  std::vector<unsigned int> blocks = {default_nodes_per_block};
  bool no_host = false, drift = false, use_double = true, use_float = true;
  const auto split = [](const std::string &text) {
    std::vector<std::string> items;
    std::stringstream        list(text);
    std::string              item;
    while (std::getline(list, item, ','))
      items.push_back(item);
    return items;
  };
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
          for (const std::string &item : split(next()))
            sizes.push_back(std::stoul(item));
        }
      else if (arg == "--nodes-per-block")
        {
          blocks.clear();
          for (const std::string &item : split(next()))
            {
              blocks.push_back(std::stoul(item));
              if (blocks.back() == 0 || blocks.back() % 32 != 0 ||
                  blocks.back() > 256)
                {
                  std::cerr << "--nodes-per-block: " << item
                            << " is not a multiple of 32 from 32 to 256"
                            << std::endl;
                  return 1;
                }
            }
        }
      else if (arg == "--nodal-sum")
        {
          sums.clear();
          for (const std::string &item : split(next()))
            {
              if (item != "plan" && item != "atomic" && item != "fused")
                {
                  std::cerr << "--nodal-sum: unknown sum '" << item
                            << "' (plan, atomic or fused)" << std::endl;
                  return 1;
                }
              sums.push_back(item == "plan"   ? NodalSum::plan :
                             item == "atomic" ? NodalSum::atomic :
                                                NodalSum::fused);
            }
        }
      else if (arg == "--precision")
        {
          use_double = use_float = false;
          for (const std::string &item : split(next()))
            {
              if (item != "double" && item != "float")
                {
                  std::cerr << "--precision: unknown precision '" << item
                            << "' (double or float)" << std::endl;
                  return 1;
                }
              (item == "double" ? use_double : use_float) = true;
            }
        }
      else if (arg == "--no-host")
        no_host = true;
      else if (arg == "--drift")
        drift = true;
      else
        {
          std::cerr << "Usage: " << argv[0]
                    << " [--steps N] [--host-steps N] [--sizes n1,n2,...] "
                       "[--steps-per-graph N] [--no-host] [--drift] "
                       "[--nodal-sum plan,atomic,fused] "
                       "[--nodes-per-block b1,b2,...] "
                       "[--precision double,float]"
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
                << std::setprecision(3) << integration.time_step << " s\n";
      print_header();
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
      for (const NodalSum sum : sums)
        for (const unsigned int block : blocks)
          {
            if (sum != NodalSum::fused && block != blocks.front())
              continue;
            const std::string what =
              name(sum) + (sum == NodalSum::fused ?
                             ", " + std::to_string(block) + " nodes/block" :
                             std::string());
            // The fused sum's own traffic and recomputation.
            const auto fused_row = [&](Row row, const auto &m) {
              if (sum == NodalSum::fused)
                {
                  const internal::NodeBlocks b =
                    internal::make_node_blocks(m, block);
                  row.bytes     = b.bytes_per_step;
                  row.recompute = b.recomputation_factor;
                }
              return row;
            };
            const auto time_device = [&](const auto        &m,
                                         const std::string &precision) {
              DeviceStepper<std::decay_t<decltype(m.mu)>>
                  stepper(sum, steps_per_graph, block);
              Row row =
                fused_row(time_stepper(stepper,
                                       m,
                                       bc,
                                       integration,
                                       n_steps,
                                       steps_per_graph,
                                       "GPU, " + precision + ", " + what),
                          m);
              if (stepper.streams_element_data())
                row.what += ", evict-first";
              print(row, bandwidth, host_ms);
            };
            if (use_double)
              time_device(model, "double");
            if (use_float)
              time_device(model_f, "float");
          }
    }
  std::cout
    << "\nMiB/step: the bytes the path moves at least per step (plan and "
       "atomic: the plan layout, element forces written and read back; "
       "fused: the floor, the element data of recomputed elements and the "
       "block lists); of copy BW: those bytes / time over the measured copy "
       "bandwidth; of floor: the byte floor (element data once, "
       "displacements and nodal state) / time over the copy bandwidth; "
       "recomp.: elements computed per element; vs host: host ms/step over "
       "GPU ms/step; evict-first: the plan's element kernel reads the "
       "element data as the lines L2 evicts first "
       "(DeviceStepper::streams_element_data())."
    << std::endl;
  return 0;
}
