// SPDX-License-Identifier: LGPL-2.1-or-later
// Benchmark of one re-assembly of 3D linear elasticity on linear tetrahedra
// (or trilinear hexahedra with hanging nodes):
// every GPU method against deal.II's own CPU assembly (FEValues + WorkStream
// + AffineConstraints::distribute_local_to_global on all host cores), with
// the effective bandwidth of each GPU method by its byte model (the bytes it
// must move at least, byte_model()) as a fraction of the device's copy
// bandwidth measured in the same run. A second table gives what a new mesh
// costs until its first result (adapter, plan, upload, first assembly)
// against deal.II's assembly, as an adaptive program pays it after every
// refinement.
//
// Usage: assembly_benchmark [subdivisions ...]   (default: 34 67 100, about
//        0.2 M, 1.5 M and 5 M tetrahedra: a cube of n^3 hexahedra, 5
//        tetrahedra each)
//        Options: --precision double|float|both  --repetitions N
//                 --method NAME (repeatable; default: all of GlobalNZ,
//                 "GlobalNZ symmetric", SharedNZ, "SharedNZ node pairs",
//                 "SharedNZ node pairs, compact targets",
//                 LocalElem-atomic, LocalElem-colored)
//                 --tune METHOD.NAME=VALUE (repeatable: overrides a value of
//                 DeviceMethodData (each method's parameters) for every method
//                 run, e.g. --tune shared_nz.threads_per_block=128; the
//                 names are listed by --tune help)
//                 --hanging-nodes (trilinear hexahedra instead, a cube of
//                 n^3 with the octant at the origin refined once: hanging
//                 nodes, whose constraints every method and deal.II's
//                 assembly honour; the share of constrained DoFs is
//                 printed)
//                 --skip-dealii (no CPU peer, for profiling runs)
//                 --plans-only (no GPU needed: time the adapter and the
//                 host construction of the constraint plan and of the
//                 GlobalNZ and SharedNZ plans (those of the --method
//                 options, if any) for
//                 an H100/H200's 227 KiB of shared memory per block)
//                 --threads N (host threads; default: all cores)
//                 --verbose (the steps of the adapter and of each plan
//                 with their times, as SetupTimes records them)
//                 --pattern automatic|host|device (where the adapter
//                 builds the CSR pattern and the nonzero map K, as
//                 DoFHandlerAdapter's pattern_construction; default
//                 its default, the host)
//                 --plan automatic|host|device (where GlobalNZ's
//                 reduction arrays are built, as GlobalNZPlan::Parameters'
//                 reduction_construction; default its default, automatic:
//                 on the device; --plans-only builds every plan on the
//                 host)
//                 --supplemental gradients|edge-matrix (S(e) of every
//                 method: JxW and the 12 physical gradients, 13 values,
//                 the default; or the inverse reference edge matrix and
//                 its determinant, 10 values, the chapter's form for
//                 linear tetrahedra)

#include <deal.II/base/multithread_info.h>
#include <deal.II/base/quadrature_lib.h>
#include <deal.II/base/work_stream.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_renumbering.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping_fe.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/tria.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/vector.h>

#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/engine/constraints/plan.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/engine/local_elem/plan.h>
#include <gpu_assembly/engine/shared_nz/layout.h>
#include <gpu_assembly/kernels/element_kernels.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numeric>
#include <sstream>
#include <type_traits>

