// SPDX-License-Identifier: LGPL-2.1-or-later
// Benchmark of the explicit wave solver on a model the size of Pogo's weld
// example (Huthwaite 2014, Table 1: 1.92 M unknowns, 40,000 steps of 1 ns,
// 40 um elements, 5 MHz): a 56 mm x 27.4 mm steel plate with a V-shaped
// weld of another material, 700 x 343 quadrilaterals split into 8
// triangles each (962,487 nodes), absorbing layers at both ends, a 45 degree
// tone-burst force on the top surface, two receivers.
//
// Reported: the set-up stages (mesh, DoFs and adapter, nodal system,
// stability limit, partitioners, plan, upload) separately from the time
// stepping; for double and float and both partitioners, the stepping time,
// node updates per second, and the effective bandwidth by the byte model of
// Pogo's Appendix A computed for this implementation
// (Plan::bytes_per_step) as a fraction of the device's copy
// bandwidth measured in the same run; the host stepper on all cores as the
// peer (timed over fewer steps and scaled, as marked).
//
// Usage: wave2d_benchmark [--steps N] [--host-steps N] [--quick]
//        --quick: a model 25 times smaller and 400 steps (a smoke test).

#include <deal.II/base/multithread_info.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/tria.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/wave/wave_discretization.h>
#include <gpu_assembly/wave/wave_stepper.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>

#include "stepper_benchmarking.h"

using namespace GPUAssembly;
using namespace GPUAssembly::Wave;
using namespace Benchmarking;

namespace
{
  struct Row
  {
    std::string name;
    double      seconds      = 0;
    double      steps        = 0;
    double      n_nodes      = 0;
    double      bytes        = 0; // per step
    double      efficiency   = 0;
    double      warp_links   = 0;
    bool        extrapolated = false;
  };

  void
  print_table(const std::vector<Row> &rows,
              const double            copy_bandwidth,
              const double            n_steps)
  {
    std::cout << "\n| stepper | blocks eta | L_av | bytes/step [MB] | time for "
              << n_steps
              << " steps [s] | node updates/s | model bandwidth [GB/s] | of "
                 "measured copy bandwidth |\n|---|---|---|---|---|---|---|---|"
              << std::endl;
    for (const Row &row : rows)
      {
        const double per_step  = row.seconds / row.steps;
        const double bandwidth = row.bytes / per_step;
        std::cout << "| " << row.name << " | " << std::setprecision(3)
                  << row.efficiency << " | " << row.warp_links << " | "
                  << row.bytes / 1e6 << " | " << std::setprecision(4)
                  << per_step * n_steps
                  << (row.extrapolated ?
                        " (scaled from " + std::to_string(int(row.steps)) +
                          " steps)" :
                        "")
                  << " | " << std::setprecision(3) << row.n_nodes / per_step
                  << " | " << bandwidth / 1e9 << " | ";
        if (row.name.find("GPU") != std::string::npos && copy_bandwidth > 0)
          std::cout << std::setprecision(3) << 100 * bandwidth / copy_bandwidth
                    << " %";
        std::cout << " |" << std::endl;
      }
  }
} // namespace