#include "dealii_elasticity.h"

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  constexpr int    dim    = 3;
  constexpr double lambda = 2., mu = 5.;

  double
  seconds_since(const std::chrono::steady_clock::time_point start)
  {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
      .count();
  }

  struct Row
  {
    std::string method;
    double      seconds;
    double      bytes; // 0: no byte model
    double      setup_seconds;
    double      plan_bytes;
    // SharedNZ's elements staged (or computed) per element of the mesh; 0
    // for the other methods.
    double recomputation = 0;
    // What a new mesh costs before its first result: the method's plan
    // (GlobalNZ's reduction arrays on the host or the device) and the
    // constraint plan, which reinit() builds on a thread of its own beside
    // the method's plan, the whole of reinit() (both plans and their
    // upload), and the first assemble().
    std::string plan_built_on           = "host";
    double      plan_seconds            = 0;
    double      constraint_plan_seconds = 0;
    double      first_assembly          = 0;
  };

  // deal.II's own assembly, the way a deal.II program does it (step-8's
  // bilinear form, step-9's WorkStream), with the body force (1, 0, 0) of
  // the plugin's kernel.
  double
  dealii_assembly(const DoFHandler<dim>           &dof_handler,
                  const Mapping<dim>              &mapping,
                  const Quadrature<dim>           &quadrature,
                  const AffineConstraints<double> &constraints,
                  SparseMatrix<double>            &matrix,
                  Vector<double>                  &rhs)
  {
    Tensor<1, dim> body_force;
    body_force[0]    = 1;
    const auto start = std::chrono::steady_clock::now();
    Benchmarking::assemble_elasticity(mapping,
                                      dof_handler,
                                      quadrature,
                                      constraints,
                                      lambda,
                                      mu,
                                      body_force,
                                      matrix,
                                      rhs);
    return seconds_since(start);
  }



  // A SharedNZ plan's parts: how many, their elements and shared memory
  // (the largest sets what every block of the launch gets).
  void
  print_parts(const SharedNZPlan &plan, const std::size_t number_size)
  {
    std::size_t max_elements = 0, total_bytes = 0;
    for (unsigned int k = 0; k < plan.n_blocks; ++k)
      {
        max_elements = std::max<std::size_t>(max_elements,
                                             plan.element_offsets[k + 1] -
                                               plan.element_offsets[k]);
        total_bytes += plan.shared_bytes(k, number_size);
      }
    // Parts without elements with constraints: elements with constraints
    // take more shared memory (a slot for every node, or with node pairs
    // their Dirichlet data), and make their parts smaller.
    std::size_t n_interior = 0, interior_elements = 0;
    for (unsigned int k = 0; k < plan.n_blocks; ++k)
      if (std::none_of(
            plan.block_has_constraints.begin() + plan.element_offsets[k],
            plan.block_has_constraints.begin() + plan.element_offsets[k + 1],
            [](const unsigned char c) {
              return c != 0;
            }))
        {
          ++n_interior;
          interior_elements +=
            plan.element_offsets[k + 1] - plan.element_offsets[k];
        }
    std::cout << plan.n_blocks << " node parts, recomputation factor "
              << plan.recomputation_factor << ", elements per part "
              << double(plan.elements.size()) / plan.n_blocks << " (up to "
              << max_elements << "), shared memory per block "
              << total_bytes / plan.n_blocks << " bytes (up to "
              << plan.max_shared_bytes << "); " << n_interior
              << " parts without constraints, "
              << double(interior_elements) /
                   std::max<std::size_t>(1, n_interior)
              << " elements each";
  }



  // How the warps of a SharedNZ plan walk their reduction streams: the
  // steps they take, the lanes busy at a step, the steps at which some
  // lanes add sources while others close lists (the warp runs both codes
  // one after the other) or some lane condenses an element with
  // constraints, and how busy a block's warps are while its longest runs.
  void
  print_stream(const SharedNZPlan &plan)
  {
    constexpr unsigned int chunk = SharedNZLayout::chunk;
    std::size_t            steps = 0, busy = 0, closing = 0, mixed = 0;
    std::size_t            condensing = 0;
    // Rows with diagonal lists and the others: their steps and busy lanes.
    std::size_t diagonal_steps = 0, diagonal_busy = 0, diagonal_rows = 0;
    std::size_t other_steps = 0, other_busy = 0, other_rows = 0;
    // A block runs as long as its longest warp.
    std::size_t block_steps = 0, longest_steps = 0;
    // The same to the longest warp's last closing step.
    std::size_t        block_lengths = 0, block_length = 0, warp_lengths = 0;
    const std::size_t  n_warp          = plan.slice_offsets.size() - 1;
    const unsigned int warps_per_block = plan.parameters.threads_per_block / 32;
    const unsigned int n_pairs =
      plan.n_nodes_per_element * plan.n_nodes_per_element;
    for (std::size_t w = 0; w < n_warp; ++w)
      {
        if (w % warps_per_block == 0)
          {
            std::size_t longest = 0;
            for (unsigned int v = 0; v < warps_per_block; ++v)
              longest = std::max<std::size_t>(longest,
                                              plan.slice_offsets[w + v + 1] -
                                                plan.slice_offsets[w + v]);
            longest_steps += longest / 32 * warps_per_block;
          }
        block_steps += (plan.slice_offsets[w + 1] - plan.slice_offsets[w]) / 32;
        const unsigned int n_free =
          plan.parameters.node_pairs ?
            plan.n_free_elements[w / warps_per_block] :
            std::numeric_limits<unsigned int>::max();
        const std::size_t begin     = plan.slice_offsets[w];
        const std::size_t columns   = (plan.slice_offsets[w + 1] - begin) / 32;
        std::size_t       row_steps = 0, row_busy = 0;
        // Steps up to its last closing one: those after it only pad the
        // warp's last chunk.
        std::size_t warp_length = 0;
        for (std::size_t j = 0; j < columns; ++j)
          {
            unsigned int n_sources = 0, n_ends = 0, n_condensed = 0;
            for (unsigned int lane = 0; lane < 32; ++lane)
              {
                const std::uint16_t e =
                  plan.sources[begin + ((j / chunk) * 32 + lane) * chunk +
                               j % chunk];
                n_sources += e != 0 && e < SharedNZLayout::end_flag;
                // Every lane closes a row; those after its lists hold none.
                const SharedNZLayout::RowClose row =
                  SharedNZLayout::decode_row_close(e);
                n_ends +=
                  e >= SharedNZLayout::end_flag &&
                  SharedNZLayout::row_lane(lane, row).slot < row.n_lists;
                n_condensed += e != 0 && e < SharedNZLayout::end_flag &&
                               ((e - 1u) >> 1) / n_pairs >= n_free;
              }
            condensing += n_condensed > 0;
            ++row_steps;
            row_busy += n_sources + n_ends;
            if (n_ends > 0)
              {
                const std::uint16_t e =
                  plan.sources[begin + ((j / chunk) * 32) * chunk + j % chunk];
                const bool diagonal_row =
                  SharedNZLayout::decode_row_close(e).n_diagonal > 0;
                (diagonal_row ? diagonal_steps : other_steps) += row_steps;
                (diagonal_row ? diagonal_busy : other_busy) += row_busy;
                ++(diagonal_row ? diagonal_rows : other_rows);
                row_steps = row_busy = 0;
              }
            if (n_ends > 0)
              warp_length = j + 1;
            ++steps;
            busy += n_sources + n_ends;
            closing += n_ends > 0;
            mixed += n_ends > 0 && n_sources > 0;
          }
        block_length = std::max(block_length, warp_length);
        warp_lengths += warp_length;
        if (w % warps_per_block == warps_per_block - 1)
          {
            block_lengths += block_length;
            block_length = 0;
          }
      }
    std::cout << "; reduction: " << steps << " warp steps, "
              << 100. * busy / (32. * steps) << "% of lanes busy, "
              << 100. * closing / steps << "% of steps close lists, "
              << 100. * mixed / steps << "% mix closing and adding, "
              << 100. * condensing / steps << "% condense, warps busy "
              << 100. * block_steps / longest_steps
              << "% of their blocks' time (the longest "
              << double(longest_steps) / n_warp << " steps per block, "
              << double(block_lengths) * warps_per_block / n_warp
              << " to its last closing step, against a mean of "
              << double(warp_lengths) / n_warp
              << "); rows with diagonal lists: " << diagonal_rows << ", "
              << diagonal_steps << " steps, "
              << 100. * diagonal_busy / (32. * diagonal_steps)
              << "% of lanes busy; other rows: " << other_rows << ", "
              << other_steps << " steps, "
              << 100. * other_busy / (32. * other_steps) << "% of lanes busy";
  }



  // Bytes a method must move at least for one re-assembly: the element
  // data where they leave the chip, the plan's arrays it reads, the inputs
  // and the output.
  // Bytes the constraint stage moves, after any method: the inputs of the
  // elements that touch lines with entries, their raw element data written
  // and read, the weighted lists, and a read-modify-write of each target.
  template <typename Number>
  double
  constraint_stage_bytes(const ConstraintPlan &plan)
  {
    const double s    = sizeof(Number);
    const double n_c  = plan.elements.size();
    const double n_ed = plan.n_dofs_per_element;
    return n_c * (plan.n_supplemental * s +
                  plan.n_nodes_per_element * sizeof(int)) +
           2. * n_c * (n_ed * n_ed + n_ed) * s +
           plan.sources.size() * (sizeof(int) + s) +
           plan.targets.size() * (2. * s + 2. * sizeof(int) + 1);
  }



  template <typename Number>
  double
  method_bytes(const AssemblyMethod                method,
               const MeshArrays                   &arrays,
               const DeviceAssembler<dim, Number> &assembler)
  {
    const double n_el   = arrays.n_elements;
    const double n_ed   = arrays.layout.n_dofs;
    const double n_ent  = n_ed * n_ed + n_ed;
    const double s      = sizeof(Number);
    const double output = (arrays.n_nonzeros() + arrays.n_dofs) * s;
    const double inputs =
      n_el * (arrays.n_supplemental * s + arrays.layout.n_nodes * sizeof(int));
    // The benchmark's kernel needs S(e) alone: the methods fetch no nodal
    // data for it (kernel_reads_nodal_data).
    const double nodal =
      kernel_reads_nodal_data<LinearElasticityKernel<dim, Number>>::value ? 1. :
                                                                            0.;
    if (method == AssemblyMethod::global_nz)
      {
        const GlobalNZPlan &plan = assembler.get_global_nz_plan();
        return 2. * n_el * plan.n_entries * s + // element data written, read
               plan.n_reduction_entries * sizeof(int) +
               // symmetric data: where each pair's sum goes
               (plan.upper_position.size() + plan.mirror_position.size()) *
                 sizeof(int) +
               nodal * plan.cluster_nodes.size() * (sizeof(int) + dim * s) +
               inputs + output;
      }
    if (method == AssemblyMethod::shared_nz)
      {
        // Element data stay on chip: the halo nodal data, the inputs of
        // every (recomputed) element with its slots, the location of
        // elements the condensation needs it for, the per-block offsets,
        // the reduction stream (16-bit) and targets, and the output.
        // With node pairs every staged element needs S(e) alone, and one
        // with constraints its location, their flags and inhomogeneities.
        const SharedNZPlan &plan = assembler.get_shared_nz_plan();
        const double        n_en = arrays.layout.n_nodes;
        const double        streams =
          (plan.n_blocks * (plan.parameters.node_pairs ? 3. : 2.) +
           plan.slice_offsets.size() + plan.target_offsets.size()) *
            sizeof(int) +
          plan.sources.size() * sizeof(std::uint16_t) +
          (plan.parameters.compact_targets ? plan.compact_targets.size() :
                                             plan.targets.size()) *
            sizeof(int) +
          output;
        if (plan.parameters.node_pairs)
          {
            const double n_free = std::accumulate(plan.n_free_elements.begin(),
                                                  plan.n_free_elements.end(),
                                                  0.);
            const double n_staged = plan.elements.size();
            return n_staged * arrays.n_supplemental * s +
                   (n_staged - n_free) * n_ed * (sizeof(int) + 1 + s) + streams;
          }
        const double n_constrained =
          std::count(plan.block_has_constraints.begin(),
                     plan.block_has_constraints.end(),
                     1);
        return nodal * plan.halo_nodes.size() * (sizeof(int) + dim * s) +
               plan.elements.size() *
                 (n_en * (sizeof(int) + sizeof(std::uint16_t)) +
                  arrays.n_supplemental * s + 1) +
               n_constrained * n_ed * sizeof(int) + streams;
      }
    // LocalElem: inputs, nodal data per element, the nonzero map, the
    // element data scratch written and read, and a read-modify-write of
    // every contribution.
    return inputs + nodal * n_el * arrays.layout.n_nodes * dim * s +
           n_el * (n_ed * n_ed + n_ed) * sizeof(int) + 2. * n_el * n_ent * s +
           2. * n_el * n_ent * s;
  }



  template <typename Number>
  double
  byte_model(const AssemblyMethod                method,
             const MeshArrays                   &arrays,
             const DeviceAssembler<dim, Number> &assembler,
             const ConstraintPlan               &constraint_plan)
  {
    return method_bytes(method, arrays, assembler) +
           constraint_stage_bytes<Number>(constraint_plan);
  }



  // The methods' parameters that --tune sets; the variants then choose the
  // method, symmetric and node_pairs.
  using Tuning = DeviceMethodData;

  // The variants the benchmark runs: a method and the user's choices.
  struct Variant
  {
    std::string    name;
    AssemblyMethod method;
    bool           symmetric       = false;
    bool           node_pairs      = false;
    bool           compact_targets = false;
  };

  const std::vector<Variant> all_variants = {
    {"GlobalNZ", AssemblyMethod::global_nz},
    {"GlobalNZ symmetric", AssemblyMethod::global_nz, true},
    {"SharedNZ", AssemblyMethod::shared_nz},
    {"SharedNZ node pairs", AssemblyMethod::shared_nz, false, true},
    {"SharedNZ node pairs, compact targets",
     AssemblyMethod::shared_nz,
     false,
     true,
     true},
    {"LocalElem-atomic", AssemblyMethod::local_elem_atomic},
    {"LocalElem-colored", AssemblyMethod::local_elem_colored}};



  // The tuning values --tune can set, by name, each with a setter from the
  // value's text.
  const std::vector<
    std::pair<std::string, std::function<void(Tuning &, const std::string &)>>>
    tuning_values = {
      {"global_nz.elements_per_block",
       [](Tuning &t, const std::string &v) {
         t.global_nz.elements_per_block = std::stoul(v);
       }},
      {"global_nz.reduction_threads",
       [](Tuning &t, const std::string &v) {
         t.global_nz.reduction_threads = std::stoul(v);
       }},
      {"global_nz.targets_per_block",
       [](Tuning &t, const std::string &v) {
         t.global_nz.targets_per_block = std::stoul(v);
       }},
      {"global_nz.element_order",
       [](Tuning &t, const std::string &v) {
         AssertThrow(v == "rows" || v == "morton",
                     ExcMessage("global_nz.element_order is rows or morton."));
         t.global_nz.element_order =
           v == "rows" ? ElementOrder::rows : ElementOrder::morton;
       }},
      {"global_nz.reduction_order",
       [](Tuning &t, const std::string &v) {
         AssertThrow(v == "automatic" || v == "rows" || v == "morton",
                     ExcMessage("global_nz.reduction_order is automatic, "
                                "rows or morton."));
         t.global_nz.reduction_order = v == "automatic" ?
                                         ReductionOrder::automatic :
                                       v == "rows" ? ReductionOrder::rows :
                                                     ReductionOrder::morton;
       }},
      {"shared_nz.partitioner",
       [](Tuning &t, const std::string &v) {
         AssertThrow(v == "automatic" || v == "greedy_union" ||
                       v == "greedy_growth" || v == "metis",
                     ExcMessage("shared_nz.partitioner is automatic, "
                                "greedy_union, greedy_growth or metis."));
         t.shared_nz.partitioner =
           v == "automatic"     ? NodePartitioner::automatic :
           v == "greedy_union"  ? NodePartitioner::greedy_union :
           v == "greedy_growth" ? NodePartitioner::greedy_growth :
                                  NodePartitioner::metis;
       }},
      {"shared_nz.threads_per_block",
       [](Tuning &t, const std::string &v) {
         t.shared_nz.threads_per_block = std::stoul(v);
       }},
      {"shared_nz.shared_memory_per_block",
       [](Tuning &t, const std::string &v) {
         t.shared_nz.shared_memory_per_block = std::stoul(v);
       }},
      {"shared_nz.blocks_per_multiprocessor",
       [](Tuning &t, const std::string &v) {
         t.shared_nz.blocks_per_multiprocessor = std::stoul(v);
       }},
      {"local_elem.block_size", [](Tuning &t, const std::string &v) {
         t.local_elem.block_size = std::stoul(v);
       }}};

  // Applies "NAME=VALUE" to @p tuning.
  void
  set_tuning_value(Tuning &tuning, const std::string &assignment)
  {
    const std::size_t equals = assignment.find('=');
    std::string       names;
    for (const auto &value : tuning_values)
      {
        names += "\n  " + value.first;
        if (equals != std::string::npos &&
            assignment.substr(0, equals) == value.first)
          {
            value.second(tuning, assignment.substr(equals + 1));
            return;
          }
      }
    AssertThrow(false,
                ExcMessage("--tune takes NAME=VALUE with NAME one of:" +
                           names));
  }



  // A checksum of a plan's arrays and sizes (FNV-1a over their bytes), by
  // which plans built with different thread counts or builds are compared
  // at sizes too large for the tests.
  class Checksum
  {
  public:
    template <typename T>
    Checksum &
    operator<<(const std::vector<T> &values)
    {
      *this << values.size();
      add(values.data(), values.size() * sizeof(T));
      return *this;
    }

    template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
    Checksum &
    operator<<(const T value)
    {
      add(&value, sizeof(T));
      return *this;
    }

    std::string
    hex() const
    {
      std::ostringstream out;
      out << std::hex << std::setw(16) << std::setfill('0') << hash;
      return out.str();
    }

  private:
    void
    add(const void *data, const std::size_t n_bytes)
    {
      const unsigned char *bytes = static_cast<const unsigned char *>(data);
      for (std::size_t i = 0; i < n_bytes; ++i)
        hash = (hash ^ bytes[i]) * 0x100000001b3ULL;
    }

    std::uint64_t hash = 0xcbf29ce484222325ULL;
  };



  // The adapter's arrays, which the plans are built from.
  std::string
  checksum(const MeshArrays &arrays)
  {
    Checksum c;
    c << arrays.connectivity << arrays.location << arrays.supplemental
      << arrays.nodal_coordinates << arrays.node_dofs << arrays.row_offsets
      << arrays.column_indices << arrays.nonzero_map
      << arrays.dof_is_constrained << arrays.inhomogeneities
      << arrays.constraint_line_dofs << arrays.constraint_entry_offsets
      << arrays.constraint_entry_dofs << arrays.constraint_entry_weights;
    return c.hex();
  }



  std::string
  checksum(const ConstraintPlan &plan)
  {
    Checksum c;
    c << plan.n_nodes_per_element << plan.n_dofs_per_element
      << plan.n_supplemental << plan.elements << plan.connectivity
      << plan.supplemental << plan.targets << plan.n_matrix_targets
      << plan.overwrite << plan.source_offsets << plan.sources << plan.weights;
    return c.hex();
  }



  std::string
  checksum(const GlobalNZPlan &plan)
  {
    AssertThrow(!plan.reduction_arrays_on_device,
                ExcMessage("The checksum of a GlobalNZ plan covers its "
                           "reduction arrays, which this plan holds on the "
                           "device only."));
    Checksum c;
    c << plan.n_element_blocks << plan.n_nodes_per_element
      << plan.n_dofs_per_element << plan.n_supplemental << plan.n_matrix_entries
      << plan.n_entries << plan.entry_group << plan.n_nonzeros << plan.n_dofs
      << plan.n_value_targets << plan.upper_position << plan.mirror_position
      << plan.block_element << plan.cluster_node_offsets << plan.cluster_nodes
      << plan.max_cluster_nodes << plan.block_connectivity
      << plan.block_supplemental << plan.block_location
      << plan.block_has_constraints << plan.reduction_target_begin
      << plan.reduction_slice_offsets << plan.reduction_source_base
      << plan.reduction_array << plan.reduction_block_order;
    return c.hex();
  }



  // With --verbose: the steps recorded since the last call, one a line,
  // then forgotten.
  void
  print_recorded_steps()
  {
    if (!SetupTimes::recording())
      return;
    for (const auto &[name, seconds] : SetupTimes::get())
      std::cout << "    " << std::left << std::setw(52) << name << std::right
                << std::fixed << std::setprecision(3) << std::setw(8) << seconds
                << " s" << std::defaultfloat << std::setprecision(6) << '\n';
    SetupTimes::clear();
  }



  // The method's plan's share of the set-up just recorded:
  // GlobalNZPlan, SharedNZPlan, LocalElemPlan and ConstraintPlan time their
  // reinit() while SetupTimes records, so that the plans, timed inside
  // DeviceAssembler::reinit(), and the upload, the rest of it, add up to
  // reinit() itself; GlobalNZ's reduction arrays built on the device are
  // "GlobalNZ plan (device)". The constraint plan is
  // SetupTimes::seconds("constraint plan").
  double
  recorded_plan_seconds()
  {
    double seconds = 0;
    for (const char *plan : {"GlobalNZ plan",
                             "GlobalNZ plan (device)",
                             "SharedNZ plan",
                             "LocalElem plan"})
      seconds += SetupTimes::seconds(plan);
    return seconds;
  }



  // The adapter's stages of the set-up just recorded: the CSR pattern, the
  // nonzero map K (with the wait for its sizing) and the rest, as
  // DoFHandlerAdapter::reinit() names its steps on the host and on the
  // device.
  struct AdapterStages
  {
    double rest    = 0;
    double pattern = 0;
    double maps    = 0;
    // Where the pattern and K were built.
    std::string built_on;
  };

  AdapterStages
  recorded_adapter_stages(const double                  adapter_seconds,
                          const DoFHandlerAdapter<dim> &adapter)
  {
    AdapterStages stages;
    for (const char *step : {"adapter: pattern", "adapter: pattern (device)"})
      stages.pattern += SetupTimes::seconds(step);
    for (const char *step : {"adapter: nonzero map sizing (wait)",
                             "adapter: nonzero map",
                             "adapter: nonzero map (device)"})
      stages.maps += SetupTimes::seconds(step);
    stages.rest = adapter_seconds - stages.pattern - stages.maps;
    stages.built_on =
      adapter.pattern_built_on() == PatternConstruction::device ? "device" :
                                                                  "host";
    return stages;
  }



  template <typename Number>
  void
  run_precision(const MeshArrays               &arrays,
                const std::vector<std::string> &methods,
                const Tuning                   &tuning,
                const unsigned int              repetitions,
                std::vector<Row>               &rows,
                std::vector<Number>            &reference_values)
  {
    LinearElasticityKernel<dim, Number> kernel;
    kernel.lambda        = lambda;
    kernel.mu            = mu;
    kernel.body_force[0] = 1.;
    DeviceVector<Number> nodal(
      std::vector<Number>(arrays.nodal_coordinates.begin(),
                          arrays.nodal_coordinates.end()));
    DeviceCSRMatrix<Number> matrix;
    matrix.reinit(arrays);
    DeviceVector<Number> rhs(arrays.n_dofs);
    ConstraintPlan       constraint_plan;
    constraint_plan.reinit(arrays);

    for (const Variant &variant : all_variants)
      {
        if (!methods.empty() &&
            std::find(methods.begin(), methods.end(), variant.name) ==
              methods.end())
          continue;
        const AssemblyMethod method = variant.method;
        typename DeviceAssembler<dim, Number>::AdditionalData data;
        static_cast<DeviceMethodData &>(data) = tuning;
        data.method                           = method;
        data.global_nz.symmetric              = variant.symmetric;
        data.shared_nz.node_pairs             = variant.node_pairs;
        data.shared_nz.compact_targets        = variant.compact_targets;
        DeviceAssembler<dim, Number> assembler;
        const bool                   was_recording = SetupTimes::recording();
        SetupTimes::set_recording(true);
        SetupTimes::clear();
        auto start = std::chrono::steady_clock::now();
        assembler.reinit(arrays, data);
        synchronize_device();
        const double setup = seconds_since(start);
        SetupTimes::set_recording(was_recording);
        const double plan_seconds = recorded_plan_seconds();
        const double constraint_plan_seconds =
          SetupTimes::seconds("constraint plan");

        // The first assembly after reinit(), as after a mesh change.
        start = std::chrono::steady_clock::now();
        assembler.assemble(kernel, nodal, matrix, rhs);
        synchronize_device();
        const double first_assembly = seconds_since(start);
        start                       = std::chrono::steady_clock::now();
        for (unsigned int r = 0; r < repetitions; ++r)
          assembler.assemble(kernel, nodal, matrix, rhs);
        synchronize_device();
        const double seconds = seconds_since(start) / repetitions;

        // A benchmark of wrong results is worthless: compare with the
        // first method's values.
        std::vector<Number> values = matrix.get_values().to_host();
        if (reference_values.empty())
          reference_values = values;
        double error = 0, norm = 0;
        for (std::size_t i = 0; i < values.size(); ++i)
          {
            error += std::pow(double(values[i]) - reference_values[i], 2);
            norm += std::pow(double(reference_values[i]), 2);
          }
        AssertThrow(
          std::sqrt(error / norm) < (sizeof(Number) == 8 ? 1e-12 : 1e-5),
          ExcMessage(variant.name + " disagrees with " + rows.front().method));

        Row row{variant.name,
                seconds,
                byte_model(method, arrays, assembler, constraint_plan),
                setup,
                double(assembler.device_memory_consumption())};
        row.plan_seconds            = plan_seconds;
        row.constraint_plan_seconds = constraint_plan_seconds;
        row.first_assembly          = first_assembly;
        if (method == AssemblyMethod::global_nz &&
            assembler.get_global_nz_plan().reduction_arrays_on_device)
          row.plan_built_on = "host, reduction arrays on the device";
        rows.push_back(row);
        if (method == AssemblyMethod::shared_nz)
          {
            rows.back().recomputation =
              assembler.get_shared_nz_plan().recomputation_factor;
            std::cout << variant.name << ": ";
            print_parts(assembler.get_shared_nz_plan(), sizeof(Number));
            std::cout << std::endl;
          }
      }
  }



  void
  print_table(const std::string      &title,
              const std::vector<Row> &rows,
              const double            n_nonzeros,
              const double            bandwidth)
  {
    // The method column as wide as the longest name. "model B/nnz" is the
    // byte model per nonzero (what a re-assembly moves), "plan B/nnz" the
    // device memory of the method's arrays per nonzero, "recomp." SharedNZ's
    // elements staged or computed per element.
    std::size_t name_width = 24;
    for (const Row &row : rows)
      name_width = std::max(name_width, row.method.size() + 2);
    const int w = static_cast<int>(name_width);
    std::cout << "\n" << title << "\n";
    std::cout << std::left << std::setw(w) << "method" << std::right
              << std::setw(12) << "time [ms]" << std::setw(14) << "GNZ/s"
              << std::setw(12) << "model MB" << std::setw(10) << "GB/s"
              << std::setw(12) << "of copy BW" << std::setw(13) << "model B/nnz"
              << std::setw(12) << "set-up [s]" << std::setw(12) << "plan B/nnz"
              << std::setw(9) << "recomp." << std::setw(12) << "vs deal.II"
              << '\n';
    // With --skip-dealii the peer's row holds NaN: leave it and its column
    // out rather than print "nan".
    const double dealii_seconds = rows.back().seconds;
    for (const Row &row : rows)
      {
        if (!std::isfinite(row.seconds))
          continue;
        std::cout << std::left << std::setw(w) << row.method << std::right
                  << std::fixed << std::setprecision(3) << std::setw(12)
                  << row.seconds * 1e3 << std::setprecision(2) << std::setw(14)
                  << n_nonzeros / row.seconds * 1e-9;
        if (row.bytes > 0)
          std::cout << std::setw(12) << std::setprecision(0) << row.bytes * 1e-6
                    << std::setw(10) << std::setprecision(0)
                    << row.bytes / row.seconds * 1e-9 << std::setw(11)
                    << std::setprecision(1)
                    << 100. * row.bytes / row.seconds / bandwidth << '%'
                    << std::setw(13) << std::setprecision(1)
                    << row.bytes / n_nonzeros;
        else
          std::cout << std::setw(12) << "-" << std::setw(10) << "-"
                    << std::setw(12) << "-" << std::setw(13) << "-";
        std::cout << std::setw(12) << std::setprecision(2) << row.setup_seconds
                  << std::setw(12) << std::setprecision(1)
                  << row.plan_bytes / n_nonzeros;
        if (row.recomputation > 0)
          std::cout << std::setw(9) << std::setprecision(2)
                    << row.recomputation;
        else
          std::cout << std::setw(9) << "-";
        if (std::isfinite(dealii_seconds))
          std::cout << std::setw(11) << std::setprecision(0)
                    << dealii_seconds / row.seconds << 'x';
        else
          std::cout << std::setw(12) << "-";
        std::cout << '\n';
      }
    std::cout << std::defaultfloat << std::setprecision(6);
  }



  // What a new mesh costs until its first result, for an adaptive program
  // that rebuilds adapter and plan after every refinement: the adapter
  // (the same for every method) in its stages (the CSR pattern, the
  // nonzero map K, the rest), the method's plan and the constraint plan
  // (built side by side), the whole of reinit() with their upload, and the
  // first assemble(), against
  // deal.II's assembly of the same system in the same run. Device memory is
  // the plan's with its element-data buffer, as
  // DeviceAssembler::device_memory_consumption().
  void
  print_first_assembly_table(const std::vector<Row> &rows,
                             const AdapterStages    &adapter)
  {
    const double dealii_seconds = rows.back().seconds;
    std::size_t  name_width     = 24;
    for (const Row &row : rows)
      name_width = std::max(name_width, row.method.size() + 2);
    const int w = static_cast<int>(name_width);
    std::cout << "\nFirst assembly after a new mesh (adapter and plans on "
              << MultithreadInfo::n_threads()
              << " host threads, pattern and K on the " << adapter.built_on
              << ")\n";
    std::cout << std::left << std::setw(w) << "method" << std::right
              << std::setw(12) << "adapter [s]" << std::setw(12)
              << "pattern [s]" << std::setw(10) << "maps [s]" << std::setw(10)
              << "plan [s]" << std::setw(16) << "constr. plan [s]"
              << std::setw(12) << "reinit [s]" << std::setw(12) << "first [s]"
              << std::setw(10) << "sum [s]" << std::setw(13) << "deal.II [s]"
              << std::setw(14) << "sum/deal.II" << std::setw(16)
              << "device [bytes]" << '\n';
    for (const Row &row : rows)
      {
        if (!std::isfinite(row.seconds) || row.plan_bytes == 0)
          continue;
        const double sum = adapter.rest + adapter.pattern + adapter.maps +
                           row.setup_seconds + row.first_assembly;
        std::cout << std::left << std::setw(w) << row.method << std::right
                  << std::fixed << std::setprecision(3) << std::setw(12)
                  << adapter.rest << std::setw(12) << adapter.pattern
                  << std::setw(10) << adapter.maps << std::setw(10)
                  << row.plan_seconds << std::setw(16)
                  << row.constraint_plan_seconds << std::setw(12)
                  << row.setup_seconds << std::setw(12) << row.first_assembly
                  << std::setw(10) << sum;
        if (std::isfinite(dealii_seconds))
          std::cout << std::setw(13) << dealii_seconds << std::setw(14)
                    << std::setprecision(2) << sum / dealii_seconds;
        else
          std::cout << std::setw(13) << "-" << std::setw(14) << "-";
        std::cout << std::setw(16) << std::setprecision(0) << row.plan_bytes
                  << '\n';
      }
    for (const Row &row : rows)
      if (std::isfinite(row.seconds) && row.plan_bytes > 0 &&
          row.plan_built_on != "host")
        std::cout << row.method << ": plan on the " << row.plan_built_on
                  << " (--plan)\n";
    std::cout << std::defaultfloat << std::setprecision(6);
  }



  // Host construction of the plans alone, as DeviceAssembler::reinit() makes
  // them in double for a Hopper GPU (227 KiB of shared memory per block):
  // the set-up column of the table without a GPU.
  void
  time_plans(const MeshArrays               &arrays,
             const Tuning                   &tuning,
             const std::vector<std::string> &methods,
             const double                    adapter_seconds)
  {
    const std::size_t hopper_shared_memory = 227 * 1024;
    std::cout << "Adapter arrays' checksum " << checksum(arrays) << std::endl;
    // Every plan, or those of the methods asked for (--method).
    const auto asked = [&](const std::string &method) {
      return methods.empty() ||
             std::find(methods.begin(), methods.end(), method) != methods.end();
    };
    {
      ConstraintPlan plan;
      SetupTimes::clear();
      const auto start = std::chrono::steady_clock::now();
      plan.reinit(arrays);
      const double seconds = seconds_since(start);
      std::cout << "Constraint plan: " << seconds << " s, "
                << plan.elements.size() << " elements, " << plan.targets.size()
                << " targets, " << plan.sources.size()
                << " weighted sources, checksum " << checksum(plan)
                << std::endl;
      print_recorded_steps();
    }
    for (const bool symmetric : {false, true})
      {
        if (!asked(symmetric ? "GlobalNZ symmetric" : "GlobalNZ"))
          continue;
        GlobalNZPlan::Parameters parameters = tuning.global_nz;
        parameters.symmetric                = symmetric;
        GlobalNZPlan plan;
        SetupTimes::clear();
        const auto start = std::chrono::steady_clock::now();
        plan.reinit(arrays,
                    parameters,
                    dim,
                    sizeof(double),
                    hopper_shared_memory);
        const double seconds = seconds_since(start);
        std::cout << "GlobalNZ" << (symmetric ? " symmetric" : "")
                  << " plan: " << seconds << " s (with the adapter "
                  << adapter_seconds + seconds << " s), "
                  << plan.reduction_array.size()
                  << " reduction entries, checksum " << checksum(plan)
                  << std::endl;
        print_recorded_steps();
      }
    // Slots, node pairs, node pairs with compact targets.
    for (const unsigned int form : {0u, 1u, 2u})
      {
        const bool node_pairs = form > 0;
        if (!asked(form == 2  ? "SharedNZ node pairs, compact targets" :
                   node_pairs ? "SharedNZ node pairs" :
                                "SharedNZ"))
          continue;
        SharedNZPlan::Parameters parameters = tuning.shared_nz;
        parameters.node_pairs               = node_pairs;
        parameters.compact_targets          = form == 2;
        SharedNZPlan plan;
        SetupTimes::clear();
        const auto start = std::chrono::steady_clock::now();
        // DeviceAssembler's limit on an H100 or H200: the 228 KiB of a
        // multiprocessor shared by its blocks, less 1 KiB each that the
        // driver reserves.
        const std::size_t shared_memory =
          parameters.shared_memory_per_block > 0 ?
            parameters.shared_memory_per_block :
            std::min<std::size_t>(hopper_shared_memory,
                                  228 * 1024 /
                                      parameters.resolved(arrays.layout.n_nodes)
                                        .blocks_per_multiprocessor -
                                    1024);
        plan.reinit(arrays, parameters, dim, sizeof(double), shared_memory);
        const double seconds = seconds_since(start);
        std::cout << "SharedNZ"
                  << (form == 2  ? " node pairs, compact targets" :
                      node_pairs ? " node pairs" :
                                   "")
                  << " plan: " << seconds << " s (with the adapter "
                  << adapter_seconds + seconds << " s), ";
        print_parts(plan, sizeof(double));
        print_stream(plan);
        std::cout << ", " << plan.sources.size() << " reduction entries, "
                  << plan.targets.size() << " targets";
        if (parameters.compact_targets)
          std::cout << " (" << plan.compact_targets.size()
                    << " in compact records, "
                    << 4. * plan.compact_targets.size() / arrays.n_nonzeros()
                    << " bytes per nonzero)";
        std::cout << std::endl;
        print_recorded_steps();
      }
  }
} // namespace