int
main(int argc, char **argv)
{
  try
    {
      unsigned int n_steps = 40000, host_steps = 200;
      bool         quick = false;
      for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--quick") == 0)
          quick = true;
        else if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
          n_steps = std::stoi(argv[++i]);
        else if (std::strcmp(argv[i], "--host-steps") == 0 && i + 1 < argc)
          host_steps = std::stoi(argv[++i]);
        else
          {
            std::cerr << "Usage: " << argv[0]
                      << " [--steps N] [--host-steps N] [--quick]" << std::endl;
            return 1;
          }
      if (quick)
        n_steps    = std::min(n_steps, 400u),
        host_steps = std::min(host_steps, 100u);
      const bool have_gpu = n_cuda_devices() > 0;
      std::cout << describe_execution_path()
                << "\nHost threads: " << dealii::MultithreadInfo::n_threads()
                << std::endl;

      // --- Set-up, stage by stage.
      const unsigned int       nx = quick ? 140 : 700, ny = quick ? 69 : 343;
      const double             width = 0.056, height = width * ny / nx;
      auto                     start = std::chrono::steady_clock::now();
      dealii::Triangulation<2> tria;
      {
        dealii::Triangulation<2> quads;
        dealii::GridGenerator::subdivided_hyper_rectangle(
          quads,
          {nx, ny},
          dealii::Point<2>(0, 0),
          dealii::Point<2>(width, height));
        // A V-shaped weld through the plate's thickness: 60 degrees
        // included angle, 2 mm root gap, centred at x = width / 2.
        for (const auto &cell : quads.active_cell_iterators())
          {
            const double x = cell->center()[0] - width / 2,
                         y = cell->center()[1];
            if (std::abs(x) < 1e-3 + y * std::tan(0.5236))
              cell->set_material_id(1);
          }
        dealii::GridGenerator::convert_hypercube_to_simplex_mesh(quads, tria);
      }
      const double t_mesh = seconds_since(start);

      start = std::chrono::steady_clock::now();
      WaveDiscretization discretization;
      discretization.reinit(tria, {{0, 0}, {1, 1}});
      WaveMesh     mesh   = discretization.get_mesh();
      const double t_dofs = seconds_since(start);

      start = std::chrono::steady_clock::now();
      apply_absorbing_layers({{AbsorbingLayer::Side::left, 0.004, 3e7},
                              {AbsorbingLayer::Side::right, 0.004, 3e7}},
                             mesh);
      const std::vector<ElasticMaterial> materials = {{210e9, 0.29, 7850, 0},
                                                      {195e9, 0.30, 7900, 0}};
      const NodalSystem system   = assemble_nodal_system(mesh, materials);
      const double      t_system = seconds_since(start);

      start = std::chrono::steady_clock::now();
      const double dt_stable =
        2. / std::sqrt(system.estimate_max_eigenvalue(100));
      const double t_eigen = seconds_since(start);
      const double dt      = 1e-9;

      std::vector<unsigned int> offsets, neighbours;
      make_node_graph(system, offsets, neighbours);
      std::vector<Source> sources(1);
      sources[0].nodes =
        mesh.nodes_in_box(0.010, height - 1e-7, 0.012, height + 1e-7);
      sources[0].direction[0]                   = std::sqrt(0.5);
      sources[0].direction[1]                   = -std::sqrt(0.5);
      sources[0].signal.frequency               = 5e6;
      sources[0].signal.n_cycles                = 5;
      const std::vector<unsigned int> receivers = {mesh.nearest_node(0.018,
                                                                     height),
                                                   mesh.nearest_node(0.028, 0)};

      std::cout << "\nModel: " << mesh.n_nodes << " nodes, " << 2 * mesh.n_nodes
                << " unknowns, " << mesh.n_cells() << " triangles, "
                << system.max_links() << " links per node at most; time step "
                << dt << " s (stability limit " << dt_stable << " s), "
                << n_steps << " steps" << std::endl;
      AssertThrow(dt < dt_stable, dealii::ExcMessage("unstable time step"));

      std::cout << "\n| set-up stage | time [s] |\n|---|---|\n"
                << "| mesh (deal.II GridGenerator) | " << t_mesh << " |\n"
                << "| DoFs, Cuthill-McKee, adapter arrays, WaveMesh | "
                << t_dofs << " |\n"
                << "| lumped nodal system (K, M, C) | " << t_system << " |\n"
                << "| stability limit (100 power iterations) | " << t_eigen
                << " |" << std::endl;

      std::vector<std::pair<std::string, NodeBlocks>> partitions;
      for (const unsigned int block_size : {512u, 256u})
        for (const PartitionerType type :
             {PartitionerType::aligned, PartitionerType::greedy})
          {
            if (block_size == 256 && type == PartitionerType::greedy)
              continue;
            BlockLimits limits;
            limits.max_block_size = block_size;
            limits.max_halo_nodes = block_size;
            start                 = std::chrono::steady_clock::now();
            NodeBlocks blocks =
              partition_nodes(type, mesh, offsets, neighbours, limits);
            const std::string name =
              to_string(type) + " " + std::to_string(block_size);
            std::cout << "| partitioner " << name << " (" << blocks.n_blocks()
                      << " blocks, eta " << blocks.efficiency()
                      << ", largest halo "
                      << blocks.max_halo(offsets, neighbours) << ") | "
                      << seconds_since(start) << " |" << std::endl;
            partitions.emplace_back(name, std::move(blocks));
          }

      const double copy_bandwidth = have_gpu ? measure_copy_bandwidth() : 0;
      if (have_gpu)
        std::cout << "\nMeasured copy bandwidth (device to device): "
                  << copy_bandwidth / 1e9 << " GB/s" << std::endl;

      std::vector<Row>    rows;
      std::vector<double> host_trace_double, gpu_trace_double;
      // The GPU run's first record in which a receiver sees the wave (above
      // 1e-3 of the run's largest receiver displacement): the traces are
      // compared from there on, not over the steps where they are all zero.
      const std::size_t  record_values   = 2 * receivers.size();
      const unsigned int record_interval = 10;
      std::size_t        arrival_record  = 0;
      bool               wave_arrived    = false;
      const auto         find_arrival = [&](const std::vector<double> &trace) {
        double peak = 0;
        for (const double v : trace)
          peak = std::max(peak, std::abs(v));
        for (std::size_t i = 0; i < trace.size(); ++i)
          if (peak > 0 && std::abs(trace[i]) > 1e-3 * peak)
            {
              arrival_record = i / record_values;
              wave_arrived   = true;
              return;
            }
      };
      const auto run = [&](auto number, const std::string &precision) {
        using Number = decltype(number);
        for (const auto &[name, blocks] : partitions)
          {
            auto               start = std::chrono::steady_clock::now();
            const Plan<Number> plan  = make_plan<Number>(system,
                                                        blocks,
                                                        dt,
                                                        dt_stable,
                                                        sources,
                                                        receivers,
                                                        n_steps);
            std::cout << "| plan " << name << ", " << precision << " ("
                      << plan.memory_consumption() / 1048576 << " MiB; L_av "
                      << plan.average_warp_links() << ", unsorted "
                      << plan.unsorted_average_warp_links
                      << "; bytes per step: " << plan.describe_bytes_per_step()
                      << ") | " << seconds_since(start) << " |" << std::endl;
            if (have_gpu)
              {
                start = std::chrono::steady_clock::now();
                DeviceStepper<Number> gpu;
                gpu.reinit(plan, record_interval);
                std::cout << "| upload to the GPU | " << seconds_since(start)
                          << " |" << std::endl;
                const double seconds = seconds_to_advance(gpu, n_steps);
                rows.push_back({"GPU " + precision + ", " + name,
                                seconds,
                                double(n_steps),
                                double(mesh.n_nodes),
                                double(plan.bytes_per_step()),
                                plan.efficiency(),
                                plan.average_warp_links(),
                                false});
                if (sizeof(Number) == 8 && name == "aligned 512")
                  gpu_trace_double = gpu.receiver_history();
              }
            if (name == "aligned 512")
              {
                HostStepper<Number> host;
                host.reinit(plan, record_interval);
                const double seconds = seconds_to_advance(host, host_steps);
                rows.push_back(
                  {"host, " +
                     std::to_string(dealii::MultithreadInfo::n_threads()) +
                     " threads, " + precision + ", " + name,
                   seconds,
                   double(host_steps),
                   double(mesh.n_nodes),
                   double(plan.bytes_per_step()),
                   plan.efficiency(),
                   plan.average_warp_links(),
                   host_steps != n_steps});
                if (have_gpu)
                  {
                    // The whole field after the host's steps, GPU against
                    // host: the receivers see nothing that early.
                    DeviceStepper<Number> gpu;
                    gpu.reinit(plan, record_interval);
                    gpu.advance(host_steps);
                    const StateDifference difference =
                      compare_states(gpu, host);
                    std::cout << "GPU vs host field after " << host_steps
                              << " steps (" << precision
                              << "): max |difference| "
                              << difference.max_difference << ", max |u| "
                              << difference.max_reference << std::endl;
                  }
                if (sizeof(Number) == 8)
                  {
                    // The host goes on (untimed) until host_steps steps
                    // past the wave's arrival at a receiver in the GPU run.
                    if (have_gpu)
                      find_arrival(gpu_trace_double);
                    const unsigned int target =
                      wave_arrived ?
                        std::min<std::size_t>(n_steps,
                                              (arrival_record + 1) *
                                                  record_interval +
                                                host_steps) :
                        host_steps;
                    if (target > host_steps)
                      host.advance(target - host_steps);
                    host_trace_double = host.receiver_history();
                  }
              }
          }
      };
      std::cout << std::endl;
      run(double(), "double");
      run(float(), "float");
      print_table(rows, copy_bandwidth, n_steps);

      if (have_gpu && !wave_arrived)
        std::cout << "GPU vs host receiver traces: the wave reaches no "
                     "receiver in "
                  << n_steps << " steps, so there is nothing to compare"
                  << std::endl;
      if (have_gpu && wave_arrived)
        {
          // The GPU run's records against the host run of the same plan,
          // from the wave's arrival at a receiver on.
          double difference = 0, size = 0;
          for (std::size_t i = arrival_record * record_values;
               i < host_trace_double.size();
               ++i)
            {
              difference =
                std::max(difference,
                         std::abs(gpu_trace_double[i] - host_trace_double[i]));
              size = std::max(size, std::abs(host_trace_double[i]));
            }
          std::cout << "GPU vs host receiver traces (double) over steps "
                    << (arrival_record + 1) * record_interval << " to "
                    << host_trace_double.size() / record_values *
                         record_interval
                    << ", from the wave's arrival at a receiver on: max "
                       "|difference| "
                    << difference << ", max |trace| " << size << std::endl;
          double peak = 0;
          for (const double v : gpu_trace_double)
            peak = std::max(peak, std::abs(v));
          std::cout << "Largest receiver displacement over the GPU run: "
                    << peak << " m" << std::endl;
        }
    }
  catch (std::exception &exc)
    {
      std::cerr << "wave2d_benchmark stopped with an error:\n"
                << exc.what() << std::endl;
      return 1;
    }
  return 0;
}