int
main(int argc, char **argv)
{
  try
    {
      std::vector<unsigned int>                       sizes;
      std::string                                     precision     = "both";
      unsigned int                                    repetitions   = 10;
      bool                                            with_dealii   = true;
      bool                                            plans_only    = false;
      bool                                            hanging_nodes = false;
      std::vector<std::string>                        methods;
      Tuning                                          tuning;
      typename DoFHandlerAdapter<dim>::AdditionalData adapter_data;
      adapter_data.supplemental_format =
        SupplementalDataFormat::quadrature_gradients;
      for (int i = 1; i < argc; ++i)
        {
          const std::string argument = argv[i];
          if (argument == "--precision" && i + 1 < argc)
            precision = argv[++i];
          else if (argument == "--repetitions" && i + 1 < argc)
            repetitions = std::stoi(argv[++i]);
          else if (argument == "--method" && i + 1 < argc)
            {
              methods.push_back(argv[++i]);
              AssertThrow(std::any_of(all_variants.begin(),
                                      all_variants.end(),
                                      [&](const Variant &variant) {
                                        return variant.name == methods.back();
                                      }),
                          ExcMessage("Unknown --method '" + methods.back() +
                                     "'; choose GlobalNZ, \"GlobalNZ "
                                     "symmetric\", SharedNZ, \"SharedNZ node "
                                     "pairs\", LocalElem-atomic or "
                                     "LocalElem-colored."));
            }
          else if (argument == "--tune" && i + 1 < argc)
            set_tuning_value(tuning, argv[++i]);
          else if (argument == "--hanging-nodes")
            hanging_nodes = true;
          else if (argument == "--skip-dealii")
            with_dealii = false;
          else if (argument == "--plans-only")
            plans_only = true;
          else if (argument == "--verbose")
            SetupTimes::set_recording(true);
          else if (argument == "--pattern" && i + 1 < argc)
            {
              const std::string where = argv[++i];
              AssertThrow(where == "automatic" || where == "host" ||
                            where == "device",
                          ExcMessage("--pattern must be automatic, host or "
                                     "device, not '" +
                                     where + "'."));
              adapter_data.pattern_construction =
                where == "host"   ? PatternConstruction::host :
                where == "device" ? PatternConstruction::device :
                                    PatternConstruction::automatic;
            }
          else if (argument == "--plan" && i + 1 < argc)
            {
              const std::string where = argv[++i];
              AssertThrow(where == "automatic" || where == "host" ||
                            where == "device",
                          ExcMessage("--plan must be automatic, host or "
                                     "device, not '" +
                                     where + "'."));
              tuning.global_nz.reduction_construction =
                where == "host"   ? ReductionConstruction::host :
                where == "device" ? ReductionConstruction::device :
                                    ReductionConstruction::automatic;
            }
          else if (argument == "--threads" && i + 1 < argc)
            MultithreadInfo::set_thread_limit(std::stoi(argv[++i]));
          else if (argument == "--supplemental" && i + 1 < argc)
            {
              const std::string format = argv[++i];
              AssertThrow(format == "edge-matrix" || format == "gradients",
                          ExcMessage("--supplemental must be edge-matrix or "
                                     "gradients, not '" +
                                     format + "'."));
              adapter_data.supplemental_format =
                format == "gradients" ?
                  SupplementalDataFormat::quadrature_gradients :
                  SupplementalDataFormat::inverse_edge_matrix;
            }
          else
            sizes.push_back(std::stoi(argument));
        }
      if (sizes.empty())
        sizes = {34, 67, 100};
      AssertThrow(precision == "double" || precision == "float" ||
                    precision == "both",
                  ExcMessage("--precision must be double, float or both."));

      double bandwidth = 0;
      if (plans_only)
        std::cout << "Plan construction only; host threads: "
                  << MultithreadInfo::n_threads() << std::endl;
      else
        {
          std::cout << describe_execution_path() << std::endl;
          AssertThrow(n_cuda_devices() > 0,
                      ExcMessage("assembly_benchmark needs a CUDA device "
                                 "(--plans-only does not)."));
          bandwidth = measure_copy_bandwidth();
          std::cout << "Measured device copy bandwidth (read + write): "
                    << bandwidth * 1e-9
                    << " GB/s; host threads: " << MultithreadInfo::n_threads()
                    << std::endl;
        }

      for (const unsigned int n : sizes)
        {
          auto               start = std::chrono::steady_clock::now();
          Triangulation<dim> tria;
          std::unique_ptr<FiniteElement<dim>> fe_pointer;
          std::unique_ptr<Mapping<dim>>       mapping_pointer;
          std::unique_ptr<Quadrature<dim>>    quadrature_pointer;
          if (hanging_nodes)
            {
              // Trilinear hexahedra, the octant at the origin refined once:
              // hanging nodes on its three inner faces.
              GridGenerator::subdivided_hyper_cube(tria, n);
              for (const auto &cell : tria.active_cell_iterators())
                {
                  const Point<dim> c = cell->center();
                  if (c[0] < 0.5 && c[1] < 0.5 && c[2] < 0.5)
                    cell->set_refine_flag();
                }
              tria.execute_coarsening_and_refinement();
              fe_pointer = std::make_unique<FESystem<dim>>(FE_Q<dim>(1), dim);
              mapping_pointer    = std::make_unique<MappingQ<dim>>(1);
              quadrature_pointer = std::make_unique<QGauss<dim>>(2);
            }
          else
            {
              GridGenerator::subdivided_hyper_cube_with_simplices(tria, n);
              fe_pointer =
                std::make_unique<FESystem<dim>>(FE_SimplexP<dim>(1), dim);
              mapping_pointer =
                std::make_unique<MappingFE<dim>>(FE_SimplexP<dim>(1));
              quadrature_pointer = std::make_unique<QGaussSimplex<dim>>(1);
            }
          const FiniteElement<dim> &fe         = *fe_pointer;
          const Mapping<dim>       &mapping    = *mapping_pointer;
          const Quadrature<dim>    &quadrature = *quadrature_pointer;
          DoFHandler<dim>           dof_handler(tria);
          dof_handler.distribute_dofs(fe);
          DoFRenumbering::Cuthill_McKee(dof_handler);
          AffineConstraints<double> constraints;
          DoFTools::make_hanging_node_constraints(dof_handler, constraints);
          VectorTools::interpolate_boundary_values(mapping,
                                                   dof_handler,
                                                   0,
                                                   Functions::ZeroFunction<dim>(
                                                     dim),
                                                   constraints);
          constraints.close();
          std::cout << "\nMesh n = " << n << ": " << tria.n_active_cells()
                    << (hanging_nodes ? " hexahedra" : " tetrahedra") << ", "
                    << dof_handler.n_dofs()
                    << " unknowns (mesh and DoFs: " << seconds_since(start)
                    << " s)" << std::endl;
          if (hanging_nodes)
            {
              unsigned int n_hanging = 0;
              for (const auto &line : constraints.get_lines())
                n_hanging += !line.entries.empty();
              std::cout << "Constrained DoFs: " << constraints.n_constraints()
                        << " ("
                        << 100. * constraints.n_constraints() /
                             dof_handler.n_dofs()
                        << " %), of which hanging: " << n_hanging << " ("
                        << 100. * n_hanging / dof_handler.n_dofs() << " %)"
                        << std::endl;
            }

          // Recorded for the adapter's stages, printed with --verbose.
          const bool was_recording = SetupTimes::recording();
          SetupTimes::set_recording(true);
          SetupTimes::clear();
          start = std::chrono::steady_clock::now();
          const DoFHandlerAdapter<dim> adapter(mapping,
                                               dof_handler,
                                               quadrature,
                                               constraints,
                                               adapter_data);
          const MeshArrays            &arrays          = adapter.get_arrays();
          const double                 adapter_seconds = seconds_since(start);
          const AdapterStages          adapter_stages =
            recorded_adapter_stages(adapter_seconds, adapter);
          SetupTimes::set_recording(was_recording);
          std::cout << "Adapter arrays: " << adapter_seconds << " s on "
                    << MultithreadInfo::n_threads() << " threads (pattern "
                    << adapter_stages.pattern << " s and K "
                    << adapter_stages.maps << " s on the "
                    << adapter_stages.built_on << "), " << arrays.n_nonzeros()
                    << " nonzeros, S(e) "
                    << (arrays.supplemental_format ==
                            SupplementalDataFormat::inverse_edge_matrix ?
                          "inverse edge matrix" :
                          "quadrature gradients")
                    << " (" << arrays.n_supplemental << " values)" << std::endl;
          print_recorded_steps();
          if (plans_only)
            {
              time_plans(arrays, tuning, methods, adapter_seconds);
              continue;
            }

          SparsityPattern sparsity_pattern;
          adapter.make_sparsity_pattern(sparsity_pattern);
          SparseMatrix<double> dealii_matrix(sparsity_pattern);
          Vector<double>       dealii_rhs(dof_handler.n_dofs());
          double dealii_seconds = std::numeric_limits<double>::quiet_NaN();
          for (unsigned int r = 0; r < (with_dealii ? 2u : 0u); ++r)
            dealii_seconds = std::fmin(dealii_seconds,
                                       dealii_assembly(dof_handler,
                                                       mapping,
                                                       quadrature,
                                                       constraints,
                                                       dealii_matrix,
                                                       dealii_rhs));

          for (const std::string p : {"double", "float"})
            {
              if (precision != "both" && precision != p)
                continue;
              std::vector<Row> rows;
              if (p == "double")
                {
                  std::vector<double> reference;
                  run_precision<double>(arrays,
                                        methods,
                                        tuning,
                                        repetitions,
                                        rows,
                                        reference);
                  // The GPU result is deal.II's matrix.
                  SparseMatrix<double> gpu(sparsity_pattern);
                  adapter.copy_to_sparse_matrix(reference, gpu);
                  if (with_dealii)
                    {
                      gpu.add(-1., dealii_matrix);
                      std::cout
                        << rows.front().method
                        << " vs deal.II's assembly: relative "
                           "Frobenius difference "
                        << gpu.frobenius_norm() / dealii_matrix.frobenius_norm()
                        << std::endl;
                    }
                }
              else
                {
                  std::vector<float> reference;
                  run_precision<float>(arrays,
                                       methods,
                                       tuning,
                                       repetitions,
                                       rows,
                                       reference);
                }
              rows.push_back({"deal.II CPU (" +
                                std::to_string(MultithreadInfo::n_threads()) +
                                " threads)",
                              dealii_seconds,
                              0.,
                              0.,
                              0.});
              print_table(std::to_string(tria.n_active_cells()) +
                            (hanging_nodes ? " hexahedra with hanging nodes" :
                                             " tetrahedra") +
                            ", 3D elasticity, " + p + ", " +
                            std::to_string(arrays.n_nonzeros()) + " nonzeros",
                          rows,
                          arrays.n_nonzeros(),
                          bandwidth);
              print_first_assembly_table(rows, adapter_stages);
            }
        }
    }
  catch (std::exception &exc)
    {
      std::cerr << "assembly_benchmark stopped with an error:\n"
                << exc.what() << std::endl;
      return 1;
    }
  return 0;
}
